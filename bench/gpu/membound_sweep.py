#!/usr/bin/env python3
"""The memory-bound rows below 1.0x (softmax at N = 8192 and 16384, layernorm_row), both sides
swept over num_warps in one run: Triton's kernels (bench/gpu/compare.py, the same ones the table
times) and tilelab's (kernels/softmax.tl, kernels/layernorm_row.tl via tl-ptx), each at 4, 8, 16
and 32 warps, with registers per thread (Triton: the compiled kernel's n_regs; tilelab: ptxas -v
via the results JSON) and the blocks per SM those registers allow. Medians (do_bench for Triton,
tl-ptx's CUDA events for tilelab, both with the L2 flushed between runs).

    python3 bench/gpu/membound_sweep.py --tl-ptx /tmp/tl-ptx --out $OUT/membound_sweep.json
"""
import argparse
import json
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the Triton kernels and tl-ptx runner of the compare table)

WARPS = (4, 8, 16, 32)


def blocks_per_sm(regs, warps):
    """Hopper: 64K registers per SM, allocated per warp in units of 256 (8 per thread); at most
    2048 threads and 32 blocks."""
    if not regs:
        return None
    per_warp = -(-regs * 32 // 256) * 256
    return min(65536 // (per_warp * warps), 2048 // (32 * warps), 32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tl-ptx", default="/tmp/tl-ptx")
    ap.add_argument("--out", default="membound_sweep.json")
    ap.add_argument("--results-dir", default="/tmp/tl-membound")
    args = ap.parse_args()
    dev = "cuda"
    rows = []
    cases = [("softmax", 8192, 8192), ("softmax", 4096, 16384), ("layernorm_row", 4096, 8192)]
    for kern, m, n in cases:
        x = torch.randn(m, n, device=dev)
        out = torch.empty_like(x)
        if kern == "softmax":
            nbytes = 2 * m * n * 4
            launch = lambda w: compare.softmax_kernel[(m,)](x, out, n, n, BLOCK=n, num_warps=w)
        else:
            w_, b_ = torch.randn(n, device=dev), torch.randn(n, device=dev)
            nbytes = 2 * m * n * 4 + 2 * n * 4
            launch = lambda w: compare.layernorm_kernel[(m,)](x, out, w_, b_, n, 1e-5, BLOCK=n, num_warps=w)
        sets = {"M": m, "N": n}
        for w in WARPS:
            compiled = launch(w)
            t_tri = compare.bench(lambda: launch(w))
            tri_regs = getattr(compiled, "n_regs", None)
            res = compare.run_tilelab(args.tl_ptx, kern, sets, w, args.results_dir, ["--no-check"])
            t_tl = compare.tl_ms(res)
            tl_regs = res.get("resources", {}).get("registers")
            row = dict(kernel=kern, shape=f"{m}x{n}", num_warps=w, bytes=nbytes,
                       triton_ms=t_tri, triton_regs=tri_regs, triton_blocks_per_sm=blocks_per_sm(tri_regs, w),
                       tilelab_ms=t_tl, tilelab_regs=tl_regs, tilelab_blocks_per_sm=blocks_per_sm(tl_regs, w),
                       tilelab_error=res.get("error"))
            rows.append(row)
            gb = lambda ms: f"{nbytes / (ms * 1e-3) / 1e9:.0f}" if ms else "-"
            print(f"{kern} {m}x{n} w{w}: triton {gb(t_tri)} GB/s regs {tri_regs} ({row['triton_blocks_per_sm']} blocks/SM)"
                  f" | tilelab {gb(t_tl)} GB/s regs {tl_regs} ({row['tilelab_blocks_per_sm']} blocks/SM)", flush=True)
    meta = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__)
    json.dump(dict(meta=meta, rows=rows), open(args.out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""tilelab vs Triton vs PyTorch on one GPU, in one run, at the issue's shapes.

For every shape it times, in this one process and on this one GPU:
  - PyTorch: the eager operation(s) (torch.add, torch.softmax, torch.nn.functional.layer_norm,
    torch.matmul with TF32 off = cuBLAS fp32), and for softmax also the unfused eager form
    (x.max, exp(x - m), e / e.sum as separate ops);
  - Triton: the same operation written as a Triton kernel (below);
  - tilelab: tl-ptx on the kernel in kernels/ at that shape (`--set`), whose results JSON
    gives its median time (CUDA events, L2 flushed between runs).
Times are medians (triton.testing.do_bench, return_mode="median"); GB/s counts each input
read once and each output written once; TFLOP/s counts 2*M*N*K.

    python3 bench/gpu/compare.py --tl-ptx ./tl-ptx --out $OUT/compare.json --table $OUT/compare.md
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import torch
import triton
import triton.language as tl


# ----------------------------------------------------------------------------- Triton kernels
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n + cols, d * rstd * w + b, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def matmul_tc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                     GROUP_M: tl.constexpr, PRECISION: tl.constexpr, B_T: tl.constexpr, ACC_F16: tl.constexpr = False):
    # The algorithm of kernels/matmul_tc.tl (tutorial 03: grouped tile order, one dot per K step);
    # B_T = 1 reads B stored [N][K], as matmul_tc's B_T.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_here
    tile_n = (pid % per_group) // rows_here
    rm = tile_m * BM + tl.arange(0, BM)
    rn = tile_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16 if ACC_F16 else tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if B_T:
            b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        if ACC_F16:
            acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        else:
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_n, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    STAGE: tl.constexpr, offs_m, offs_n, N_CTX):
    # The algorithm of kernels/triton/t06_attention_fwd.tl (tutorial 06's forward, FlashAttention-2,
    # plain pointers), line for line.
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
    else:
        lo, hi = 0, N_CTX
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in tl.range(lo, hi, BLOCK_N):
        keys = start_n + offs_n
        k_t = tl.load(k_base + keys[None, :] * stride_n + offs_d[:, None])
        qk = tl.dot(q, k_t)
        if STAGE == 2:
            visible = offs_m[:, None] >= keys[None, :]
            qk = qk * qk_scale + tl.where(visible, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + keys[:, None] * stride_n + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd_kernel(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_n, Z, H, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504
    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :])
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K + base, V + base, stride_n, start_m, qk_scale,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K + base, V + base, stride_n, start_m, qk_scale,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(Out.dtype.element_ty))


def softmax_warps(block):
    return 4 if block < 2048 else 8 if block < 4096 else 16


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


# ----------------------------------------------------------------------------- tilelab
def run_tilelab(tl_ptx, kernel, sets, num_warps, results_root, extra=()):
    """Runs tl-ptx on kernels/<kernel>.tl with the overrides; returns its results JSON
    (tl-ptx writes DIR/<kernel>.json, so each configuration gets its own DIR)."""
    tag = kernel + "".join(f"_{k}{v}" for k, v in sets.items()) + f"_w{num_warps}"
    if "--arch" in extra:  # another target is another kernel: its own results
        tag += "_" + list(extra)[list(extra).index("--arch") + 1]
    if len(tag) > 200:  # a file name's limit is 255 bytes
        tag = os.path.basename(kernel) + "_" + hashlib.sha1(tag.encode()).hexdigest()[:16]
    results_dir = os.path.join(results_root, tag)
    os.makedirs(results_dir, exist_ok=True)
    cmd = [tl_ptx, f"kernels/{kernel}.tl", "--results-dir", results_dir, "--num-warps", str(num_warps), "--quiet"]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    cmd += list(extra)
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stdout + proc.stderr)[-2000:], "cmd": " ".join(cmd)}
    res = json.load(open(os.path.join(results_dir, os.path.basename(kernel) + ".json")))
    res["cmd"] = " ".join(cmd)
    res["wall_s"] = round(time.time() - t0, 2)
    res["stdout_tail"] = proc.stdout[-1500:]
    return res


def write_bf16_npy(path, t):
    """Writes a bf16 tensor as tilelab reads one (lib/runtime/Npy.cpp): '<u2' raw bits with the
    comment `# tilelab: bfloat16` after the header's dict."""
    header = "{'descr': '<u2', 'fortran_order': False, 'shape': (%s), } # tilelab: bfloat16" % (
        "".join(f"{x}, " for x in t.shape).rstrip(" "))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(t.contiguous().view(torch.int16).cpu().numpy().tobytes())


def tl_ms(res):
    if "error" in res or not res.get("gpu", {}).get("ran"):
        return None
    return res["time"]["median_ms"]


# ----------------------------------------------------------------------------- the shapes
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tl-ptx", default="./tl-ptx")
    ap.add_argument("--out", default="compare.json")
    ap.add_argument("--table", default="compare.md")
    ap.add_argument("--results-dir", default="/tmp/tl-results")
    ap.add_argument("--only", default="", help="comma list: add,softmax,layernorm,matmul,tensor,attention")
    ap.add_argument("--fma-configs", default="128,128,16,8,1,128;128,128,16,8,2,0;128,128,16,8,3,0;128,128,16,8,3,128;128,128,32,8,3,128;64,128,16,4,3,0;128,64,16,4,3,0",
                    help="tilelab's fp32 IEEE matmul configurations, the best is checked and reported: "
                         "'BM,BN,BK,warps,stages,maxnreg;...' (maxnreg 0: none)")
    ap.add_argument("--triton-fma-configs", default="128,128,32,8,3;128,64,32,4,3;128,128,16,8,3;64,64,32,4,3",
                    help="Triton's fp32 IEEE matmul configurations, the best is reported: 'BM,BN,BK,warps,stages;...'")
    ap.add_argument("--tensor-cases", default="bf16:4096,bf16:8192,f16:4096,f16:8192,f32:4096,f8e4m3:4096",
                    help="the tensor rows to run, dtype:size")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else {"add", "softmax", "layernorm", "matmul"}
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    rows = []
    gbps = lambda nbytes, ms: nbytes / (ms * 1e-3) / 1e9

    if "add" in only:
        n = 1 << 28
        x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
        out = torch.empty_like(x)
        nbytes = 3 * n * 4
        t_torch = bench(lambda: torch.add(x, y, out=out))
        t_tri = bench(lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4))
        res = run_tilelab(args.tl_ptx, "vector_add", {"N": n, "BLOCK": 1024}, 4, args.results_dir,
                          ["--check-stage", "block"])
        rows.append(dict(op="vector add", shape="2^28 fp32", kernel="vector_add", bytes=nbytes, torch_ms=t_torch, triton_ms=t_tri,
                         tilelab_ms=tl_ms(res), tilelab=res))

    if "softmax" in only:
        for n in [128, 512, 1024, 2048, 4096, 8192, 16384]:
            m = (256 << 20) // (4 * n)
            x = torch.randn(m, n, device=dev)
            out = torch.empty_like(x)
            block = triton.next_power_of_2(n)
            w = softmax_warps(block)
            nbytes = 2 * m * n * 4
            t_torch = bench(lambda: torch.softmax(x, dim=1))

            def unfused():
                mx = x.max(dim=1, keepdim=True).values
                e = torch.exp(x - mx)
                return e / e.sum(dim=1, keepdim=True)

            t_unf = bench(unfused)
            t_tri = bench(lambda: softmax_kernel[(m,)](x, out, n, n, BLOCK=block, num_warps=w))
            res = run_tilelab(args.tl_ptx, "softmax", {"M": m, "N": n}, w, args.results_dir, ["--check-stage", "block"])
            rows.append(dict(op="softmax", shape=f"{m}x{n} fp32", kernel="softmax", bytes=nbytes, torch_ms=t_torch,
                             triton_ms=t_tri, torch_unfused_ms=t_unf, tilelab_ms=tl_ms(res), tilelab=res))
            if n <= 512:  # short rows: several rows per program (kernels/softmax_rows.tl);
                bm = 1024 // n  # 1024-element tiles were fastest in bench/gpu/sweep.sh
                res = run_tilelab(args.tl_ptx, "softmax_rows", {"M": m, "N": n, "BLOCK_M": bm}, 4, args.results_dir,
                                  ["--check-stage", "block"])
                rows.append(dict(op="softmax", shape=f"{m}x{n} fp32", kernel=f"softmax_rows (BLOCK_M={bm})",
                                 bytes=nbytes, torch_ms=t_torch, triton_ms=t_tri, torch_unfused_ms=t_unf,
                                 tilelab_ms=tl_ms(res), tilelab=res))
            del x, out

    if "layernorm" in only:
        m, n = 4096, 8192
        x = torch.randn(m, n, device=dev)
        w_, b_ = torch.randn(n, device=dev), torch.randn(n, device=dev)
        y = torch.empty_like(x)
        nbytes = 2 * m * n * 4 + 2 * n * 4
        t_torch = bench(lambda: torch.nn.functional.layer_norm(x, (n,), w_, b_, 1e-5))
        t_tri = bench(lambda: layernorm_kernel[(m,)](x, y, w_, b_, n, 1e-5, BLOCK=8192, num_warps=16))
        for kern, sets in (("layernorm", {"M": m, "N": n, "BLOCK_SIZE": 8192}),
                           ("layernorm_row", {"M": m, "N": n})):
            res = run_tilelab(args.tl_ptx, kern, sets, 16, args.results_dir, ["--check-stage", "block"])
            rows.append(dict(op="layernorm", shape="4096x8192 fp32", kernel=kern, bytes=nbytes, torch_ms=t_torch,
                             triton_ms=t_tri, tilelab_ms=tl_ms(res), tilelab=res))

    if "matmul" in only:
        n = 4096
        a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
        c = torch.empty_like(a)
        flops = 2 * n ** 3
        t_torch = bench(lambda: torch.matmul(a, b, out=c))
        grid = (n // 128, n // 128)
        # Each side at the best of its configurations, timed in this one run; the table names the
        # winners. Triton: (BM, BN, BK, num_warps, num_stages); tilelab: the same and maxnreg (0:
        # none), each timed without the check, then the fastest run again with it.
        def cfg_list(text):
            return [tuple(int(x) for x in c.split(",")) for c in text.split(";") if c]
        tri = {}
        for bm, bn, bk, w, st in cfg_list(args.triton_fma_configs):
            g = (n // bm, n // bn)
            tri[(bm, bn, bk, w, st)] = bench(lambda: matmul_kernel[g](a, b, c, n, n, n, BM=bm, BN=bn, BK=bk,
                                                                      num_warps=w, num_stages=st))
        tri_cfg = min(tri, key=tri.get)
        def tl_sets(bm, bn, bk, st, reg):
            sets = {"M": n, "N": n, "K": n, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_stages": st}
            if reg:
                sets["maxnreg"] = reg
            return sets
        timed = {}
        for bm, bn, bk, w, st, reg in cfg_list(args.fma_configs):
            res = run_tilelab(args.tl_ptx, "matmul", tl_sets(bm, bn, bk, st, reg), w, args.results_dir,
                              ["--no-check", "--runs", "10"])
            timed[(bm, bn, bk, w, st, reg)] = tl_ms(res) or float("inf")
        bm, bn, bk, w, st, reg = min(timed, key=timed.get)
        # 4096-long f32 dot products: the GPU's order of additions differs from tl-block's by
        # ~sqrt(K) * eps * |a||b| ~ 3e-4 where the result is near zero, so the check accepts 1e-3.
        best = run_tilelab(args.tl_ptx, "matmul", tl_sets(bm, bn, bk, st, reg), w, args.results_dir + "/checked",
                           ["--check-stage", "block", "--runs", "5", "--atol", "1e-3"])
        rows.append(dict(op="matmul", shape="4096^3 fp32",
                         kernel=f"matmul ({bm}x{bn}x{bk}, {w} warps, num_stages {st}" + (f", maxnreg {reg}" if reg else "") +
                                f"; Triton {tri_cfg[0]}x{tri_cfg[1]}x{tri_cfg[2]}, {tri_cfg[3]} warps, num_stages {tri_cfg[4]})",
                         flops=flops, torch_ms=t_torch, triton_ms=tri[tri_cfg], tilelab_ms=tl_ms(best), tilelab=best,
                         triton_configs={str(k): v for k, v in tri.items()}, tilelab_configs={str(k): v for k, v in timed.items()}))

    if "tensor" in only:
        # Tensor cores (issue 13): kernels/matmul_tc.tl against cuBLAS (torch.matmul; fp8:
        # torch._scaled_mm) and the same algorithm in Triton, each at its best of a few tile
        # configurations. Both pipeline with num_stages: Triton with cp.async / TMA rings in shared
        # memory, tilelab with cp.async rings (stages/thread/LowerRing.cpp, num_stages - 1
        # iterations ahead). The sm_90a rows run the dots as warpgroup MMAs (wgmma). tf32 and fp8
        # wgmmas read B K-major only, so their rows marked "bT" run matmul_tc with B_T = 1: B
        # stored [N][K], as torch._scaled_mm takes it (cuBLAS's tf32 row reads B [K][N]); with
        # B_T = 0 tilelab stages B through registers, transposed.
        # (BLOCK_M, BLOCK_N, BLOCK_K in elements, warps, num_stages, arch, B_T)
        cfgs_16 = [(128, 128, 32, 8, 2, "sm_90", 0), (128, 256, 32, 8, 3, "sm_90", 0), (128, 128, 64, 4, 4, "sm_90", 0),
                   (128, 256, 64, 8, 2, "sm_90a", 0), (128, 256, 64, 8, 3, "sm_90a", 0), (128, 128, 64, 8, 4, "sm_90a", 0),
                   (128, 128, 64, 4, 4, "sm_90a", 0), (256, 128, 64, 8, 3, "sm_90a", 0)]
        cfgs_k = {4: 32, 1: 128}  # BLOCK_K of one 128-byte row of k: tf32 (4 bytes), fp8 (1 byte)
        def cfgs_32_8(bk):
            return [(128, 128, 32, 8, 2, "sm_90", 0), (128, 256, 32, 8, 3, "sm_90", 0),  # mma.sync, as before
                    (128, 256, bk, 8, 3, "sm_90a", 0), (128, 256, bk, 8, 3, "sm_90a", 1), (128, 256, bk // 2, 8, 4, "sm_90a", 1),
                    (128, 128, bk, 8, 4, "sm_90a", 1), (128, 128, bk, 4, 4, "sm_90a", 1), (256, 128, bk, 8, 3, "sm_90a", 1)]
        # f32x3: f32 inputs with input_precision="tf32x3" (three tf32 mma per tile, about fp32's
        # accuracy) against cuBLAS fp32 (TF32 off: the same accuracy class) and Triton's tf32x3;
        # tilelab runs it on mma.sync (wgmma takes tf32, not tf32x3).
        cfgs_x3 = [(128, 128, 32, 8, 2, "sm_90", 0), (128, 128, 32, 4, 3, "sm_90", 0), (128, 256, 32, 8, 3, "sm_90", 0),
                   (128, 128, 32, 8, 3, "sm_90", 1), (128, 128, 16, 4, 4, "sm_90", 0), (64, 128, 32, 4, 3, "sm_90", 0)]
        tri_cfgs = [(128, 256, 64, 8, 3), (128, 128, 32, 4, 4)]
        names = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32", torch.float8_e4m3fn: "f8e4m3"}
        by_name = {v: k for k, v in names.items()}
        by_name["f32x3"] = torch.float32
        # f16acc: f16 inputs accumulated in f16 (out_dtype=tl.float16) against cuBLAS with f16
        # accumulation (torch.backends.cuda.matmul.allow_fp16_accumulation) and Triton's
        # out_dtype=tl.float16; tilelab on wgmma...f16.f16.f16 (sm_90a) and mma.sync...f16.f16.f16.f16.
        by_name["f16acc"] = torch.float16
        cfgs_f16acc = [(128, 256, 64, 8, 3, "sm_90", 0), (128, 128, 64, 4, 4, "sm_90", 0),
                       (128, 256, 64, 8, 3, "sm_90a", 0), (128, 256, 64, 8, 2, "sm_90a", 0), (128, 256, 64, 8, 4, "sm_90a", 0),
                       (256, 128, 64, 8, 3, "sm_90a", 0), (128, 128, 64, 8, 4, "sm_90a", 0)]
        cases = [(by_name[c.split(":")[0]], int(c.split(":")[1]), c.split(":")[0]) for c in args.tensor_cases.split(",")]
        for dt, n, case in cases:
            x3, f16acc = case == "f32x3", case == "f16acc"
            a = torch.randn(n, n, device=dev).to(dt)
            b = torch.randn(n, n, device=dev).to(dt)
            out_dt = torch.float32 if dt == torch.float32 else torch.bfloat16 if dt == torch.float8_e4m3fn else dt
            c = torch.empty(n, n, device=dev, dtype=out_dt)
            flops = 2 * n ** 3
            if f16acc:
                torch.backends.cuda.matmul.allow_fp16_accumulation = True
                t_torch = bench(lambda: torch.matmul(a, b, out=c))
                torch.backends.cuda.matmul.allow_fp16_accumulation = False
            elif x3:
                t_torch = bench(lambda: torch.matmul(a, b, out=c))  # allow_tf32 is off here: cuBLAS fp32
            elif dt == torch.float32:
                torch.backends.cuda.matmul.allow_tf32 = True
                t_torch = bench(lambda: torch.matmul(a, b, out=c))
                torch.backends.cuda.matmul.allow_tf32 = False
            elif dt == torch.float8_e4m3fn:
                one = torch.tensor(1.0, device=dev)
                bcol = b.t().contiguous().t()
                t_torch = bench(lambda: torch._scaled_mm(a, bcol, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
            else:
                t_torch = bench(lambda: torch.matmul(a, b, out=c))
            t_tri = None
            # Triton: B [K][N] and, for tf32 and fp8, also B [N][K] (the best of both, as tilelab's).
            b_t = b.t().contiguous()
            layouts = [(b, 0)] if dt in (torch.float16, torch.bfloat16) else [(b, 0), (b_t, 1)]
            for bm, bn, bk, w, st in (tri_cfgs if not x3 else [(128, 128, 32, 8, 3), (128, 128, 32, 4, 4), (64, 128, 32, 4, 4)]) + \
                    ([(128, 256, 128, 8, 3)] if dt == torch.float8_e4m3fn else []):
                for bb, bt in layouts:
                    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
                    try:
                        t = bench(lambda: matmul_tc_kernel[grid](a, bb, c, n, n, n, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                                                 PRECISION="tf32x3" if x3 else "tf32", B_T=bt,
                                                                 ACC_F16=f16acc, num_warps=w, num_stages=st))
                        t_tri = t if t_tri is None else min(t_tri, t)
                    except Exception as e:  # a config that does not fit (shared memory) is skipped
                        print(f"triton {names[dt]} {bm}x{bn}x{bk} B_T={bt}: {type(e).__name__}")
            best = None
            tl_cfgs = cfgs_f16acc if f16acc else cfgs_x3 if x3 else cfgs_16 if dt in (torch.float16, torch.bfloat16) else cfgs_32_8(cfgs_k[dt.itemsize])
            for bm, bn, bk, w, st, arch, bt in tl_cfgs:
                tl_dt, tl_out = names[dt], names[out_dt]
                b_shape = "(N, K)" if bt else "(K, N)"
                sets = {"M": n, "N": n, "K": n, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_stages": st, "B_T": bt,
                        "a_ptr": f"randn((M, K), dtype={tl_dt}, seed=1)", "b_ptr": f"randn({b_shape}, dtype={tl_dt}, seed=2)",
                        "c_ptr": f"zeros((M, N), dtype={tl_out}, output=True)", "TF32X3": int(x3), "ACC_F16": int(f16acc)}
                # Timed only: bench/gpu/mma_h200.sh checks the same kernel on the GPU for every
                # dtype (against tl-scalar, and bf16 at 1024^3 with 128 x 128 tiles against tl-block);
                # a tl-block check at 4096^3 takes minutes of host time per row.
                extra = ["--runs", "20", "--no-check", "--arch", arch]
                res = run_tilelab(args.tl_ptx, "matmul_tc", sets, w, args.results_dir, extra)
                res["config"] = f"{bm}x{bn}x{bk} w{w} s{st}" + (" wgmma" if arch == "sm_90a" else "") + (" bT" if bt else "")
                if tl_ms(res) is not None and (best is None or tl_ms(best) is None or tl_ms(res) < tl_ms(best)):
                    best = res
                elif best is None:
                    best = res
            prec = (" (tf32x3; torch: cuBLAS fp32)" if x3 else " (tf32)" if dt == torch.float32 else
                    " (f16 accumulator; torch: cuBLAS with allow_fp16_accumulation)" if f16acc else "")
            rows.append(dict(op="matmul (tensor cores)", shape=f"{n}^3 {names[dt]}" + prec,
                             kernel=f"matmul_tc ({best.get('config', '')})", flops=flops, torch_ms=t_torch, triton_ms=t_tri,
                             tilelab_ms=tl_ms(best), tilelab=best))

    if "attention" in only:
        # Fused attention forward (issue 13): kernels/triton/t06_attention_fwd.tl (FlashAttention-2 as
        # in Triton's tutorial 06) against the same algorithm in Triton (attn_fwd_kernel above) and
        # torch SDPA (flash), bf16, Z = 4, H = 32, head dim 64 and 128, causal and not. FLOPs as the
        # tutorial counts them: 4 Z H N^2 D, half of it when causal. Each column the best of its
        # configurations (ptxas -v of each in the row's JSON).
        import torch.nn.functional as F
        tri_cfgs = [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3)]
        # sm_90a: both dots as warpgroup MMAs, the second (p v) with a = p from registers. (mma.sync,
        # sm_90, was slower at every shape: git show ced057b:bench/results/gpu/compare_attention_wgmma.md.)
        # maxnreg=128 (Triton's option, PTX .maxnreg): the causal head-dim-64 kernel takes 155-165
        # registers by ptxas's choice, one block of 8 warps per SM; within 128, two, without spills
        # (tests/ptx/maxnreg_ptx_test.cpp). At head dim 128 (232-255 registers) it would spill.
        tl_cfgs = {64: [(128, 64, 8, 2, "sm_90a", 0), (128, 64, 8, 3, "sm_90a", 0), (128, 64, 8, 1, "sm_90a", 0),
                        (128, 64, 8, 2, "sm_90a", 128), (128, 64, 8, 3, "sm_90a", 128)],
                   128: [(128, 64, 8, 1, "sm_90a", 0), (128, 64, 8, 2, "sm_90a", 0), (128, 64, 8, 3, "sm_90a", 0)]}
        # tilelab reads q, k and v from .npy files of the very tensors Triton and SDPA are timed on
        # (tl-ptx --input): filling 3 x 537 MB with randn on the host for every configuration took
        # the N = 16384 rows past the device's 10-minute limit.
        ns = [int(x) for x in os.environ.get("ATTN_N", "1024,4096").split(",")]
        z, h = 4, 32
        for d in (64, 128):
            for n in ns:
                for causal in (False, True):
                    q, k, v = (torch.randn(z, h, n, d, device=dev, dtype=torch.bfloat16) for _ in range(3))
                    inputs = []
                    os.makedirs(args.results_dir, exist_ok=True)
                    for name, t in (("Q", q), ("K", k), ("V", v)):
                        path = os.path.join(args.results_dir, f"attn_{name}.npy")
                        write_bf16_npy(path, t)
                        inputs += ["--input", f"{name}={path}"]
                    o = torch.empty_like(q)
                    m = torch.empty(z * h, n, device=dev, dtype=torch.float32)
                    sm_scale = d ** -0.5
                    flops = 4 * z * h * n * n * d * (0.5 if causal else 1.0)
                    t_torch = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale))
                    t_tri = None
                    for bm, bn, w, st in tri_cfgs:
                        if bn > d:
                            continue
                        grid = (triton.cdiv(n, bm), z * h)
                        try:
                            t = bench(lambda: attn_fwd_kernel[grid](q, k, v, sm_scale, m, o, h * n * d, n * d, d, z, h, n,
                                                                   HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn,
                                                                   STAGE=3 if causal else 1, num_warps=w, num_stages=st))
                            t_tri = t if t_tri is None else min(t_tri, t)
                        except Exception as e:  # a config that does not fit is skipped
                            print(f"triton attention d{d} {bm}x{bn}: {type(e).__name__}")
                    best = None
                    for bm, bn, w, st, arch, maxnreg in tl_cfgs[d]:
                        if maxnreg and not causal:  # 118-121 registers already: the same kernel
                            continue
                        sets = {"Z": z, "H": h, "N_CTX": n, "HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn,
                                "STAGE": 3 if causal else 1, "num_stages": st, "sm_scale": sm_scale,
                                "Out": "zeros((Z, H, N_CTX, HEAD_DIM), dtype=bf16, output=True)"}
                        if maxnreg:
                            sets["maxnreg"] = maxnreg
                        # Timed only: bench/gpu/attention_h200.sh checks the kernel on the GPU
                        # against tl-scalar at small sizes, bf16, both stages, pipelined and not.
                        res = run_tilelab(args.tl_ptx, "triton/t06_attention_fwd", sets, w, args.results_dir,
                                          ["--runs", "5", "--no-check", "--arch", arch] + inputs)
                        res["config"] = f"{bm}x{bn} w{w} s{st}" + (" wgmma" if arch == "sm_90a" else "") + (
                            f" maxnreg {maxnreg}" if maxnreg else "")
                        if tl_ms(res) is not None and (best is None or tl_ms(best) is None or tl_ms(res) < tl_ms(best)):
                            best = res
                        elif best is None:
                            best = res
                    rows.append(dict(op="attention fwd" + (" causal" if causal else ""), shape=f"4x32x{n} d{d} bf16",
                                     kernel=f"t06_attention_fwd ({best.get('config', '')})", flops=flops,
                                     torch_ms=t_torch, triton_ms=t_tri, tilelab_ms=tl_ms(best), tilelab=best))
                    rate = lambda ms: f"{flops / (ms * 1e-3) / 1e12:.0f}" if ms else "n/a"
                    print(f"attention d{d} n{n} causal={causal}: SDPA {rate(t_torch)} Triton {rate(t_tri)} "
                          f"tilelab {rate(tl_ms(best))} TFLOP/s ({best.get('config', '')})", flush=True)
                    del q, k, v, o, m
                    torch.cuda.empty_cache()

    # ------------------------------------------------------------------------- table
    lines = ["| op | shape | tilelab kernel | PyTorch | Triton | tilelab | tilelab / Triton | tilelab / PyTorch |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        unit = "TFLOP/s" if "flops" in r else "GB/s"
        rate = (lambda ms: r["flops"] / (ms * 1e-3) / 1e12) if "flops" in r else (lambda ms: gbps(r["bytes"], ms))
        cells = []
        for key in ("torch_ms", "triton_ms", "tilelab_ms"):
            ms = r.get(key)
            r[key.replace("_ms", "_rate")] = rate(ms) if ms else None
            cells.append(f"{rate(ms):.0f} {unit}" if ms else "n/a")
        tl_rate, tri_rate, to_rate = r["tilelab_rate"], r["triton_rate"], r["torch_rate"]
        ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "n/a"
        lines.append(f"| {r['op']} | {r['shape']} | {r.get('kernel', '')} | {cells[0]} | {cells[1]} | {cells[2]} | "
                     f"{ratio(tl_rate, tri_rate)} | {ratio(tl_rate, to_rate)} |")
    dev_name = torch.cuda.get_device_name()
    lines.append("")
    lines.append(f"{dev_name}, torch {torch.__version__}, triton {triton.__version__}; medians of one run.")
    table = "\n".join(lines)
    print(table)
    json.dump({"device": dev_name, "torch": torch.__version__, "triton": triton.__version__, "rows": rows},
              open(args.out, "w"), indent=1, default=str)
    open(args.table, "w").write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())

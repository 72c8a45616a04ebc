#!/usr/bin/env python3
"""The CPU side of issue 14's benchmark suite: the same .tl kernels compiled by tl-cpu (fused, and
unfused: one kernel per block op, --unfused), beside
PyTorch CPU and numpy doing the same op, at small, medium and large shapes, on one thread and on
every thread, on whatever machine runs it; plus the machine's measured peaks (cpu_peaks).

    python3 bench/cpu/suite.py --tl-cpu build/stages/cpu/tl-cpu --peaks build/bench/cpu_peaks \
        --out bench/results/cpu/suite_<machine>     # writes <out>.json and <out>.md

Every tl-cpu run is checked (against tl-block at these sizes) and timed by tl-cpu itself (its
results JSON: the median of up to 10 runs after one warm-up, store tracking off). PyTorch and
numpy are timed the same way here: one warm-up, then the median of up to 10 calls, at the same
thread count (torch.set_num_threads; numpy's BLAS through OPENBLAS_NUM_THREADS in a
subprocess). Ratios are tl-cpu's speed over theirs, from one run of this script.
GB/s counts the compulsory traffic (every buffer once), as tl-ptx and tl-cpu report it. For
scale, tl-scalar and tl-block (the reference interpreters) run once at the --references sizes.

On the GPU machine, --tl-ptx adds the GPU beside it at the same shapes: tl-ptx fused and unfused
(its own CUDA-event timing, L2 flushed), Triton's kernels with --triton (bench/gpu/compare.py's,
by do_bench), and PyTorch CUDA per call and per kernel (bench/cpu/cpu_gpu_h200.sh runs it all).
"""
import argparse
import re
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# kernel -> its file, the sizes (tl-cpu --set overrides) and what PyTorch / numpy run for it.
KERNELS = {
    "vector_add": {
        "file": "kernels/vector_add.tl",
        "sizes": {"tiny": {"N": 1 << 12}, "small": {"N": 1 << 16}, "medium": {"N": 1 << 20}, "large": {"N": 1 << 26}},
        "shape": lambda s: [s["N"]],
        "torch": "add",
        "numpy": "add",
    },
    "softmax": {
        "file": "kernels/softmax.tl",
        "sizes": {"tiny": {"M": 8, "N": 1024}, "small": {"M": 256, "N": 1024}, "medium": {"M": 4096, "N": 1024},
                  "large": {"M": 65536, "N": 1024}},
        "shape": lambda s: [s["M"], s["N"]],
        "torch": "softmax",
    },
    "layernorm": {
        "file": "kernels/layernorm_row.tl",
        "sizes": {"tiny": {"M": 8, "N": 1024}, "small": {"M": 128, "N": 1024}, "medium": {"M": 1024, "N": 4096},
                  "large": {"M": 4096, "N": 8192}},
        "shape": lambda s: [s["M"], s["N"]],
        "torch": "layer_norm",
    },
    "rmsnorm": {
        "file": "kernels/rmsnorm.tl",
        "sizes": {"tiny": {"M": 8, "N": 1024}, "small": {"M": 128, "N": 1024}, "medium": {"M": 1024, "N": 4096},
                  "large": {"M": 4096, "N": 8192}},
        "shape": lambda s: [s["M"], s["N"]],
        "torch": "rms_norm",
    },
    "bias_gelu": {
        "file": "kernels/bias_gelu.tl",
        "sizes": {"tiny": {"M": 64, "N": 64}, "small": {"M": 256, "N": 256}, "medium": {"M": 2048, "N": 2048},
                  "large": {"M": 8192, "N": 8192}},
        "shape": lambda s: [s["M"], s["N"]],
        "torch": "bias_gelu",
    },
    "matmul": {
        "file": "kernels/matmul.tl",
        "sizes": {
            "tiny": {"M": 64, "N": 64, "K": 64, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32},
            "small": {"M": 256, "N": 256, "K": 256, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
            "medium": {"M": 1024, "N": 1024, "K": 1024, "BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32},
            "large": {"M": 2048, "N": 2048, "K": 2048, "BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32},
        },
        "shape": lambda s: [s["M"], s["N"], s["K"]],
        # The GPU's own blocks (bench/results/gpu/fma_sweep_h200.txt: the fastest FMA config);
        # the CPU's 256 x 256 accumulators would not fit a GPU thread's registers.
        "gpu_sets": {"tiny": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "num_warps": 4},
                     "default": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "num_warps": 8}},
        "torch": "mm",
        "numpy": "matmul",
    },
}


def median_ms(fn, runs=10, budget_s=2.0):
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < runs and (not times or time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def torch_ms(op, shape, threads):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(1)
    if op == "add":
        x, y = torch.randn(shape, generator=g), torch.randn(shape, generator=g)
        o = torch.empty(shape)
        return median_ms(lambda: torch.add(x, y, out=o))
    if op == "softmax":
        x = torch.randn(shape, generator=g)
        return median_ms(lambda: torch.softmax(x, dim=1))
    if op == "layer_norm":
        x = torch.randn(shape, generator=g)
        w, b = torch.rand(shape[1], generator=g) + 0.5, torch.randn(shape[1], generator=g) * 0.1
        return median_ms(lambda: torch.nn.functional.layer_norm(x, (shape[1],), w, b, 1e-5))
    if op == "rms_norm":
        x = torch.randn(shape, generator=g)
        w = torch.rand(shape[1], generator=g) + 0.5
        return median_ms(lambda: torch.nn.functional.rms_norm(x, (shape[1],), w, 1e-6))
    if op == "add_rms_norm":  # lab 7's kernel: h = x + r, y = rms_norm(h)
        x, r = torch.randn(shape, generator=g), torch.randn(shape, generator=g)
        w = torch.rand(shape[1], generator=g) + 0.5
        return median_ms(lambda: torch.nn.functional.rms_norm(x + r, (shape[1],), w, 1e-6))
    if op == "bias_gelu":
        x, b = torch.randn(shape, generator=g), torch.randn(shape[1], generator=g)
        return median_ms(lambda: torch.nn.functional.gelu(x + b, approximate="tanh"))
    if op == "mm":
        m, n, k = shape
        a, bb = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
        return median_ms(lambda: torch.mm(a, bb))
    return None


NUMPY_CHILD = r"""
import sys, json, time, statistics
import numpy as np
op, shape = sys.argv[1], json.loads(sys.argv[2])
rng = np.random.default_rng(1)
def med(fn):
    fn(); ts = []; st = time.perf_counter()
    while len(ts) < 10 and (not ts or time.perf_counter() - st < 2.0):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)
if op == "add":
    x = rng.standard_normal(shape, dtype=np.float32); y = rng.standard_normal(shape, dtype=np.float32); o = np.empty_like(x)
    print(med(lambda: np.add(x, y, out=o)))
else:
    m, n, k = shape
    a = rng.standard_normal((m, k), dtype=np.float32); b = rng.standard_normal((k, n), dtype=np.float32)
    print(med(lambda: a @ b))
"""


def numpy_ms(op, shape, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, "-c", NUMPY_CHILD, op, json.dumps(shape)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None
    return float(r.stdout.strip())


def reference_ms(exe, kernel, sets):
    """One run of a reference interpreter (tl-scalar or tl-block, the executable next to tl-cpu's
    build folder), for scale: the time it prints for the grid ("tl-block: 8 programs, 168 tile ops
    in 0.154 ms"), compile excluded; None when it is not there or did not run."""
    if not exe or not os.path.exists(exe):
        return None
    cmd = [exe, KERNELS[kernel]["file"]] + ([] if exe.endswith("tl-scalar") else ["--no-check"])  # tl-scalar checks nothing
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"tl-(?:scalar|block): .* in ([0-9.e+-]+) (ms|s)\b", r.stdout)
    if r.returncode != 0 or not m:
        return None
    return float(m.group(1)) * (1e3 if m.group(2) == "s" else 1)


def tl_cpu(exe, kernel, sets, threads, results_dir, unfused):
    cmd = [exe, KERNELS[kernel]["file"], "--threads", str(threads), "--check-stage", "block", "--results-dir", results_dir]
    if unfused:
        cmd.append("--unfused")
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    stem = os.path.splitext(os.path.basename(KERNELS[kernel]["file"]))[0]
    with open(os.path.join(results_dir, stem + ".json")) as f:
        j = json.load(f)
    return j, r.returncode, " ".join(cmd)


def torch_cuda_ms(op, shape):
    """The same op with PyTorch on the GPU: per call, wall clock with a synchronize (what a
    caller waits for: launch + kernel), and the kernel alone by CUDA events over 100 calls."""
    import torch
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    if op == "add":
        x, y = torch.randn(shape, device=dev, generator=g), torch.randn(shape, device=dev, generator=g)
        o = torch.empty(shape, device=dev)
        fn = lambda: torch.add(x, y, out=o)  # noqa: E731
    elif op == "softmax":
        x = torch.randn(shape, device=dev, generator=g)
        fn = lambda: torch.softmax(x, dim=1)  # noqa: E731
    elif op == "layer_norm":
        x = torch.randn(shape, device=dev, generator=g)
        w, b = torch.rand(shape[1], device=dev) + 0.5, torch.randn(shape[1], device=dev) * 0.1
        fn = lambda: torch.nn.functional.layer_norm(x, (shape[1],), w, b, 1e-5)  # noqa: E731
    elif op == "rms_norm":
        x = torch.randn(shape, device=dev, generator=g)
        w = torch.rand(shape[1], device=dev) + 0.5
        fn = lambda: torch.nn.functional.rms_norm(x, (shape[1],), w, 1e-6)  # noqa: E731
    elif op == "add_rms_norm":
        x, r = torch.randn(shape, device=dev, generator=g), torch.randn(shape, device=dev, generator=g)
        w = torch.rand(shape[1], device=dev) + 0.5
        fn = lambda: torch.nn.functional.rms_norm(x + r, (shape[1],), w, 1e-6)  # noqa: E731
    elif op == "bias_gelu":
        x, b = torch.randn(shape, device=dev, generator=g), torch.randn(shape[1], device=dev, generator=g)
        fn = lambda: torch.nn.functional.gelu(x + b, approximate="tanh")  # noqa: E731
    else:
        m, n, k = shape
        a, bb = torch.randn(m, k, device=dev, generator=g), torch.randn(k, n, device=dev, generator=g)
        fn = lambda: torch.mm(a, bb)  # noqa: E731

    def call():
        fn()
        torch.cuda.synchronize()
    wall = median_ms(call, runs=50)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    start.record()
    for _ in range(100):
        fn()
    end.record()
    torch.cuda.synchronize()
    return wall, start.elapsed_time(end) / 100


def triton_ms(kernel, shape):
    """Triton's kernel for the same op on the GPU (bench/gpu/compare.py's kernels, timed as it times
    them: triton.testing.do_bench, median); None where compare.py has none (rmsnorm, bias_gelu)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
    import compare
    import torch
    import triton
    dev = torch.device("cuda")
    if kernel == "vector_add":
        n = shape[0]
        x, y, o = (torch.randn(n, device=dev) for _ in range(3))
        return compare.bench(lambda: compare.add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024))
    if kernel in ("softmax", "layernorm"):
        m, n = shape
        block = triton.next_power_of_2(n)
        x, o = torch.randn(m, n, device=dev), torch.empty(m, n, device=dev)
        warps = compare.softmax_warps(block)
        if kernel == "softmax":
            return compare.bench(lambda: compare.softmax_kernel[(m,)](x, o, n, n, BLOCK=block, num_warps=warps))
        w, b = torch.rand(n, device=dev) + 0.5, torch.randn(n, device=dev) * 0.1
        return compare.bench(lambda: compare.layernorm_kernel[(m,)](x, o, w, b, n, 1e-5, BLOCK=block, num_warps=warps))
    if kernel == "matmul":
        m, n, k = shape
        t = 64 if min(m, n) < 1024 else 128
        a, b, c = torch.randn(m, k, device=dev), torch.randn(k, n, device=dev), torch.empty(m, n, device=dev)
        return compare.bench(lambda: compare.matmul_kernel[(m // t, n // t)](a, b, c, m, n, k, BM=t, BN=t, BK=32,
                                                                               num_warps=8 if t == 128 else 4))
    return None


def tl_ptx(exe, kernel, sets, size, results_dir, unfused=False):
    """tl-ptx's median (and, with `unfused`, the unfused sequence's), its check and its command."""
    gpu = KERNELS[kernel].get("gpu_sets", {})
    sets = dict(sets, **gpu.get(size, gpu.get("default", {})))
    cmd = [exe, KERNELS[kernel]["file"], "--check-stage", "block", "--results-dir", results_dir]
    if unfused:
        cmd.append("--unfused")
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"tl-ptx failed: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}", file=sys.stderr)
    stem = os.path.splitext(os.path.basename(KERNELS[kernel]["file"]))[0]
    try:
        with open(os.path.join(results_dir, stem + ".json")) as f:
            j = json.load(f)
    except OSError:
        return None, None, "FAIL", " ".join(cmd)
    u = j.get("unfused", {})  # "kernels": one entry per unfused kernel
    unfused_ms = u.get("median_ms") if len(u.get("kernels", [])) > 1 else None
    return j["time"]["median_ms"], unfused_ms, (j["check"]["result"] if r.returncode == 0 else "FAIL"), " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tl-cpu", required=True)
    ap.add_argument("--peaks", help="the cpu_peaks executable (its JSON goes into the results)")
    ap.add_argument("--out", required=True, help="output path without extension (.json and .md are written)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--sizes", default="tiny,small,medium,large")
    ap.add_argument("--tl-ptx", help="also the GPU: tl-ptx (and PyTorch on CUDA) on the same kernels and shapes")
    ap.add_argument("--references", default="tiny,small",
                    help="sizes at which tl-scalar and tl-block (next to tl-cpu: ../scalar, ../block) run once, for scale")
    ap.add_argument("--all-threads-only", action="store_true", help="skip the one-thread runs")
    ap.add_argument("--no-unfused", action="store_true", help="skip the unfused runs (tl-cpu's and tl-ptx's)")
    ap.add_argument("--triton", action="store_true", help="with --tl-ptx: Triton's kernels too (bench/gpu/compare.py's)")
    ap.add_argument("--gpu-peaks", help="the GPU's measured peaks (JSON with fma_tflops, copy_gbps) for the GPU/CPU ratio")
    args = ap.parse_args()

    report = {"machine": os.uname().nodename, "threads": args.threads, "command": " ".join(sys.argv), "rows": []}
    if args.peaks:
        p = subprocess.run([args.peaks, "--threads", str(args.threads)], capture_output=True, text=True, check=True)
        report["peaks"] = json.loads(p.stdout)
    try:
        import torch
        report["torch"] = torch.__version__
    except ImportError:
        report["torch"] = None
    try:
        import numpy
        report["numpy"] = numpy.__version__
    except ImportError:
        report["numpy"] = None

    if args.gpu_peaks:
        with open(args.gpu_peaks) as f:
            report["gpu_peaks"] = json.load(f)

    results_dir = tempfile.mkdtemp(prefix="tl-cpu-suite-")
    for kernel in args.kernels.split(","):
        spec = KERNELS[kernel]
        for size in args.sizes.split(","):
            sets = spec["sizes"][size]
            shape = spec["shape"](sets)
            for threads in [args.threads] if args.all_threads_only else sorted({1, args.threads}):
                j, rc, cmd = tl_cpu(args.tl_cpu, kernel, sets, threads, results_dir, not args.no_unfused)
                row = {
                    "kernel": kernel, "size": size, "shape": shape, "threads": threads, "command": cmd,
                    "check": j["check"]["result"] if rc == 0 else "FAIL",
                    "isa": j["cpu"]["isa"], "tl_cpu_ms": j["time"]["median_ms"], "bytes": j["throughput"]["bytes"],
                    "flops": j["throughput"]["flops"], "compile_ms": j["compile_ms"]["total"],
                    "unfused_ms": j.get("unfused", {}).get("median_ms"), "unfused_kernels": j.get("unfused", {}).get("kernels"),
                    "unfused_check": j.get("unfused", {}).get("check"),
                }
                if size in args.references.split(",") and threads == args.threads:
                    stages = os.path.dirname(os.path.dirname(os.path.abspath(args.tl_cpu)))
                    row["tl_scalar_ms"] = reference_ms(os.path.join(stages, "scalar", "tl-scalar"), kernel, sets)
                    row["tl_block_ms"] = reference_ms(os.path.join(stages, "block", "tl-block"), kernel, sets)
                row["torch_ms"] = torch_ms(spec["torch"], shape, threads) if spec.get("torch") else None
                row["numpy_ms"] = numpy_ms(spec["numpy"], shape, threads) if spec.get("numpy") and report["numpy"] else None
                if args.tl_ptx and threads == args.threads:
                    row["tl_ptx_ms"], row["tl_ptx_unfused_ms"], row["tl_ptx_check"], row["tl_ptx_command"] = tl_ptx(
                        args.tl_ptx, kernel, sets, size, results_dir, not args.no_unfused)
                    row["triton_ms"] = triton_ms(kernel, shape) if args.triton else None
                    row["torch_cuda_call_ms"], row["torch_cuda_kernel_ms"] = torch_cuda_ms(spec["torch"], shape)
                report["rows"].append(row)
                print(json.dumps(row), flush=True)
                save(report, args.out)

    save(report, args.out)


def save(report, out):
    """Writes the report so far (after every row: a run cut short keeps what it measured)."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".json", "w") as f:
        json.dump(report, f, indent=2)
    with open(out + ".md", "w") as f:
        f.write(markdown(report))


def rate(row, ms):
    if ms is None or ms <= 0:
        return ""
    if row["flops"]:
        return f"{row['flops'] / ms / 1e6:.0f} GFLOP/s"
    return f"{row['bytes'] / ms / 1e6:.1f} GB/s"


def markdown(report):
    out = [f"# tl-cpu against PyTorch CPU and numpy on {report['machine']}\n",
           f"`{report['command']}` (torch {report['torch']}, numpy {report['numpy']}); medians of up to 10 runs, one run of the script.\n"]
    if "peaks" in report:
        p = report["peaks"]
        out.append(f"Measured peaks (bench/cpu/cpu_peaks, {p['cpu']}, {p['isa']}): FMA {p['fma_gflops_1_thread']} GFLOP/s on 1 thread, "
                   f"{p['fma_gflops']} on {p['threads']}; triad {p['triad_gbps_1_thread']} GB/s on 1 thread, {p['triad_gbps']} on {p['threads']}.\n")
    out.append("| kernel | size | shape | threads | check | tl-cpu | tl-cpu unfused (kernels) | PyTorch | numpy | tl-cpu / PyTorch | tl-cpu / numpy |")
    out.append("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in report["rows"]:
        t, n, c = r["torch_ms"], r["numpy_ms"], r["tl_cpu_ms"]
        ratio_t = f"{t / c:.2f}x" if t and c else ""
        ratio_n = f"{n / c:.2f}x" if n and c else ""
        torch_cell = f"{t:.3g} ms ({rate(r, t)})" if t else ""
        numpy_cell = f"{n:.3g} ms ({rate(r, n)})" if n else ""
        shape = "x".join(map(str, r["shape"]))
        u = r.get("unfused_ms")
        unfused_cell = f"{u:.3g} ms ({r['unfused_kernels']}, {r['unfused_check']})" if u else ""
        out.append(f"| {r['kernel']} | {r['size']} | {shape} | {r['threads']} | {r['check']} | {c:.3g} ms ({rate(r, c)}) | "
                   f"{unfused_cell} | {torch_cell} | {numpy_cell} | {ratio_t} | {ratio_n} |")
    refs = [r for r in report["rows"] if r.get("tl_scalar_ms") or r.get("tl_block_ms")]
    if refs:
        out.append("\n## The references, for scale\n")
        out.append("tl-scalar (one element at a time) and tl-block (a tile at a time), the interpreters every stage is "
                   "checked against: one run of the grid each, compile excluded, beside tl-cpu's median.\n")
        out.append("| kernel | size | tl-scalar | tl-block | tl-cpu | tl-cpu / tl-block speed |")
        out.append("|---|---|---:|---:|---:|---:|")
        for r in refs:
            sc, bl, c = r.get("tl_scalar_ms"), r.get("tl_block_ms"), r["tl_cpu_ms"]
            cell = lambda v: f"{v:.3g} ms" if v else ""  # noqa: E731
            out.append(f"| {r['kernel']} | {r['size']} | {cell(sc)} | {cell(bl)} | {c:.3g} ms | "
                       f"{f'{bl / c:.0f}x' if bl and c else ''} |")
    gpu = [r for r in report["rows"] if r.get("tl_ptx_ms") is not None]
    if gpu:
        out.append("\n## The GPU beside it\n")
        out.append("tl-ptx's kernel time (CUDA events, tl-ptx's own timing), PyTorch on CUDA per call (wall clock with a "
                   "synchronize: launch + kernel, what a caller waits for) and by CUDA events over 100 calls, against "
                   "tl-cpu on every core. The ratios are CPU time over GPU time (above 1: the GPU is faster). By kernel "
                   "time the GPU always wins; per call, the CPU wins where the GPU's launch and synchronize cost more "
                   "than the work.\n")
        out.append("| kernel | size | tl-cpu (all threads) | tl-ptx kernel | tl-ptx unfused | Triton | PyTorch CUDA per call | "
                   "PyTorch CUDA kernel | tl-ptx check | tl-cpu / tl-ptx kernel | tl-cpu / PyTorch CUDA per call |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
        opt = lambda v: f"{v:.3g} ms" if v else ""  # noqa: E731
        for r in gpu:
            c, g, call = r["tl_cpu_ms"], r["tl_ptx_ms"], r["torch_cuda_call_ms"]
            out.append(f"| {r['kernel']} | {r['size']} | {c:.3g} ms | {g:.3g} ms | {opt(r.get('tl_ptx_unfused_ms'))} | "
                       f"{opt(r.get('triton_ms'))} | {call:.3g} ms | {r['torch_cuda_kernel_ms']:.3g} ms | {r['tl_ptx_check']} | "
                       f"{c / g:.1f}x | {c / call:.2f}x |")
    if "peaks" in report and "gpu_peaks" in report:
        p, g = report["peaks"], report["gpu_peaks"]
        out.append(f"\nMeasured peaks, GPU over CPU: FMA {g['fma_tflops'] * 1e3 / p['fma_gflops']:.0f}x "
                   f"({g['fma_tflops']} TFLOP/s against {p['fma_gflops']} GFLOP/s), memory bandwidth "
                   f"{g['copy_gbps'] / p['triad_gbps']:.0f}x ({g['copy_gbps']} GB/s against {p['triad_gbps']} GB/s).\n")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()

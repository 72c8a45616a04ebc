#!/usr/bin/env python3
"""Draws bench/cpu/suite.py's results: throughput of tl-cpu (fused and unfused), PyTorch CPU and
numpy per kernel and size, on one thread and on every thread, one panel per kernel.

    python3 bench/cpu/plot_suite.py bench/results/cpu/suite_h200_host.json docs/img/cpu_suite_h200_host.png

GB/s of compulsory traffic for the memory-bound kernels, GFLOP/s for matmul (the suite's own
figures: every number is one of its rows). With --crossover, a run that has the GPU beside it
(suite.py --tl-ptx) is drawn as time against size instead: tl-cpu on every thread, tl-ptx's
kernel and a PyTorch CUDA call, one panel per kernel; where the CPU line is under the CUDA call's,
the CPU answers first.

    python3 bench/cpu/plot_suite.py bench/results/cpu/cpu_gpu_h200.json docs/img/cpu_gpu_crossover.png --crossover"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def crossover(report, dst):
    rows = [r for r in report["rows"] if r.get("tl_ptx_ms") is not None]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    cols = min(3, len(kernels))
    nrows = (len(kernels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.0 * nrows + 0.4), squeeze=False)
    series = [("tl-cpu, all threads", "tl_cpu_ms", "#1f77b4"), ("tl-ptx kernel", "tl_ptx_ms", "#d62728"),
              ("PyTorch CUDA per call", "torch_cuda_call_ms", "#ff7f0e")]
    for ki, k in enumerate(kernels):
        ax = axes[ki // cols][ki % cols]
        sel = sorted((r for r in rows if r["kernel"] == k), key=lambda r: r["bytes"])
        for label, key, color in series:
            ax.plot([r["bytes"] for r in sel], [r[key] * 1e3 for r in sel], "o-", label=label, color=color)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(k, fontsize=9)
        ax.set_xlabel("compulsory bytes", fontsize=8)
        ax.set_ylabel("us", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=7)
    g, p = report.get("gpu_peaks", {}), report.get("peaks", {})
    fig.suptitle(f"CPU ({report['threads']} threads) against {g.get('device', 'the GPU')}: the CPU answers first "
                 f"where its line is under the CUDA call's\n(peaks: FMA {g.get('fma_tflops', '?')} TFLOP/s vs "
                 f"{p.get('fma_gflops', '?')} GFLOP/s, bandwidth {g.get('copy_gbps', '?')} vs {p.get('triad_gbps', '?')} GB/s)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        report = json.load(f)
    if "--crossover" in sys.argv[3:]:
        crossover(report, dst)
        return
    rows = report["rows"]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    threads = sorted({r["threads"] for r in rows})
    fig, axes = plt.subplots(len(threads), len(kernels), figsize=(3.2 * len(kernels), 3.0 * len(threads)), squeeze=False)
    series = [("tl-cpu", "tl_cpu_ms", "#1f77b4"), ("tl-cpu unfused", "unfused_ms", "#9ecae1"),
              ("PyTorch", "torch_ms", "#ff7f0e"), ("numpy", "numpy_ms", "#2ca02c")]
    for ti, t in enumerate(threads):
        for ki, k in enumerate(kernels):
            ax = axes[ti][ki]
            sel = [r for r in rows if r["kernel"] == k and r["threads"] == t]
            sizes = [r["size"] for r in sel]
            flops = bool(sel and sel[0]["flops"])
            width = 0.8 / len(series)
            for si, (label, key, color) in enumerate(series):
                vals = []
                for r in sel:
                    ms = r.get(key)
                    if key == "unfused_ms" and r.get("unfused_kernels", 0) <= 1:
                        ms = None  # one kernel: nothing to unfuse
                    work = r["flops"] if flops else r["bytes"]
                    vals.append(work / ms / 1e6 if ms else 0)
                ax.bar([x + si * width for x in range(len(sel))], vals, width, label=label, color=color)
            ax.set_xticks([x + 0.4 - width / 2 for x in range(len(sel))])
            ax.set_xticklabels(sizes, fontsize=8)
            ax.set_title(f"{k}, {t} thread{'s' if t > 1 else ''}", fontsize=9)
            ax.set_ylabel("GFLOP/s" if flops else "GB/s", fontsize=8)
            ax.tick_params(axis="y", labelsize=7)
    axes[0][0].legend(fontsize=7)
    peaks = report.get("peaks", {})
    fig.suptitle(f"tl-cpu against PyTorch CPU and numpy, {peaks.get('cpu', report['machine'])} "
                 f"({peaks.get('threads', '')} threads; triad {peaks.get('triad_gbps', '?')} GB/s, "
                 f"FMA {peaks.get('fma_gflops', '?')} GFLOP/s measured)", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()

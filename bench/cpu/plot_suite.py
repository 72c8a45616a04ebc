#!/usr/bin/env python3
"""Draws bench/cpu/suite.py's results: throughput of tl-cpu (fused and unfused), PyTorch CPU and
numpy per kernel and size, on one thread and on every thread, one panel per kernel.

    python3 bench/cpu/plot_suite.py bench/results/cpu/suite_h200_host.json docs/img/cpu_suite_h200_host.png

GB/s of compulsory traffic for the memory-bound kernels, GFLOP/s for matmul (the suite's own
figures: every number is one of its rows)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        report = json.load(f)
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

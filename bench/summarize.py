#!/usr/bin/env python3
"""Turns Google Benchmark JSON from bench_interpreters into a markdown table of
scalar vs block times and the speed-up, one row per kernel (median of the repetitions
when --benchmark_repetitions was used, else the single measurement)."""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    data = json.load(open(path))
    times = defaultdict(list)  # (engine, kernel) -> [ms]
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        engine, kernel = b["run_name"].split("/")[:2]
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        times[(engine, kernel)].append(b["real_time"] * scale)
    kernels = sorted({k for _, k in times})
    print("| kernel | tl-scalar (ms) | tl-block (ms) | speed-up |")
    print("|---|---:|---:|---:|")
    for k in kernels:
        s = statistics.median(times[("scalar", k)])
        b = statistics.median(times[("block", k)])
        print(f"| {k} | {s:.2f} | {b:.3f} | {s / b:.1f}x |")
    ctx = data.get("context", {})
    print(f"\nMachine: {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
          f"load average {ctx.get('load_avg')}, {ctx.get('date')}. Medians of "
          f"{max(len(v) for v in times.values())} repetitions in one run.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/interpreters.json")

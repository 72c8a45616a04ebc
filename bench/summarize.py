#!/usr/bin/env python3
"""Turns Google Benchmark JSON from bench/ into a markdown table: one row per kernel, one
column per engine (the part of the benchmark name before the first '/'), each cell the median
over the repetitions of one run (--benchmark_repetitions=N). When both `scalar` and `block`
columns exist, a speed-up column (scalar / block) is added.

    python3 bench/summarize.py bench/results/interpreters.json
"""
import json
import statistics
import sys
from collections import defaultdict

UNIT_MS = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}


def main(path):
    data = json.load(open(path))
    times = defaultdict(list)  # (engine, kernel) -> [ms]
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        engine, kernel = b["run_name"].split("/")[:2]
        times[(engine, kernel)].append(b["real_time"] * UNIT_MS[b["time_unit"]])
    engines = sorted({e for e, _ in times}, key=lambda e: (e != "scalar", e))
    kernels = sorted({k for _, k in times})
    ratio = "scalar" in engines and "block" in engines
    head = ["kernel"] + [f"{e} (ms)" for e in engines] + (["speed-up"] if ratio else [])
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for k in kernels:
        med = {e: statistics.median(times[(e, k)]) for e in engines if (e, k) in times}
        cells = [f"{med[e]:.3g}" if e in med else "" for e in engines]
        if ratio:
            cells.append(f"{med['scalar'] / med['block']:.1f}x")
        print(f"| {k} | " + " | ".join(cells) + " |")
    ctx = data.get("context", {})
    reps = max(len(v) for v in times.values())
    print(f"\nMachine: {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, load average "
          f"{[round(x, 2) for x in ctx.get('load_avg', [])]}, {ctx.get('date')}. "
          f"Medians of {reps} repetitions in one run.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/interpreters.json")

#!/usr/bin/env python3
"""Puts the simulator's numbers beside what the H200 measured, and writes docs/fidelity.md.

Counters: every kernel in kernels/ at its default launch, tl-sim's report (--report) against
Nsight Compute's counters from bench/results/gpu/ncu.csv (made on the H200 by
bench/gpu/run_h200.sh: `ncu --clock-control none`, one launch per kernel).
Time: tl-sim's predicted time against tl-ptx's measured median from
bench/results/gpu/compare.json, at the memory-bound shapes of that comparison.

    python3 scripts/fidelity.py [--tl-sim build/stages/sim/tl-sim] [--out docs/fidelity.md]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

COUNTERS = [  # (Nsight Compute metric, target: "exact" or a tolerance in percent)
    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "exact"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "exact"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "exact"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "exact"),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "5"),
    ("dram__bytes_read.sum", "5"),
    ("dram__bytes_write.sum", "5"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "exact"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "exact"),
]


def ncu_counters(path):
    data = defaultdict(dict)
    for r in csv.reader(open(path)):
        if len(r) != 16 or r[1] == "ID":
            continue
        data[r[0]][r[13]] = float(r[15].replace(",", ""))
    return data


def sim_report(tl_sim, kernel, sets=(), extra=()):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [tl_sim, kernel, "--report", out, "--no-unfused", "-q"] + list(extra)
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, capture_output=True)
        return json.load(open(out))


def metrics_of(report):
    return {m["metric"]: m["value"] for m in report["memory"]["ncu_metrics"]}


def fmt_or_dash(value, spec, suffix=""):
    """A number of the tl-sim report, or a dash where it is null (a results file without a GPU run)."""
    return "—" if value is None else format(value, spec) + suffix


def verdict(measured, simulated, target):
    if target == "exact":
        return "=" if measured == simulated else "differs"
    if measured == 0:
        return "=" if simulated == 0 else "differs"
    err = 100.0 * (simulated - measured) / measured
    return f"{err:+.1f}%" + ("" if abs(err) <= float(target) else " (over)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tl-sim", default="build/stages/sim/tl-sim")
    ap.add_argument("--ncu", default="bench/results/gpu/ncu.csv")
    ap.add_argument("--compare", default="bench/results/gpu/compare.json")
    ap.add_argument("--ncu-large", default="bench/results/gpu/ncu_large.csv",
                    help="ncu at the shapes of bench/gpu/large_shapes.txt (run_h200.sh step ncu-large)")
    ap.add_argument("--measured", default="bench/results/gpu/res/warm",
                    help="tl-ptx results per kernel (registers and blocks/SM from the driver)")
    ap.add_argument("--out", default="docs/fidelity-tables.md")
    args = ap.parse_args()
    ncu = ncu_counters(args.ncu)
    lines = ["## Counters at each kernel's default launch", "",
             "Measured: `ncu --clock-control none` on the H200 (bench/results/gpu/ncu.csv). "
             "Simulated: `tl-sim kernels/<k>.tl --report` on sim/gpus/h200.json. "
             "`=`: equal; a percentage: (simulated - measured) / measured.", ""]
    summary = defaultdict(lambda: [0, 0])  # metric -> [met, total]
    for kernel in sorted(ncu):
        path = f"kernels/{kernel}.tl"
        if not os.path.exists(path):
            continue
        sim = metrics_of(sim_report(args.tl_sim, path))
        lines += [f"### {kernel}", "", "| metric | H200 (ncu) | simulator | agreement |", "|---|---:|---:|---|"]
        for metric, target in COUNTERS:
            if metric not in ncu[kernel] or metric not in sim:
                continue
            m, s = ncu[kernel][metric], sim[metric]
            v = verdict(m, s, target)
            ok = v == "=" or (v.endswith("%") and "over" not in v)
            summary[metric][0] += ok
            summary[metric][1] += 1
            lines.append(f"| `{metric}` | {m:,.0f} | {s:,.0f} | {v} |")
        lines.append("")
    head = ["## Summary of the counters", "", "| metric | target | kernels meeting it |", "|---|---|---:|"]
    for metric, target in COUNTERS:
        met, total = summary[metric]
        if total:
            head.append(f"| `{metric}` | {'exact' if target == 'exact' else 'within ' + target + '%'} | {met} of {total} |")
    lines = head + [""] + lines

    # Occupancy: ptxas' registers through the occupancy model against the driver's
    # CU_FUNC_ATTRIBUTE_NUM_REGS and cuOccupancyMaxActiveBlocksPerMultiprocessor.
    lines += ["## Occupancy against the driver", "",
              "Measured: tl-ptx on the H200 (bench/results/gpu/res/warm/<k>.json: the driver's register count and "
              "`cuOccupancyMaxActiveBlocksPerMultiprocessor`). Simulated: `tl-sim kernels/<k>.tl --measured "
              "<that file>`, registers from `ptxas -v` here (`--registers-from ptxas`), blocks per SM from "
              "sim/Occupancy.cpp.", "",
              "| kernel | registers (driver) | registers (ptxas here) | blocks/SM (driver) | blocks/SM (model) | "
              "limiter (model) | agreement | time measured (us) | predicted (us) | error |",
              "|---|---:|---:|---:|---:|---|---|---:|---:|---:|"]
    occ_met = occ_total = 0
    for name in sorted(os.listdir(args.measured)) if os.path.isdir(args.measured) else []:
        kernel = f"kernels/{name[:-5]}"
        if not name.endswith(".json") or not os.path.exists(kernel + ".tl"):
            continue
        res = json.load(open(os.path.join(args.measured, name)))
        sets = [f"{k}={v}" for k, v in res.get("sizes", {}).items()]
        rep = sim_report(args.tl_sim, kernel + ".tl", sets,
                         ["--num-warps", str(res["num_warps"]), "--measured", os.path.join(args.measured, name)])
        m = rep["measured"]
        ok = m["occupancy_agrees"] and m["registers"] == rep["registers"]["per_thread"]
        occ_met += ok
        occ_total += 1
        lines.append(f"| {name[:-5]} | {m['registers']} | {rep['registers']['per_thread']} | {m['blocks_per_sm']} | "
                     f"{m['blocks_per_sm_predicted']} | {rep['occupancy']['limiter']} | {'=' if ok else 'differs'} | "
                     f"{fmt_or_dash(m['median_us'], '.1f')} | {m['predicted_us']:.1f} | "
                     f"{fmt_or_dash(None if m['time_error'] is None else 100 * m['time_error'], '+.1f', '%')} |")
    lines += ["", f"Registers and blocks per SM equal on {occ_met} of {occ_total} kernels. The times of these small "
              "default launches (a few microseconds, mostly launch overhead) are shown for reference, not as a "
              "target (docs/fidelity.md).", ""]

    # Shapes whose traffic overflows the L2: DRAM writes during the kernel, re-reads.
    if os.path.exists(args.ncu_large):
        large = ncu_counters(args.ncu_large)
        shapes = {}
        for line in open("bench/gpu/large_shapes.txt"):
            if line.strip() and not line.startswith("#"):
                label, kernel, warps, *sets = line.split()
                shapes[label] = (kernel, warps, sets)
        lines += ["## Counters at shapes larger than the L2", "",
                  "Measured: `STEPS=ncu-large bash bench/gpu/run_h200.sh` on the H200 "
                  "(bench/results/gpu/ncu_large.csv, shapes in bench/gpu/large_shapes.txt). "
                  "Simulated: tl-sim with the same overrides and num_warps (sampled blocks, counts scaled).", ""]
        for label in [l for l in shapes if l in large]:
            kernel, warps, sets = shapes[label]
            sim = metrics_of(sim_report(args.tl_sim, kernel, sets, ["--num-warps", warps]))
            lines += [f"### {label}", "", "| metric | H200 (ncu) | simulator | agreement |", "|---|---:|---:|---|"]
            for metric, target in COUNTERS:
                if metric in large[label] and metric in sim:
                    m, v = large[label][metric], sim[metric]
                    lines.append(f"| `{metric}` | {m:,.0f} | {v:,.0f} | {verdict(m, v, target)} |")
            lines.append("")
            print(f"large shape {label} done", flush=True)

    # Time at the comparison's memory-bound shapes.
    rows = json.load(open(args.compare))["rows"]
    lines += ["## Predicted time against the measured median", "",
              "Measured: tl-ptx's median (CUDA events, L2 flushed) in bench/results/gpu/compare.json. "
              "Simulated: tl-sim with the same `--set` overrides and num_warps (sampled blocks, scaled).", "",
              "| kernel | shape | measured (us) | predicted (us) | error |", "|---|---|---:|---:|---:|"]
    for r in rows:
        t = r["tilelab"]
        if "flops" in r or "error" in t or not t.get("gpu", {}).get("ran"):
            continue
        kernel = t["source"]
        sets = [f"{k}={v}" for k, v in t["sizes"].items()]
        rep = sim_report(args.tl_sim, kernel, sets, ["--num-warps", str(t["num_warps"])])
        pred = rep["timing"]["time_us"]
        meas = t["time"]["median_ms"] * 1e3
        lines.append(f"| {os.path.basename(kernel)} | {r['shape']} | {meas:.1f} | {pred:.1f} | "
                     f"{100.0 * (pred - meas) / meas:+.1f}% |")
        print(lines[-1], flush=True)
    open(args.out, "w").write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# One call on the GPU machine: the "Measured on the H200" tables of labs/*/README.md, each row
# run with exactly the command the handout quotes, then one table row per results file.
#
#   here:  strip -o gpu-carry/tl-ptx build/stages/ptx/tl-ptx && gzip -f gpu-carry/tl-ptx
#   device run: bash bench/gpu/lab_handouts_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/handouts.log (every tl-ptx run) and $OUT/handouts.md (the table).
source "$(dirname "$0")/setup.sh"
cd "$(dirname "$0")/../.."
rm -rf out/lab1 out/lab2 out/lab3 out/lab4

# label | arguments, exactly as the handouts quote them after `tl-ptx`
ROWS=(
  "lab1 strided stride 1|kernels/strided_copy.tl --set N=500000 --set stride=1 --results-dir out/lab1/s1"
  "lab1 strided stride 8|kernels/strided_copy.tl --set N=500000 --set stride=8 --results-dir out/lab1/s8"
  "lab1 starter 1024|labs/01-coalescing/starter.tl --keep-layouts --set M=1024 --set N=1024 --results-dir out/lab1/starter"
  "lab1 solution 1024|labs/01-coalescing/solution.tl --keep-layouts --set M=1024 --set N=1024 --results-dir out/lab1/solution"
  "lab1 trans_bank_conflicts 1024|labs/01-coalescing/wrong/trans_bank_conflicts.tl --keep-layouts --set M=1024 --set N=1024 --results-dir out/lab1/conflicts"
  "lab1 starter 2048|labs/01-coalescing/starter.tl --keep-layouts --set M=2048 --set N=2048 --results-dir out/lab1/starter2048"
  "lab1 solution 2048|labs/01-coalescing/solution.tl --keep-layouts --set M=2048 --set N=2048 --results-dir out/lab1/solution2048"
  "lab2 starter|labs/02-occupancy/starter.tl --results-dir out/lab2/starter"
  "lab2 solution|labs/02-occupancy/solution.tl --results-dir out/lab2/solution"
  "lab2 starter BLOCK 4096|labs/02-occupancy/starter.tl --set BLOCK=4096 --results-dir out/lab2/ilp"
  "lab3 starter|labs/03-fusion/starter.tl --results-dir out/lab3/starter"
  "lab3 solution (+unfused)|labs/03-fusion/solution.tl --unfused --results-dir out/lab3/solution"
  "lab4 solution 2^20|labs/04-reduction/solution.tl --set N=1048576 --atol 1e-3 --results-dir out/lab4/solution"
  "lab4 interleaved 2^20|labs/04-reduction/wrong/interleaved.tl --set N=1048576 --atol 1e-3 --results-dir out/lab4/interleaved"
  "lab4 solution 2^26|labs/04-reduction/solution.tl --set N=67108864 --atol 1e-3 --results-dir out/lab4/solution-2e26"
  "lab4 interleaved 2^26|labs/04-reduction/wrong/interleaved.tl --set N=67108864 --atol 1e-3 --results-dir out/lab4/interleaved-2e26"
)
: > "$OUT/handouts.log"
for row in "${ROWS[@]}"; do
  label=${row%%|*}
  args=${row#*|}
  echo "### $label: tl-ptx $args" >> "$OUT/handouts.log"
  # shellcheck disable=SC2086
  /tmp/tl-ptx $args >> "$OUT/handouts.log" 2>&1
  echo "exit $?" >> "$OUT/handouts.log"
done

python3 - "$OUT/handouts.md" "${ROWS[@]}" <<'EOF'
import glob, json, os, sys
out, rows = sys.argv[1], sys.argv[2:]
lines = ["| row | median (us) | GB/s | check | unfused median (us) | unfused / fused | command |",
         "|---|---:|---:|---|---:|---:|---|"]
for row in rows:
    label, args = row.split("|", 1)
    d = args.split("--results-dir ")[1].split()[0]
    files = glob.glob(os.path.join(d, "*.json"))
    if not files:
        lines.append(f"| {label} | - | - | no results | | | `tl-ptx {args}` |")
        continue
    r = json.load(open(files[0]))
    med = (r.get("time") or {}).get("median_ms")
    gbs = (r.get("throughput") or {}).get("gb_per_s", 0)
    check = (r.get("check") or {}).get("result", "-")
    u = r.get("unfused") or {}
    um, ratio = u.get("median_ms"), u.get("ratio_vs_fused")
    if med is None:
        lines.append(f"| {label} | - | - | {check} | | | `tl-ptx {args}` |")
        continue
    lines.append(f"| {label} | {med * 1e3:.1f} | {gbs:.0f} | {check} | "
                 f"{'' if um is None else f'{um * 1e3:.1f}'} | {'' if ratio is None else f'{ratio:.2f}x'} | "
                 f"`tl-ptx {args}` |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

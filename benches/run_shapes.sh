#!/usr/bin/env bash
# Issue 47: DRFH (and k-DF, TSF) on the shapes of real clusters, not only
# the generator's `heterogeneous`: every shape of `leontief generate
# shaped` at each size, resource count and seed, end to end with
# verification, one process per run; then the worst cell per size, which
# is what the REPORT states.
#
#   bash benches/run_shapes.sh                 # the grid below
#   SIZES="300x3000" RES="2 4" SEEDS="1" MECHS="drfh" bash benches/run_shapes.sh
#
# SCALE_TIMEOUT (default 120 s) bounds each run; a run past it is a miss.
# Each row has the run's peak resident memory (GNU time's %M).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release -q -p leontief-cli
L="$CARGO_TARGET_DIR/release/leontief"
T="${SCALE_TIMEOUT:-120}"
SIZES="${SIZES:-300x3000 1000x5000 1000x10000 2000x5000}"
RES="${RES:-2 3 4 6}"
SEEDS="${SEEDS:-1 2 3}"
MECHS="${MECHS:-drfh kdf tsf}"
SHAPES="${SHAPES:-capacity=uniform:0.1,demand=lognormal capacity=pools:8 capacity=google demand=bimodal demand=few-huge gpu=0.2 placement=attribute:4 weights,caps=0.5}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "| size | resources | shape | seed | mechanism | seconds | status | verified | path | peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in $SIZES; do
  n="${size%x*}"; k="${size#*x}"
  for m in $RES; do
    for shape in $SHAPES; do
      for seed in $SEEDS; do
        "$L" generate shaped --users "$n" --servers "$k" --resources "$m" --seed "$seed" --shape "$shape" > "$tmp/i.json"
        for mech in $MECHS; do
          extra=(); name="$mech"
          [ "$mech" = kdf ] && extra=(--k 2) && name="kdf:2"
          s=$(date +%s.%N)
          if /usr/bin/time -f "%M" -o "$tmp/rss" timeout "$T" "$L" solve "$tmp/i.json" --mechanism "$mech" "${extra[@]}" > "$tmp/o.json" 2>/dev/null; then
            e=$(date +%s.%N)
            python3 - "$tmp/o.json" "$size" "$m" "$shape" "$seed" "$name" "$(echo "$e - $s" | bc)" "$(tail -1 "$tmp/rss")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = (d.get("verification") or {}).get("ok")
path = (d.get("certificate") or {}).get("path", "")
mb = int(sys.argv[8]) // 1024
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {sys.argv[6]} | {float(sys.argv[7]):.2f} | {d['status']} | {v} | {path} | {mb} |")
PY
          else
            echo "| $size | $m | $shape | $seed | $name | > $T | timed out or failed | | | |"
          fi
        done
      done
    done
  done
done | tee "$tmp/rows.md"
echo
echo "| size | worst cell | seconds |"
echo "|---|---|---|"
python3 - "$tmp/rows.md" <<'PY'
import sys
worst = {}
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) < 10 or c[0] in ("size", "---"):
        continue
    t = float("inf") if c[5].startswith(">") else float(c[5])
    bad = c[6] != "optimal" or c[7] != "True"
    key = (t if not bad else float("inf"), t)
    if c[0] not in worst or key > worst[c[0]][0]:
        worst[c[0]] = (key, f"{c[4]} m={c[1]} {c[2]} seed {c[3]} ({c[6]}, verified {c[7]})", c[5])
for size, (_, cell, t) in worst.items():
    print(f"| {size} | {cell} | {t} |")
PY

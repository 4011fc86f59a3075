#!/usr/bin/env bash
# Issue 48: the hierarchical mechanisms at scale. Generated clusters with a
# queue tree (`leontief generate shaped --shape queues=Q:L,...`), end to
# end with verification, one process per run, beside flat drfh on the
# same instance (what a user without a hierarchical solver runs).
#
#   bash benches/run_hier.sh
#   SIZES="1000x10000" TREES="100:3" MECHS="hdrf" bash benches/run_hier.sh
#
# HIER_TIMEOUT (default 120 s) bounds each run; a run past it is a miss.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release -q -p leontief-cli
L="$CARGO_TARGET_DIR/release/leontief"
T="${HIER_TIMEOUT:-120}"
SIZES="${SIZES:-100x100 300x1000 1000x10000}"
TREES="${TREES:-10:2 100:3}"
SHAPES="${SHAPES:-gpu=0.2,weights capacity=pools:8 placement=attribute:4}"
RES="${RES:-3}"
SEEDS="${SEEDS:-1 2}"
MECHS="${MECHS:-hdrf hdrfh drfh}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "| size | resources | tree | shape | seed | mechanism | seconds | status | verified | phases | LPs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for size in $SIZES; do
  n="${size%x*}"; k="${size#*x}"
  for m in $RES; do
    for tree in $TREES; do
      for shape in $SHAPES; do
        for seed in $SEEDS; do
          "$L" generate shaped --users "$n" --servers "$k" --resources "$m" --seed "$seed" \
            --shape "queues=$tree,$shape" > "$tmp/i.json"
          for mech in $MECHS; do
            s=$(date +%s.%N)
            if timeout "$T" "$L" solve "$tmp/i.json" --mechanism "$mech" > "$tmp/o.json" 2>/dev/null; then
              e=$(date +%s.%N)
              python3 - "$tmp/o.json" "$size" "$m" "$tree" "$shape" "$seed" "$mech" "$(echo "$e - $s" | bc)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = (d.get("verification") or {}).get("ok")
h = d.get("hierarchy") or {}
phases = len(h.get("phases", [])) if h else ""
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {sys.argv[6]} | {sys.argv[7]} | {float(sys.argv[8]):.2f} | {d['status']} | {v} | {phases} | {d.get('lps_solved', '')} |")
PY
            else
              echo "| $size | $m | $tree | $shape | $seed | $mech | > $T | timed out or failed | | | |"
            fi
          done
        done
      done
    done
  done
done

#!/usr/bin/env bash
# Regenerates the figures of benches/REPORT.md: the one-shot scale runs
# (one process per size, so peak memory is per size), then criterion.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release -q -p leontief-benches --bin scale
S="$CARGO_TARGET_DIR/release/scale"
first=1
for spec in "google 10 100" "google 100 100" "google 1000 100" \
            "hetero 10 100" "hetero 100 100" "hetero 1000 100" \
            "hetero 10 1000" "hetero 100 1000" "hetero 1000 1000" \
            "hetero 10 10000" "hetero 100 10000" "hetero 1000 10000"; do
  if [ $first = 1 ]; then timeout "${SCALE_TIMEOUT:-1800}" $S $spec || echo "| $spec | timed out or failed |"; first=0
  else timeout "${SCALE_TIMEOUT:-1800}" $S $spec | tail -n 1 || echo "| $spec | timed out or failed |"; fi
done
cargo bench -p leontief-benches --bench drfh -- --noplot 2>&1 | grep -E "^(drfh|maxmin_scale|maxmin_shapes)/|time:" || true
# Issue 6: heuristics and the simulator.
cargo build --release -q -p leontief-benches --bin sim_scale
for spec in "best-fit 1000 6.6e5" "best-fit 1000 1e6" "first-fit 1000 6.6e5" \
            "simulate 2000 1e6 best-fit" "simulate 2000 1e6 first-fit" "simulate 2000 1e6 slots14"; do
  timeout "${SCALE_TIMEOUT:-1800}" "$CARGO_TARGET_DIR/release/sim_scale" $spec || echo "| $spec | timed out or failed |"
done
cargo bench -p leontief-benches --bench sim -- --noplot 2>&1 | grep -E "^(heuristics|simulate)/|time:" | paste - - || true
# Issue 3: warm-started sweeps (the line, regions B and A), and the
# CVXPY + Clarabel reference when cvxpy is installed (pip install cvxpy
# clarabel; not a dependency of leontief).
cargo build --release -q -p leontief-benches --bin fds_sweep
for spec in "10000 4 fds" "10000 4 gfj" "1000 10 fds" "10000 4 fds -1" "10000 4 gfj -1" \
            "1000 10 fds -1" "10000 4 fds 2" "1000 10 fds 2"; do
  timeout "${SCALE_TIMEOUT:-1800}" "$CARGO_TARGET_DIR/release/fds_sweep" $spec || echo "| fds_sweep $spec | timed out or failed |"
done
if python3 -c "import cvxpy" 2>/dev/null; then
  for bl in "0.5 1" "2 -0.5" "0.5 2" "0.25 5" "0.95 2" "2 -1" "3 -2" "5 -4" "8 -7"; do
    python3 benches/reference/cvxpy_fds.py 10000 4 $bl || true
  done
fi
# Issue 5: server-based mechanisms.
cargo build --release -q -p leontief-benches --bin vds_scale
for spec in "psdsf 200 200 20" "psdsf 200 200 50" "psdsf 1000 100 10" "psdsf 1000 100 50" \
  "psdsf 1000 1000 20" "psdsf 1000 1000 50" "psdsf 200 200 50 plain" "psdsf 1000 1000 50 plain" \
  "pf 1000 1000 50" "vds 3 200 50 10"; do
  timeout "${SCALE_TIMEOUT:-1800}" "$CARGO_TARGET_DIR/release/vds_scale" $spec || echo "| vds_scale $spec | timed out or failed |"
done
cargo bench -p leontief-benches --bench vds -- --noplot 2>&1 | grep -E "^psdsf/|time:" | paste - - || true
# Issue 19: the max-min family at datacenter scale (its own script).
bash benches/run_maxmin.sh
# Issue 45: the Alibaba GPU cluster (LEONTIEF_DATA, default ../shared/data),
# listed and merged, beside highspy's interior point when it is installed.
cargo build --release -q -p leontief-cli
if [ -d "${LEONTIEF_DATA:-../shared/data}/alibaba-gpu-v2023" ]; then
  PYTHON="${PYTHON:-$HOME/.cache/leontief-venv/bin/python}" python3 benches/real_clusters.py --timeout "${SCALE_TIMEOUT:-300}" || echo "| real clusters | failed |"
else
  echo "real clusters: ${LEONTIEF_DATA:-../shared/data}/alibaba-gpu-v2023 is missing (set LEONTIEF_DATA)"
fi
# Issue 47: the shapes of real clusters (generate shaped); the REPORT's
# table is this reduced grid (the full grid: bash benches/run_shapes.sh).
SIZES="300x3000" RES="2 4" SEEDS="1" MECHS="drfh" bash benches/run_shapes.sh

#!/usr/bin/env bash
# Issue 19: the max-min family at datacenter scale, end to end with
# verification (one process per size: peak memory per size), beside
# highspy's interior point on the flat LP (7) in the same run when numpy
# and highspy are importable (pip install highspy numpy).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release -q -p leontief-benches --bin maxmin_scale -p leontief-cli
S="$CARGO_TARGET_DIR/release/maxmin_scale"
L="$CARGO_TARGET_DIR/release/leontief"
PY="${LEONTIEF_REF_PYTHON:-python3}"
T="${SCALE_TIMEOUT:-900}"
echo "| mechanism | instance | pairs | path | columns | pricing passes | solve s | end to end s | verified (by) | status | peak RSS MB | |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
while read -r spec; do
  [ -z "$spec" ] && continue
  timeout "$T" $S $spec || echo "| $spec | timed out after $T s or failed | | | | | | | | | | |"
done <<'GRID'
drfh google 1000 0 2 1
drfh google-listed 1000 12583 2 1
drfh hetero 100 1000 2 1
drfh hetero 100 1000 2 2
drfh hetero 100 1000 2 3
drfh hetero 100 1000 3 1
drfh hetero 100 1000 4 1
drfh hetero 300 3000 2 1
drfh hetero 300 3000 2 2
drfh hetero 300 3000 2 3
drfh hetero 300 3000 3 1
drfh hetero 300 3000 4 1
drfh placement 1000 1000 2 1 50
drfh placement 300 3000 2 1 10
drfh placement 300 3000 3 1 10
drfh placement 300 3000 4 1 10
drfh placement 1000 10000 2 1 10
drfh placement 1000 10000 2 2 10
drfh placement 1000 10000 2 3 10
drfh placement 1000 10000 3 1 10
drfh placement 1000 10000 3 2 10
drfh placement 1000 10000 4 1 10
drfh placement 1000 10000 3 3 10
drfh placement 1000 10000 4 2 10
drfh placement 1000 10000 4 3 10
kdf2 placement 1000 10000 2 1 10
tsf placement 1000 10000 2 1 10
drfh hetero 1000 10000 2 1
drfh hetero 1000 10000 2 2
drfh hetero 1000 10000 2 3
drfh hetero 1000 10000 3 1
kdf2 hetero 1000 10000 2 1
tsf hetero 1000 10000 2 1
nfc hetero 1000 10000 2 1
drfh hetero 3000 3000 4 1
drfh hetero 10000 10000 2 1
drfh hetero 10000 10000 3 1
drfh hetero 10000 10000 4 1
kdf2 hetero 10000 10000 2 1
tsf hetero 10000 10000 3 1
GRID
if "$PY" -c "import highspy, numpy" 2>/dev/null; then
  echo
  echo "| reference | instance | pairs | build s | HiGHS s | status | theta* |"
  echo "|---|---|---|---|---|---|---|"
  tmp=$(mktemp -d)
  for nk in "100 1000" "300 3000" "1000 10000"; do
    set -- $nk
    "$L" generate heterogeneous --users "$1" --servers "$2" --seed 1 > "$tmp/h.json"
    timeout "$T" "$PY" benches/reference/highspy_drfh.py "$tmp/h.json" ipm || echo "| highspy ipm | hetero $1 x $2 | | | timed out after $T s | | |"
  done
  rm -rf "$tmp"
fi
# criterion where ten samples fit (100 x 1,000, 2-4 resources).
cargo bench -p leontief-benches --bench drfh -- maxmin_scale --noplot 2>&1 | grep -E "^maxmin_scale/|time:" | paste - - || true

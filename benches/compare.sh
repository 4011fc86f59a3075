#!/usr/bin/env bash
# Two leontief binaries on the same instances, one right after the other
# (A B A B ...), end to end as `leontief solve` runs them: the check that
# a change of structure left speed and answers as they were.
#
#   bash benches/compare.sh OLD_BINARY NEW_BINARY [RUNS]
#
# Prints one row per instance: the best of RUNS wall times of each, the
# largest peak memory (RSS) of each, the statuses, whether both verified,
# and the largest relative difference of any user's task total between
# the two answers.
set -euo pipefail
A="$1"; B="$2"; RUNS="${3:-3}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gen() { "$B" generate "$@"; }
while read -r name mech args; do
  [ -z "$name" ] && continue
  gen $args > "$tmp/$name.json"
  echo "$name $mech" >> "$tmp/list"
done <<'GRID'
google-1000 drfh google-cell --users 1000 --seed 1
hetero-100x1000-m2 drfh heterogeneous --users 100 --servers 1000 --resources 2 --seed 1
hetero-100x1000-m3 drfh heterogeneous --users 100 --servers 1000 --resources 3 --seed 1
hetero-100x1000-m4-s2 drfh heterogeneous --users 100 --servers 1000 --resources 4 --seed 2
hetero-300x3000-m4 drfh heterogeneous --users 300 --servers 3000 --resources 4 --seed 1
hetero-1000x10000-m2 drfh heterogeneous --users 1000 --servers 10000 --resources 2 --seed 1
hetero-1000x10000-m3 drfh heterogeneous --users 1000 --servers 10000 --resources 3 --seed 1
hetero-5000x40-m3 drfh heterogeneous --users 5000 --servers 40 --resources 3 --seed 3
kdf2-1000x10000 kdf:2 heterogeneous --users 1000 --servers 10000 --resources 2 --seed 1
tsf-1000x10000 tsf heterogeneous --users 1000 --servers 10000 --resources 2 --seed 1
placement-100x1000-m3 drfh placement --users 100 --servers 1000 --resources 3 --eligible 10 --seed 1
placement-300x3000-m4 drfh placement --users 300 --servers 3000 --resources 4 --eligible 10 --seed 1
placement-1000x10000-m2 drfh placement --users 1000 --servers 10000 --resources 2 --eligible 10 --seed 1
nfc-1000x10000 nfc heterogeneous --users 1000 --servers 10000 --resources 2 --seed 1
drf-1000x10000 drf heterogeneous --users 1000 --servers 10000 --resources 2 --seed 1
hetero-10000x10000-m2 drfh heterogeneous --users 10000 --servers 10000 --resources 2 --seed 1
hetero-10000x10000-m4 drfh heterogeneous --users 10000 --servers 10000 --resources 4 --seed 1
GRID
echo "| instance | mechanism | before s (best of $RUNS) | after s (best of $RUNS) | before MB | after MB | statuses | verified | max rel. diff of user totals |"
echo "|---|---|---|---|---|---|---|---|---|"
while read -r name mech; do
  i="$tmp/$name.json"
  m="${mech%%:*}"; extra=()
  [ "$m" != "$mech" ] && extra=(--k "${mech#*:}")
  ta=(); tb=(); ma=(); mb=()
  for _ in $(seq "$RUNS"); do
    for side in A B; do
      bin="$A"; [ $side = B ] && bin="$B"
      s=$(date +%s.%N)
      /usr/bin/time -f %M -o "$tmp/$side.mem" "$bin" solve "$i" --mechanism "$m" "${extra[@]}" > "$tmp/$side.out" 2>/dev/null || true
      e=$(date +%s.%N)
      t=$(echo "$e - $s" | bc)
      kb=$(tail -1 "$tmp/$side.mem")
      if [ $side = A ]; then ta+=("$t"); ma+=("$kb"); else tb+=("$t"); mb+=("$kb"); fi
    done
  done
  python3 - "$tmp/A.out" "$tmp/B.out" "$name" "$mech" "${ta[*]}" "${tb[*]}" "${ma[*]}" "${mb[*]}" <<'PY'
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return {}
a, b = load(sys.argv[1]), load(sys.argv[2])
ta = min(float(x) for x in sys.argv[5].split())
tb = min(float(x) for x in sys.argv[6].split())
mem = lambda s: max(int(x) for x in s.split()) / 1024
ua, ub = a.get("user_tasks") or [], b.get("user_tasks") or []
diff = max((abs(x - y) / max(abs(x), abs(y), 1e-300) for x, y in zip(ua, ub)), default=float("nan"))
if len(ua) != len(ub):
    diff = float("nan")
ver = lambda d: (d.get("verification") or {}).get("ok")
print(f"| {sys.argv[3]} | {sys.argv[4]} | {ta:.2f} | {tb:.2f} | {mem(sys.argv[7]):.0f} | {mem(sys.argv[8]):.0f} | {a.get('status')} / {b.get('status')} | {ver(a)} / {ver(b)} | {diff:.1e} |")
PY
done < "$tmp/list"

#!/usr/bin/env bash
# Fuzz every cargo-fuzz target (fuzz/fuzz_targets) for SECONDS each
# (default 60) on the nightly toolchain, under a 4 GB memory limit and a
# 60 s limit per input; the paper examples seed the corpus. Findings are
# written to fuzz/artifacts/TARGET. Not part of the tests (nightly only).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
secs="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(instance solve task_events importers audit_allocation)
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/leontief-fuzz-target}"
corpus="$HOME/.cache/leontief-fuzz-corpus"
for t in "${targets[@]}"; do
  mkdir -p "$corpus/$t"
  seeds=()
  case "$t" in
    instance) seeds=(datasets/paper-examples) ;;
    task_events) seeds=(datasets/simulations) ;;
    solve)
      # The first byte picks the mechanism: each paper example under
      # every pick.
      mkdir -p "$corpus/solve-seeds"
      for f in datasets/paper-examples/*.json; do
        case "$f" in *.expected.json) continue ;; esac
        for k in 0 1 2 3 4 5 6 7 8 9; do
          { printf '%s' "$k"; cat "$f"; } > "$corpus/solve-seeds/$k-$(basename "$f")"
        done
      done
      seeds=("$corpus/solve-seeds") ;;
    importers)
      # The first byte picks the importer, 0xFF separates its files.
      mkdir -p "$corpus/importers-seeds"
      { printf '\x00'; cat datasets/kubernetes/nodes.json; printf '\xff'; cat datasets/kubernetes/pods.json; } \
        > "$corpus/importers-seeds/kubernetes"
      seeds=("$corpus/importers-seeds") ;;
    audit_allocation)
      mkdir -p "$corpus/audit-seeds"
      printf '\x00user,server,tasks\nu1,s1,2\nu2,s2,5\n' > "$corpus/audit-seeds/csv"
      printf '\x01{"tasks": [[2, 0], [0, 5]]}' > "$corpus/audit-seeds/json"
      seeds=("$corpus/audit-seeds") ;;
  esac
  # Without AddressSanitizer: HiGHS and Clarabel's C/C++ parts are not
  # built with it (its runtime then refuses to start), and the Rust code is
  # memory-safe; panics, aborts, timeouts and the 4 GB limit are caught.
  cargo +nightly fuzz run --sanitizer none --fuzz-dir fuzz "$t" "$corpus/$t" "${seeds[@]}" -- \
    -max_total_time="$secs" -rss_limit_mb=4096 -timeout=60
done

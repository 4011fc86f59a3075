#!/usr/bin/env bash
# Every test: the Rust workspace (unit, doc, CLI, paper examples,
# properties), then the Python package pyleontief (built with maturin into
# a venv under $HOME/.cache, tested with pytest against the CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
# The dev profile (the test profile's settings under the name maturin
# builds with), so that the Python module below reuses this build: under
# the name `test` every build script differed and HiGHS was compiled twice.
cargo test --workspace --profile dev "$@"
source scripts/python.sh
LEONTIEF_BIN="$CARGO_TARGET_DIR/debug/leontief" "$LEONTIEF_VENV/bin/python" -m pytest -q crates/leontief-py/tests

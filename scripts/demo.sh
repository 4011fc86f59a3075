#!/usr/bin/env bash
# The main job: solve the bundled paper examples and the Google cell with
# every mechanism and print comparison tables.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo run --release -q -p leontief-cli --bin leontief -- demo --datasets datasets "$@"

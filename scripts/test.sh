#!/usr/bin/env bash
# Every test of the workspace (unit, doc, CLI, paper examples, properties).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo test --workspace "$@"

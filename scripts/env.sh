# Sourced by the scripts: a persistent target directory outside the clone,
# so HiGHS (about 4-10 minutes on 2 cores) is built once per machine.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/leontief-target}"

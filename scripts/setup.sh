#!/usr/bin/env bash
# Installs what building leontief needs beyond the Rust toolchain:
# cmake and libclang-dev, for highs-sys, which builds HiGHS from source.
set -euo pipefail
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
# bindgen loads libclang itself (libclang.so or libclang-N.so): the C++
# library libclang-cpp, which some images ship alone, does not count.
has_libclang() {
  local p
  for p in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/llvm-*/lib/libclang-[0-9]*.so* \
    /usr/lib/*/libclang.so* /usr/lib/*/libclang-[0-9]*.so*; do
    [ -e "$p" ] && return 0
  done
  return 1
}
has_libclang || missing+=(libclang-dev)
# The Python package's tests need a venv (Debian splits it out).
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found; install Rust (rustup) first" >&2; exit 1; }

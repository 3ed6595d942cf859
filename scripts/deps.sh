#!/usr/bin/env bash
# Installs the Debian packages kbench builds with, if any is missing (needs
# root or sudo).  The CUDA toolkit itself is expected at /usr/local/cuda.
#   scripts/deps.sh          the build and the tests (the sanitizer build too:
#                            gcc brings its ASan and UBSan runtimes)
#   scripts/deps.sh fuzz     also clang-14 and its libFuzzer runtime
#   scripts/deps.sh browser  also Chromium and libpng, for the browser test of report.html
#                            (tests/test_report_browser.c; CI installs them, about 120 MB)
set -euo pipefail
packages="cmake make gcc g++ libinih-dev libjansson-dev libcriterion-dev gnuplot-nox"
for extra in "$@"; do
  case "$extra" in
    fuzz) packages="$packages clang-14 libclang-rt-14-dev" ;;
    browser) packages="$packages chromium libpng-dev" ;;
    *) echo "kbench: deps.sh: unknown extra '$extra', expected fuzz or browser" >&2; exit 2 ;;
  esac
done
missing=$(for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "kbench: installing $(echo $missing)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Only what the build needs: recommends (gnuplot's groff and fonts, imagemagick, ghostscript
  # through libgd) would triple the install; charts use the fonts fontconfig already brings.
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $missing
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "kbench: nvcc not found: install the CUDA toolkit (12.x or 13.x) first" >&2
  exit 2
fi

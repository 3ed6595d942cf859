#!/bin/sh
# How ctest runs a Criterion binary (tests/CMakeLists.txt): `criterion-run.sh CMD...`, where
# CMD is the binary with --verbose (and any wrapper before it, such as sanitized-run.sh).
# The binary's exit status decides: a failure in it fails the test, whatever else skipped.
# A binary that passed nothing and failed nothing but skipped (no GPU here) exits 77, which
# ctest reports as skipped (SKIP_RETURN_CODE).  Its output is passed through, so every skip
# is printed with its reason.
log=$(mktemp "${TMPDIR:-/tmp}/kbench-ctest-XXXXXX") || exit 1
"$@" >"$log" 2>&1
rc=$?
cat "$log"
if [ "$rc" -eq 0 ] && grep -q '^\[SKIP\]' "$log" && ! grep -q '^\[PASS\]' "$log"; then
  rc=77
fi
rm -f "$log"
exit "$rc"

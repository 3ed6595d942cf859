#!/bin/sh
# Runs one test program of the KBENCH_SANITIZE build so that no sanitizer
# report goes unnoticed: Criterion runs each test in a child process and
# does not look at how that child exits after its test has passed, so a
# leak LeakSanitizer finds at the child's exit would not fail the test (nor
# would a test that captures stderr even show it).  Every ASan and LSan
# report of the program and of everything it starts (kbench, its workers)
# is written to a file here instead; any such file fails the test and is
# printed.  (UBSan stops the process at its first finding,
# -fno-sanitize-recover, which fails the test by itself.)
#   sanitized-run.sh PROGRAM [ARGS...]
dir=$(mktemp -d "${TMPDIR:-/tmp}/kbench-sanitizer-XXXXXX") || exit 2
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$dir/report"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$dir/report"
export ASAN_OPTIONS UBSAN_OPTIONS
"$@"
status=$?
for report in "$dir"/report.*; do
  [ -e "$report" ] || continue
  echo "=== sanitizer report ($report):" >&2
  cat "$report" >&2
  status=1
done
rm -rf "$dir"
exit $status

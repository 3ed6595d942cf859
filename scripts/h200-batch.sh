#!/usr/bin/env bash
# Runs on the lent H200 (see shared DEVICE.md): every step given on the
# command line, each logged to $OUT/logs/<step>.log, with a summary line per
# step on stdout.  Build nothing here: build-h200/ comes with the call.
#
#   scripts/h200-batch.sh info tests stream sgemm ...
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build-h200
OUT=${OUT:-/tmp/kbench-out}
mkdir -p "$OUT/logs" "$OUT/results"
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
# The build has absolute paths of the CPU machine baked into the tests.
if [ ! -e /work/main ] && [ "$ROOT" != /work/main ]; then
  mkdir -p /work && ln -s "$ROOT" /work/main
fi

step_info() {
  nvidia-smi
  nvidia-smi -q -d CLOCK,PERFORMANCE | head -80
  nvcc --version | tail -2
  which ncu compute-sanitizer
  ncu --version | tail -1
  "$B/kbench" list
}

step_tests() {
  cd "$B" && ctest --output-on-failure --timeout 900
  grep -h '^\[SKIP\]' Testing/Temporary/LastTest.log || true
  for t in tests/test_*_gpu; do "$t" --verbose; done
}

step_stream() {
  "$B/kbench" run profiles/stream.ini --out "$OUT/results/stream"
}

step_sgemm() {
  "$B/kbench" run profiles/sgemm.ini --out "$OUT/results/sgemm"
}

step_sgemm_tails() {
  "$B/kbench" run profiles/sgemm-tails.ini --out "$OUT/results/sgemm-tails"
}

step_default() {
  "$B/kbench" run profiles/default.ini --out "$OUT/results/default"
}

step_ncu() {
  ncu --query-metrics --chip gh100 >"$OUT/results/ncu-query-metrics.txt" 2>&1 || true
  "$B/kbench" profile profiles/stream.ini --case "stream/triad/bytes=268435456,blocks_per_sm=0" \
    --keep-report --out "$OUT/results/ncu-triad"
  cat "$OUT/results/ncu-triad/ncu.log" | head -40
  rm -f "$OUT/results/ncu-triad/profile.ncu-rep"
}

step_sanitize() {
  printf '[run]\nwarmup = 1\nmin_samples = 2\nmin_time = 0\ntimeout = 60\n[oob]\n' >/tmp/oob.ini
  "$B/kbench" run /tmp/oob.ini --plugins "$B/tests/plugins" --sanitize --out "$OUT/results/sanitize-oob"
  printf '[run]\nwarmup = 1\nmin_samples = 2\nmin_time = 0\ntimeout = 60\n[stream]\nvariants = copy, scale, add, triad, memcpy\nbytes = 1000004\n' >/tmp/san-stream.ini
  "$B/kbench" run /tmp/san-stream.ini --sanitize --out "$OUT/results/sanitize-stream"
  "$B/kbench" run /tmp/san-stream.ini --sanitize=racecheck --out "$OUT/results/racecheck-stream"
}

for s in "$@"; do
  start=$(date +%s)
  ("step_$s") >"$OUT/logs/$s.log" 2>&1
  rc=$?
  echo "=== $s rc=$rc $(($(date +%s) - start))s"
  tail -n 4 "$OUT/logs/$s.log"
done
# At most 8 files come back: pack the logs and results into one archive.
tar -C "$OUT" -czf "$OUT/bundle.tgz" logs results && rm -rf "$OUT/logs" "$OUT/results"
ls -la "$OUT"

#!/usr/bin/env bash
# Runs on the lent H200: every step given on the command line, each logged to
# $OUT/logs/<step>.log, with a summary line per step on stdout.  Build nothing
# here: build-h200-run/ (made by scripts/build-h200.sh) comes with the call.
#
#   scripts/h200-batch.sh info tests stream sgemm ...
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${B:-$ROOT/build-h200-run}
OUT=${OUT:-/tmp/kbench-out}
mkdir -p "$OUT/logs" "$OUT/results"
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
# The tests find the build folder from their own path and the sources as its parent
# (tests/paths.c): no path of the CPU machine is needed here.
# This is the GPU machine: a GPU test that finds no device fails here instead of skipping
# (tests/gpu.h), so a driver or device problem cannot pass as a suite of skips.
export KBENCH_REQUIRE_GPU=1

step_info() {
  nvidia-smi
  nvidia-smi -q -d CLOCK,PERFORMANCE | head -80
  nvcc --version | tail -2
  which ncu compute-sanitizer
  ncu --version | tail -1
  "$B/kbench" list
}

# Every test binary (CPU and GPU), each skip printed with its reason.
step_tests() {
  local rc=0
  for t in "$B"/tests/test_*; do "$t" --jobs 1 --verbose || rc=1; done
  return $rc
}

# The GPU tests only (the CPU ones ran where the build was made).
step_tests_gpu() {
  local rc=0
  for t in "$B"/tests/test_*_gpu; do "$t" --jobs 1 --verbose || rc=1; done
  return $rc
}

# One GPU test binary by name: step_test stream runs tests/test_stream_gpu.
step_test_stream() { "$B/tests/test_stream_gpu" --jobs 1 --verbose; }

step_stream() {
  "$B/kbench" run profiles/stream.ini --out "$OUT/results/stream"
}

step_stream_hot() {
  "$B/kbench" run profiles/stream-hot.ini --out "$OUT/results/stream-hot"
}

step_sgemm() {
  "$B/kbench" run profiles/sgemm.ini --out "$OUT/results/sgemm"
}

step_sgemm_tails() {
  "$B/kbench" run profiles/sgemm-tails.ini --out "$OUT/results/sgemm-tails"
}

step_sgemm_quick() {
  sed -e 's/^min_samples = .*/min_samples = 5/' -e 's/^min_time = .*/min_time = 0.2/' \
      -e 's/^warmup = .*/warmup = 2/' profiles/sgemm.ini >/tmp/sgemm-quick.ini
  "$B/kbench" run /tmp/sgemm-quick.ini --out "$OUT/results/sgemm-quick"
}

step_ncu_sgemm() {
  "$B/kbench" profile profiles/sgemm.ini \
    --case 'sgemm/cp_async/shape=4096x4096x4096,alpha=1,beta=0.5' --out "$OUT/results/ncu-sgemm"
}

step_ncu_ladder() {
  for v in swizzled wide_epilogue; do
    "$B/kbench" profile profiles/sgemm.ini \
      --case "sgemm/$v/shape=4096x4096x4096,alpha=1,beta=0.5" --out "$OUT/results/ncu-$v"
  done
}

# kbench profile PROFILE --case CASE with the full ncu section set into DIR, then the report's
# details page (DIR/details.txt) and its SASS lines with stall samples (DIR/sass.csv.gz); the
# report itself (large) is dropped.  Plugins' steps use it too.
ncu_full() {
  local profile=$1 c=$2 d=$3
  "$B/kbench" profile "$profile" --set full --keep-report --case "$c" --out "$d"
  ncu --import "$d/profile.ncu-rep" --page details >"$d/details.txt" 2>&1
  ncu --import "$d/profile.ncu-rep" --page source --csv --print-source sass >"$d/sass.csv" 2>&1
  gzip -f "$d/sass.csv"
  rm -f "$d/profile.ncu-rep"
}

# Full Nsight Compute sections of one case each ($NCU_CASES: case ids of
# $NCU_PROFILE, default the fast variants at 4096^3), with the SASS lines'
# stall samples (source page), for the performance notes.
step_ncu_fast() {
  local profile=${NCU_PROFILE:-profiles/sgemm.ini} i=0
  local cases=${NCU_CASES:-sgemm/tf32x3/shape=4096x4096x4096,alpha=1,beta=0.5 sgemm/warptile/shape=4096x4096x4096,alpha=1,beta=0.5}
  for c in $cases; do
    i=$((i + 1))
    d="$OUT/results/ncu-full-$i"
    ncu_full "$profile" "$c" "$d"
  done
}

step_sgemm_configs() {
  "$B/kbench" run profiles/sgemm-configs.ini --out "$OUT/results/sgemm-configs"
}

# compute-sanitizer memcheck, racecheck and synccheck on the cases of
# profiles/sanitize.ini that match $SAN_FILTER.
step_sanitize_some() {
  local f=${SAN_FILTER:-sgemm/tf32x3/*}
  for tool in memcheck racecheck synccheck; do
    "$B/kbench" run profiles/sanitize.ini --sanitize=$tool --filter "$f" \
      --out "$OUT/results/sanitize-some-$tool"
  done
}

# The fast variants only, all profile shapes, short sampling.
step_sgemm_fast() {
  sed -e 's/^min_samples = .*/min_samples = 5/' -e 's/^min_time = .*/min_time = 0.2/' \
      -e 's/^warmup = .*/warmup = 2/' \
      -e "s/^variants = .*/variants = ${FAST_VARIANTS:-warptile, tf32x3, cublas}/" \
      -e '/^    wide_epilogue, warptile, cublas, tf32x3$/d' profiles/sgemm.ini >/tmp/sgemm-fast.ini
  "$B/kbench" run /tmp/sgemm-fast.ini --out "$OUT/results/sgemm-fast"
}

step_sanitize_all() {
  "$B/kbench" run profiles/sanitize.ini --sanitize --out "$OUT/results/sanitize-memcheck"
}

step_racecheck_all() {
  "$B/kbench" run profiles/sanitize.ini --sanitize=racecheck --out "$OUT/results/sanitize-racecheck"
}

step_default() {
  "$B/kbench" run profiles/default.ini --out "$OUT/results/default"
}

step_ncu() {
  ncu --query-metrics --chip gh100 >"$OUT/results/ncu-query-metrics.txt" 2>&1 || true
  "$B/kbench" profile profiles/stream.ini --case "stream/triad/bytes=268435456" \
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

# The stream and sgemm runs of this batch against baselines/h200 (run the
# stream and sgemm steps first).
step_compare_base() {
  local rc=0
  for p in stream sgemm; do
    echo "== compare $p"
    "$B/kbench" compare "baselines/h200/$p" "$OUT/results/$p" || rc=1
  done
  return $rc
}

# Hot timing against graph replay: the sweep kept in baselines/h200/hot
# (kbench's hot mode beside graph_replay per size; tests_gpu has the test).
step_hot() {
  "$B/kbench" run tests/hot/sweep.ini --plugins "$B/tests/plugins" --out "$OUT/results/hot"
  {
    for n in 4096 16384 65536 262144 1048576 4194304 16777216; do
      echo "axpy $n $("$B/tests/graph_replay" axpy $n)"
    done
    for n in 128 256 512 1024; do
      echo "sgemm $n $("$B/tests/graph_replay" sgemm $n)"
    done
    for n in 16777216 33554432 67108864 134217728 268435456; do
      echo "memcpy $n graph $("$B/tests/graph_replay" memcpy $n 10 20)"
      echo "memcpy $n stream $("$B/tests/graph_replay" --stream memcpy $n 10 20)"
    done
    for n in 1000 2000; do
      echo "many $n $("$B/tests/graph_replay" many $n 10 20)"
    done
  } >"$OUT/results/hot/graph_replay.txt"
  cat "$OUT/results/hot/graph_replay.txt"
}

# The fault-injection tests that need a GPU (device memory exhausted; Ctrl-C
# during a sanitized case), and the CPU ones against this build.
step_faults() {
  "$B/tests/test_faults_gpu" --verbose && "$B/tests/test_faults" --verbose
}

# One sweep over every GPU of the node (needs 2+ GPUs: nvidia-h200-x2): profiles/sgemm.ini
# with --devices all and on GPU 0 alone, both timed; the merged run against the one-GPU
# baseline and the one-GPU run; then the CPU and GPU tests of --devices.
step_multigpu() {
  local rc=0 t0 t1 t2
  nvidia-smi -L
  t0=$(date +%s)
  "$B/kbench" run profiles/sgemm.ini --devices all --out "$OUT/results/sgemm-2gpu" || rc=1
  t1=$(date +%s)
  "$B/kbench" run profiles/sgemm.ini --device 0 --out "$OUT/results/sgemm-1gpu" || rc=1
  t2=$(date +%s)
  echo "wall time: all GPUs $((t1 - t0)) s, one GPU $((t2 - t1)) s"
  echo "== compare baselines/h200/sgemm against the merged all-GPU run"
  "$B/kbench" compare baselines/h200/sgemm "$OUT/results/sgemm-2gpu" || rc=1
  echo "== compare the one-GPU run against the merged all-GPU run"
  "$B/kbench" compare "$OUT/results/sgemm-1gpu" "$OUT/results/sgemm-2gpu" || rc=1
  "$B/kbench" report "$OUT/results/sgemm-2gpu" --out "$OUT/results/sgemm-2gpu/report" || rc=1
  "$B/tests/test_devices_gpu" --jobs 1 --verbose || rc=1
  "$B/tests/test_devices" --jobs 1 --verbose || rc=1
  echo "wall time: all GPUs $((t1 - t0)) s, one GPU $((t2 - t1)) s"
  return $rc
}

# A reference baseline re-measured: `kbench run PROFILE --out results/NAME` from the checkout
# (so the recorded command is one a user can run), then the same again (results/NAME-fresh,
# the same build on the same lease), each compared: against the committed
# reference (compare-previous.md: every case must match) and against the fresh run
# (compare-fresh.md: unchanged code must say so).  The previous reference is the one of the
# GPU the run is on (baselines/<gpu>/NAME).  With FRESH=0 the second run is left out.
# Everything lands in $OUT/results/ref-NAME/ for baselines/<gpu>/NAME/.
reference() {
  local name=$1 profile=$2 rc=0 d="$OUT/results/ref-$1"
  mkdir -p "$d"
  rm -rf "results/$name" "results/$name-fresh"
  "$B/kbench" run "$profile" --out "results/$name" || rc=1
  cp -a "results/$name/." "$d/"
  # By name: the reference of the GPU this run is on (baselines/<gpu>/NAME), so a call
  # answered by another board is compared with that board's reference, if it has one.
  "$B/kbench" compare "$name" "results/$name" --out "$d/compare-previous.md" || rc=1
  if [ "${FRESH:-1}" = 1 ]; then
    "$B/kbench" run "$profile" --out "results/$name-fresh" || rc=1
    cp "results/$name-fresh/results.jsonl" "$d/fresh.jsonl"
    "$B/kbench" compare "results/$name" "results/$name-fresh" --out "$d/compare-fresh.md" || rc=1
  fi
  return $rc
}
step_ref_stream() { reference stream profiles/stream.ini; }
step_ref_stream_hot() { reference stream-hot profiles/stream-hot.ini; }
step_ref_sgemm() { reference sgemm profiles/sgemm.ini; }
step_ref_sgemm_configs() { FRESH=0 reference sgemm-configs profiles/sgemm-configs.ini; }
step_ref_md() { reference md profiles/md.ini; }
step_ref_labeling() { reference labeling profiles/labeling.ini; }
step_ref_permute() { reference permute profiles/permute.ini; }

# Each plugin may bring its own steps (step_<name>_...) in
# Energy per case (lab/h200/energy): the same profile twice (energy per run within 5%, power
# between idle and the limit, J/byte of the copy against its size, sgemm by GFLOP/J), then one
# 12 s window of one case beside nvidia-smi's power samples every 100 ms.  About 200 s.
step_energy() {
  local rc=0 d="$OUT/results/energy" smi
  mkdir -p "$d"
  for r in 1 2; do
    "$B/kbench" run lab/h200/energy/energy.ini --out "$d/run$r" || rc=1
    "$B/kbench" report "$d/run$r" --out "$d/report$r" || rc=1
  done
  "$B/kbench" compare "$d/run1" "$d/run2" --out "$d/compare.md" || rc=1
  grep -E '"record":"case"' "$d"/run*/results.jsonl | sed 's/.*"id":"\([^"]*\)".*"energy":\({[^}]*}\).*/\1 \2/'
  nvidia-smi --query-gpu=timestamp,power.draw --format=csv -lms 100 \
    >"$d/steady-power.csv" &
  smi=$!
  "$B/kbench" run lab/h200/energy/steady.ini --out "$d/steady" || rc=1
  kill "$smi"
  lab/h200/energy/compare-power.sh "$d/steady/results.jsonl" "$d/steady-power.csv" || rc=1
  return $rc
}

# lab/h200/energy/energy.ini once: each case's energy per run, power and work per joule (copy
# and fma at equal bytes, the sgemm variants), without the repeat and the steady window.
step_energy_once() {
  local d="$OUT/results/energy-once"
  "$B/kbench" run lab/h200/energy/energy.ini --out "$d/run1" &&
    "$B/kbench" report "$d/run1" --out "$d/report1" --no-charts
}

# plugins/<name>/lab/h200-steps.sh, sourced here so plugins stay in their folder.
for f in "$ROOT"/plugins/*/lab/h200-steps.sh; do
  [ -e "$f" ] && . "$f"
done

for s in "$@"; do
  start=$(date +%s)
  ("step_$s") >"$OUT/logs/$s.log" 2>&1
  rc=$?
  echo "=== $s rc=$rc $(($(date +%s) - start))s"
  tail -n 4 "$OUT/logs/$s.log"
  # At most 8 files come back: pack logs and results after every step, so a
  # call cut off at its limit still returns what finished.
  tar -C "$OUT" -czf "$OUT/bundle.tgz.tmp" logs results && mv "$OUT/bundle.tgz.tmp" "$OUT/bundle.tgz"
done
rm -rf "$OUT/logs" "$OUT/results"
ls -la "$OUT"

#!/usr/bin/env bash
# libFuzzer over kbench's input readers: builds build-fuzz/ with clang-14
# (KBENCH_FUZZ=ON), replays every input that once crashed a target
# (tests/fuzz/regressions/TARGET/), then fuzzes each target for SECONDS
# (default 60) from its seed corpus (tests/fuzz/corpus/TARGET/).  A crash,
# a leak, undefined behaviour, an invariant broken or an input slower than
# 10 s fails; the input is left in build-fuzz/artifacts/ (see
# tests/fuzz/README.md for what to do with it).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: profile results ncu_csv
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=${*:-profile results ncu_csv}
scripts/deps.sh fuzz
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-fuzz -DKBENCH_FUZZ=ON -DKBENCH_TESTS=OFF -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null
cmake --build build-fuzz --target kbench_fuzzers -j"$(nproc 2>/dev/null || echo 2)"
mkdir -p build-fuzz/artifacts
status=0
for t in $targets; do
  bin=build-fuzz/tests/fuzz/fuzz_$t
  log=build-fuzz/fuzz_$t.log
  work=build-fuzz/corpus/$t # grows across runs; the seeds stay as they are
  mkdir -p "$work"
  mapfile -t kept < <(find "tests/fuzz/regressions/$t" -type f ! -name '.*' ! -name '*.md' 2>/dev/null | sort)
  if [ "${#kept[@]}" -gt 0 ] && ! "$bin" "${kept[@]}" >"$log.regressions" 2>&1; then
    echo "fuzz_$t: a kept regression input fails again:" >&2
    tail -40 "$log.regressions" >&2
    status=1
    continue
  fi
  if "$bin" "$work" "tests/fuzz/corpus/$t" -dict="tests/fuzz/$t.dict" -max_total_time="$secs" \
      -timeout=10 -rss_limit_mb=2048 -artifact_prefix="build-fuzz/artifacts/$t-" \
      -print_final_stats=1 >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
    tail -60 "$log" >&2
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz_$t: $result: ${execs:-?} inputs in ${secs} s, ${#kept[@]} regression inputs replayed," \
       "corpus $(find "$work" -type f | wc -l) files"
done
exit $status

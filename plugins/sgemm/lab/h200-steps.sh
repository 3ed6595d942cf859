# sgemm plugin steps for scripts/h200-batch.sh (sourced there: $B is the build, $OUT the output).
#   step_sgemm_verify    profiles/sgemm-tails.ini: every variant and forced configuration on
#                        edge shapes, verified (~40 s)
#   step_sgemm_sanitize  compute-sanitizer on warptile: memcheck on every warptile case of
#                        profiles/sanitize.ini (the tuned ones run every configuration while
#                        tuning), racecheck and synccheck on the forced cluster configurations
#                        (each tool at most 150 s)
#   step_sgemm_gap       Nsight Compute's full set, with per-SASS-line stall samples, for
#                        warptile and cuBLAS at 4096^3: what separates the CUDA-core kernel from
#                        cuBLAS (ncu_full; ~1.5 min)
#   step_sgemm_sanitize_sub  compute-sanitizer memcheck, racecheck and synccheck on the sgemm
#                        cases of profiles/sanitize.ini that match SAN_FILTER (its sgemm sections
#                        only, so the other plugins need not be in the build)

step_sgemm_verify() {
  "$B/kbench" run profiles/sgemm-tails.ini --out "$OUT/results/sgemm-tails"
}

step_sgemm_sanitize() {
  local rc=0 d="$OUT/results"
  timeout 150 "$B/kbench" run profiles/sanitize.ini --sanitize=memcheck \
    --filter 'sgemm/warptile/*' --out "$d/sanitize-warptile-memcheck" || rc=1
  for tool in racecheck synccheck; do
    timeout 150 "$B/kbench" run profiles/sanitize.ini --sanitize=$tool \
      --filter 'sgemm/warptile/*config=1[3-5]' --out "$d/sanitize-cluster-$tool" || rc=1
  done
  return $rc
}

step_sgemm_gap() {
  local c
  for v in warptile cublas; do
    c="sgemm/$v/shape=4096x4096x4096,alpha=1,beta=0.5"
    ncu_full profiles/sgemm.ini "$c" "$OUT/results/ncu-gap-$v"
  done
}

# The 64x64 warp tiles and the split-K configurations against the rest (lab/warp64.ini), the
# tails verified first, then ncu's full set for configuration 16 at 4096^3, the cluster
# configuration 14 at 1024^3 and the workspace split-K 7 at 256x4096x4096 (its reduction).
step_sgemm_warp64() {
  local rc=0 c
  "$B/kbench" run profiles/sgemm-tails.ini --filter 'sgemm/warptile/*config=*' \
    --out "$OUT/results/sgemm-tails-warptile" || rc=1
  "$B/kbench" run plugins/sgemm/lab/warp64.ini --out "$OUT/results/warp64" || rc=1
  for c in 4096x4096x4096,alpha=1,beta=0.5,config=16:ncu-w64 \
    1024x1024x1024,alpha=1,beta=0.5,config=14:ncu-cluster \
    256x4096x4096,alpha=1,beta=0.5,config=7:ncu-splitk; do
    ncu_full plugins/sgemm/lab/warp64.ini "sgemm/warptile/shape=${c%%:*}" \
      "$OUT/results/${c##*:}" || rc=1
  done
  return $rc
}

# A/B of two builds of the plugin: this build's against another revision's ($ALT_REV), whose
# plugin comes in $B/plugins-alt, on the lab/warp64.ini cases matching $AB_FILTER (default:
# tf32x3's split-K configurations 3-5), compared; then this build's tf32x3 verified on the
# tails, under memcheck, racecheck and synccheck (configurations 3-5 of profiles/sanitize.ini),
# and ncu's full set for configuration 5 at 256x4096x4096.
step_sgemm_ab() {
  local rc=0 f=${AB_FILTER:-sgemm/tf32x3/*config=[345]} d="$OUT/results" tool
  echo "A: ${ALT_REV:-unnamed} ($B/plugins-alt), B: this build"
  "$B/kbench" run plugins/sgemm/lab/warp64.ini --filter "$f" --plugins "$B/plugins-alt" \
    --out "$d/ab-alt" || rc=1
  "$B/kbench" run plugins/sgemm/lab/warp64.ini --filter "$f" --out "$d/ab-this" || rc=1
  "$B/kbench" compare "$d/ab-alt" "$d/ab-this" --out "$d/ab-compare.md" || rc=1
  "$B/kbench" run profiles/sgemm-tails.ini --filter 'sgemm/tf32x3/*' --out "$d/tails-tf32x3" ||
    rc=1
  for tool in memcheck racecheck synccheck; do
    timeout 150 "$B/kbench" run profiles/sanitize.ini --sanitize=$tool \
      --filter 'sgemm/tf32x3/*config=[345]' --out "$d/sanitize-$tool" || rc=1
  done
  "$B/kbench" profile plugins/sgemm/lab/warp64.ini --set full \
    --case 'sgemm/tf32x3/shape=256x4096x4096,alpha=1,beta=0.5,config=5' --out "$d/ncu-cfg5" ||
    rc=1
  return $rc
}

# Several builds of the plugin against this one: each $B/plugins-NAME/ (another revision's or
# a variant's libkbench_sgemm.so) runs lab/ab.ini into results/ab-NAME, this build into
# results/ab-this, and each is compared with this build (results/ab-NAME.md).
step_sgemm_abn() {
  local rc=0 d="$OUT/results" p name
  "$B/kbench" run plugins/sgemm/lab/ab.ini --out "$d/ab-this" || rc=1
  for p in "$B"/plugins-*/; do
    name=$(basename "$p")
    name=${name#plugins-}
    "$B/kbench" run plugins/sgemm/lab/ab.ini --plugins "$p" --out "$d/ab-$name" || rc=1
    "$B/kbench" compare "$d/ab-$name" "$d/ab-this" --out "$d/ab-$name.md" || rc=1
  done
  return $rc
}

step_sgemm_sanitize_sub() {
  local rc=0 d="$OUT/results" tool
  awk '/^\[/ { keep = ($0 ~ /^\[(run|sgemm)[].]/) } keep' profiles/sanitize.ini >/tmp/sanitize-sgemm.ini
  for tool in memcheck racecheck synccheck; do
    timeout 150 "$B/kbench" run /tmp/sanitize-sgemm.ini --sanitize=$tool \
      --filter "${SAN_FILTER:-sgemm/tf32x3/*}" --out "$d/sanitize-sub-$tool" || rc=1
  done
  return $rc
}

# Kernel 5 (configuration 6, the producer warpgroup) against kernel 3 (configuration 3) on the
# six shapes of profiles/sgemm.ini (lab/producer.ini, with 5 and 7, their C^T forms), after
# verifying every tf32x3 configuration on the tails; then compute-sanitizer's three tools on
# configurations 6 and 7 (the sgemm cases of profiles/sanitize.ini, step_sgemm_sanitize_sub).
step_sgemm_producer() {
  local rc=0 d="$OUT/results"
  "$B/kbench" run profiles/sgemm-tails.ini --filter 'sgemm/tf32x3/*' --out "$d/tails-tf32x3" ||
    rc=1
  "$B/kbench" run plugins/sgemm/lab/producer.ini --out "$d/producer" || rc=1
  SAN_FILTER='sgemm/tf32x3/*config=[67]' step_sgemm_sanitize_sub || rc=1
  return $rc
}

# ncu's full set for configurations 3 and 6 at 8192^3 (lab/producer.ini).
step_sgemm_producer_ncu() {
  local rc=0 c
  for c in 3 6; do
    ncu_full plugins/sgemm/lab/producer.ini \
      "sgemm/tf32x3/shape=8192x8192x8192,alpha=1,beta=0.5,config=$c" \
      "$OUT/results/ncu-cfg$c" || rc=1
  done
  return $rc
}

# warptile with B transposed once per launch (configurations 19-21, HISTORY-fast part 11): every
# warptile configuration forced on the tails, then lab/bt.ini (19-21 beside 16, 10 and 1, and
# cuBLAS, at the six shapes of profiles/sgemm.ini), then memcheck on the tuned warptile cases
# of profiles/sanitize.ini (the tuner runs every configuration) and racecheck on 19-21 at two
# edge shapes.  BT_PLUGINS: the plugin folder of the build to check (default: this build's).
step_sgemm_bt() {
  local rc=0 d="$OUT/results" p=()
  [ -n "${BT_PLUGINS:-}" ] && p=(--plugins "$BT_PLUGINS")
  "$B/kbench" run "${p[@]}" profiles/sgemm-tails.ini --filter 'sgemm/warptile/*' \
    --out "$d/tails-warptile" || rc=1
  "$B/kbench" run "${p[@]}" plugins/sgemm/lab/bt.ini --out "$d/bt" || rc=1
  awk '/^\[/ { keep = ($0 ~ /^\[(run|sgemm)[].]/) } keep' profiles/sanitize.ini >/tmp/sanitize-sgemm.ini
  timeout 150 "$B/kbench" run "${p[@]}" /tmp/sanitize-sgemm.ini --sanitize=memcheck \
    --filter 'sgemm/warptile/*' --out "$d/sanitize-warptile-memcheck" || rc=1
  printf '[run]\nwarmup = 1\nmin_samples = 2\nmin_time = 0\ntimeout = 120\n[sgemm]\nvariants = warptile\nshape = 127x129x65, 1000x1000x999\nalpha = 1.5\nconfig = 19:21:+1\n' \
    >/tmp/bt-race.ini
  timeout 150 "$B/kbench" run "${p[@]}" /tmp/bt-race.ini --sanitize=racecheck --out "$d/racecheck-bt" ||
    rc=1
  return $rc
}

# ncu's full set for the GEMM kernel (wt_kernel; 19 launches wt_transpose_b first) of
# configurations 16 and 19 at 4096^3 (lab/bt.ini; BT_PLUGINS as above).
step_sgemm_bt_ncu() {
  local rc=0 c p=()
  [ -n "${BT_PLUGINS:-}" ] && p=(--plugins "$BT_PLUGINS")
  for c in 16 19; do
    "$B/kbench" profile "${p[@]}" plugins/sgemm/lab/bt.ini --set full --keep-report --kernel wt_kernel \
      --case "sgemm/warptile/shape=4096x4096x4096,alpha=1,beta=0.5,config=$c" \
      --out "$OUT/results/ncu-cfg$c" || rc=1
    ncu --import "$OUT/results/ncu-cfg$c/profile.ncu-rep" --page details \
      >"$OUT/results/ncu-cfg$c/details.txt" 2>&1
    ncu --import "$OUT/results/ncu-cfg$c/profile.ncu-rep" --page source --csv --print-source sass \
      >"$OUT/results/ncu-cfg$c/sass.csv" 2>&1
    gzip -f "$OUT/results/ncu-cfg$c/sass.csv"
    rm -f "$OUT/results/ncu-cfg$c/profile.ncu-rep"
  done
  return $rc
}

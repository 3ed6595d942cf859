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

# A/B of the split-K reduction of tf32x3's configurations 3 and 5: the workspace and second
# kernel of this build against a thread-block cluster reduction through distributed shared
# memory, whose plugin comes in $B/plugins-alt (built from another revision, named in
# $ALT_REV).  Both on lab/warp64.ini's tf32x3 section, then the cluster build verified on the
# tails and under racecheck and synccheck, and ncu's full set for configuration 5 at
# 256x4096x4096 with it.
step_sgemm_cluster_ab() {
  local rc=0 f='sgemm/tf32x3/*config=[35]' alt="$B/plugins-alt" d="$OUT/results"
  echo "alternative plugin: ${ALT_REV:-unnamed}"
  "$B/kbench" run plugins/sgemm/lab/warp64.ini --filter "$f" --out "$d/ab-workspace" || rc=1
  "$B/kbench" run plugins/sgemm/lab/warp64.ini --filter "$f" --plugins "$alt" \
    --out "$d/ab-cluster" || rc=1
  "$B/kbench" compare "$d/ab-workspace" "$d/ab-cluster" --out "$d/ab-compare.md" || rc=1
  "$B/kbench" run profiles/sgemm-tails.ini --filter 'sgemm/tf32x3/*' --plugins "$alt" \
    --out "$d/ab-cluster-tails" || rc=1
  for tool in racecheck synccheck; do
    timeout 150 "$B/kbench" run profiles/sanitize.ini --sanitize=$tool --plugins "$alt" \
      --filter "$f" --out "$d/ab-cluster-$tool" || rc=1
  done
  "$B/kbench" profile plugins/sgemm/lab/warp64.ini --plugins "$alt" --set full \
    --case 'sgemm/tf32x3/shape=256x4096x4096,alpha=1,beta=0.5,config=5' --out "$d/ab-ncu" || rc=1
  return $rc
}

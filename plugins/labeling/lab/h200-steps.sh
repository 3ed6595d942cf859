# Steps of the labeling plugin for scripts/h200-batch.sh (sourced there: $B is the build
# folder, $OUT/results/<dir> comes back).  The full profile (profiles/labeling.ini) is split
# in parts of under two minutes each: step_labeling (2-D Ising to L = 8192, mcs and
# labeling_only, host_uf, 2-D Potts), step_labeling_16k (2-D Ising L = 16384),
# step_labeling_3d (3-D Ising, 3-D labeling_only, 3-D XY), step_labeling_fss (the
# moment-ratio T sweeps, 2-D and 3-D).  On the results, here (no GPU):
#   kbench report RESULTS/labeling-fss2d --out R2   (the chart moment_ratio-vs-T, one line per L)
#   plugins/labeling/crossing.sh --plot P R2/results.csv R3/results.csv   (T*, U*, 1/nu)

# The [run] section and the named sections of profiles/labeling.ini, on stdout.
labeling_sections() {
  awk -v want=" run $* " '
    /^\[/ { name = substr($0, 2, index($0, "]") - 2); sub(/^labeling\./, "", name);
            keep = index(want, " " name " ") > 0 }
    keep' profiles/labeling.ini
}

# Every variant, every model and mode, small and medium sizes, short sampling (< 2 min):
# verifies everything and gives first timings.
step_labeling_quick() {
  cat >/tmp/labeling-quick.ini <<'INI'
[run]
warmup = 1
min_samples = 5
min_time = 0.1
max_noise = 0.05
max_samples = 30
max_time = 5
timeout = 120
cache = hot
seed = 1

[labeling]
variants = host_uf, hawick, kalentev, komura, union_find
baseline = kalentev
model = ising, potts, xy
dim = 2
L = 256, 1024
mcs_discard = 100
mcs_measure = 50

[labeling.3d]
variants = host_uf, hawick, kalentev, komura, union_find
baseline = kalentev
model = ising, xy
dim = 3
L = 32, 64
mcs_discard = 100
mcs_measure = 50

[labeling.fast]
variants = hawick, kalentev, komura, union_find
baseline = kalentev
model = ising
dim = 2
L = 4096
mcs_discard = 50
mcs_measure = 20
mode = mcs, labeling_only
INI
  "$B/kbench" run /tmp/labeling-quick.ini --out "$OUT/results/labeling-quick"
}

# The full profile, in four parts (estimates in the header of profiles/labeling.ini; total
# ~3.5-4 min): 2-D without L = 16384 (~50 s), 2-D L = 16384 (~25 s), 3-D (~40 s), the FSS
# sweeps (~85 s, up to ~130; 2-D Ising, 3-D Ising and 3-D XY in folders of their own so that
# `kbench report` draws U against T, one line per L).
step_labeling() {
  labeling_sections ising2d ising2d_host only2d potts potts_host >/tmp/labeling-2d.ini
  "$B/kbench" run /tmp/labeling-2d.ini --out "$OUT/results/labeling"
}

step_labeling_16k() {
  labeling_sections ising2d_16k >/tmp/labeling-16k.ini
  "$B/kbench" run /tmp/labeling-16k.ini --out "$OUT/results/labeling-16k"
}

step_labeling_3d() {
  labeling_sections ising3d ising3d_host only3d xy xy_host >/tmp/labeling-3d.ini
  "$B/kbench" run /tmp/labeling-3d.ini --out "$OUT/results/labeling-3d"
}

step_labeling_fss() {
  labeling_sections fss2d_32 fss2d_64 fss2d_128 fss2d_256 >/tmp/labeling-fss2d.ini
  "$B/kbench" run /tmp/labeling-fss2d.ini --out "$OUT/results/labeling-fss2d"
  labeling_sections fss3d_8 fss3d_16 fss3d_32 fss3d_64 >/tmp/labeling-fss3d.ini
  "$B/kbench" run /tmp/labeling-fss3d.ini --out "$OUT/results/labeling-fss3d"
  labeling_sections fss3dxy_8 fss3dxy_16 fss3dxy_32 >/tmp/labeling-fss3dxy.ini
  "$B/kbench" run /tmp/labeling-fss3dxy.ini --out "$OUT/results/labeling-fss3dxy"
}

step_labeling_tests() {
  "$B/tests/test_labeling_gpu" --jobs 1 --verbose
}

# The issue's ratios alone, short sampling: the whole step at L = 8192 (every device variant),
# labeling alone in 2-D (L = 8192) and 3-D (L = 128, 256), host_uf at L = 4096 (a few MCS).
step_labeling_targets() {
  cat >/tmp/labeling-targets.ini <<'INI'
[run]
warmup = 1
min_samples = 5
min_time = 0.2
max_samples = 50
max_time = 5
timeout = 300
cache = hot
seed = 1

[labeling]
variants = hawick, kalentev, komura, union_find
baseline = kalentev
model = ising
dim = 2
L = 8192
mcs_discard = 50
mcs_measure = 20
mode = mcs, labeling_only

[labeling.3d]
variants = hawick, kalentev, komura, union_find
baseline = kalentev
model = ising
dim = 3
L = 128, 256
mcs_discard = 50
mcs_measure = 20
mode = mcs, labeling_only

[labeling.host]
variants = host_uf, union_find
baseline = host_uf
model = ising
dim = 2
L = 4096
mcs_discard = 5
mcs_measure = 3
INI
  "$B/kbench" run /tmp/labeling-targets.ini --out "$OUT/results/labeling-targets"
}

# Nsight Compute (full set, SASS stall samples) of union_find and kalentev labeling alone,
# 2-D Ising at Tc, L = 4096 ($LABELING_NCU_VARIANTS: e.g. "union_find" alone, ~1 min).
step_labeling_ncu() {
  printf '[run]\nwarmup = 1\nmin_samples = 2\nmin_time = 0\ntimeout = 300\nseed = 1\n[labeling]\nvariants = kalentev, union_find\nmodel = ising\ndim = 2\nL = 4096\nmcs_discard = 50\nmode = labeling_only\n' \
    >/tmp/labeling-ncu.ini
  local v d
  for v in ${LABELING_NCU_VARIANTS:-union_find kalentev}; do
    d="$OUT/results/ncu-labeling-$v"
    ncu_full /tmp/labeling-ncu.ini "labeling/$v/*" "$d"
  done
}

# Nsight Compute (full set, SASS stall samples) of one whole union_find step (mcs), 2-D Ising
# at Tc, L = 4096: every kernel of the step (bonds, uf_local, uf_faces, uf_flatten, flip,
# advance), to split the step's time after union_find v2 (~1 min).
step_labeling_ncu_step() {
  printf '[run]\nwarmup = 1\nmin_samples = 2\nmin_time = 0\ntimeout = 300\nseed = 1\n[labeling]\nvariants = union_find\nmodel = ising\ndim = 2\nL = 4096\nmcs_discard = 50\nmcs_measure = 2\nmode = mcs\n' \
    >/tmp/labeling-ncu-step.ini
  local d="$OUT/results/ncu-labeling-step-union_find"
  ncu_full /tmp/labeling-ncu-step.ini "labeling/union_find/*" "$d"
}

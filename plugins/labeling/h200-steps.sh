# Steps of the labeling plugin for scripts/h200-batch.sh (sourced there: $B is the build
# folder, $OUT/results/<dir> comes back).  The full profile is split in parts of under six
# minutes each: step_labeling (2-D Ising, mcs and labeling_only), step_labeling_3d (3-D Ising,
# 3-D labeling_only, 2-D Potts, 3-D XY), step_labeling_fss (the moment-ratio T sweeps).

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

step_labeling() {
  labeling_sections labeling large labeling_only >/tmp/labeling-2d.ini
  "$B/kbench" run /tmp/labeling-2d.ini --out "$OUT/results/labeling"
}

step_labeling_3d() {
  labeling_sections 3d 3d_large labeling_only_3d potts xy xy_large >/tmp/labeling-3d.ini
  "$B/kbench" run /tmp/labeling-3d.ini --out "$OUT/results/labeling-3d"
}

step_labeling_fss() {
  labeling_sections fss2d fss3d >/tmp/labeling-fss.ini
  "$B/kbench" run /tmp/labeling-fss.ini --out "$OUT/results/labeling-fss"
}

step_labeling_tests() {
  "$B/tests/test_labeling_gpu" --jobs 1 --verbose
}

# md plugin steps for scripts/h200-batch.sh (sourced there: $B is the build, $OUT the output).
#   step_md_quick   every variant at small and medium sizes, short sampling (< 2 min)
#   step_md         the full profiles/md.ini (86 cases, budget <= 4 min, expected ~3 min)
#   step_md_1, step_md_2  the same profile in two deterministic halves (--shard), if one call
#                   must stay shorter; results in md-1 and md-2
#   step_md_tests   the GPU test binary

step_md_quick() {
  cat >/tmp/md-quick.ini <<'INI'
[run]
warmup = 1
min_samples = 3
min_time = 0.05
max_time = 1
timeout = 120
cache = hot
device = 0
seed = 1

[md]
variants = host_pairlist, host_layer, allpairs, cell_block, layer_matrix, layer_atomic, sorted
baseline = layer_matrix
system = sp, lj, ljstd
N_e = 24
steps = 20

[md.medium]
variants = cell_block, layer_matrix, layer_atomic, sorted
baseline = layer_matrix
system = sp, ljstd
N_e = 48
steps = 100

[md.order]
variants = layer_atomic
system = sp
N_e = 48
shuffle = 1
reorder = 0, 20
steps = 300
INI
  "$B/kbench" run /tmp/md-quick.ini --out "$OUT/results/md-quick"
}

step_md() {
  "$B/kbench" run profiles/md.ini --out "$OUT/results/md"
}

step_md_1() {
  "$B/kbench" run profiles/md.ini --shard 1/2 --out "$OUT/results/md-1"
}

step_md_2() {
  "$B/kbench" run profiles/md.ini --shard 2/2 --out "$OUT/results/md-2"
}

step_md_tests() {
  "$B/tests/test_md_gpu" --jobs 1 --verbose
}

# The standard LJ liquid section of profiles/md.ini alone (64,000 and 1,061,208 atoms).
step_md_ljstd() {
  "$B/kbench" run profiles/md.ini --filter 'md/*/system=ljstd,*' --out "$OUT/results/md-ljstd"
}

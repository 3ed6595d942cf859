# md plugin steps for scripts/h200-batch.sh (sourced there: $B is the build, $OUT the output).
#   step_md_quick   every variant at small and medium sizes, short sampling (< 2 min)
#   step_md         the full profiles/md.ini (86 cases, budget <= 4 min, expected ~3 min)
#   step_md_1, step_md_2  the same profile in two deterministic halves (--shard), if one call
#                   must stay shorter; results in md-1 and md-2
#   step_md_tests   the GPU test binary (~30 s)
#   step_md_hostprobe  the host layer assignment taken apart (test/host_probe.cu: pinned and
#                   pageable copies, the loop alone, v1's round trip vs v2/v3's pieces) at
#                   SP N_e 128 and 102 (~20 s with the compile)

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

# The host layer assignment of cell_block/layer_matrix taken apart (NOTES.md, "layer_matrix vs
# cell_block"): prints one line per measurement; look at the loop's ns per atom, the pinned
# copies' GB/s, and whether v2/v3's pieces beat v1's single copies.
step_md_hostprobe() {
  local nvcc=nvcc
  command -v nvcc >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
  mkdir -p "$OUT/results/md-hostprobe"
  "$nvcc" -O2 -o /tmp/md_host_probe plugins/md/test/host_probe.cu &&
    /tmp/md_host_probe 128 102 | tee "$OUT/results/md-hostprobe/host_probe.txt"
}

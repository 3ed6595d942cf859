# md plugin steps for scripts/h200-batch.sh (sourced there: $B is the build, $OUT the output).
#   step_md_quick   every variant at small and medium sizes, short sampling (< 2 min)
#   step_md         the full profiles/md.ini (93 cases in v3.2, ~2.2 min; run 4: 87 in 2.1 min)
#   step_md_1, step_md_2  the same profile in two deterministic halves (--shard), if one call
#                   must stay shorter; results in md-1 and md-2
#   step_md_tests   the GPU test binary (~30 s)
#   step_md_eos_ldg  the eos case (LJTS energy and pressure against Thol et al.'s equation of
#                   state), the read-only cache cases (S_ldg, S_ldg_l1), LJ's N_l after a long
#                   equilibration (lj_long) and the GPU test (~100 s); results in md-eos,
#                   md-ldg, md-nl
#   step_md_hostprobe  the host layer assignment taken apart (test/host_probe.cu: pinned and
#                   pageable copies, the plain and v2 loops alone, one copy vs pieces) at
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

# The host layer assignment of cell_block/layer_matrix taken apart (HISTORY.md, "layer_matrix vs
# cell_block"): prints one line per measurement; look at the loop's ns per atom, the pinned
# copies' GB/s, and whether v2/v3's pieces beat v1's single copies.
step_md_hostprobe() {
  local nvcc=nvcc
  command -v nvcc >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
  mkdir -p "$OUT/results/md-hostprobe"
  "$nvcc" -O2 -o /tmp/md_host_probe plugins/md/lab/host_probe.cu &&
    /tmp/md_host_probe 128 102 | tee "$OUT/results/md-hostprobe/host_probe.txt"
}

# Issue 14's EOS and read-only-cache items alone (HISTORY.md, "Standard LJ liquid" and "Table 8
# and the read-only cache"): the eos case (sorted, 110,592 atoms, shifted, ~20 s); the S_ldg
# and S_ldg_l1 points of layer_matrix and layer_atomic (SP N_e 48, 1000 steps, reorder 0 and
# 100: ldg 1, ldg 0 with L1, ldg 0 past L1; the glob also takes S_reorder's two identical
# ldg 1 points, a repeat that shows the noise; ~16 cases, ~40 s); LJ's N_l after 4000
# equilibration steps (section lj_long, 2 cases, ~10 s); then the GPU test (~30 s).
# Look at: eos_u_dev, eos_p_dev of the eos case; ldg=0,...,l1=0 vs ldg=1 medians; `layers` of
# the lj_long cases (36.6-36.9 after 500 steps in run 4).
step_md_eos_ldg() {
  "$B/kbench" run profiles/md.ini --filter 'md/sorted/system=ljstd,N_e=48,*' \
    --out "$OUT/results/md-eos"
  "$B/kbench" run profiles/md.ini --filter 'md/layer_atomic/system=lj,*,equil=4000,*' \
    --out "$OUT/results/md-nl"
  "$B/kbench" run profiles/md.ini \
    --filter 'md/layer_*/system=sp,N_e=48,steps=1000,*,delta=0,threads=128,reorder=[01]*' \
    --out "$OUT/results/md-ldg"
  "$B/tests/test_md_gpu" --jobs 1 --verbose
}

# kbench profile of one many-kernel md case with a sample of its launches (about 900 launches in
# one run of 100 steps; the whole run took 279 s under ncu): 30 launches after the first 90.
step_md_profile() {
  "$B/kbench" profile profiles/md.ini --case 'md/sorted/system=lj,N_e=24,steps=100,shifted=0' \
    --skip 90 --launches 30 --out "$OUT/results/md-profile"
}

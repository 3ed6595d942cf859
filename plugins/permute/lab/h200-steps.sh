# The permute plugin's steps for scripts/h200-batch.sh (sourced there; $B is the build folder,
# $OUT/results/<dir> comes back).  Run from the repository root.

# Every device variant on every preset at a tenth of the size, float32 and float64, beta 0 and
# 0.5, plus two dense permutes; short sampling (about a minute): verifies everything, first
# timings and the cost model's predictions beside them.
step_permute_quick() {
  cat >/tmp/permute-quick.ini <<'INI'
[run]
warmup = 2
min_samples = 5
min_time = 0.05
max_noise = 0.05
timeout = 60
cache = hot
seed = 1

[permute]
variants = per_element, tiled, gemm, auto, copy
baseline = copy
preset = abelian_small, recoupling_small, many_small, large_u, few_large, mixed
dtype = f32, f64
beta = 0, 0.5
scale = 0.1

[permute.full]
variants = per_element, tiled, gemm, auto, copy
baseline = copy
preset = recoupling_small, large_u, few_large
dtype = f32

[permute.dense]
variants = per_element, tiled, copy
baseline = copy
preset = dense
dims = 128x128x64x64
perm = [0,2,1,3], [3,2,1,0]

[permute.tile_len]
variants = tiled
preset = recoupling_small, few_large
tile_len = 32, 64, 128, 256

[permute.gemm_call]
variants = gemm, auto
preset = large_u
dtype = f32, f64
gemm_call = grouped, loop
INI
  "$B/kbench" run /tmp/permute-quick.ini --out "$OUT/results/permute-quick"
}

# The whole profile (243 cases; about 5 minutes: generating and checking the 200-500 MB
# tensors on the host is most of it).
step_permute() {
  "$B/kbench" run profiles/permute.ini --out "$OUT/results/permute"
}

# The same profile in two halves, should one step have to stay short: the seed's categories
# and the host reference (144 cases), then the dense permutes (99 cases).
step_permute_categories() {
  "$B/kbench" run profiles/permute.ini --filter 'permute/*/preset=[!d]*' \
    --out "$OUT/results/permute-categories"
}

step_permute_dense() {
  "$B/kbench" run profiles/permute.ini --filter 'permute/*/preset=dense*' \
    --out "$OUT/results/permute-dense"
}

# The GPU tests: every variant verifies on every preset; tiled keeps its distance.
step_permute_tests() {
  "$B/tests/test_permute_gpu" --jobs 1 --verbose
}

# Nsight Compute (full set, SASS stall samples) of tiled and per_element on recoupling_small,
# of tiled on few_large and (4) of tiled on large_u (float32, beta 0, full size), for the
# performance notes.
step_permute_ncu() {
  printf '[run]\nwarmup = 2\nmin_samples = 2\nmin_time = 0\ntimeout = 120\nseed = 1\n[permute]\nvariants = per_element, tiled\npreset = recoupling_small, few_large, large_u\ndtype = f32\nbeta = 0\n' \
    >/tmp/permute-ncu.ini
  local c d i=0
  for c in 'permute/tiled/preset=recoupling_small,*' 'permute/per_element/preset=recoupling_small,*' \
           'permute/tiled/preset=few_large,*' 'permute/tiled/preset=large_u,*'; do
    i=$((i + 1))
    d="$OUT/results/ncu-permute-$i"
    ncu_full /tmp/permute-ncu.ini "$c" "$d"
  done
}

# large_u at full size (issue 12: auto within 2x of copy): every path on it, float32 and
# float64, beta 0 and 0.5 (28 cases), and fused against copy at half and twice the blocks (6
# cases: the fixed cost of a launch against the per-tile rate); about 45 s.  Then Nsight
# Compute (full set, SASS stall samples) of auto's kernels in float32 (the cp.async fill since
# v3) and float64 (the register fill) at beta 0, and of fused (register fill) float32: -1, -2,
# -3 (about 20 s each; -3 names scale=1: the [permute.scale] cases share the rest of the name).
step_permute_large_u() {
  cat >/tmp/permute-large-u.ini <<'INI'
[run]
warmup = 2
min_samples = 5
min_time = 0.05
max_noise = 0.05
timeout = 120
cache = hot
seed = 1

[permute]
variants = per_element, tiled, gemm, fused, fused_async, auto, copy
baseline = copy
preset = large_u
dtype = f32, f64
beta = 0, 0.5
scale = 1

[permute.scale]
variants = fused, fused_async, copy
baseline = copy
preset = large_u
dtype = f32
scale = 0.5, 2
INI
  "$B/kbench" run /tmp/permute-large-u.ini --out "$OUT/results/permute-large-u"
  local c d i=0
  for c in 'permute/auto/preset=large_u,dtype=f32,alpha=1,beta=0,*' \
           'permute/auto/preset=large_u,dtype=f64,alpha=1,beta=0,*' \
           'permute/fused/preset=large_u,dtype=f32,alpha=1,beta=0,scale=1,*'; do
    i=$((i + 1))
    d="$OUT/results/ncu-permute-large-u-$i"
    ncu_full /tmp/permute-large-u.ini "$c" "$d"
  done
}

# The dense permutes of profiles/permute.ini (rank 2 to 8, 21 to 537 MB), tiled and copy only,
# short sampling (about 2-3 minutes, most of it generating and checking the tensors on the
# host): the issue's "median >= 0.8x, worst >= 0.65x copy bandwidth" over rank 2-6.
step_permute_dense_quick() {
  {
    printf '[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.05\nmax_noise = 0.05\ntimeout = 120\ncache = hot\nseed = 1\n'
    sed -n '/^\[permute.dense2\]/,$p' profiles/permute.ini | sed 's/^variants = .*/variants = tiled, copy/'
  } >/tmp/permute-dense-quick.ini
  "$B/kbench" run /tmp/permute-dense-quick.ini --out "$OUT/results/permute-dense-quick"
}

# Issue #12, the lean path v4 against v2 in one run (HISTORY.md, "12. v4"): the
# float32 dense permutes of permute_dense_quick (30 cases, rank 2-8; its float64 section left
# out for time) and few_large at scale 1, tiled at lean = 2 (v2: scalar, one tile a CTA; run
# 10's fastest) and lean = 4 (v4: whole aligned tiles in 16-byte vectors), copy beside them
# (the baseline: it runs at both, lean does not change it; the plugin skipped copy at lean = 2
# until kbench checked knob_variants); then the two reversals profiled
# below in float64 and with beta = 0.5 (the cin vectors), lean = 2 and 4 (about 2 minutes,
# most of it generating the tensors on the host).  Then Nsight Compute (full set, SASS stall
# samples) of v4 on 128x128x64x64 [3,2,1,0] (537 MB, the stride-1 axis moved; about 20 s):
# SM throughput, instructions, bank conflicts against run 10's ncu-permute-dense-2.
step_permute_dense_ab() {
  {
    printf '[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.05\nmax_noise = 0.05\ntimeout = 120\ncache = hot\nseed = 1\n'
    sed -n '/^\[permute.dense2\]/,$p' profiles/permute.ini |
      awk '/^\[/ { skip = $0 == "[permute.dense4_f64]" } !skip' |
      sed 's/^variants = .*/variants = tiled, copy\nlean = 2, 4/'
    printf '\n[permute.few_large]\nvariants = tiled, copy\nbaseline = copy\npreset = few_large\nlean = 2, 4\n'
    printf '\n[permute.rev_beta]\nvariants = tiled, copy\nbaseline = copy\npreset = dense\ndims = 48x48x48x48, 128x128x64x64\nperm = [3,2,1,0]\nbeta = 0.5\nlean = 2, 4\n'
    printf '\n[permute.rev_f64]\nvariants = tiled, copy\nbaseline = copy\npreset = dense\ndims = 48x48x48x48, 128x128x64x64\nperm = [3,2,1,0]\ndtype = f64\nbeta = 0, 0.5\nlean = 2, 4\n'
  } >/tmp/permute-dense-ab.ini
  "$B/kbench" run /tmp/permute-dense-ab.ini --out "$OUT/results/permute-dense-ab"
  printf '[run]\nwarmup = 2\nmin_samples = 2\nmin_time = 0\ntimeout = 120\nseed = 1\n[permute]\nvariants = tiled\npreset = dense\ndims = 128x128x64x64\nperm = [3,2,1,0]\nlean = 4\n' \
    >/tmp/permute-dense-ncu.ini
  ncu_full /tmp/permute-dense-ncu.ini 'permute/tiled/preset=dense,*,dims=128x128x64x64,*' \
    "$OUT/results/ncu-permute-dense-v4"
}

# Issue 12, the small presets (pure launch latency), round 2 (v6, tile_split): per_element,
# tiled, auto and copy on recoupling_small, many_small and mixed at scale 0.1 and 1, float32
# and float64, beta 0 and 0.5 (96 cases); run 10's plan (tile_split = 0: one launch, no waves)
# for tiled and auto on many_small and mixed at scale 1 (16 cases; at 0.1 and on
# recoupling_small the two plans are the same); mixed at scale 1 with lean = 2 (the split's
# lean-only launch one tile a CTA, v2, against lean_pipe; 4 cases) and with tile_split = 2
# (the general launch forked onto a second stream beside the lean-only one; 4 cases); the
# launch floor (one element as a lean tile, rows 1, and as a direct tile, rows 2; 6 cases).
# abelian_small, large_u and tile_direct = 0 (run 10) are left out: their plans did not
# change.  Short sampling as step_permute_quick; 126 cases, about 60 s.
step_permute_small_ab() {
  cat >/tmp/permute-small-ab.ini <<'INI'
[run]
warmup = 2
min_samples = 5
min_time = 0.05
max_noise = 0.05
timeout = 60
cache = hot
seed = 1

[permute]
variants = per_element, tiled, auto, copy
baseline = copy
preset = recoupling_small, many_small, mixed
dtype = f32, f64
beta = 0, 0.5
scale = 0.1, 1

[permute.run10]
variants = tiled, auto
preset = many_small, mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1
tile_split = 0

[permute.lean2]
variants = tiled
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1
lean = 2

[permute.fork]
variants = tiled
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1
tile_split = 2

[permute.floor]
variants = per_element, tiled, copy
baseline = copy
preset = custom
n_blocks = 1
rank = 1
dmin = 1
dmax = 1
rows_min = 1, 2
rows_max = 1, 2
zip = rows_min+rows_max
INI
  "$B/kbench" run /tmp/permute-small-ab.ini --out "$OUT/results/permute-small-ab"
}

# The lean kernel on one-wave launches (plan_tiled.c LEAN_VEC_MIN_TILES): abelian_small (35-42
# lean tiles at scale 1, 3-4 at 0.1) and a 1024-tile dense rank 8 permute, per_element beside
# tiled at lean = 2, 3 and 4 (the default: v4's vector tile only from 132 tiles up); float32
# and float64, beta 0 and 0.5; short sampling, about 30 s.  per_element has no lean tiles
# (kbench refuses lean for it): a section of its own; copy, the baseline, runs at each lean.
step_permute_lean_small() {
  cat >/tmp/permute-lean-small.ini <<'INI'
[run]
warmup = 2
min_samples = 9
min_time = 0.1
max_noise = 0.05
timeout = 60
cache = hot
seed = 1

[permute]
variants = tiled, copy
baseline = copy
preset = abelian_small
dtype = f32, f64
beta = 0, 0.5
scale = 0.1, 1
lean = 2, 3, 4

[permute.per_element]
variants = per_element
preset = abelian_small
dtype = f32, f64
beta = 0, 0.5
scale = 0.1, 1

[permute.dense8]
variants = tiled, copy
baseline = copy
preset = dense
dims = 8x8x8x4x4x4x4x4
perm = [6,7,4,5,2,3,0,1]
lean = 2, 3, 4
INI
  "$B/kbench" run /tmp/permute-lean-small.ini --out "$OUT/results/permute-lean-small"
}

# v8 (session 5): the fused kernel's product on the FP64 tensor cores (fused_mma) against the
# FMA fills on large_u at full size, float32 and float64, beta 0 and 0.5 (20 cases); float32's
# fill through registers or a cp.async ring of 2 stages (mma_ring; default 3) and 4 CTAs an SM
# (mma_ctas; default 3) (8 cases); at half and twice the blocks (12); and fused_mma beside fused
# on the other recoupling presets (24: verification where tiles are short); about 60 s.  Then
# Nsight Compute (full set, SASS stall samples) of fused_mma float32 and float64, beta 0: -1, -2.
step_permute_mma() {
  cat >/tmp/permute-mma.ini <<'INI'
[run]
warmup = 2
min_samples = 5
min_time = 0.05
max_noise = 0.05
timeout = 120
cache = hot
seed = 1

[permute]
variants = fused, fused_async, fused_mma, auto, copy
baseline = copy
preset = large_u
dtype = f32, f64
beta = 0, 0.5
scale = 1

[permute.ring]
variants = fused_mma
preset = large_u
dtype = f32
beta = 0, 0.5
mma_ring = 0, 2

[permute.ctas]
variants = fused_mma
preset = large_u
dtype = f32
mma_ctas = 4
mma_ring = 2, 3

[permute.scale]
variants = fused_async, fused_mma, copy
baseline = copy
preset = large_u
dtype = f32, f64
scale = 0.5, 2

[permute.others]
variants = fused, fused_mma
preset = recoupling_small, many_small, mixed
dtype = f32, f64
beta = 0, 0.5
INI
  "$B/kbench" run /tmp/permute-mma.ini --out "$OUT/results/permute-mma"
  local c d i=0
  for c in 'permute/fused_mma/preset=large_u,dtype=f32,alpha=1,beta=0,scale=1,*,mma_ctas=3,mma_ring=3,*' \
           'permute/fused_mma/preset=large_u,dtype=f64,alpha=1,beta=0,scale=1,*,mma_ctas=3,mma_ring=3,*'; do
    i=$((i + 1))
    d="$OUT/results/ncu-permute-mma-$i"
    ncu_full /tmp/permute-mma.ini "$c" "$d"
  done
}

# mixed at full size (issue 12: tiled >= 2x per_element; beta 0.5 missed): since session 5 the
# split plan's lean launch runs v2's tile and tile_split = 2 (forked) is the default; beside
# tile_split = 1 and 0, per_element and copy; float32 and float64, beta 0 and 0.5 (28 cases,
# about 30 s).
step_permute_mixed() {
  cat >/tmp/permute-mixed.ini <<'INI'
[run]
warmup = 2
min_samples = 7
min_time = 0.1
max_noise = 0.05
timeout = 120
cache = hot
seed = 1

[permute]
variants = per_element, tiled, auto, copy
baseline = copy
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1

[permute.split]
variants = tiled
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1
tile_split = 0, 1
INI
  "$B/kbench" run /tmp/permute-mixed.ini --out "$OUT/results/permute-mixed"
}

# mixed at full size (issue 12: tiled >= 2x per_element; beta 0.5 missed): the split plan's
# knobs crossed, tile_split 1 / 2 x lean 4 / 2, beside per_element and copy (run 16; since
# v6.1 a split plan's lean launch runs v2's tile whatever `lean` says, step_permute_mixed); float32 and
# float64, beta 0 and 0.5 (32 cases, about 30 s).  Then Nsight Compute of tiled float32 beta
# 0.5 (both launches): ncu-permute-mixed.
step_permute_mixed_ab() {
  cat >/tmp/permute-mixed-ab.ini <<'INI'
[run]
warmup = 2
min_samples = 7
min_time = 0.1
max_noise = 0.05
timeout = 120
cache = hot
seed = 1

[permute]
variants = per_element, tiled, copy
baseline = copy
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1

[permute.split2]
variants = tiled
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1
tile_split = 2
lean = 2, 4

[permute.lean2]
variants = tiled
preset = mixed
dtype = f32, f64
beta = 0, 0.5
scale = 1
lean = 2
INI
  "$B/kbench" run /tmp/permute-mixed-ab.ini --out "$OUT/results/permute-mixed-ab"
  ncu_full /tmp/permute-mixed-ab.ini 'permute/tiled/preset=mixed,dtype=f32,alpha=1,beta=0.5,scale=1,*,lean=4,tile_direct=1,mma_ctas=3,mma_ring=3,tile_split=1' \
    "$OUT/results/ncu-permute-mixed"
}

# The DMMA kernels against run 23's figures after a refactor that changed their PTX (review,
# session 5): fused_mma and auto on large_u, f32/f64, beta 0/0.5, beside fused_async and copy
# (20 cases, about 15 s).
step_permute_mma_check() {
  cat >/tmp/permute-mma-check.ini <<'INI'
[run]
warmup = 2
min_samples = 7
min_time = 0.1
max_noise = 0.05
timeout = 120
cache = hot
seed = 1

[permute]
variants = fused_async, fused_mma, auto, copy
baseline = copy
preset = large_u
dtype = f32, f64
beta = 0, 0.5
INI
  "$B/kbench" run /tmp/permute-mma-check.ini --out "$OUT/results/permute-mma-check"
}

# Every instance of the fused kernels through pm_run_fused's dispatch (launch_one, pick): the
# FMA fills, auto, and fused_mma with each ring and register cap, float32 and float64, beta 0
# and 0.5, on large_u at scale 0.1, each verified; then the GPU test.
step_permute_dispatch() {
  cat >/tmp/permute-dispatch.ini <<'INI'
[run]
warmup = 1
min_samples = 3
min_time = 0
timeout = 120
seed = 1

[permute]
variants = fused, fused_async, auto
preset = large_u
dtype = f32, f64
beta = 0, 0.5
scale = 0.1

[permute.mma]
variants = fused_mma
preset = large_u
dtype = f32, f64
beta = 0, 0.5
scale = 0.1
mma_ring = 0, 2, 3
mma_ctas = 3, 4
INI
  "$B/kbench" run /tmp/permute-dispatch.ini --out "$OUT/results/permute-dispatch"
  "$B/tests/test_permute_gpu" --jobs 1 --verbose
}

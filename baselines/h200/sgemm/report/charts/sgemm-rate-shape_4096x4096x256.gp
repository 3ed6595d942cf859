# kbench chart: sgemm, shape=4096x4096x256: GFLOP/s per variant
# Data: sgemm-rate-shape_4096x4096x256.dat (blocks selected with 'index', one per series).
# Redraw after editing: gnuplot sgemm-rate-shape_4096x4096x256.gp (run it in this folder).
set encoding utf8
set terminal pngcairo size 1060,620 noenhanced font 'DejaVu Sans,11'
set output 'sgemm-rate-shape_4096x4096x256.png'
set title 'sgemm, shape=4096x4096x256: GFLOP/s per variant' font ',13'
set border 3 lc rgb '#444444'
set tics nomirror
set grid ytics mytics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1
set datafile missing 'NaN'
set ylabel 'GFLOP/s (median; bars: 95% CI of the median)'
set logscale y 10
set yrange [99.9999:175036.332]
set ytics ('100' 100 0, '' 200 1, '' 300 1, '' 400 1, '' 500 1, '' 600 1, '' 700 1, '' 800 1, '' 900 1, '1000' 1000 0, '' 2000 1, '' 3000 1, '' 4000 1, '' 5000 1, '' 6000 1, '' 7000 1, '' 8000 1, '' 9000 1, '10k' 10000 0, '' 20000 1, '' 30000 1, '' 40000 1, '' 50000 1, '' 60000 1, '' 70000 1, '' 80000 1, '' 90000 1, '100k' 100000 0)
set xrange [-0.6:11.6]
set xtics ('naive' 0, 'coalesced' 1, 'smem_tiled' 2, 'reg_1d' 3, 'reg_2d' 4, 'vectorized' 5, 'cp_async' 6, 'swizzled' 7, 'wide_epilogue' 8, 'warptile' 9, 'cublas' 10, 'tf32x3' 11) rotate by 45 right
set xtics scale 0
unset key
set arrow from first -0.350000, first 63295.7714 to first 11.350000, first 63295.7714 nohead dt 2 lw 1.5 lc rgb '#555555' front
set label 'FP32 FMA peak: 63296 GFLOP/s' at first -0.350000, first 63295.7714 left offset 0.3,0.6 tc rgb '#444444' front
bar_base = 100  # bars start here (the bottom of a log axis)
plot 'sgemm-rate-shape_4096x4096x256.dat' index 0 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#1f77b4' title '', \
     '' index 0 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 0 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 0 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 0 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 1 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#ff7f0e' title '', \
     '' index 1 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 1 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 1 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 1 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 2 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#2ca02c' title '', \
     '' index 2 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 2 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 2 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 2 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 3 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#d62728' title '', \
     '' index 3 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 3 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 3 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 3 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 4 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#9467bd' title '', \
     '' index 4 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 4 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 4 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 4 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 5 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#8c564b' title '', \
     '' index 5 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 5 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 5 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 5 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 6 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#e377c2' title '', \
     '' index 6 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 6 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 6 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 6 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 7 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#7f7f7f' title '', \
     '' index 7 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 7 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 7 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 7 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 8 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#bcbd22' title '', \
     '' index 8 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 8 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 8 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 8 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 9 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#17becf' title '', \
     '' index 9 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 9 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 9 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 9 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 10 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#393b79' title '', \
     '' index 10 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 10 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 10 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 10 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle, \
     'sgemm-rate-shape_4096x4096x256.dat' index 11 using 1:2:($1-0.322000):($1+0.322000):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#ad494a' title '', \
     '' index 11 using 1:3:(0):($4-$3) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 11 using ($1-0.084000):3:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 11 using ($1-0.084000):4:(0.168000):(0) with vectors nohead lc rgb '#222222' lw 1.2 notitle, \
     '' index 11 using 1:4:(abs($2) >= 100 ? sprintf('%.0f', $2) : sprintf('%.3g', $2)) with labels offset 0,0.8 font ',9' notitle
set terminal svg size 1060,620 dynamic noenhanced font 'DejaVu Sans,11' background rgb 'white'
set output 'sgemm-rate-shape_4096x4096x256.svg'
replot
unset output

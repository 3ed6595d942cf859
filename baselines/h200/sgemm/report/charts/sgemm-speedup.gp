# kbench chart: sgemm: speedup against cublas
# Data: sgemm-speedup.dat (blocks selected with 'index', one per series).
# Redraw after editing: gnuplot sgemm-speedup.gp (run it in this folder).
set encoding utf8
set terminal pngcairo size 1759,620 noenhanced font 'DejaVu Sans,11'
set output 'sgemm-speedup.png'
set title 'sgemm: speedup against cublas' font ',13'
set border 3 lc rgb '#444444'
set tics nomirror
set grid ytics mytics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1
set datafile missing 'NaN'
set ylabel 'speedup: median time of cublas / of the variant'
set logscale y 10
set yrange [0.000999999:3.31456328]
set ytics ('0.001' 0.001 0, '' 0.002 1, '' 0.003 1, '' 0.004 1, '' 0.005 1, '' 0.006 1, '' 0.007 1, '' 0.008 1, '' 0.009 1, '0.01' 0.01 0, '' 0.02 1, '' 0.03 1, '' 0.04 1, '' 0.05 1, '' 0.06 1, '' 0.07 1, '' 0.08 1, '' 0.09 1, '0.1' 0.1 0, '' 0.2 1, '' 0.3 1, '' 0.4 1, '' 0.5 1, '' 0.6 1, '' 0.7 1, '' 0.8 1, '' 0.9 1, '1' 1 0, '' 2 1, '' 3 1)
set xrange [-0.6:5.6]
set xtics ('shape=1024x1024x1024' 0, 'shape=2048x2048x2048' 1, 'shape=4096x4096x4096' 2, 'shape=8192x8192x8192' 3, 'shape=4096x4096x256' 4, 'shape=256x4096x4096' 5)
set xtics scale 0
set key outside right top vertical Left reverse
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#555555' front
set label 'cublas = 1' at graph 1, first 1 right offset -0.5,0.6 tc rgb '#555555' front
bar_base = 0.001  # bars start here (the bottom of a log axis)
plot 'sgemm-speedup.dat' index 0 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#1f77b4' title 'naive', \
     'sgemm-speedup.dat' index 1 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#ff7f0e' title 'coalesced', \
     'sgemm-speedup.dat' index 2 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#2ca02c' title 'smem_tiled', \
     'sgemm-speedup.dat' index 3 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#d62728' title 'reg_1d', \
     'sgemm-speedup.dat' index 4 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#9467bd' title 'reg_2d', \
     'sgemm-speedup.dat' index 5 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#8c564b' title 'vectorized', \
     'sgemm-speedup.dat' index 6 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#e377c2' title 'cp_async', \
     'sgemm-speedup.dat' index 7 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#7f7f7f' title 'swizzled', \
     'sgemm-speedup.dat' index 8 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#bcbd22' title 'wide_epilogue', \
     'sgemm-speedup.dat' index 9 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#17becf' title 'warptile', \
     'sgemm-speedup.dat' index 10 using 1:2:($1-0.033455):($1+0.033455):(bar_base):2 with boxxyerror fs solid 0.85 noborder lc rgb '#ad494a' title 'tf32x3'
set terminal svg size 1759,620 dynamic noenhanced font 'DejaVu Sans,11' background rgb 'white'
set output 'sgemm-speedup.svg'
replot
unset output

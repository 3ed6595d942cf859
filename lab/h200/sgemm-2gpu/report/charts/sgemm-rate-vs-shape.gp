# kbench chart: sgemm: GFLOP/s against shape
# Data: sgemm-rate-vs-shape.dat (blocks selected with 'index', one per series).
# Redraw after editing: gnuplot sgemm-rate-vs-shape.gp (run it in this folder).
set encoding utf8
set terminal pngcairo size 1284,640 noenhanced font 'DejaVu Sans,11'
set output 'sgemm-rate-vs-shape.png'
set title 'sgemm: GFLOP/s against shape' font ',13'
set border 3 lc rgb '#444444'
set tics nomirror
set grid ytics mytics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1
set datafile missing 'NaN'
set xlabel 'shape (plotted at the product of its dimensions)'
set ylabel 'GFLOP/s (median; bars: slowest to fastest sample)'
set logscale x 2
set xrange [766958446:7.69658139e+11]
set logscale y 10
set format y '%g'
set yrange [100:180522.43]
set xtics ('1024x1024x1024' 1.07374182e+09, '2048x2048x2048' 8.58993459e+09, '4096x4096x4096' 6.87194767e+10, '4096x4096x256' 4.2949673e+09, '8192x8192x8192' 5.49755814e+11)
set key outside right top vertical Left reverse
plot 'sgemm-rate-vs-shape.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#1f77b4' title 'naive', \
     'sgemm-rate-vs-shape.dat' index 1 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#ff7f0e' title 'coalesced', \
     'sgemm-rate-vs-shape.dat' index 2 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#2ca02c' title 'smem_tiled', \
     'sgemm-rate-vs-shape.dat' index 3 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#d62728' title 'reg_1d', \
     'sgemm-rate-vs-shape.dat' index 4 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#9467bd' title 'reg_2d', \
     'sgemm-rate-vs-shape.dat' index 5 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#8c564b' title 'vectorized', \
     'sgemm-rate-vs-shape.dat' index 6 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#e377c2' title 'cp_async', \
     'sgemm-rate-vs-shape.dat' index 7 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#7f7f7f' title 'swizzled', \
     'sgemm-rate-vs-shape.dat' index 8 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#bcbd22' title 'wide_epilogue', \
     'sgemm-rate-vs-shape.dat' index 9 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#17becf' title 'warptile', \
     'sgemm-rate-vs-shape.dat' index 10 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 2 lc rgb '#393b79' title 'cublas', \
     'sgemm-rate-vs-shape.dat' index 11 using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt 1 lc rgb '#ad494a' title 'tf32x3'
set terminal svg size 1284,640 dynamic noenhanced font 'DejaVu Sans,11' background rgb 'white'
set output 'sgemm-rate-vs-shape.svg'
replot
unset output

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
set ylabel 'GFLOP/s (median; bars: 95% CI of the median)'
set logscale x 2
set logscale y 10
set yrange [99.9999:172577.082]
set ytics ('100' 100 0, '' 200 1, '' 300 1, '' 400 1, '' 500 1, '' 600 1, '' 700 1, '' 800 1, '' 900 1, '1000' 1000 0, '' 2000 1, '' 3000 1, '' 4000 1, '' 5000 1, '' 6000 1, '' 7000 1, '' 8000 1, '' 9000 1, '10k' 10000 0, '' 20000 1, '' 30000 1, '' 40000 1, '' 50000 1, '' 60000 1, '' 70000 1, '' 80000 1, '' 90000 1, '100k' 100000 0)
set xrange [766957679:7.69658909e+11]
set xtics ('1024x1024x1024' 1.07374182e+09, '2048x2048x2048' 8.58993459e+09, '4096x4096x4096' 6.87194767e+10, '8192x8192x8192' 5.49755814e+11, '4096x4096x256 / 256x4096x4096' 4.2949673e+09) rotate by 45 right
set key outside right top vertical Left reverse
set arrow from graph 0, first 63295.7714 to graph 1, first 63295.7714 nohead dt 2 lw 1.5 lc rgb '#555555' front
set label 'FP32 FMA peak: 63296 GFLOP/s' at graph 1, first 63295.7714 right offset -0.5,0.6 tc rgb '#555555' front
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

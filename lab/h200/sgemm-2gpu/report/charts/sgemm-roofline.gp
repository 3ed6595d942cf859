# kbench chart: sgemm: roofline on NVIDIA H200
# Data: sgemm-roofline.dat (blocks selected with 'index', one per series).
# Redraw after editing: gnuplot sgemm-roofline.gp (run it in this folder).
set encoding utf8
set terminal pngcairo size 1100,680 noenhanced font 'DejaVu Sans,11'
set output 'sgemm-roofline.png'
set title 'sgemm: roofline on NVIDIA H200' font ',13'
set border 3 lc rgb '#444444'
set tics nomirror
set grid ytics mytics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1
set datafile missing 'NaN'
set xlabel 'arithmetic intensity (FLOP/byte)'
set ylabel 'achieved GFLOP/s'
set logscale xy 10
set format x '%g'
set format y '%g'
set grid xtics mxtics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1
set xrange [1:10000]
set yrange [100:263092.217]
set samples 600
bandwidth_gbs = 4231.06112  # memory ceiling (GB/s)
peak_gflops = 63484.4805  # compute ceiling (GFLOP/s)
set key outside right top vertical Left reverse
set label sprintf('compute %.0f GFLOP/s', peak_gflops) at graph 0.98, first 63484.4805 right offset 0,0.7 tc rgb '#333333'
set label sprintf('memory %.0f GB/s', bandwidth_gbs) at 3.87354973, first 16389.2256 right offset -0.5,0.7 tc rgb '#333333'
set arrow from 15.0043875, graph 0 to 15.0043875, first 63484.4805 nohead dt 3 lc rgb '#777777'
set label sprintf('ridge %.3g FLOP/byte', peak_gflops/bandwidth_gbs) at 15.0043875, graph 0.04 left offset 0.5,0 tc rgb '#555555'
plot (bandwidth_gbs*x < peak_gflops ? bandwidth_gbs*x : peak_gflops) lw 2.5 lc rgb '#333333' title 'roof (measured)', \
     'sgemm-roofline.dat' index 0 using 1:2 with points pt 7 ps 1.6 lc rgb '#1f77b4' title 'naive', \
     'sgemm-roofline.dat' index 1 using 1:2 with points pt 5 ps 1.6 lc rgb '#ff7f0e' title 'coalesced', \
     'sgemm-roofline.dat' index 2 using 1:2 with points pt 9 ps 1.6 lc rgb '#2ca02c' title 'smem_tiled', \
     'sgemm-roofline.dat' index 3 using 1:2 with points pt 11 ps 1.6 lc rgb '#d62728' title 'reg_1d', \
     'sgemm-roofline.dat' index 4 using 1:2 with points pt 13 ps 1.6 lc rgb '#9467bd' title 'reg_2d', \
     'sgemm-roofline.dat' index 5 using 1:2 with points pt 15 ps 1.6 lc rgb '#8c564b' title 'vectorized', \
     'sgemm-roofline.dat' index 6 using 1:2 with points pt 4 ps 1.6 lc rgb '#e377c2' title 'cp_async', \
     'sgemm-roofline.dat' index 7 using 1:2 with points pt 6 ps 1.6 lc rgb '#7f7f7f' title 'swizzled', \
     'sgemm-roofline.dat' index 8 using 1:2 with points pt 8 ps 1.6 lc rgb '#bcbd22' title 'wide_epilogue', \
     'sgemm-roofline.dat' index 9 using 1:2 with points pt 10 ps 1.6 lc rgb '#17becf' title 'warptile', \
     'sgemm-roofline.dat' index 10 using 1:2 with points pt 12 ps 1.6 lc rgb '#393b79' title 'cublas', \
     'sgemm-roofline.dat' index 11 using 1:2 with points pt 14 ps 1.6 lc rgb '#ad494a' title 'tf32x3'
set terminal svg size 1100,680 dynamic noenhanced font 'DejaVu Sans,11' background rgb 'white'
set output 'sgemm-roofline.svg'
replot
unset output

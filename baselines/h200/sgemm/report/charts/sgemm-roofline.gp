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
set grid xtics mxtics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1
set samples 600
set xrange [0.999999:10000.01]
set xtics ('1' 1 0, '' 2 1, '' 3 1, '' 4 1, '' 5 1, '' 6 1, '' 7 1, '' 8 1, '' 9 1, '10' 10 0, '' 20 1, '' 30 1, '' 40 1, '' 50 1, '' 60 1, '' 70 1, '' 80 1, '' 90 1, '100' 100 0, '' 200 1, '' 300 1, '' 400 1, '' 500 1, '' 600 1, '' 700 1, '' 800 1, '' 900 1, '1000' 1000 0, '' 2000 1, '' 3000 1, '' 4000 1, '' 5000 1, '' 6000 1, '' 7000 1, '' 8000 1, '' 9000 1, '10k' 10000 0)
set yrange [99.9999:263716.043]
set ytics ('100' 100 0, '' 200 1, '' 300 1, '' 400 1, '' 500 1, '' 600 1, '' 700 1, '' 800 1, '' 900 1, '1000' 1000 0, '' 2000 1, '' 3000 1, '' 4000 1, '' 5000 1, '' 6000 1, '' 7000 1, '' 8000 1, '' 9000 1, '10k' 10000 0, '' 20000 1, '' 30000 1, '' 40000 1, '' 50000 1, '' 60000 1, '' 70000 1, '' 80000 1, '' 90000 1, '100k' 100000 0, '' 200000 1)
set key outside right top vertical Left reverse
bandwidth_gbs = 4210.61995  # memory ceiling (GB/s)
peak_0 = 63295.7714  # compute ceiling (GFLOP/s)
set label 'FP32 FMA peak: 63296 GFLOP/s' at graph 0.98, first 63295.7714 right offset 0,0.7 tc rgb '#333333'
set arrow from 15.0324114, graph 0 to 15.0324114, first 63295.7714 nohead dt 3 lc rgb '#777777'
set label sprintf('ridge %.3g FLOP/byte', peak_0/bandwidth_gbs) at 15.0324114, graph 0.04 left offset 0.5,0 tc rgb '#555555'
set label sprintf('memory %.0f GB/s', bandwidth_gbs) at 3.87716538, first 16325.2699 right offset -0.5,0.7 tc rgb '#333333'
plot (bandwidth_gbs*x < peak_0 ? bandwidth_gbs*x : peak_0) lw 2.5 dt 1 lc rgb '#333333' title 'roof (measured)', \
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

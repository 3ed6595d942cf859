set arrow from 2.2018, graph 0 to 2.2018, graph 1 nohead dt 2 lc rgb "gray40"
set label "Tc = 2.2018" at 2.2018, graph 0.95 right offset -0.5,0 tc rgb "gray40"
set terminal pngcairo size 900,640 noenhanced
set output "plots/fss-xy-3d.png"
set title "labeling (union_find): <m^4>/<m^2>^2 against T, 3-D xy, one line per L; lines: quadratic fits"
set xlabel "T (J)"; set ylabel "<m^4>/<m^2>^2; bars: 1 standard error"; set key top left; set grid; set samples 500
plot "plots/fss-xy-3d.dat" index 0 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 1 title "L = 8", \
     (x >= 2.14204 && x <= 2.26156) ? 1.230650465 + 2.08996662*(x-2.2018) + 5.296114421*(x-2.2018)**2 : 1/0 with lines lc 1 notitle, \
     "plots/fss-xy-3d.dat" index 1 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 2 title "L = 16", \
     (x >= 2.1805 && x <= 2.2231) ? 1.241396385 + 6.124511483*(x-2.2018) + 40.1892172*(x-2.2018)**2 : 1/0 with lines lc 2 notitle, \
     "plots/fss-xy-3d.dat" index 2 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 3 title "L = 32", \
     (x >= 2.19421 && x <= 2.20939) ? 1.22169297 + 14.67708982*(x-2.2018) + 462.9390226*(x-2.2018)**2 : 1/0 with lines lc 3 notitle
set terminal svg size 900,640 noenhanced
set output "plots/fss-xy-3d.svg"
replot

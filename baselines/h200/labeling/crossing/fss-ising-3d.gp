set terminal pngcairo size 900,640 noenhanced
set output "plots/fss-ising-3d.png"
set title "labeling (union_find): <m^4>/<m^2>^2 against T, 3-D ising, one line per L; lines: quadratic fits"
set xlabel "T (J)"; set ylabel "<m^4>/<m^2>^2; bars: 1 standard error"; set key top left; set grid; set samples 500
set arrow from 4.5115, graph 0 to 4.5115, graph 1 nohead dt 2 lc rgb "gray40"
set label "Tc = 4.5115" at 4.5115, graph 0.95 right offset -0.5,0 tc rgb "gray40"
set arrow from graph 0, first 1.604 to graph 1, first 1.604 nohead dt 3 lc rgb "gray40"
set label "U* = 1.604" at graph 0.98, first 1.604 right offset 0,0.7 tc rgb "gray40"
plot "plots/fss-ising-3d.dat" index 0 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 1 title "L = 8", \
     (x >= 4.41163 && x <= 4.61137) ? 1.544806175 + 2.63037435*(x-4.5115) + 4.019380063*(x-4.5115)**2 : 1/0 with lines lc 1 notitle, \
     "plots/fss-ising-3d.dat" index 1 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 2 title "L = 16", \
     (x >= 4.47825 && x <= 4.54475) ? 1.582442008 + 8.277517821*(x-4.5115) + 25.54279059*(x-4.5115)**2 : 1/0 with lines lc 2 notitle, \
     "plots/fss-ising-3d.dat" index 2 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 3 title "L = 32", \
     (x >= 4.50043 && x <= 4.52257) ? 1.588074223 + 24.81176811*(x-4.5115) + 379.5941095*(x-4.5115)**2 : 1/0 with lines lc 3 notitle, \
     "plots/fss-ising-3d.dat" index 3 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 4 title "L = 64", \
     (x >= 4.50782 && x <= 4.51518) ? 1.609187775 + 76.42752418*(x-4.5115) + 2374.052182*(x-4.5115)**2 : 1/0 with lines lc 4 notitle
set terminal svg size 900,640 noenhanced
set output "plots/fss-ising-3d.svg"
replot

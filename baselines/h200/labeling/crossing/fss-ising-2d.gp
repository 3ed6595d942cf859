set terminal pngcairo size 900,640 noenhanced
set output "plots/fss-ising-2d.png"
set title "labeling (union_find): <m^4>/<m^2>^2 against T, 2-D ising, one line per L; lines: quadratic fits"
set xlabel "T (J)"; set ylabel "<m^4>/<m^2>^2; bars: 1 standard error"; set key top left; set grid; set samples 500
set arrow from 2.2691853, graph 0 to 2.2691853, graph 1 nohead dt 2 lc rgb "gray40"
set label "Tc = 2.26919" at 2.2691853, graph 0.95 right offset -0.5,0 tc rgb "gray40"
set arrow from graph 0, first 1.168 to graph 1, first 1.168 nohead dt 3 lc rgb "gray40"
set label "U* = 1.168" at graph 0.98, first 1.168 right offset 0,0.7 tc rgb "gray40"
plot "plots/fss-ising-2d.dat" index 0 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 1 title "L = 32", \
     (x >= 2.22664 && x <= 2.31173) ? 1.165387686 + 3.32378377*(x-2.269186) + 26.24990004*(x-2.269186)**2 : 1/0 with lines lc 1 notitle, \
     "plots/fss-ising-2d.dat" index 1 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 2 title "L = 64", \
     (x >= 2.24791 && x <= 2.29046) ? 1.171174884 + 6.580172284*(x-2.269186) + 90.88751028*(x-2.269186)**2 : 1/0 with lines lc 2 notitle, \
     "plots/fss-ising-2d.dat" index 2 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 3 title "L = 128", \
     (x >= 2.25855 && x <= 2.27982) ? 1.164080363 + 12.44704432*(x-2.269186) + 352.253759*(x-2.269186)**2 : 1/0 with lines lc 3 notitle, \
     "plots/fss-ising-2d.dat" index 3 using 1:2:3 with yerrorbars pt 7 ps 0.8 lc 4 title "L = 256", \
     (x >= 2.26387 && x <= 2.2745) ? 1.177153301 + 27.14039828*(x-2.269186) + 1496.259842*(x-2.269186)**2 : 1/0 with lines lc 4 notitle
set terminal svg size 900,640 noenhanced
set output "plots/fss-ising-2d.svg"
replot

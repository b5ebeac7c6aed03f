# The figure of the Gaussian mechanisms next to the pure ones at the same
# (epsilon, delta) (report/gaussian_pure.c writes the CSV).  Call with
# -e "dir='...'" naming the directory that holds gaussian_pure.csv and gets
# gaussian_pure.png.
set datafile separator ','
set terminal pngcairo size 1000,600 font 'DejaVu Sans,11'
set output sprintf('%s/gaussian_pure.png', dir)
set title "Standard deviation against t at (epsilon, delta) = (1, 10^{-6}): pure at epsilon 1, Gaussian at the largest rho\nwhose privacy curve gives it (dashed: the rho of the zCDP conversion); exact, root mean variance over T/1024 steps" font ',10'
set key outside right top
set grid
set xlabel 't (step)'
set ylabel 'stddev of the release'
set logscale x
set logscale y
set autoscale xfix
plot sprintf('%s/gaussian_pure.csv', dir) using 1:2 with lines lw 2 title 'binary', \
     '' using 1:3 with lines lw 1.5 lc rgb '#c0392b' title 'honaker', \
     '' using 1:4 with lines lw 2 lc rgb '#111111' title 'smooth binary', \
     '' using 1:5 with lines lw 2 lc rgb '#e67e22' title 'gaussian honaker', \
     '' using 1:6 with lines lw 2 lc rgb '#2ca02c' title 'blt', \
     '' using 1:7 with lines lw 1.5 dt 2 lc rgb '#2ca02c' title 'blt, zCDP conversion'

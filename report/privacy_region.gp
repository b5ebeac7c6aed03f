# The figure of delta(epsilon) for a few ledgers (report/privacy_region.c
# writes the CSV).  Call with -e "dir='...'" naming the directory that holds
# privacy_curves.csv and gets privacy_curves.png.
set datafile separator ','
set terminal pngcairo size 1000,600 font 'DejaVu Sans,11'
set output sprintf('%s/privacy_curves.png', dir)
set title 'delta(epsilon): privacy region (solid) against the zCDP conversions (dashed: rho + 2 sqrt(rho ln 1/delta); dotted: CKS)' font ',9'
set key outside right top
set grid
set xlabel 'epsilon'
set ylabel 'delta'
set logscale y
set format y '10^{%L}'
set yrange [1e-12:1]
set xrange [0:8]
# blocks of privacy_curves.csv: the ledgers 0, 2, 3, 4, 5, 8 of the program
names = "'10 x eps 0.1' 'rho 1/32' 'rho 0.5' 'tree: 21 dgauss, rho 0.5' '10 x 0.1 + rho 0.5' 'tree, sensitivity 3 (bound)'"
colors = "#1f77b4 #2ca02c #d62728 #111111 #9467bd #e67e22"
# rho 0.5 drawn wide under the tree, which follows it closely
widths = "2 2 5 1.5 2 2"
plot for [i=0:5] sprintf('%s/privacy_curves.csv', dir) index i using 2:3 with lines lw word(widths, i + 1) \
         lc rgb word(colors, i + 1) title word(names, i + 1), \
     for [i=0:5] '' index i using 2:4 with lines lw 1 dt 2 lc rgb word(colors, i + 1) notitle, \
     for [i=0:5] '' index i using 2:5 with lines lw 1 dt 3 lc rgb word(colors, i + 1) notitle

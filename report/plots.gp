# Figures of the accuracy report.  Call with -e "dir='...'" naming the
# directory that holds the CSV files and gets the PNG files.
set datafile separator ','
set terminal pngcairo size 1000,600 font 'DejaVu Sans,11'
set key outside right top
set grid
set xlabel 't (step)'
set ylabel 'mean |noisy - exact| over the trials'
set logscale y
# a fixed floor: a step where every trial's error was 0 has no logarithm
set yrange [0.5:*]

do for [T in "1000 10000"] {
    set output sprintf('%s/error_T%s.png', dir, T)
    set title sprintf('Absolute error at every step, T = %s, epsilon = 1', T)
    plot sprintf('%s/errors_T%s.csv', dir, T) using 1:2 with lines lw 1.5 title 'simple I', \
         '' using 1:3 with lines lw 1.5 title 'simple II', \
         '' using 1:8 with lines lw 1.5 title 'two-level, B = ceil(sqrt T)', \
         '' using 1:9 with lines lw 2 title 'binary', \
         '' using 1:10 with lines lw 1.5 title 'hybrid', \
         '' using 1:11 with lines lw 1.5 lc rgb '#c0392b' title 'honaker', \
         '' using 1:12 with lines lw 2 lc rgb '#111111' title 'smooth binary'
}

# T = 2^20 from the formulas (the stddev column of one release), no trials
set output sprintf('%s/stddev_T1048576.png', dir)
set title 'Standard deviation against t, T = 2^{20}, epsilon = 1 (exact; root mean variance over 1024 steps)'
set ylabel 'stddev of the release'
set yrange [20:2000]
set xrange [512:1048576]
set logscale x
plot sprintf('%s/stddev_T1048576.csv', dir) using 1:2 with lines lw 1.5 title 'simple II', \
     '' using 1:3 with lines lw 1.5 title 'two-level, B = 1024', \
     '' using 1:4 with lines lw 2 title 'binary', \
     '' using 1:5 with lines lw 1.5 title 'hybrid', \
     '' using 1:6 with lines lw 1.5 lc rgb '#c0392b' title 'honaker', \
     '' using 1:7 with lines lw 2 lc rgb '#111111' title 'smooth binary'
unset logscale x
set autoscale x
set ylabel 'mean |noisy - exact| over the trials'
set yrange [0.5:*]

# smoothed: the block structure shows as a sawtooth, the level as the trend
set output sprintf('%s/block_sweep.png', dir)
set title 'Two-level mechanism: block size sweep, T = 10000, epsilon = 1 (smoothed)'
plot sprintf('%s/errors_T10000.csv', dir) using 1:4 smooth bezier lw 2 title 'B = 10', \
     '' using 1:5 smooth bezier lw 2 title 'B = 25', \
     '' using 1:6 smooth bezier lw 2 title 'B = 50', \
     '' using 1:8 smooth bezier lw 2 title 'B = 100 = ceil(sqrt T)', \
     '' using 1:9 smooth bezier lw 2 dt 2 title 'binary, for reference'

unset logscale y
set autoscale y
set output sprintf('%s/demo_band.png', dir)
set title 'Sign-ups of the demo: binary mechanism, epsilon = 1, with error bars'
set xlabel 'day'
set ylabel 'running count'
plot sprintf('%s/demo_band.csv', dir) using 1:($4-$6):($4+$6) with filledcurves fc rgb '#dde6f5' title 'bound (all days at once, 95%)', \
     '' using 1:($4-2*$5):($4+2*$5) with filledcurves fc rgb '#9fb7e0' title '+/- 2 stddev', \
     '' using 1:4 with linespoints pt 7 ps 0.6 lc rgb '#1f4e9c' title 'noisy running count', \
     '' using 1:3 with lines lw 2 lc rgb '#c0392b' title 'exact (not released)'

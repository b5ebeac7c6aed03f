# Figures of the continual mean (report/continual_mean.c writes the CSV files
# and mean_plot.gp, which names the configurations drawn).  Call with
# -e "dir='...'" naming that directory; writes mean_error.png and
# mean_withheld.png there.
set datafile separator ','
load sprintf('%s/mean_plot.gp', dir)
orders = "contiguous round-robin random"
colors = "#1f77b4 #2ca02c #d62728 #9467bd #ff7f0e"

# error against t: one panel an order, Algorithm 6 solid, naive dashed
set terminal pngcairo size 1500,520 font 'DejaVu Sans,10'
set output sprintf('%s/mean_error.png', dir)
set multiplot layout 1,3 title sprintf('mean |estimate - 0.3| against t, Bernoulli(0.3), epsilon = 1, n = %d users (solid: Algorithm 6, dashed: naive Algorithm 2)', users)
set logscale xy
set format y '10^{%L}'
set grid
set xlabel 't'
set key bottom left
set yrange [1e-2:100]
do for [o=1:3] {
    set title word(orders, o)
    plot for [i=0:drawn-1] sprintf('%s/mean_error_%s.csv', dir, word(orders, o)) index i using 1:2 \
             with lines lw 2 lc rgb word(colors, i + 1) title sprintf('m = %s', word(labels, i + 1)), \
         for [i=0:drawn-1] '' index i using 1:3 with lines lw 1.5 dt 2 lc rgb word(colors, i + 1) notitle
}
unset multiplot

# where Algorithm 6 withholds, and its error against the paper's rate
set terminal pngcairo size 1000,800 font 'DejaVu Sans,10'
set output sprintf('%s/mean_withheld.png', dir)
set multiplot layout 2,1 title sprintf('Algorithm 6, n = %d users, m = %s samples each', users, word(labels, drawn))
set title 'share of the samples the estimate covers, N_t / t'
unset logscale y
set format y '%g'
set yrange [0:1.05]
set ylabel 'N_t / t'
plot for [o=1:3] sprintf('%s/mean_error_%s.csv', dir, word(orders, o)) index drawn-1 using 1:4 \
         with lines lw 2 lc rgb word(colors, o) title word(orders, o)
set title "error / (1/sqrt(t) + sqrt(M_t)/(t epsilon)): flat where the paper's rate holds"
set logscale y
set format y '10^{%L}'
set yrange [*:*]
set ylabel 'ratio'
plot for [o=1:3] sprintf('%s/mean_error_%s.csv', dir, word(orders, o)) index drawn-1 using 1:($2/$5) \
         with lines lw 2 lc rgb word(colors, o) title word(orders, o)
unset multiplot

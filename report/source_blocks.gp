# The figure of report/source_blocks.sql.  Call with -e "dir='...'" naming
# the directory that holds source_blocks.csv and gets source_blocks.png.
set datafile separator ','
set terminal pngcairo size 1000,500 font 'DejaVu Sans,11'
set output sprintf('%s/source_blocks.png', dir)
set title 'Two years of daily weekly counts, epsilon 0.1 each: per-block budgets against one ledger'
set key below
set grid
set xrange [0:730]
set xlabel 'day'
set ylabel 'epsilon of the day''s block'
set yrange [0:1.2]
set y2label 'epsilon left in the all-time ledger'
set y2range [0:12]
set y2tics
plot sprintf('%s/source_blocks.csv', dir) using 1:3 with lines lw 2 dt 2 lc rgb '#7f8c8d' title 'budget of each block', \
     '' using 1:2 with lines lw 2 lc rgb '#2471a3' title 'spent by the day''s block, after two years', \
     '' using 1:4 axes x1y2 with lines lw 2 lc rgb '#c0392b' title 'left in one ledger of 10 (right axis)'

# Written by `fusebench report`; run `gnuplot time_vs_size_convt2d_gap_bias_lse.gp` in this folder to redraw.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 900,600
} else {
  set terminal png noenhanced size 900,600
}
set output 'time_vs_size_convt2d_gap_bias_lse.png'
set datafile missing 'NaN'
set grid
set title 'convt2d_gap_bias_lse (KernelBench #42): median time vs problem size, bars p10-p90'
set xlabel 'problem size (elements)'
set ylabel 'median time [ms]'
set logscale xy
set xrange [4.50895e+07:1.62322e+09]
set yrange [0.0203033:32.7512]
set xtics ('67.6M' 6.76342e+07, '136.3M' 1.36323e+08, '270.5M' 2.70537e+08, '541.1M' 5.41073e+08, '1.1G' 1.08215e+09)
set key below
plot 'time_vs_size_convt2d_gap_bias_lse.dat' index 0 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref', \
     'time_vs_size_convt2d_gap_bias_lse.dat' index 1 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref_tf32', \
     'time_vs_size_convt2d_gap_bias_lse.dat' index 2 using 1:2:3:4 with yerrorlines pointtype 7 title 'fused_cuda', \
     'time_vs_size_convt2d_gap_bias_lse.dat' index 3 using 1:2 with lines dashtype 2 linecolor rgb 'gray40' title 'roofline floor (fused algorithm)'

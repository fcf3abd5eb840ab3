# Written by `fusebench report`; run `gnuplot time_vs_size_convt2d_mul_gap.gp` in this folder to redraw.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 900,600
} else {
  set terminal png noenhanced size 900,600
}
set output 'time_vs_size_convt2d_mul_gap.png'
set datafile missing 'NaN'
set grid
set title 'convt2d_mul_gap (KernelBench #44): median time vs problem size, bars p10-p90'
set xlabel 'problem size (elements)'
set ylabel 'median time [ms]'
set logscale xy
set xrange [1.11848e+07:4.02653e+08]
set yrange [0.00131091:12.9755]
set xtics ('16.8M' 1.67772e+07, '33.6M' 3.35544e+07, '67.1M' 6.71089e+07, '134.2M' 1.34218e+08, '268.4M' 2.68378e+08, '268.4M' 2.68435e+08)
set key below
plot 'time_vs_size_convt2d_mul_gap.dat' index 0 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref', \
     'time_vs_size_convt2d_mul_gap.dat' index 1 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref_tf32', \
     'time_vs_size_convt2d_mul_gap.dat' index 2 using 1:2:3:4 with yerrorlines pointtype 7 title 'fused_cuda', \
     'time_vs_size_convt2d_mul_gap.dat' index 3 using 1:2 with lines dashtype 2 linecolor rgb 'gray40' title 'roofline floor (fused algorithm)'

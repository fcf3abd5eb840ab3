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
set xrange [8.94785e+07:2.01327e+08]
set yrange [0.0146661:7.04861]
set xtics ('134.2M' 1.34218e+08)
set key below
plot 'time_vs_size_convt2d_mul_gap.dat' index 0 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref', \
     'time_vs_size_convt2d_mul_gap.dat' index 1 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref_tf32', \
     'time_vs_size_convt2d_mul_gap.dat' index 2 using 1:2:3:4 with yerrorlines pointtype 7 title 'fused_cuda', \
     'time_vs_size_convt2d_mul_gap.dat' index 3 using 1:2 with lines dashtype 2 linecolor rgb 'gray40' title 'roofline floor (fused algorithm)'

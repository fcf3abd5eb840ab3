# Written by `fusebench report`; run `gnuplot time_vs_size_convt3d_bn_sub.gp` in this folder to redraw.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 900,600
} else {
  set terminal png noenhanced size 900,600
}
set output 'time_vs_size_convt3d_bn_sub.png'
set datafile missing 'NaN'
set grid
set title 'convt3d_bn_sub (KernelBench #15): median time vs problem size, bars p10-p90'
set xlabel 'problem size (elements)'
set ylabel 'median time [ms]'
set logscale xy
set xrange [4.92032e+06:1.88988e+08]
set yrange [0.0143261:11.5585]
set xtics ('7.4M' 7.38048e+06, '7.9M' 7.8745e+06, '31.5M' 3.1498e+07, '63.0M' 6.2996e+07, '126.0M' 1.25992e+08)
set key below
plot 'time_vs_size_convt3d_bn_sub.dat' index 0 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref', \
     'time_vs_size_convt3d_bn_sub.dat' index 1 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref_tf32', \
     'time_vs_size_convt3d_bn_sub.dat' index 2 using 1:2:3:4 with yerrorlines pointtype 7 title 'fused_cuda', \
     'time_vs_size_convt3d_bn_sub.dat' index 3 using 1:2 with lines dashtype 2 linecolor rgb 'gray40' title 'roofline floor (fused algorithm)'

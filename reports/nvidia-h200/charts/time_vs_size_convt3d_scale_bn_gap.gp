# Written by `fusebench report`; run `gnuplot time_vs_size_convt3d_scale_bn_gap.gp` in this folder to redraw.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 900,600
} else {
  set terminal png noenhanced size 900,600
}
set output 'time_vs_size_convt3d_scale_bn_gap.png'
set datafile missing 'NaN'
set grid
set title 'convt3d_scale_bn_gap (KernelBench #77): median time vs problem size, bars p10-p90'
set xlabel 'problem size (elements)'
set ylabel 'median time [ms]'
set logscale xy
set xrange [4.42368e+06:1.59252e+08]
set yrange [0.0402724:113.435]
set xtics ('6.6M' 6.63552e+06, '9.8M' 9.8304e+06, '26.5M' 2.65421e+07, '53.1M' 5.30842e+07, '106.2M' 1.06168e+08)
set key below
plot 'time_vs_size_convt3d_scale_bn_gap.dat' index 0 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref', \
     'time_vs_size_convt3d_scale_bn_gap.dat' index 1 using 1:2:3:4 with yerrorlines pointtype 7 title 'ref_tf32', \
     'time_vs_size_convt3d_scale_bn_gap.dat' index 2 using 1:2:3:4 with yerrorlines pointtype 7 title 'fused_cuda', \
     'time_vs_size_convt3d_scale_bn_gap.dat' index 3 using 1:2 with lines dashtype 2 linecolor rgb 'gray40' title 'roofline floor (fused algorithm)'

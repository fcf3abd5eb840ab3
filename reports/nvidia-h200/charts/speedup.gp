# Written by `fusebench report`; run `gnuplot speedup.gp` in this folder to redraw.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600
} else {
  set terminal png noenhanced size 1000,600
}
set output 'speedup.png'
set datafile missing 'NaN'
set grid
set title 'Fused speedup over libtorch, config default: median ratio with 95% bootstrap interval'
set ylabel 'speedup (log scale)'
set logscale y
set yrange [0.666667:203.099]
set xrange [-0.5:4.5]
set xtics rotate by -20
set key below
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2
plot 'speedup.dat' using ($0-0.1):2:3:4:xtic(1) with yerrorbars pointtype 7 title 'vs ref (fp32, TF32 off)', \
     '' using ($0+0.1):5:6:7 with yerrorbars pointtype 5 title 'vs ref_tf32'

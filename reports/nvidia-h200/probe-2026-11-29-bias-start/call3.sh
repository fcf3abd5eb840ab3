set -u
P=build/probe
for v in base smem; do cuobjdump -sass $P/k34_$v | gzip > $OUT/k34_$v.sass.gz; done
for v in base smem; do
  timeout 150 ncu --kernel-name regex:persistent_kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis $P/k34_$v --bias 1 --reps 1 > $OUT/ncu_k34_$v.txt 2>&1
  grep -E "Duration|Registers|Warp Cycles Per Issued|Issued Warp|No Eligible|Executed Ipc A|Stall|Achieved Occupancy|Block Limit" $OUT/ncu_k34_$v.txt | head -20
done
ls -la $OUT

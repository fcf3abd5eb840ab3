#!/usr/bin/env bash
# The GPU gate's sanitizer, stress and liveness logic, run on the CPU with stand-in tools (what the
# gate reads from compute-sanitizer, the self-test, the liveness controls and cuobjdump, made up
# here): every judgement the gate makes about them, both ways. The stand-ins print what the real
# tools print (summary lines, BOUNDARY/DECLARED lines taken from the real boundary sets, SASS
# lines); the GPU run itself is the gate's.
# Usage: gpu_gate_dry_run_test.sh BOUNDARY_SETS
set -u
sets="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp=$(mktemp -d)
trap '[[ -n "${DRY_KEEP:-}" ]] || rm -rf "$tmp"' EXIT
fail=0
check() { local name="$1"; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi; }
mkdir -p "$tmp/bin" "$tmp/build/property_tests" "$tmp/build/fused" "$tmp/build/harness"

cat >"$tmp/bin/compute-sanitizer" <<'SH'
#!/usr/bin/env bash
# Stand-in: runs the application, then the tool's summary line. DRY_SAN_FAIL=TOOL: 3 errors from it;
# racecheck reports hazards on the defective shared-memory controls unless DRY_RACE_BLIND is set.
tool=memcheck app=()
while (($#)); do
  case "$1" in
    --help) echo "  --kernel-name arg"; exit 0 ;;
    --version) echo "Version 0 (stand-in)"; exit 0 ;;
    --tool) tool="$2"; shift 2 ;;
    --error-exitcode|--print-limit|--kernel-name|--filter) shift 2 ;;
    --*) shift ;;
    *) app=("$@"); break ;;
  esac
done
"${app[@]}"
rc=$?
errs=0
[[ "${DRY_SAN_FAIL:-}" == "$tool" ]] && errs=3
if [[ "$tool" == racecheck ]]; then
  [[ -z "${DRY_RACE_BLIND:-}" && "${app[*]}" == *liveness_controls* && "${app[*]}" != *--fixed* &&
     "${app[*]}" =~ (smem_race|cp_async) ]] && errs=$((errs + 1234))
  echo "========= RACECHECK SUMMARY: $errs hazards displayed ($errs errors, 0 warnings)"
else
  echo "========= ERROR SUMMARY: $errs errors"
fi
((errs > 0)) && exit 86
exit "$rc"
SH

cat >"$tmp/build/property_tests/fused_cuda_selftest" <<SH
#!/usr/bin/env bash
# Stand-in: the lines the self-test prints, from the real boundary sets. DRY_SKIP_PROBLEM="MODEL #I"
# leaves a problem out; DRY_STRESS_DIFF=N makes N perturbed runs differ.
case "\$1" in
  --boundary-only)
    "$sets" --declared
    "$sets" --coverage | grep -E '^[a-z0-9_]+ #[0-9]+: ' | while IFS= read -r line; do
      model="\${line%% *}"; rest="\${line#* }"; idx="\${rest%%:*}"; paths="\${line##*: }"
      [[ "\$model \$idx" == "\${DRY_SKIP_PROBLEM:-none}" ]] && continue
      echo "BOUNDARY \$model \$idx ok: \$paths"
    done
    echo "55 passed, 0 failed" ;;
  --stress)
    diff=\${DRY_STRESS_DIFF:-0}
    echo "stress: runs \$((\$2 * 65)), bitwise identical \$((\$2 * 65 - diff))"
    ((diff > 0)) && { echo "FAIL a case: stress: \$diff of \$2 perturbed runs differ"; echo "64 passed, 1 failed"; exit 1; }
    echo "65 passed, 0 failed" ;;
esac
SH

cat >"$tmp/build/property_tests/liveness_controls" <<'SH'
#!/usr/bin/env bash
# Stand-in: a GPU that never reorders (the fence control's runs beside the hog all agree).
c="" v=defective runs=1
while (($#)); do case "$1" in --control) c="$2"; shift 2 ;; --fixed) v=fixed; shift ;; --runs) runs="$2"; shift 2 ;; *) shift ;; esac; done
echo "CONTROL $c $v: runs $runs, bitwise identical $runs (beside the SM hog), stale reads 0 in 0 runs, checksum 1"
SH

# cuobjdump -sass: one function per declared kernel instantiation (mangled so that c++filt gives
# fb::fused::MODEL::KERNEL<i>), #44's arrival with its fence (DRY_UNFENCED: without), and the
# controls' defects; DRY_EXTRA_KERNEL adds a kernel no boundary set declares.
"$sets" --declared | sed -nE 's/^DECLARED ([a-z0-9_]+) kernel:([a-z_]+).*/\1 \2/p' >"$tmp/kernels.txt"
{
  i=0
  while read -r model kernel; do
    i=$((i + 1))
    echo "        Function : _ZN2fb5fused${#model}${model}${#kernel}${kernel}ILi${i}EEEvv"
    if [[ "$kernel" == mul_gap_kernel && -z "${DRY_UNFENCED_BUILD:-}" ]]; then
      echo "        /*0010*/ MEMBAR.ALL.GPU ;"
    fi
    [[ "$kernel" == mul_gap_kernel ]] && echo "        /*0020*/ ATOM.E.ADD.STRONG.GPU PT, R4, [R4.64], R7 ;"
    echo "        /*0030*/ EXIT ;"
  done <"$tmp/kernels.txt"
} >"$tmp/fused.sass"
sed '/MEMBAR/d' "$tmp/fused.sass" >"$tmp/fused_unfenced.sass"
{ cat "$tmp/fused.sass"; echo "        Function : _ZN2fb5fused15convt2d_mul_gap12extra_kernelEv"; } >"$tmp/fused_extra.sass"
cat >"$tmp/controls.sass" <<'SASS'
        Function : _ZN2fb14fused_liveness16smem_race_kernelILb0EEEvPKfPf
        /*01b0*/ STS [R7], R4 ;
        /*01c0*/ LDS R5, [R0] ;
        Function : _ZN2fb14fused_liveness16smem_race_kernelILb1EEEvPKfPf
        /*01b0*/ STS [R7], R4 ;
        /*01c0*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*01d0*/ LDS R5, [R0] ;
        Function : _ZN2fb14fused_liveness15cp_async_kernelILb0EEEvPKfPfi
        /*0190*/ LDGSTS.E [R15], [R2.64] ;
        /*01a0*/ LDGDEPBAR ;
        /*0450*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*04a0*/ LDS R21, [R17] ;
        Function : _ZN2fb14fused_liveness15cp_async_kernelILb1EEEvPKfPfi
        /*0190*/ LDGSTS.E [R15], [R2.64] ;
        /*01a0*/ LDGDEPBAR ;
        /*0410*/ DEPBAR.LE SB0, 0x1 ;
        /*0420*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0430*/ LDS R19, [R18] ;
        Function : _ZN2fb14fused_liveness12fence_kernelILb0EEEvPfPjPiS2_
        /*0550*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*05c0*/ ATOMG.E.ADD.STRONG.GPU PT, R3, [R2.64], R9 ;
        /*0690*/ MEMBAR.SC.GPU ;
        Function : _ZN2fb14fused_liveness12fence_kernelILb1EEEvPfPjPiS2_
        /*0550*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*05b0*/ MEMBAR.SC.GPU ;
        /*05f0*/ ATOMG.E.ADD.STRONG.GPU PT, R3, [R2.64], R9 ;
SASS
cat >"$tmp/bin/cuobjdump" <<SH
#!/usr/bin/env bash
case "\$2" in
  *fused_cuda.a) if [[ -n "\${DRY_UNFENCED:-}" ]]; then cat "$tmp/fused_unfenced.sass";
                 elif [[ -n "\${DRY_EXTRA_KERNEL:-}" ]]; then cat "$tmp/fused_extra.sass"; else cat "$tmp/fused.sass"; fi ;;
  *liveness_controls) cat "$tmp/controls.sass" ;;
esac
SH
: >"$tmp/build/fused/libfusebench_fused_cuda.a"
printf '#!/usr/bin/env bash\necho "[]"\n' >"$tmp/build/harness/fusebench"
chmod +x "$tmp"/bin/* "$tmp"/build/property_tests/* "$tmp"/build/harness/fusebench

gate() {  # gate NAME: the three stages with the stand-ins; the summary rows into $tmp/NAME.rows
  (cd "$root" && env PATH="$tmp/bin:$PATH" OUT="$tmp/out_$1" FUSEBENCH_GATE_BIN="$tmp/build" \
    FUSEBENCH_GATE_STAGES=sanitizer,stress FUSEBENCH_GATE_BENCH=0 FUSEBENCH_GATE_STRESS_FENCE_RUNS=5 \
    timeout 120 bash scripts/gpu-gate >"$tmp/$1.log" 2>&1)
  grep -E '^\| (sanitizer|stress|liveness) ' "$tmp/$1.log" >"$tmp/$1.rows"
}
row() { grep -E "^\| $2 " "$tmp/$1.rows"; }

gate clean
check "clean: sanitizer PASS with every declared kernel covered" grep -qE '^\| sanitizer \| PASS \| [0-9]+ \| boundary problems: [0-9]+, kernels covered: ([0-9]+)/\1 ' "$tmp/clean.rows"
check "clean: stress PASS, runs all bitwise identical" grep -qE '^\| stress \| PASS \| [0-9]+ \| runs: ([0-9]+), bitwise identical: \1 ' "$tmp/clean.rows"
check "clean: liveness 3/3, the fence control caught by the lint" grep -qE '^\| liveness \| PASS .*liveness: 3/3 planted controls caught.*fence: fence lint' "$tmp/clean.rows"

DRY_SAN_FAIL=racecheck DRY_STRESS_DIFF=2 DRY_EXTRA_KERNEL=1 gate broken1
check "an error from racecheck fails the sanitizer stage" grep -q 'racecheck 3 hazards' <<<"$(row broken1 sanitizer)"
check "... so does it" grep -qE '^\| sanitizer \| FAIL' "$tmp/broken1.rows"
check "an undeclared compiled kernel is named" grep -q 'extra_kernel: 1 instantiation(s) compiled, 0 declared' "$tmp/broken1.log"
check "a perturbed run that differs fails the stress stage" grep -qE '^\| stress \| FAIL .*bitwise identical: [0-9]+ ' "$tmp/broken1.rows"
check "a fixed twin flagged by racecheck fails liveness" grep -qE '^\| liveness \| FAIL \(a fixed twin was flagged\)' "$tmp/broken1.rows"

DRY_RACE_BLIND=1 DRY_UNFENCED=1 DRY_SKIP_PROBLEM="convt3d_bn_sub #14" gate broken2
check "a kernel no tool ran fails the coverage" grep -q 'NOT RUN: convt3d_bn_sub kernel:rows_kernel<int>' "$tmp/broken2.log"
check "... and the sanitizer stage" grep -qE '^\| sanitizer \| FAIL' "$tmp/broken2.rows"
check "an arrival without a fence fails the stress stage's lint" grep -qE '^\| stress \| FAIL .*fence lint: FAILED' "$tmp/broken2.rows"
check "a control racecheck misses fails liveness" grep -qE '^\| liveness \| FAIL \(a planted control was not caught.*liveness: 1/3' "$tmp/broken2.rows"
((fail)) && { echo "--- clean.log"; tail -n 40 "$tmp/clean.log"; }
exit "$fail"

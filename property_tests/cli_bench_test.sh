#!/usr/bin/env bash
# End-to-end checks of `fusebench bench`, `report` and `compare` and of the top-level CLI, as a user
# at a terminal or a CI job meets them: a typo, --version, inline configs, an interrupted run, and a
# CPU run whose report must still be meaningful. Usage: cli_bench_test.sh FUSEBENCH REPO_ROOT
set -u
fb="$1"
root="$2"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
tiny='{"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}'

# A misspelt subcommand is named, with the nearest one, on one line.
err=$("$fb" verfy 2>&1 >/dev/null); rc=$?
check "typo exits 2 (got $rc)" test "$rc" -eq 2
check "typo names the word and suggests verify: $err" grep -q "^fusebench: error: unknown subcommand 'verfy'; did you mean 'verify'?" <<<"$err"
check "typo error is one line" test "$(wc -l <<<"$err")" -eq 1
err=$("$fb" frobnicate 2>&1 >/dev/null)
check "a far word lists the subcommands: $err" grep -q "unknown subcommand 'frobnicate' (subcommands: list, verify, bench, report, compare, merge, history)" <<<"$err"
err=$("$fb" 2>&1 >/dev/null); rc=$?
check "no subcommand exits 2 with one line (rc $rc)" test "$rc" -eq 2 -a "$(wc -l <<<"$err")" -eq 1
err=$("$fb" bench --no-such-option 2>&1 >/dev/null); rc=$?
check "a bad option is one line, exit 2: $err" test "$rc" -eq 2 -a "$(wc -l <<<"$err")" -eq 1

# --version: version, commit, libtorch, CUDA runtime or cpu-only.
out=$("$fb" --version); rc=$?
check "--version exits 0" test "$rc" -eq 0
check "--version names the version" grep -Eq "^fusebench [0-9]+\.[0-9]+\.[0-9]+$" <<<"$out"
check "--version names the commit" grep -Eq "^git commit: [0-9a-f]{40}|^git commit: unknown" <<<"$out"
check "--version names libtorch" grep -Eq "^libtorch: +[0-9]" <<<"$out"
check "--version names CUDA" grep -Eq "^CUDA: +(runtime [0-9]+\.[0-9]+|cpu-only)" <<<"$out"

# Help examples name files that exist.
for sub in report compare; do
  for f in $("$fb" "$sub" --help | grep -o 'reports/[A-Za-z0-9_./-]*\.json'); do
    check "$sub --help example $f exists" test -f "$root/$f"
  done
done

check "compare --help gives the computed sample bound" grep -q "at alpha 0.01: fewer than 6 per side" <<<"$("$fb" compare --help)"

# --config takes inline JSON; --model takes a KernelBench number; unknown keys are refused by name.
"$fb" bench --device cpu --model 44 --config "{\"model\": \"44\", \"label\": \"tiny\", \"config\": $tiny}" \
  --min-samples 3 --time-cap 0.05 --out "$tmp/inline" >"$tmp/inline.log" 2>&1; rc=$?
check "inline --config with --model 44 runs (rc $rc)" test "$rc" -eq 0
check "inline run is complete" grep -q '"complete": true' "$tmp/inline/results.json"
check "console says time / floor as Nx floor" grep -Eq "[0-9]+\.[0-9]+x floor" "$tmp/inline.log"
check "console shows the tolerance ratio" grep -q "max err/tol" "$tmp/inline.log"
err=$("$fb" bench --device cpu --config "{\"model\": \"44\", \"lable\": \"x\", \"config\": $tiny}" 2>&1 >/dev/null); rc=$?
check "unknown entry key exits 2 (rc $rc)" test "$rc" -eq 2
check "unknown entry key is named: $err" grep -q 'unknown key "lable"' <<<"$err"
huge=$(sed 's/"batch_size":2,"height":8,"width":8/"batch_size":1048576,"height":4096,"width":4096/' <<<"$tiny")
err=$("$fb" bench --device cpu --config "{\"model\": \"convt2d_mul_gap\", \"config\": $huge}" 2>&1 >/dev/null); rc=$?
check "a config that cannot fit exits 2 (rc $rc)" test "$rc" -eq 2
check "it says what it needs and what is there: $err" grep -Eq "needs ~[0-9.]+ GiB, [0-9.]+ GiB available" <<<"$err"
check "one line" test "$(wc -l <<<"$err")" -eq 1

# SIGINT while a bench runs: exit 130, one line, the file marked incomplete with its finished cases;
# report shows the mark and compare refuses the file.
long='[{"model": "44", "label": "a", "config": '$tiny'}, {"model": "44", "label": "b", "config": '$tiny'},
       {"model": "44", "label": "c", "config": '$tiny'}]'
"$fb" bench --device cpu --config "$long" --min-samples 100000 --time-cap 2 --out "$tmp/int" \
  >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 1 600); do  # up to 60 s for the first case to be written
  grep -q '"implementation"' "$tmp/int/results.json" 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"; rc=$?
check "SIGINT exits 130 (got $rc)" test "$rc" -eq 130
check "SIGINT prints one line: $(tail -n 1 "$tmp/int.err")" grep -Eq "^bench: interrupted after [1-8] of 9 cases; results.json marked incomplete$" "$tmp/int.err"
check "the file says incomplete" grep -q '"complete": false' "$tmp/int/results.json"
check "the file says why" grep -Eq '"incomplete_reason": "interrupted by SIGINT after [1-8] of 9 cases"' "$tmp/int/results.json"
check "the file plans 9 cases" grep -q '"planned_cases": 9' "$tmp/int/results.json"
"$fb" report "$tmp/int/results.json" --out "$tmp/int-report" --format md,csv >/dev/null 2>&1
check "report of the interrupted run has the banner" grep -q "^> \*\*INCOMPLETE RUN: interrupted by SIGINT" "$tmp/int-report/report.md"
check "its CSV says run_complete=false" grep -q ",false$" "$tmp/int-report/report.csv"
err=$("$fb" compare "$tmp/inline/results.json" "$tmp/int/results.json" 2>&1 >/dev/null); rc=$?
check "compare refuses the interrupted run (rc $rc)" test "$rc" -eq 2
check "compare says why: $err" grep -q "is an incomplete run (interrupted by SIGINT" <<<"$err"

# A CPU quick run gives a report with a default row per model and a speedup chart.
"$fb" bench --device cpu --sweep quick --min-samples 3 --time-cap 0.05 --out "$tmp/quick" >/dev/null 2>&1; rc=$?
check "quick CPU bench passes (rc $rc)" test "$rc" -eq 0
"$fb" report "$tmp/quick/results.json" --out "$tmp/quick-report" >/dev/null 2>"$tmp/quick-report.err"; rc=$?
check "its report renders (rc $rc)" test "$rc" -eq 0
check "no model lacks a default config" bash -c "! grep -q 'no default config' '$tmp/quick-report/report.md'"
check "the summary is of default/cpu-small" grep -q 'Summary (config `default/cpu-small`)' "$tmp/quick-report/report.md"
if command -v gnuplot >/dev/null 2>&1; then
  check "a speedup chart is drawn" test -s "$tmp/quick-report/charts/speedup.png"
  check "report.md links it" grep -q '(charts/speedup.png)' "$tmp/quick-report/report.md"
fi
# 3 samples a case cannot show a change at alpha 0.01, even against itself: undecided, a failure.
out=$("$fb" compare "$tmp/quick/results.json" "$tmp/quick/results.json" 2>&1); rc=$?
check "thinly sampled cases are undecided, exit 1 (rc $rc)" test "$rc" -eq 1
check "compare names them" grep -q "undecided: convt" <<<"$out"
"$fb" compare "$tmp/quick/results.json" "$tmp/quick/results.json" --allow-undecided >/dev/null 2>&1; rc=$?
check "--allow-undecided accepts them (rc $rc)" test "$rc" -eq 0

if [ "$fail" -ne 0 ]; then echo "cli_bench_test: FAILED"; exit 1; fi
echo "cli_bench_test: all passed"

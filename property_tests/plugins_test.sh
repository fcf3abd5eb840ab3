#!/usr/bin/env bash
# Outside implementations through the gate (issue 26; README "Judge your own kernel"): the example
# plug-ins of examples/plugins/ loaded with --plugin on the CPU. A correct one passes and is timed; a
# wrong one, one writing past its output and one crashing fail with the rule or check that caught them
# (the crash isolated, the run going on); declined cases are shown, never passed; libraries fusebench
# must refuse exit 2 with one line.
#   plugins_test.sh FUSEBENCH [--plugin-dir=]PLUGIN_DIR [PART]   PART: load, verify, isolate, bench (default: all)
set -u
fb="$1"
dir="${2#--plugin-dir=}"
part="${3:-all}"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
correct="$dir/libmul_gap_border_sums.so"
k3="$dir/libmul_gap_k3.so"
no_border="$dir/libmul_gap_no_border.so"
past_end="$dir/libmul_gap_past_the_end.so"
crashy="$dir/libmul_gap_crashy.so"
# row FILE MODEL IMPL FIELD: a count of one row of a verify --json file ("" when the row is missing).
row() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
r=[r for r in d["rows"] if r["model"]==sys.argv[2] and r["implementation"]==sys.argv[3]]
print(r[0][sys.argv[4]] if r else "")' "$@"
}

if [[ "$part" == all || "$part" == load ]]; then
  # A library fusebench must refuse: exit 2, one line naming the library and the reason.
  refused() {  # refused NAME PATTERN ARGS...
    local name="$1" pattern="$2"; shift 2
    local e rc
    e=$("$@" 2>&1 >/dev/null)
    rc=$?
    check "$name: exit 2 (got $rc)" test "$rc" -eq 2
    check "$name: one line" test "$(wc -l <<<"$e")" -eq 1
    check "$name: says '$pattern'" grep -q -- "$pattern" <<<"$e"
  }
  refused "wrong ABI version" "ABI version 999, this fusebench loads version 1" \
    "$fb" verify --device cpu --model 44 --cases 1 --plugin "$dir/libabi_version_999.so"
  refused "no ABI version symbol" "no symbol fusebench_plugin_abi_version" \
    "$fb" verify --device cpu --model 44 --cases 1 --plugin "$dir/libno_abi_version.so"
  refused "unknown model id" "model = 99: unknown model" \
    "$fb" verify --device cpu --model 44 --cases 1 --plugin "$dir/libunknown_model.so"
  refused "missing library" "cannot load the library" \
    "$fb" verify --device cpu --model 44 --cases 1 --plugin "$tmp/nope.so"
  refused "bench: wrong ABI version" "ABI version 999" \
    "$fb" bench --device cpu --model 44 --out "$tmp/b0" --plugin "$dir/libabi_version_999.so"
  refused "FUSEBENCH_PLUGINS: wrong ABI version" "ABI version 999" \
    env FUSEBENCH_PLUGINS="$correct:$dir/libabi_version_999.so" "$fb" verify --device cpu --model 44 --cases 1
  refused "--only an implementation that is not there" "--only plugin:nope: no such implementation" \
    "$fb" verify --device cpu --model 44 --cases 1 --plugin "$correct" --only plugin:nope
fi

if [[ "$part" == all || "$part" == verify ]]; then
  # (a) The correct plug-in passes every case, beside the in-tree implementation.
  out=$("$fb" verify --device cpu --model 44 --cases 24 --plugin "$correct" --json "$tmp/a.json" 2>"$tmp/a.err")
  rc=$?
  check "correct plug-in: exit 0 (got $rc)" test "$rc" -eq 0
  check "correct plug-in: 24 passed" test "$(row "$tmp/a.json" convt2d_mul_gap plugin:mul_gap_border_sums passed)" = 24
  check "correct plug-in: shown as plugin:mul_gap_border_sums" grep -qE "^convt2d_mul_gap +plugin:mul_gap_border_sums " <<<"$out"
  check "in-tree fused_host still judged" test "$(row "$tmp/a.json" convt2d_mul_gap fused_host passed)" = 24
  # Through FUSEBENCH_PLUGINS as well.
  FUSEBENCH_PLUGINS="$correct" "$fb" verify --device cpu --model 44 --cases 2 --json "$tmp/env.json" >/dev/null 2>&1
  check "FUSEBENCH_PLUGINS loads the plug-in" test "$(row "$tmp/env.json" convt2d_mul_gap plugin:mul_gap_border_sums passed)" = 2

  # Declined cases: counted and shown, never passed; the accepted ones judged.
  out=$("$fb" verify --device cpu --model 44 --cases 24 --plugin "$k3" --json "$tmp/k3.json" 2>/dev/null)
  rc=$?
  declined=$(row "$tmp/k3.json" convt2d_mul_gap plugin:mul_gap_k3 declined)
  passed=$(row "$tmp/k3.json" convt2d_mul_gap plugin:mul_gap_k3 passed)
  check "declining plug-in: some declined ($declined)" test "${declined:-0}" -gt 0
  check "declining plug-in: some passed ($passed)" test "${passed:-0}" -gt 0
  check "declining plug-in: declined + passed = 24" test "$((declined + passed))" -eq 24
  check "declining plug-in: exit 0 for what it took (got $rc)" test "$rc" -eq 0
  check "declined shown in the summary" grep -q "$declined declined by a plug-in (not passed)" <<<"$out"
  check "declined cases say why" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["outcome"]=="declined"]
sys.exit(not c or any("kernel_size" not in x["message"] for x in c))' "$tmp/k3.json"
  # A plug-in that declines every case passed nothing: the run fails.
  "$fb" verify --device cpu --model 44 --cases 3 --plugin "$k3" \
    --config '{"in_channels":2,"out_channels":3,"kernel_size":5,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":1,"height":4,"width":4}' \
    >"$tmp/all_declined.txt" 2>/dev/null
  rc=$?
  check "all declined: exit 1 (got $rc)" test "$rc" -eq 1
  check "all declined: says so" grep -q "declined every case" "$tmp/all_declined.txt"

  # (b) The dropped border term: rejected under the values check, with the rule that decided it.
  "$fb" verify --device cpu --model 44 --cases 24 --plugin "$no_border" --json "$tmp/b.json" >/dev/null 2>"$tmp/b.err"
  rc=$?
  check "dropped border term: exit 1 (got $rc)" test "$rc" -eq 1
  check "dropped border term: cases incorrect" test "$(row "$tmp/b.json" convt2d_mul_gap plugin:mul_gap_no_border incorrect)" -gt 0
  check "dropped border term: names the values check and rule" grep -qE "plugin:mul_gap_no_border case [0-9]+: incorrect: values: .*\[rule fp(32_reference|64_allowance)\]" "$tmp/b.err"
  check "dropped border term: repro line loads the plug-in" grep -q "repro: .*--plugin $no_border" "$tmp/b.err"

  # (c) A write past the output: the guard canaries catch it.
  "$fb" verify --device cpu --model 44 --cases 6 --plugin "$past_end" --json "$tmp/c.json" >/dev/null 2>"$tmp/c.err"
  rc=$?
  check "write past the output: exit 1 (got $rc)" test "$rc" -eq 1
  check "write past the output: every case incorrect" test "$(row "$tmp/c.json" convt2d_mul_gap plugin:mul_gap_past_the_end incorrect)" = 6
  check "write past the output: out_of_bounds" grep -q "plugin:mul_gap_past_the_end case 0: incorrect: out_of_bounds: a guard canary" "$tmp/c.err"
fi

if [[ "$part" == all || "$part" == isolate ]]; then
  # (d) A crashing plug-in, isolated (the default): each crash recorded with its repro line, the run goes on.
  out=$("$fb" verify --device cpu --model 44 --cases 24 --plugin "$crashy" --plugin "$correct" --json "$tmp/d.json" 2>"$tmp/d.err")
  rc=$?
  crashed=$(row "$tmp/d.json" convt2d_mul_gap plugin:mul_gap_crashy failed)
  survived=$(row "$tmp/d.json" convt2d_mul_gap plugin:mul_gap_crashy passed)
  check "crashing plug-in: exit 1 (got $rc)" test "$rc" -eq 1
  check "crashing plug-in: crashes recorded ($crashed)" test "${crashed:-0}" -gt 0
  check "crashing plug-in: the other cases judged ($survived passed)" test "$((crashed + survived))" -eq 24 -a "${survived:-0}" -gt 0
  check "crashing plug-in: 'crashed (signal 11' with the case" grep -qE "plugin:mul_gap_crashy case [0-9]+: failed: crashed \(signal 11, SIGSEGV\)" "$tmp/d.err"
  crash_repro() { grep -A1 "failed: crashed (signal 11" "$tmp/d.err" | grep -q "repro: fusebench verify .*--plugin $crashy"; }
  check "crashing plug-in: repro line" crash_repro
  check "crashing plug-in: the correct one beside it passes all" test "$(row "$tmp/d.json" convt2d_mul_gap plugin:mul_gap_border_sums passed)" = 24
  check "crashing plug-in: in-tree fused_host passes all" test "$(row "$tmp/d.json" convt2d_mul_gap fused_host passed)" = 24
  check "crashing plug-in: the cases in the JSON say crashed" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:mul_gap_crashy" and c["outcome"]=="failed"]
sys.exit(not c or any(not x["message"].startswith("crashed (signal 11") or "--plugin" not in x["repro"] for x in c))' "$tmp/d.json"
  # --devices: each shard process loads the plug-ins and isolates them; the merged file has every case.
  "$fb" verify --device cpu --model 44 --cases 8 --devices cpu,cpu --plugin "$crashy" --json "$tmp/dv.json" >/dev/null 2>&1
  rc=$?
  f=$(row "$tmp/dv.json" convt2d_mul_gap plugin:mul_gap_crashy failed)
  p=$(row "$tmp/dv.json" convt2d_mul_gap plugin:mul_gap_crashy passed)
  check "--devices cpu,cpu: exit 1 (got $rc)" test "$rc" -eq 1
  check "--devices cpu,cpu: all 8 cases of the crashing plug-in merged ($f failed, $p passed)" test "$((${f:-0} + ${p:-0}))" -eq 8 -a "${f:-0}" -gt 0
  # Without isolation the crash takes the run with it: what --isolate is for.
  "$fb" verify --device cpu --model 44 --cases 24 --plugin "$crashy" --no-isolate >/dev/null 2>&1
  rc=$?
  check "--no-isolate: the crash kills the run (exit $rc)" test "$rc" -gt 128
fi

if [[ "$part" == all || "$part" == bench ]]; then
  # The correct plug-in is verified, timed, floored and compared like fused_host; a wrong one is not timed.
  "$fb" bench --device cpu --model 44 --time-cap 0.05 --min-samples 3 --out "$tmp/bench" --plugin "$correct" \
    --plugin "$no_border" --plugin "$crashy" >/dev/null 2>"$tmp/bench.err"
  rc=$?
  check "bench with plug-ins: exit 1 (the wrong one fails; got $rc)" test "$rc" -eq 1
  check "bench: the crashing plug-in's row says crashed, the run went on" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:mul_gap_crashy"]
sys.exit(not d["complete"] or not c or c[0]["outcome"]!="failed" or not c[0]["message"].startswith("crashed (signal 11")
         or "--plugin" not in c[0]["message"])' "$tmp/bench/results.json"
  check "bench: plug-in verified and timed with a floor" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:mul_gap_border_sums"]
sys.exit(not c or c[0]["outcome"]!="passed" or not c[0].get("stats") or not c[0].get("floor"))' "$tmp/bench/results.json"
  check "bench: the wrong plug-in is incorrect and untimed" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:mul_gap_no_border"]
sys.exit(not c or c[0]["outcome"]!="incorrect" or c[0].get("stats"))' "$tmp/bench/results.json"
  "$fb" report "$tmp/bench/results.json" --out "$tmp/report" --format md >/dev/null 2>&1
  report=$(cat "$tmp/report/report.md" 2>/dev/null)
  check "report shows the plug-in with a speedup" grep -qE "plugin:mul_gap_border_sums \| [^|]+ \| [^|]+ \| [^|]+ \| [0-9.]+×" <<<"$report"
  compare=$("$fb" compare "$tmp/bench/results.json" "$tmp/bench/results.json" 2>&1)
  check "compare shows the plug-in" grep -q "plugin:mul_gap_border_sums" <<<"$compare"
fi

exit "$fail"

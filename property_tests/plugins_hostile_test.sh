#!/usr/bin/env bash
# Plug-in isolation without holes (issue 40): the hostile plug-ins of property_tests/hostile_plugin.cpp
# (built into <build>/hostile_plugins/) through verify, bench and merge on the CPU. A child that exits
# or hangs instead of returning verdicts is that case's failure, never silence; a crash on a shard's
# last case is a failed case, not a note; a plug-in that cannot run on the device is listed as not run
# and fails the run; an exception out of a plug-in's init is one line naming the library, exit 2;
# shards merge only with the same plug-ins, declined cases included.
#   plugins_hostile_test.sh FUSEBENCH --plugin-dir=DIR --examples=DIR [PART]
#   PART: exits, hang, last_case, cuda_only, init, merge, quoting, interrupts (default: all)
set -u
fb="$1"
dir="${2#--plugin-dir=}"
examples="${3#--examples=}"
part="${4:-all}"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
correct="$examples/libmul_gap_border_sums.so"
k3="$examples/libmul_gap_k3.so"
# row FILE MODEL IMPL FIELD: a count of one row of a verify --json file ("" when the row is missing).
row() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
r=[r for r in d["rows"] if r["model"]==sys.argv[2] and r["implementation"]==sys.argv[3]]
print(r[0][sys.argv[4]] if r else "")' "$@"
}
# messages FILE IMPL OUTCOME: the messages of IMPL's cases with OUTCOME, one a line.
messages() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for c in d["cases"]:
    if c["implementation"]==sys.argv[2] and c["outcome"]==sys.argv[3]: print(c["message"])' "$@"
}
want() { [[ "$part" == all || "$part" == "$1" ]]; }

if want exits; then
  # A plug-in that calls exit() (status 0, 1 or 3) on some configs: each such case is failed, "exited
  # (status N)", with its repro line, and a new child goes on; the other cases pass.
  for n in 0 1 3; do
    lib="$dir/libhostile_exit$n.so"
    "$fb" verify --device cpu --model 44 --cases 24 --plugin "$lib" --json "$tmp/e$n.json" >/dev/null 2>"$tmp/e$n.err"
    rc=$?
    failed=$(row "$tmp/e$n.json" convt2d_mul_gap plugin:hostile_exit$n failed)
    passed=$(row "$tmp/e$n.json" convt2d_mul_gap plugin:hostile_exit$n passed)
    check "exit($n): verify exits 1 (got $rc)" test "$rc" -eq 1
    check "exit($n): cases failed ($failed) and the others passed ($passed), 24 in all" \
      test "${failed:-0}" -gt 0 -a "${passed:-0}" -gt 0 -a "$((${failed:-0} + ${passed:-0}))" -eq 24
    check "exit($n): every failure says 'exited (status $n)'" \
      test -z "$(messages "$tmp/e$n.json" plugin:hostile_exit$n failed | grep -v "^exited (status $n)$")"
    check "exit($n): the failure line and its repro" \
      grep -qE "plugin:hostile_exit$n case [0-9]+: failed: exited \(status $n\)" "$tmp/e$n.err"
  done
  # bench: the child's exit is the row's failure, and the plug-in is never then run in bench's own
  # process (where its exit() would end the bench).
  cfg='{"model": "44", "label": "wide", "config": {"in_channels":6,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}}'
  for n in 0 3; do
    "$fb" bench --device cpu --config "$cfg" --time-cap 0.05 --min-samples 3 --out "$tmp/be$n" \
      --plugin "$dir/libhostile_exit$n.so" >/dev/null 2>"$tmp/be$n.err"
    rc=$?
    check "bench, exit($n): exits 1 (got $rc)" test "$rc" -eq 1
    check "bench, exit($n): a complete file whose plug-in row says exited" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:hostile_exit"+sys.argv[2]]
f=[c for c in d["cases"] if c["implementation"]=="fused_host"]
sys.exit(not d["complete"] or not c or c[0]["outcome"]!="failed" or c[0].get("stats")
         or not c[0]["message"].startswith("exited (status %s) verifying it in an isolated process" % sys.argv[2])
         or not f or f[0]["outcome"]!="passed")' "$tmp/be$n/results.json" "$n"
  done
fi

if want hang; then
  # A plug-in that hangs on some configs: past --case-timeout its child is killed and the case fails
  # as timed out; the run goes on and ends.
  start=$SECONDS
  timeout 120 "$fb" verify --device cpu --model 44 --cases 8 --case-timeout 3 --plugin "$dir/libhostile_hang.so" \
    --json "$tmp/h.json" >/dev/null 2>"$tmp/h.err"
  rc=$?
  failed=$(row "$tmp/h.json" convt2d_mul_gap plugin:hostile_hang failed)
  passed=$(row "$tmp/h.json" convt2d_mul_gap plugin:hostile_hang passed)
  check "hang: verify ends and exits 1 (got $rc after $((SECONDS - start)) s)" test "$rc" -eq 1
  check "hang: cases timed out ($failed), the others passed ($passed), 8 in all" \
    test "${failed:-0}" -gt 0 -a "$((${failed:-0} + ${passed:-0}))" -eq 8
  check "hang: each says timed out" \
    test -z "$(messages "$tmp/h.json" plugin:hostile_hang failed | grep -v '^timed out (no verdict within 3 s')"
  refused_rc=$("$fb" verify --device cpu --model 44 --cases 1 --case-timeout 0 >/dev/null 2>&1; echo $?)
  check "--case-timeout 0 is refused (exit $refused_rc)" test "$refused_rc" -eq 2
  # bench likewise.
  cfg='{"model": "44", "label": "wide", "config": {"in_channels":6,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}}'
  timeout 120 "$fb" bench --device cpu --config "$cfg" --time-cap 0.05 --min-samples 3 --case-timeout 3 --out "$tmp/bh" \
    --plugin "$dir/libhostile_hang.so" >/dev/null 2>&1
  rc=$?
  check "bench, hang: ends and exits 1 (got $rc)" test "$rc" -eq 1
  check "bench, hang: the plug-in's row timed out" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:hostile_hang"]
sys.exit(not d["complete"] or not c or c[0]["outcome"]!="failed" or not c[0]["message"].startswith("timed out"))' \
    "$tmp/bh/results.json"
  # SIGTERM or SIGINT to fusebench while its isolated child hangs: the child is stopped too, fusebench
  # ends (143, 130) and its file is written, marked incomplete; verify and bench.
  # stop_with_hung_child NAME SIGNAL RC FILE COMMAND...: runs COMMAND in the background, signals it
  # once its child (the hung plug-in's) has run 2 s, and checks the outcome.
  stop_with_hung_child() {
    local name="$1" sig="$2" want_rc="$3" file="$4"; shift 4
    "$@" >/dev/null 2>"$tmp/stop.err" &
    local pid=$! child="" rc
    for _ in $(seq 1 1200); do  # up to 120 s for the isolated child to start (bench times the references first)
      child=$(pgrep -P "$pid" | head -n 1)
      [[ -n "$child" ]] && break
      sleep 0.1
    done
    sleep 2
    kill -"$sig" "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      check "$name: fusebench ends within 30 s" false
      kill -KILL "$pid"
    fi
    wait "$pid"; rc=$?
    check "$name: fusebench exits $want_rc (got $rc)" test "$rc" -eq "$want_rc"
    check "$name: its hung child is gone too" test -n "$child" -a ! -e "/proc/${child:-0}"
    [[ -n "$child" && -e "/proc/$child" ]] && kill -KILL "$child"  # never leave a hung process behind
    check "$name: the file is written, marked incomplete" grep -q '"complete": false' "$file"
  }
  # The shard that holds only the first case that hung above: its child hangs at once.
  j=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(min(c["index"] for c in d["cases"] if c["implementation"]=="plugin:hostile_hang" and c["outcome"]=="failed"))' \
    "$tmp/h.json" 2>/dev/null || echo 0)
  for sig in TERM INT; do
    rc=$([[ $sig == TERM ]] && echo 143 || echo 130)
    stop_with_hung_child "verify, SIG$sig" "$sig" "$rc" "$tmp/ht$sig.json" \
      "$fb" verify --device cpu --model 44 --cases $((j + 1)) --shard $((j + 1))/$((j + 1)) --case-timeout 600 \
      --plugin "$dir/libhostile_hang.so" --json "$tmp/ht$sig.json"
    stop_with_hung_child "bench, SIG$sig" "$sig" "$rc" "$tmp/bht$sig/results.json" \
      "$fb" bench --device cpu --config "$cfg" --time-cap 0.05 --min-samples 3 --case-timeout 600 \
      --out "$tmp/bht$sig" --plugin "$dir/libhostile_hang.so"
  done
fi

if want last_case; then
  # A crash on a shard's last case is that case's failure (not a note "after its last case"): a
  # plug-in that crashes on every case, over shards whose last case is every kind of last.
  crash="$dir/libhostile_crash_always.so"
  for spec in "1 1/1" "4 2/2" "5 1/2" "3 3/3"; do
    read -r cases shard <<<"$spec"
    k=${shard%/*} n=${shard#*/}
    held=0
    for ((i = k - 1; i < cases; i += n)); do held=$((held + 1)); done
    "$fb" verify --device cpu --model 44 --cases "$cases" --shard "$shard" --plugin "$crash" --json "$tmp/l.json" \
      >/dev/null 2>"$tmp/l.err"
    rc=$?
    failed=$(row "$tmp/l.json" convt2d_mul_gap plugin:hostile_crash_always failed)
    check "crash on every case, --cases $cases --shard $shard: exit 1 (got $rc)" test "$rc" -eq 1
    check "crash on every case, --cases $cases --shard $shard: all $held held cases failed (got $failed)" \
      test "${failed:-0}" -eq "$held"
    check "crash on every case, --cases $cases --shard $shard: no 'after its last case' note" \
      test -z "$(grep -l 'after its last case' "$tmp/l.json")"
  done
fi

if want cuda_only; then
  # A CUDA-only plug-in on --device cpu: listed as not run, with the reason, and the run fails.
  out=$("$fb" verify --device cpu --model 44 --cases 3 --plugin "$dir/libhostile_cuda_only.so" --json "$tmp/c.json" 2>&1)
  rc=$?
  check "CUDA-only plug-in on cpu: exit 1 (got $rc)" test "$rc" -eq 1
  check "CUDA-only plug-in on cpu: its 3 cases not judged" \
    test "$(row "$tmp/c.json" convt2d_mul_gap plugin:hostile_cuda_only not_judged)" = 3
  check "CUDA-only plug-in on cpu: the reason is shown" grep -q "plugin:hostile_cuda_only runs on cuda only; this run is on cpu" <<<"$out"
  check "CUDA-only plug-in on cpu: in the JSON's cases too" \
    test "$(messages "$tmp/c.json" plugin:hostile_cuda_only not_run | sort -u)" = "plugin:hostile_cuda_only runs on cuda only; this run is on cpu"
  # A plug-in for another model: it judged nothing, which fails the run.
  out=$("$fb" verify --device cpu --model 15 --cases 1 --plugin "$correct" 2>&1)
  rc=$?
  check "a plug-in of model 44 in a run of model 15: exit 1 (got $rc)" test "$rc" -eq 1
  check "and says it judged nothing" grep -q "plugin:mul_gap_border_sums judged nothing in this run" <<<"$out"
  # bench likewise: the CUDA-only plug-in's row is listed not run with its reason, the run exits 1.
  cfg='{"model": "44", "label": "tiny", "config": {"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}}'
  "$fb" bench --device cpu --config "$cfg" --time-cap 0.05 --min-samples 3 --out "$tmp/bc" \
    --plugin "$dir/libhostile_cuda_only.so" >"$tmp/bc.out" 2>"$tmp/bc.err"
  rc=$?
  check "bench, CUDA-only plug-in on cpu: exit 1 (got $rc)" test "$rc" -eq 1
  check "bench, CUDA-only plug-in on cpu: a complete file, its row not run with the reason" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
c=[c for c in d["cases"] if c["implementation"]=="plugin:hostile_cuda_only"]
sys.exit(not d["complete"] or len(c)!=1 or c[0]["outcome"]!="not_run"
         or c[0]["message"]!="plugin:hostile_cuda_only runs on cuda only; this run is on cpu"
         or d["environment"]["plugins"]!=["plugin:hostile_cuda_only"])' "$tmp/bc/results.json"
  check "bench, CUDA-only plug-in on cpu: the reason is shown as it is skipped" \
    grep -q "not run: .*plugin:hostile_cuda_only: plugin:hostile_cuda_only runs on cuda only; this run is on cpu" "$tmp/bc.err"
  check "bench, CUDA-only plug-in on cpu: says it judged nothing" \
    grep -q "^bench: plugin:hostile_cuda_only judged nothing in this run" "$tmp/bc.out"
  cfg15='{"model": "15", "label": "tiny", "config": {"in_channels":2,"out_channels":3,"kernel_size":3,"stride":2,"padding":1,"batch_size":1,"depth":4,"height":4,"width":4}}'
  "$fb" bench --device cpu --config "$cfg15" --time-cap 0.05 --min-samples 3 --out "$tmp/b15" --plugin "$correct" \
    >"$tmp/b15.out" 2>"$tmp/b15.err"
  rc=$?
  check "bench: a plug-in of model 44 in a run of model 15: exit 1 (got $rc: $(grep -m1 -i error "$tmp/b15.err"))" \
    test "$rc" -eq 1
  check "bench: and says it judged nothing" grep -q "^bench: plugin:mul_gap_border_sums judged nothing in this run" "$tmp/b15.out"
fi

if want init; then
  # A C++ exception out of fusebench_plugin_init: exit 2, one line naming the library.
  lib="$dir/libhostile_init_throws.so"
  for cmd in verify bench; do
    if [[ "$cmd" == verify ]]; then
      e=$("$fb" verify --device cpu --model 44 --cases 1 --plugin "$lib" 2>&1 >/dev/null)
    else
      e=$("$fb" bench --device cpu --model 44 --out "$tmp/bi" --plugin "$lib" 2>&1 >/dev/null)
    fi
    rc=$?
    check "$cmd, init throws: exit 2 (got $rc)" test "$rc" -eq 2
    check "$cmd, init throws: one line (got $(wc -l <<<"$e"))" test "$(wc -l <<<"$e")" -eq 1
    check "$cmd, init throws: names the library and the exception" \
      grep -q -- "--plugin $lib: fusebench_plugin_init threw an exception: hostile_init_throws: a table" <<<"$e"
  done
fi

if want merge; then
  # Honest shards with declined cases merge, by hand and through --devices.
  "$fb" verify --device cpu --model 44 --cases 12 --shard 1/2 --plugin "$k3" --json "$tmp/s1.json" >/dev/null 2>&1
  "$fb" verify --device cpu --model 44 --cases 12 --shard 2/2 --plugin "$k3" --json "$tmp/s2.json" >/dev/null 2>&1
  declined=$(( $(row "$tmp/s1.json" convt2d_mul_gap plugin:mul_gap_k3 declined) + $(row "$tmp/s2.json" convt2d_mul_gap plugin:mul_gap_k3 declined) ))
  check "the shards hold declined cases ($declined)" test "$declined" -gt 0
  "$fb" merge "$tmp/s1.json" "$tmp/s2.json" --out "$tmp/m.json" >/dev/null 2>"$tmp/m.err"
  rc=$?
  check "shards with declined cases merge (rc $rc: $(head -c 300 "$tmp/m.err"))" test "$rc" -eq 0
  check "the merged row keeps the declined cases" test "$(row "$tmp/m.json" convt2d_mul_gap plugin:mul_gap_k3 declined)" = "$declined"
  "$fb" verify --device cpu --model 44 --cases 12 --devices cpu,cpu --plugin "$k3" --json "$tmp/d.json" >/dev/null 2>"$tmp/d.err"
  rc=$?
  check "--devices cpu,cpu --plugin (declining): exit 0 (got $rc)" test "$rc" -eq 0
  check "--devices cpu,cpu: the declined cases merged" test "$(row "$tmp/d.json" convt2d_mul_gap plugin:mul_gap_k3 declined)" = "$declined"
  # Shards run with different plug-in sets: refused.
  "$fb" verify --device cpu --model 44 --cases 12 --shard 2/2 --json "$tmp/s2none.json" >/dev/null 2>&1
  e=$("$fb" merge "$tmp/s1.json" "$tmp/s2none.json" --out "$tmp/m2.json" 2>&1 >/dev/null)
  rc=$?
  check "shards with different plug-ins: refused, exit 2 (got $rc)" test "$rc" -eq 2
  check "shards with different plug-ins: one line naming the plug-ins ($e)" \
    test "$(wc -l <<<"$e")" -eq 1 -a -n "$(grep plugins <<<"$e")"
  check "shards with different plug-ins: nothing written" test ! -e "$tmp/m2.json"
  # bench shards record their plug-in set: the same set merges, a different one is refused.
  two='[{"model": "44", "label": "a", "config": {"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}},
        {"model": "44", "label": "b", "config": {"in_channels":4,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":1,"height":8,"width":8}}]'
  bfast=(--device cpu --config "$two" --time-cap 0.05 --min-samples 3)
  "$fb" bench "${bfast[@]}" --shard 1/2 --out "$tmp/bs1" --plugin "$correct" >/dev/null 2>&1
  "$fb" bench "${bfast[@]}" --shard 2/2 --out "$tmp/bs2" --plugin "$correct" >/dev/null 2>&1
  "$fb" bench "${bfast[@]}" --shard 2/2 --out "$tmp/bs2none" >/dev/null 2>&1
  "$fb" merge "$tmp/bs1" "$tmp/bs2" --out "$tmp/bm.json" >/dev/null 2>"$tmp/bm.err"
  rc=$?
  check "bench shards with the same plug-in: merge exits 0 (got $rc: $(head -c 300 "$tmp/bm.err"))" test "$rc" -eq 0
  check "and the merged file names the plug-in" grep -q '"plugin:mul_gap_border_sums"' "$tmp/bm.json"
  e=$("$fb" merge "$tmp/bs1" "$tmp/bs2none" --out "$tmp/bm2.json" 2>&1 >/dev/null)
  rc=$?
  check "bench shards with different plug-ins: refused, exit 2 (got $rc)" test "$rc" -eq 2
  check "bench shards with different plug-ins: one line naming the plug-ins ($e)" \
    test "$(wc -l <<<"$e")" -eq 1 -a -n "$(grep environment.plugins <<<"$e")"
  check "bench shards with different plug-ins: nothing written" test ! -e "$tmp/bm2.json"
fi

if want quoting; then
  # Repro and replay lines are shell-quoted: a plug-in and a bundle folder whose paths hold a space
  # and a quote paste into a shell and run (issue 40).
  odd="$tmp/my plug-ins/it's"
  mkdir -p "$odd"
  cp "$examples/libmul_gap_no_border.so" "$odd/lib wrong.so"
  "$fb" verify --device cpu --model 44 --cases 6 --plugin "$odd/lib wrong.so" --save-failures "$odd/fails" \
    >/dev/null 2>"$tmp/q.err"
  rc=$?
  check "odd paths: the wrong plug-in fails (exit $rc)" test "$rc" -eq 1
  repro=$(grep -m1 "repro: fusebench verify" "$tmp/q.err" | sed 's/^.*repro: //')
  check "odd paths: a repro line" test -n "$repro"
  PATH="$(dirname "$fb"):$PATH" bash -c "$repro" >/dev/null 2>"$tmp/q2.err"
  rc=$?
  check "odd paths: the repro line pasted into bash reproduces the failure (exit $rc: $(head -n 1 "$tmp/q2.err" | head -c 200))" \
    test "$rc" -eq 1
  replay=$(grep -m1 "(replay: fusebench verify --config " "$tmp/q.err" | sed 's/.*(replay: \(.*\))$/\1/')
  check "odd paths: a replay line" test -n "$replay"
  PATH="$(dirname "$fb"):$PATH" bash -c "$replay" >/dev/null 2>"$tmp/q3.err"
  rc=$?
  check "odd paths: the bundle's replay line runs and fails as saved (exit $rc: $(head -n 1 "$tmp/q3.err" | head -c 200))" \
    test "$rc" -eq 1
fi

if want interrupts; then
  # Ctrl-C never loses work (issue 40). One before the first case (raised while the plug-in loads):
  # the files are written with 0 cases, marked incomplete, exit 130; also through --devices, whose
  # shard processes start after the signal was recorded.
  incomplete() {  # incomplete FILE N: a whole verify or results JSON, marked incomplete by SIGINT, holding N
    # cases (verify: case indices, each judged by several implementations; bench: rows)
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
n=len({(c["model"], c.get("index"), c.get("config_label")) for c in d["cases"]}) if d["cases"] and "index" in d["cases"][0] else len(d["cases"])
sys.exit(d["complete"] is not False or n != int(sys.argv[2]) or "SIGINT" not in d["incomplete_reason"])' "$@"
  }
  at_init="$dir/libhostile_init_sigint.so"
  "$fb" verify --device cpu --model 44 --cases 4 --plugin "$at_init" --json "$tmp/i0.json" >/dev/null 2>&1
  rc=$?
  check "SIGINT before the first case: verify exits 130 (got $rc)" test "$rc" -eq 130
  check "SIGINT before the first case: verify's --json has 0 cases, marked incomplete" incomplete "$tmp/i0.json" 0
  check "and says how far it got" grep -q '"stopped by SIGINT after 0 of 4 planned cases"' "$tmp/i0.json"
  "$fb" verify --device cpu --model 44 --cases 4 --devices cpu,cpu --plugin "$at_init" --json "$tmp/i0d.json" \
    >/dev/null 2>&1
  rc=$?
  check "SIGINT before the first case, --devices cpu,cpu: exits 130 (got $rc)" test "$rc" -eq 130
  check "SIGINT before the first case, --devices cpu,cpu: 0 cases, marked incomplete" incomplete "$tmp/i0d.json" 0
  cfg='{"model": "44", "label": "tiny", "config": {"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}}'
  "$fb" bench --device cpu --config "$cfg" --time-cap 0.05 --min-samples 3 --out "$tmp/bi0" --plugin "$at_init" \
    >/dev/null 2>&1
  rc=$?
  check "SIGINT before the first case: bench exits 130 (got $rc)" test "$rc" -eq 130
  check "SIGINT before the first case: bench's results.json has 0 cases, marked incomplete" \
    incomplete "$tmp/bi0/results.json" 0

  # A second Ctrl-C while the first is honoured (both raised inside the first case, in-process): the
  # case finishes and every output is whole and marked incomplete, stdout's `--json -` included.
  twice="$dir/libhostile_sigint2.so"
  "$fb" verify --device cpu --model 44 --cases 4 --no-isolate --plugin "$twice" --json "$tmp/i2.json" \
    --junit "$tmp/i2.xml" >"$tmp/i2.out" 2>"$tmp/i2.err"
  rc=$?
  check "two SIGINTs: verify exits 130 (got $rc)" test "$rc" -eq 130
  check "two SIGINTs: --json whole, the case in progress kept, marked incomplete" incomplete "$tmp/i2.json" 1
  check "two SIGINTs: --junit whole, with the stop as an error" python3 -c 'import sys, xml.etree.ElementTree as E
r=E.parse(sys.argv[1]).getroot()
sys.exit(not any("SIGINT" in (e.get("message") or "") for e in r.iter("error")))' "$tmp/i2.xml"
  check "two SIGINTs: the table says INCOMPLETE" grep -q "INCOMPLETE: stopped by SIGINT" "$tmp/i2.out"
  check "two SIGINTs: the second is told the run is still stopping" grep -q "^fusebench: still stopping" "$tmp/i2.err"
  "$fb" verify --device cpu --model 44 --cases 4 --no-isolate --plugin "$twice" --json - >"$tmp/i2s.json" 2>"$tmp/i2s.err"
  rc=$?
  check "two SIGINTs, --json -: exits 130 (got $rc)" test "$rc" -eq 130
  check "two SIGINTs, --json -: stdout is the whole JSON, marked incomplete" incomplete "$tmp/i2s.json" 1
  check "two SIGINTs, --json -: the table on stderr says INCOMPLETE" grep -q "INCOMPLETE: stopped by SIGINT" "$tmp/i2s.err"
  "$fb" bench --device cpu --config "$cfg" --time-cap 0.05 --min-samples 3 --out "$tmp/bi2" --no-isolate \
    --plugin "$twice" >"$tmp/bi2.out" 2>/dev/null
  rc=$?
  check "two SIGINTs: bench exits 130 (got $rc)" test "$rc" -eq 130
  check "two SIGINTs: bench's results.json whole, marked incomplete" python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
sys.exit(d["complete"] is not False or "SIGINT" not in d["incomplete_reason"])' "$tmp/bi2/results.json"
  check "two SIGINTs: bench's summary is printed whole" grep -q "^bench: wrote " "$tmp/bi2.out"

  # A third Ctrl-C kills it (a run stuck in one long call must still die): no file claims to be its.
  killed=$(python3 -c 'import subprocess,sys
print(subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)' \
    "$fb" verify --device cpu --model 44 --cases 4 --no-isolate --plugin "$dir/libhostile_sigint3.so" --json "$tmp/i3.json")
  check "three SIGINTs: killed by SIGINT (return code $killed)" test "$killed" = -2
  check "three SIGINTs: no --json written" test ! -e "$tmp/i3.json"
fi

exit "$fail"

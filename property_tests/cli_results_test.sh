#!/usr/bin/env bash
# Issue 25, findings 5, 8, 9 and 10: verify keeps its work when interrupted (table, --json and --junit
# valid and marked incomplete, exit 130/143; outputs written whole, never an empty file), duplicate
# models run once, non-finite expectations are never a silent pass, the default table is readable,
# bench says its speedups as it goes, failure values carry 9 digits and their bound, progress reaches
# a CI log, '-' is stdout, and seeds in JSON are decimal strings. Usage: cli_results_test.sh FUSEBENCH
set -u
fb="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"  # absolute: the test runs in a scratch folder
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
cd "$tmp" || exit 1
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import torch' >/dev/null 2>&1; then py="$p"; break; fi
done
tiny='{"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}'

# json_check FILE PYTHON-EXPR: the expression over r (the parsed file) is true.
json_check() { python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
# xml_ok FILE: well-formed XML.
xml_ok() { python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" "$1" 2>/dev/null; }

# wait_for FILE PATTERN: up to 120 s for a line matching PATTERN in FILE.
wait_for() { for _ in $(seq 1 1200); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# --- (5) Ctrl-C on a fuzz run: finished cases kept, table printed, JSON and JUnit valid and incomplete --
echo '{"old": "an earlier report"}' >int.json
FUSEBENCH_PROGRESS_INTERVAL=0 "$fb" verify --device cpu --model convt3d_bn_sub --cases 5000 --json int.json \
  --junit int.xml >int.out 2>int.err &
pid=$!
wait_for int.err '^\[2/5000\]'
check "while it runs, the earlier --json is intact (written whole at the end)" grep -q 'an earlier report' int.json
check "while it runs, no empty --junit exists" test ! -e int.xml
kill -INT "$pid"
wait "$pid"; rc=$?
check "SIGINT: exit 130 (got $rc)" test "$rc" -eq 130
check "SIGINT: the table was printed" grep -q '^legend: ' int.out
check "SIGINT: the verdict says INCOMPLETE" grep -q '^verify: INCOMPLETE: stopped by SIGINT after [0-9]* of 5000 planned cases' int.out
check "SIGINT: the JSON is valid, incomplete, with the finished cases" \
  json_check int.json 'r["complete"] is False and r["incomplete_reason"].startswith("stopped by SIGINT") and len(r["cases"]) >= 2'
check "SIGINT: the JUnit is valid XML" xml_ok int.xml
check "SIGINT: the JUnit carries the INCOMPLETE error" grep -q '<error message="INCOMPLETE: stopped by SIGINT' int.xml
check "no temporary file is left beside the outputs" test ! -e int.json.tmp -a ! -e int.xml.tmp

# SIGTERM on a --config replay (its own loop): the same, exit 143.
"$fb" verify --device cpu --model convt2d_mul_gap --config "$tiny" --cases 100000 --json cfg.json >cfg.out 2>cfg.err &
pid=$!
wait_for cfg.err '^verify: 1 model\(s\), one config'
sleep 2
kill -TERM "$pid"
wait "$pid"; rc=$?
check "SIGTERM on --config: exit 143 (got $rc)" test "$rc" -eq 143
check "SIGTERM on --config: the JSON is valid and incomplete" \
  json_check cfg.json 'r["complete"] is False and r["incomplete_reason"].startswith("stopped by SIGTERM") and len(r["cases"]) >= 1'

# --- (8) a model named twice runs once; a non-finite expectation is never a silent pass --------------
"$fb" verify --device cpu --model 44 --model convt2d_mul_gap --cases 2 --json dup.json >dup.out 2>dup.err
rc=$?
check "--model 44 --model convt2d_mul_gap: exit 0 (got $rc)" test "$rc" -eq 0
check "--model twice: one model's cases (2 cases)" grep -q '^verify: [0-9]* verdicts on 2 cases:' dup.out
check "--model twice: it says so" grep -q 'names convt2d_mul_gap again; it runs once' dup.err
check "--model twice: no case twice in the JSON" json_check dup.json \
  'len({(c["model"], c["implementation"], c["index"]) for c in r["cases"]}) == len(r["cases"]) and r["scope"]["models"] == ["convt2d_mul_gap"]'
if [ -n "$py" ]; then
  "$py" - <<'EOF'
import torch
torch.manual_seed(0)
conv = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
d = {"conv_transpose." + k: v for k, v in conv.state_dict().items()}
d["input"] = torch.full((2, 3, 8, 8), float("inf"))
torch.save(d, "inf.pt")
d["input"] = torch.rand(2, 3, 8, 8)
d["conv_transpose.wieght"] = d["conv_transpose.weight"]
torch.save(d, "typo.pt")
EOF
  "$fb" verify --device cpu --model convt2d_mul_gap --config "$tiny" --tensors inf.pt --json inf.json >inf.out 2>&1
  rc=$?
  check "an all-inf input: not a pass (exit 1, got $rc)" test "$rc" -eq 1
  check "an all-inf input: a case not judged, saying why" json_check inf.json \
    'any(c["outcome"] == "not_run" and "no finite value" in c["message"] for c in r["cases"])'
  check "an all-inf input: no fused case passed" json_check inf.json \
    'all(c["outcome"] != "passed" for c in r["cases"] if "fused" in c["implementation"])'
  e=$("$fb" verify --device cpu --model convt2d_mul_gap --config "$tiny" --tensors typo.pt 2>&1 >/dev/null); rc=$?
  check "--tensors with an unknown key: exit 2 (got $rc)" test "$rc" -eq 2
  check "--tensors with an unknown key: one line naming it: $e" test "$(wc -l <<<"$e")" -eq 1 -a -n "$(grep -F 'conv_transpose.wieght' <<<"$e")"
else
  echo "FAIL no python3 with torch: the --tensors checks cannot run"; fail=1
fi

# --- (9) failure values with 9 digits and the bound; bench's speedups as it goes ----------------------
"$fb" verify --device cpu --model convt2d_mul_gap --cases 1 --strict-fp32 --atol 0 --rtol 0 >strict.out 2>strict.err
check "a failure prints got, reference, |error| and the bound" \
  grep -qE 'got -?[0-9.e+-]+, fp32 reference -?[0-9.e+-]+, \|error\| [0-9.e+-]+ > bound 0 ' strict.err
# 9 significant digits (6 printed "got -0.412349, fp32 reference -0.412349" for different floats).
check "the values carry 9 significant digits" python3 -c '
import re, sys
m = re.search(r"got (-?[0-9.e+-]+), fp32 reference (-?[0-9.e+-]+),", open(sys.argv[1]).read())
digits = lambda v: len(v.split("e")[0].replace("-", "").replace(".", "").lstrip("0"))
sys.exit(0 if m and m.group(1) != m.group(2) and max(digits(m.group(1)), digits(m.group(2))) >= 8 else 1)' strict.err
one="{\"model\": \"44\", \"label\": \"tiny\", \"config\": $tiny}"
"$fb" bench --device cpu --config "$one" --min-samples 3 --time-cap 0.05 --out b >b.out 2>b.err
check "bench prints fused time, ref time and speedup per case" \
  grep -qE '^time: convt2d_mul_gap/tiny[^:]*/fused_host: fused [0-9.]+ [mun]?s, ref [0-9.]+ [mun]?s: speedup [0-9.]+x' b.err

# --- (10) progress in a CI log; '-' is stdout; seeds as decimal strings --------------------------------
FUSEBENCH_PROGRESS_INTERVAL=0 "$fb" verify --device cpu --model convt2d_mul_gap --cases 30 >/dev/null 2>prog.err
check "a progress line per case when the interval is 0 (got $(grep -c '^\[' prog.err))" test "$(grep -c '^\[' prog.err)" -eq 30
"$fb" verify --device cpu --model convt2d_mul_gap --cases 2 --seed 18446744073709551615 --json - >stdout.json 2>stdout.err
rc=$?
check "--json -: exit 0 (got $rc), no file named '-'" test "$rc" -eq 0 -a ! -e ./-
check "--json -: stdout is the JSON alone" json_check stdout.json 'r["schema"] == "fusebench-verify"'
check "--json -: the table went to stderr" grep -q '^legend: ' stdout.err
check "seeds are decimal strings in the verify JSON" json_check stdout.json \
  'r["seed"] == "18446744073709551615" and all(isinstance(c["case_seed"], str) and c["case_seed"].isdigit() for c in r["cases"])'
"$fb" verify --device cpu --model convt2d_mul_gap --cases 2 --junit - >stdout.xml 2>/dev/null
check "--junit -: stdout is the XML alone" xml_ok stdout.xml
check "seeds are decimal strings in results.json" json_check b/results.json 'isinstance(r["environment"]["seed"], str)'
# Files written before (seeds as numbers) still load: merge and compare read them.
python3 - <<'EOF'
import json
r = json.load(open("stdout.json")); r["seed"] = 18446744073709551615
for c in r["cases"]: c["case_seed"] = int(c["case_seed"])
json.dump(r, open("old-verify.json", "w"))
b = json.load(open("b/results.json")); b["environment"]["seed"] = int(b["environment"]["seed"])
json.dump(b, open("old-results.json", "w"))
EOF
"$fb" merge old-verify.json --out - >merged.json 2>merged.err
check "merge reads a verify file with numeric seeds (exit $?), writes it to stdout" json_check merged.json 'r["seed"] == "18446744073709551615"'
"$fb" compare old-results.json b/results.json >cmp.out 2>&1; rc=$?
check "compare reads a results file with a numeric seed (exit $rc)" test "$rc" -le 1
"$fb" report old-results.json --out rep --format md >/dev/null 2>&1; rc=$?
check "report reads a results file with a numeric seed (exit $rc)" test "$rc" -eq 0
exit "$fail"

#!/usr/bin/env bash
# Scale-out end to end on the CPU: `verify --shard K/N`, `bench --shard K/N`, `fusebench merge` and
# `--devices cpu,cpu` (the fan-out and merge of --devices, without a GPU).
#   - N shards of `verify --seed S --cases C` hold exactly the unsharded run's cases (same configs,
#     case seeds, verdicts), each exactly once, for N = 1, 2, 3 and 7 > C;
#   - merging them gives the unsharded --json file but for the check times; the same for bench's
#     results.json but for what is measured (times, floors' times, bandwidth, peak, date, host);
#   - bad merges (another seed, an overlapping or missing shard, another GPU, not a results file)
#     exit 2 with one line each;
#   - --devices cpu,cpu(,cpu) gives the unsharded result, also under --shard; GPU lists refuse on a
#     CPU-only build with one line.
# Usage: cli_scale_test.sh FUSEBENCH REPO_ROOT
set -u
fb="$(readlink -f "$1")"
fail=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
one_line_exit2() {  # one_line_exit2 NAME ARGS...: exit 2 with exactly one line on stderr
  local name="$1"; shift
  local e rc
  e=$("$fb" "$@" 2>&1 >/dev/null)
  rc=$?
  check "$name exits 2 (got $rc)" test "$rc" -eq 2
  check "$name says one line: $e" test "$(wc -l <<<"$e")" -eq 1 -a -n "$e"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Equal but for the measured fields: same_verify A B / same_bench A B (python3 prints the first difference).
same_json() {  # same_json KIND A B
  python3 - "$@" <<'EOF'
import json, sys
kind, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def strip(d):
    if kind == "verify":
        for r in d["rows"]: r.pop("seconds")
        for c in d["cases"]: c.pop("seconds")
    else:
        for k in ("date", "hostname", "measured_bandwidth", "measured_fp32_peak", "measured_fp64_mma_peak"): d["environment"].pop(k)
        for c in d["cases"]:
            c["stats"] = c["stats"] is not None  # timed or not; the samples are measurements
            if c["floor"] is not None:
                c["floor"] = {k: c["floor"][k] for k in ("bytes", "flops", "flop_unit")}
    return d
a, b = strip(a), strip(b)
if a == b: sys.exit(0)
for k in sorted(set(a) | set(b)):
    if a.get(k) != b.get(k):
        print(f"differs at {k}: {json.dumps(a.get(k))[:300]} vs {json.dumps(b.get(k))[:300]}")
        break
sys.exit(1)
EOF
}

# ---- verify ---------------------------------------------------------------------------------------
models=(--model convt2d_mul_gap convt3d_bn_sub)
run=(verify --device cpu --seed 9 --cases 5 "${models[@]}")
"$fb" "${run[@]}" --json "$tmp/v.json" >"$tmp/v.out" 2>&1; rc=$?
check "the unsharded verify runs (rc $rc)" test "$rc" -le 1
check "it records shard 1/1" grep -q '"shard": "1/1"' "$tmp/v.json"
for n in 1 2 3 7; do
  for ((k = 1; k <= n; k++)); do
    "$fb" "${run[@]}" --shard "$k/$n" --json "$tmp/v-$k-of-$n.json" >"$tmp/v-$k-of-$n.out" 2>&1; r=$?
    check "shard $k/$n runs (rc $r)" test "$r" -le 1
  done
  check "shard $n/$n records itself" grep -q "\"shard\": \"$n/$n\"" "$tmp/v-$n-of-$n.json"
  out=$(python3 - "$tmp/v.json" "$n" "$tmp"/v-*-of-$n.json <<'EOF'
import json, sys
whole = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
key = lambda c: (c["model"], c["index"], c["implementation"])
same = ("config", "case_seed", "inputs", "params", "outcome", "decided_by", "message", "max_abs_error",
        "worst_error_over_bound", "repro")
expected = {key(c): c for c in whole["cases"]}
seen = {}
problems = []
for path in sys.argv[3:]:
    shard = json.load(open(path))
    k, count = map(int, shard["shard"].split("/"))
    for c in shard["cases"]:
        if c["index"] % count != k - 1:
            problems.append(f"{path}: case {c['index']} is not in shard {k}/{count}")
        if key(c) in seen:
            problems.append(f"{key(c)} is in {seen[key(c)]} and {path}")
        seen[key(c)] = path
        want = expected.get(key(c))
        if want is None:
            problems.append(f"{key(c)} is not a case of the unsharded run")
        elif any(c[f] != want[f] for f in same):
            problems.append(f"{key(c)} differs: " + ", ".join(f for f in same if c[f] != want[f]))
missing = set(expected) - set(seen)
if missing:
    problems.append(f"{len(missing)} cases of the unsharded run are in no shard, e.g. {sorted(missing)[0]}")
print(f"cases={len(seen)} of {len(expected)} problems={len(problems)}")
for p in problems[:5]:
    print("  " + p)
EOF
)
  echo "$out"
  check "$n shards hold each unsharded case exactly once, with its config, seed and verdict" grep -q "problems=0" <<<"$out"
  "$fb" merge "$tmp"/v-*-of-$n.json --out "$tmp/v-merged-$n.json" --junit "$tmp/v-merged-$n.xml" >"$tmp/merge-$n.out" 2>&1
  r=$?
  check "merge of $n verify shards exits as the run did ($r vs $rc)" test "$r" -eq "$rc"
  check "merge of $n verify shards equals the unsharded --json but for check times" same_json verify "$tmp/v.json" "$tmp/v-merged-$n.json"
  check "its table is the unsharded run's" grep -q "$(grep '^verify: [0-9]* verdicts on [0-9]* cases:' "$tmp/v.out")" "$tmp/merge-$n.out"
  check "its --junit is written" grep -q '<testsuites name="fusebench verify"' "$tmp/v-merged-$n.xml"
done
check "shard 7/7 of 5 cases holds none and passes" grep -q "holds none of the 5 case indices" "$tmp/v-7-of-7.out"

# Bad merges: one line, exit 2.
"$fb" verify --device cpu --seed 10 --cases 5 "${models[@]}" --shard 2/2 --json "$tmp/v-seed10.json" >/dev/null 2>&1
one_line_exit2 "verify merge of different seeds" merge "$tmp/v-1-of-2.json" "$tmp/v-seed10.json" --out "$tmp/bad.json"
one_line_exit2 "verify merge of an overlapping shard" merge "$tmp/v-1-of-2.json" "$tmp/v-1-of-2.json" "$tmp/v-2-of-2.json" --out "$tmp/bad.json"
one_line_exit2 "verify merge with a shard missing" merge "$tmp/v-1-of-3.json" "$tmp/v-3-of-3.json" --out "$tmp/bad.json"
one_line_exit2 "verify merge of shards of different splits" merge "$tmp/v-1-of-2.json" "$tmp/v-2-of-3.json" --out "$tmp/bad.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["device"]="NVIDIA H100 80GB HBM3"; json.dump(d, open(sys.argv[2],"w"))' \
  "$tmp/v-2-of-2.json" "$tmp/v-2-of-2-h100.json"
one_line_exit2 "verify merge of different GPUs" merge "$tmp/v-1-of-2.json" "$tmp/v-2-of-2-h100.json" --out "$tmp/bad.json"
"$fb" merge "$tmp/v-1-of-2.json" "$tmp/v-2-of-2-h100.json" --allow-different-gpu --out "$tmp/two-gpus.json" >/dev/null 2>&1
check "--allow-different-gpu names both" grep -q '"device": "cpu + NVIDIA H100 80GB HBM3"' "$tmp/two-gpus.json"
"$fb" merge "$tmp/v-1-of-2.json" "$tmp/v-2-of-2-h100.json" --allow-mixed-gpus --out "$tmp/two-gpus-alias.json" >/dev/null 2>&1
check "--allow-mixed-gpus is the same flag" grep -q '"device": "cpu + NVIDIA H100 80GB HBM3"' "$tmp/two-gpus-alias.json"
"$fb" "${run[@]}" --strict-fp32 --shard 2/2 --json "$tmp/v-strict-2-of-2.json" >/dev/null 2>&1
one_line_exit2 "verify merge of a --strict-fp32 shard with a plain one" merge "$tmp/v-1-of-2.json" "$tmp/v-strict-2-of-2.json" --out "$tmp/bad.json"
"$fb" merge "$tmp/v-1-of-3.json" "$tmp/v-3-of-3.json" --allow-missing --out "$tmp/partial.json" >/dev/null 2>&1; r=$?
check "--allow-missing merges, exit 1 (got $r)" test "$r" -eq 1
check "and marks the file incomplete" grep -q '"incomplete_reason": "merged without shard 2/3"' "$tmp/partial.json"
"$fb" list --json >"$tmp/list.json"
one_line_exit2 "merge of a file that is not a results file" merge "$tmp/list.json" --out "$tmp/bad.json"
echo 'not json' >"$tmp/text.txt"
one_line_exit2 "merge of a text file" merge "$tmp/text.txt" --out "$tmp/bad.json"
one_line_exit2 "merge of a missing file" merge "$tmp/nope.json" --out "$tmp/bad.json"
one_line_exit2 "merge without --out" merge "$tmp/v-1-of-2.json"

# --shard and --devices: bad values and where they do not apply.
one_line_exit2 "--shard 0/2" verify --device cpu --cases 2 --shard 0/2
one_line_exit2 "--shard 3/2" verify --device cpu --cases 2 --shard 3/2
one_line_exit2 "--shard 1" bench --device cpu --shard 1
one_line_exit2 "--shard ''" verify --device cpu --cases 2 --shard ''
one_line_exit2 "bench --shard ''" bench --device cpu --shard ''
one_line_exit2 "--shard 1/99999999999999999999" verify --device cpu --cases 2 --shard 1/99999999999999999999
one_line_exit2 "--devices ''" verify --device cpu --cases 2 --devices ''
one_line_exit2 "--shard with --config" verify --device cpu --model 44 --config '{"in_channels":3,"out_channels":5,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":7,"width":6}' --shard 1/2
one_line_exit2 "verify --devices all without a GPU" verify --devices all --cases 2
one_line_exit2 "verify --devices 0,1 without a GPU" verify --devices 0,1 --cases 2
one_line_exit2 "bench --devices 0 without a GPU" bench --devices 0
one_line_exit2 "--devices cpu,cpu with --device cuda" verify --devices cpu,cpu --device cuda --cases 2
one_line_exit2 "--devices cpu,0" verify --devices cpu,0 --cases 2
one_line_exit2 "--per-device without --devices" verify --device cpu --cases 2 --per-device 2
one_line_exit2 "--per-device 0" verify --devices cpu,cpu --cases 2 --per-device 0
one_line_exit2 "--per-device x" verify --devices cpu,cpu --cases 2 --per-device x
one_line_exit2 "--case-size huge" verify --device cpu --cases 2 --case-size huge
one_line_exit2 "--case-size with --config" verify --device cpu --model 44 --config '{"in_channels":3,"out_channels":5,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":7,"width":6}' --case-size oracle

# --devices cpu,cpu,cpu: three shard processes, merged into the unsharded run's output and status.
"$fb" "${run[@]}" --devices cpu,cpu,cpu --json "$tmp/v-devices.json" >"$tmp/v-devices.out" 2>"$tmp/v-devices.err"; r=$?
check "verify --devices cpu,cpu,cpu exits as the unsharded run ($r vs $rc)" test "$r" -eq "$rc"
check "its --json equals the unsharded one but for check times" same_json verify "$tmp/v.json" "$tmp/v-devices.json"
check "its table is the unsharded run's" grep -q "$(grep '^verify: [0-9]* verdicts on [0-9]* cases:' "$tmp/v.out")" "$tmp/v-devices.out"
check "it shows progress over the devices" grep -q "^\[10/10\] on 3 devices" "$tmp/v-devices.err"
check "it names the shards it ran" grep -q "shards 1/3 to 3/3 of 3" "$tmp/v-devices.err"
# --strict-fp32 reaches the shard processes (their reports say so, or the merge would refuse them).
"$fb" "${run[@]}" --strict-fp32 --devices cpu,cpu --json "$tmp/v-devices-strict.json" >/dev/null 2>&1
check "--devices passes --strict-fp32 on" grep -q '"fp64_rule": false' "$tmp/v-devices-strict.json"
# Under --shard 2/3 the devices split that shard: pieces 2/6 and 5/6, merged back into shard 2/3.
"$fb" "${run[@]}" --shard 2/3 --devices cpu,cpu --json "$tmp/v-devices-2-of-3.json" >/dev/null 2>&1
check "--shard 2/3 --devices cpu,cpu equals shard 2/3" same_json verify "$tmp/v-2-of-3.json" "$tmp/v-devices-2-of-3.json"

# --per-device 2 on cpu,cpu: four shard processes (two per device), still the unsharded run.
"$fb" "${run[@]}" --devices cpu,cpu --per-device 2 --json "$tmp/v-per-device.json" >/dev/null 2>"$tmp/v-per-device.err"
check "--devices cpu,cpu --per-device 2 equals the unsharded run" same_json verify "$tmp/v.json" "$tmp/v-per-device.json"
check "it ran four shard processes" grep -q "4 shard processes (cpu,cpu): shards 1/4 to 4/4 of 4" "$tmp/v-per-device.err"
# --case-size oracle: smaller cases than the device's own, recorded in the scope (merge keeps them apart).
"$fb" "${run[@]}" --case-size oracle --json "$tmp/v-oracle.json" >/dev/null 2>&1
check "--case-size is recorded in the scope" grep -q '"case_size": "oracle"' "$tmp/v-oracle.json"
check "--case-size oracle draws other cases than the default" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if [c["config"] for c in a["cases"]] != [c["config"] for c in b["cases"]] else 1)' "$tmp/v.json" "$tmp/v-oracle.json"
"$fb" "${run[@]}" --case-size oracle --shard 1/2 --json "$tmp/v-oracle-1.json" >/dev/null 2>&1
"$fb" "${run[@]}" --shard 2/2 --json "$tmp/v-2-of-2.json" >/dev/null 2>&1
one_line_exit2 "merge of shards of different case sizes" merge "$tmp/v-oracle-1.json" "$tmp/v-2-of-2.json" --out "$tmp/mixed.json"

# SIGINT to the parent of --devices: passed on to the shard processes, which stop after their current
# case; their finished cases are kept in the parent's --json, marked incomplete (issue 25, finding 5).
"$fb" verify --device cpu --cases 100000 --model convt2d_mul_gap --devices cpu,cpu --json "$tmp/v-int.json" \
  >/dev/null 2>"$tmp/v-int.err" &
pid=$!
for _ in $(seq 1 600); do [ "$(grep -c '^\[cpu [01]\] verify: ' "$tmp/v-int.err")" -eq 2 ] && break; sleep 0.1; done
sleep 1  # into their cases
kill -INT "$pid"
wait "$pid"; r=$?
check "SIGINT stops verify --devices with 130 (got $r)" test "$r" -eq 130
check "it says so: $(tail -n 1 "$tmp/v-int.err")" grep -q "^verify: interrupted by SIGINT; the shard processes stopped" "$tmp/v-int.err"
sleep 0.5
check "no shard process is left" sh -c "! pgrep -f -- '--shard [12]/2 --json [^ ]*fusebench-verify-' >/dev/null"
check "its --json holds the finished cases, marked incomplete" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["complete"] is False and r["incomplete_reason"].startswith("stopped by SIGINT after ") and len(r["cases"]) >= 1
sys.exit(0 if ok and all(c["outcome"] == "passed" for c in r["cases"]) else 1)' "$tmp/v-int.json"

# ---- bench ----------------------------------------------------------------------------------------
tiny='{"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}'
small='{"in_channels":2,"out_channels":3,"kernel_size":3,"stride":1,"padding":0,"output_padding":0,"multiplier":2.0,"batch_size":1,"height":6,"width":5}'
configs="[{\"model\": \"44\", \"label\": \"a\", \"config\": $tiny}, {\"model\": \"44\", \"label\": \"b\", \"config\": $small},
          {\"model\": \"44\", \"label\": \"c\", \"config\": $tiny}]"
echo "$configs" >"$tmp/configs.json"
bench=(bench --device cpu --config "$tmp/configs.json" --min-samples 3 --time-cap 0.05)
"$fb" "${bench[@]}" --out "$tmp/b" >"$tmp/b.out" 2>&1; brc=$?
check "the unsharded bench runs (rc $brc)" test "$brc" -eq 0
check "it records shard 1/1" grep -q '"shard": "1/1"' "$tmp/b/results.json"
for n in 2 4; do
  for ((k = 1; k <= n; k++)); do
    "$fb" "${bench[@]}" --shard "$k/$n" --out "$tmp/b-$k-of-$n" >"$tmp/b-$k-of-$n.out" 2>&1; r=$?
    check "bench shard $k/$n runs (rc $r)" test "$r" -eq 0
    check "bench shard $k/$n records itself" grep -q "\"shard\": \"$k/$n\"" "$tmp/b-$k-of-$n/results.json"
  done
  dirs=()
  for ((k = n; k >= 1; k--)); do dirs+=("$tmp/b-$k-of-$n"); done  # out of order on purpose
  "$fb" merge "${dirs[@]}" --out "$tmp/b-merged-$n.json" --gbench "$tmp/b-merged-$n-gbench.json" >"$tmp/bmerge-$n.out" 2>&1; r=$?
  check "merge of $n bench shards exits 0 (got $r)" test "$r" -eq 0
  check "merge of $n bench shards equals the unsharded results but for measurements" same_json bench "$tmp/b/results.json" "$tmp/b-merged-$n.json"
  check "its gbench.json is written" grep -q '"benchmarks"' "$tmp/b-merged-$n-gbench.json"
done
check "shard 4/4 of 3 configs holds none" grep -q "shard 4/4: 0 of the plan's 3 config(s)" "$tmp/b-4-of-4.out"

"$fb" bench --device cpu --config "$tmp/configs.json" --min-samples 3 --time-cap 0.05 --seed 2 --shard 2/2 --out "$tmp/b-seed2" >/dev/null 2>&1
one_line_exit2 "bench merge of different seeds" merge "$tmp/b-1-of-2" "$tmp/b-seed2" --out "$tmp/bad.json"
one_line_exit2 "bench merge of an overlapping shard" merge "$tmp/b-1-of-2" "$tmp/b-1-of-2/results.json" "$tmp/b-2-of-2" --out "$tmp/bad.json"
one_line_exit2 "bench merge with a shard missing" merge "$tmp/b-1-of-4" "$tmp/b-2-of-4" "$tmp/b-4-of-4" --out "$tmp/bad.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["environment"]["gpu_name"]="NVIDIA H200"; json.dump(d, open(sys.argv[2],"w"))' \
  "$tmp/b-2-of-2/results.json" "$tmp/b-2-of-2-h200.json"
one_line_exit2 "bench merge of different GPUs" merge "$tmp/b-1-of-2" "$tmp/b-2-of-2-h200.json" --out "$tmp/bad.json"
# Another plan: the same file name, but the configs of the shards differ.
mkdir -p "$tmp/other"
echo "[{\"model\": \"44\", \"label\": \"a\", \"config\": $tiny}]" >"$tmp/other/configs.json"
(cd "$tmp/other" && "$fb" bench --device cpu --config configs.json --min-samples 3 --time-cap 0.05 --shard 2/2 --out "$tmp/b-other-plan" >/dev/null 2>&1)
one_line_exit2 "bench merge of different plans" merge "$tmp/b-1-of-2" "$tmp/b-other-plan" --out "$tmp/bad.json"
check "it says the plans differ" sh -c "'$fb' merge '$tmp/b-1-of-2' '$tmp/b-other-plan' --out '$tmp/bad.json' 2>&1 | grep -q 'they plan different configs'"
one_line_exit2 "merge of a bench and a verify file" merge "$tmp/b-1-of-2" "$tmp/v-2-of-2.json" --out "$tmp/bad.json"
one_line_exit2 "merge of a config file" merge "$tmp/configs.json" --out "$tmp/bad.json"

"$fb" "${bench[@]}" --devices cpu,cpu --out "$tmp/b-devices" >"$tmp/b-devices.out" 2>"$tmp/b-devices.err"; r=$?
check "bench --devices cpu,cpu exits 0 (got $r)" test "$r" -eq 0
check "its results equal the unsharded run's but for measurements" same_json bench "$tmp/b/results.json" "$tmp/b-devices/results.json"
check "it writes gbench.json" grep -q '"benchmarks"' "$tmp/b-devices/gbench.json"
check "it shows the shard processes' progress" grep -q '^\[cpu 1\] case ' "$tmp/b-devices.err"
check "it prints the merged summary" grep -q '^bench: 6 timed, 0 failing, 3 skipped' "$tmp/b-devices.out"
check "it removes the shard processes' folder" test -z "$(ls -A "$tmp/b-devices" | grep shards)"

# SIGINT during bench --devices: the shard processes stop after their current sample; the merged
# file keeps what they finished and is marked incomplete with their reasons; exit 130.
"$fb" bench --device cpu --config "$tmp/configs.json" --min-samples 100000 --time-cap 2 --devices cpu,cpu \
  --out "$tmp/b-int" >"$tmp/b-int.out" 2>"$tmp/b-int.err" &
pid=$!
# Both shards in their first case. Waiting for either one can leave the other still starting under
# load, so that its reason is not "interrupted by SIGINT after ...": the likely cause (not
# confirmed) of this test failing 3 times in full parallel ctest runs, at "and why, per shard".
for _ in $(seq 1 600); do [ "$(grep -c '^\[cpu [01]\] case 1/' "$tmp/b-int.err")" -eq 2 ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"; r=$?
check "SIGINT stops bench --devices with 130 (got $r)" test "$r" -eq 130
check "it says so: $(tail -n 1 "$tmp/b-int.err")" grep -Eq "^bench: interrupted after [0-9]+ of 9 cases; results.json marked incomplete$" "$tmp/b-int.err"
check "the merged file says incomplete" grep -q '"complete": false' "$tmp/b-int/results.json"
check "and why, per shard" grep -q '"incomplete_reason": "shard 1/2: interrupted by SIGINT after' "$tmp/b-int/results.json"
check "it plans the 9 cases" grep -q '"planned_cases": 9' "$tmp/b-int/results.json"

if [ "$fail" -ne 0 ]; then echo "cli_scale_test: FAILED"; exit 1; fi
echo "cli_scale_test: all passed"

#!/usr/bin/env bash
# Issue 38, hostile peer helpers (property_tests/peers/): one that crashes, hangs past --peer-timeout,
# outlives --peer-budget, prints garbage, returns a wrong shape, a file that is no tensor, samples that
# are no times, an output path outside its folder, or right-shaped wrong values. Each gives its peers
# the verdict they deserve with the reason (failed; skipped for time; incorrect, judged by the harness),
# and the run goes on: exit 0, complete, our own rows untouched.
# Usage: peers_hostile_test.sh FUSEBENCH REPO_ROOT TORCH_PYTHON (empty: the torch modes are skipped)
set -u
fb="$1"
root="$2"
py="${3:-}"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
fakes="$root/property_tests/peers"
config='{"model": "44", "label": "tiny", "config": {"in_channels": 3, "out_channels": 4, "kernel_size": 3,
  "stride": 2, "padding": 1, "output_padding": 1, "multiplier": 0.5, "batch_size": 2, "height": 8, "width": 8}}'
json_py="${py:-python3}"

# run NAME PYTHON HELPER [EXTRA ARGS...]: one bench with that helper; prints "impl outcome stats msg" per row.
run() {
  local name="$1" python="$2" helper="$3"; shift 3
  local start=$SECONDS
  "$fb" bench --device cpu --config "$config" --min-samples 3 --time-cap 0.05 --peers torch \
    --peer-python "$python" --peer-helper "$helper" --out "$tmp/$name" "$@" >"$tmp/$name.log" 2>&1
  local rc=$?
  check "$name: the run goes on, exit 0 (rc $rc, $((SECONDS - start)) s)" test "$rc" -eq 0
  check "$name: complete" grep -q '"complete": true' "$tmp/$name/results.json"
  "$json_py" - "$tmp/$name/results.json" >"$tmp/$name.rows" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    p = c.get("peer") or {}
    print(c["implementation"], c["outcome"], "stats" if c["stats"] else "nostats",
          "share={}".format(p.get("share_within_tolerance")), c["message"].replace("\n", " "))
PY
  check "$name: ref and fused still passed" test "$(grep -Ec '^(ref|fused_host) passed stats' "$tmp/$name.rows")" -eq 2
  check "$name: six peer rows" test "$(grep -c '^peer:' "$tmp/$name.rows")" -eq 6
}
# expect NAME COUNT REGEX: COUNT peer rows of the run match REGEX.
expect() {
  local got
  got=$(grep -Ec "$3" "$tmp/$1.rows")
  check "$1: $2 peer row(s) match /$3/ (got $got)" test "$got" -eq "$2"
  if [[ "$got" -ne "$2" ]]; then cat "$tmp/$1.rows"; fi
}

run crash bash "$fakes/crash.sh"
expect crash 6 '^peer:[a-z_0-9]+ failed nostats share=None the peer helper crashed \(signal 11, SIGSEGV\) before its record; its last words: .fake: about to crash.'
check "crash: the console says PEER ERROR" grep -q "^PEER ERROR: convt2d_mul_gap/tiny/peer:eager: the peer helper crashed" "$tmp/crash.log"

run hang bash "$fakes/hang.sh" --peer-timeout 1
expect hang 6 '^peer:[a-z_0-9]+ failed nostats share=None the peer helper timed out \(killed after 1 s, --peer-timeout\)'

run budget bash "$fakes/hang.sh" --peer-budget 1.5
expect budget 6 "^peer:[a-z_0-9]+ not_run nostats share=None skipped for time: the peer stage's budget \(--peer-budget 1.5 s, dealt over the cases\) was spent"
check "budget: the console lists them" test "$(grep -c "^peer: .*not_run: skipped for time" "$tmp/budget.log")" -eq 6

run garbage bash "$fakes/garbage.sh"
# Two garbage lines per start, laid on the two peers it was on; then it exits 0 with a third peer unanswered.
expect garbage 4 "^peer:[a-z_0-9]+ failed nostats share=None the peer helper printed garbage instead of its record: "
expect garbage 2 "^peer:[a-z_0-9]+ failed nostats share=None the peer helper exited \(status 0\) before its record"

if [[ -z "$py" ]]; then
  echo "SKIPPED: the torch modes (no Python with torch found at configure time)"
  exit $fail
fi
export FAKE_MODE
FAKE_MODE=wrong_shape run wrong_shape "$py" "$fakes/fake_helper.py"
expect wrong_shape 6 '^peer:[a-z_0-9]+ failed nostats share=None its output: wrong shape: \[1, 2, 3\] where the model.s output is \[2, 4, 1, 1\]'

FAKE_MODE=zeros run zeros "$py" "$fakes/fake_helper.py"
# Right shape, wrong values: the helper claims nothing; the harness judges, and keeps the time.
expect zeros 6 '^peer:[a-z_0-9]+ incorrect stats share=0.0 [0-9]+ of 8 elements outside the tolerance'
check "zeros: counted outside, never failing" grep -q "bench: peers (information, never the exit status): 0 within tolerance, 6 outside, 0 error, 0 skipped" "$tmp/zeros.log"

FAKE_MODE=not_a_tensor run not_a_tensor "$py" "$fakes/fake_helper.py"
expect not_a_tensor 6 '^peer:[a-z_0-9]+ failed nostats share=None its output: [a-z_0-9]+\.pt is not a saved tensor'

FAKE_MODE=bad_samples run bad_samples "$py" "$fakes/fake_helper.py"
expect bad_samples 6 '^peer:[a-z_0-9]+ failed nostats share=None the peer helper printed a sample of peer [a-z_0-9]+ that is no time: -1'

FAKE_MODE=escape run escape "$py" "$fakes/fake_helper.py"
expect escape 6 '^peer:[a-z_0-9]+ failed nostats share=None the peer helper printed a timed record of peer [a-z_0-9]+ without an output file name'

FAKE_MODE=first_then_crash run first_then_crash "$py" "$fakes/fake_helper.py"
# Each start says one record (skipped) and dies on the next peer; the next start goes on after it.
expect first_then_crash 3 '^peer:[a-z_0-9]+ not_supported nostats share=None skipped: fake skip'
expect first_then_crash 3 '^peer:[a-z_0-9]+ failed nostats share=None the peer helper crashed \(signal 11, SIGSEGV\) before its record'
exit $fail

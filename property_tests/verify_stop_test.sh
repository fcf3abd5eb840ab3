#!/usr/bin/env bash
# A verify run stopped by its box (SIGTERM from `timeout`) keeps its finished cases: its --json is
# valid and marked incomplete ("stopped by SIGTERM after N of M planned cases"), every case in it
# finished, and `merge --allow-incomplete` says how many planned cases ran. (The GPU gate's verify
# stage relies on this to report "not run for lack of time" instead of failing with 0 cases.)
set -u
fb="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { local name="$1"; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi; }

# Far more cases than 20 s allow: the box always stops it, after the first case even on a loaded
# machine (a signal before the first case writes the JSON with 0 cases: plugins_hostile_interrupts).
timeout -s TERM 20 "$fb" verify --device cpu --model convt3d_bn_sub --cases 2000 --shard 1/2 --json "$tmp/s1.json" \
  >"$tmp/s1.out" 2>&1
rc=$?
check "the box stopped verify (timeout's exit 124, got $rc)" test "$rc" -eq 124
check "the stopped run wrote its JSON" test -s "$tmp/s1.json"
summary="$(python3 - "$tmp/s1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cases = r["cases"]
done = {c["index"] for c in cases}
print(r["complete"], len(done), all(c["outcome"] == "passed" for c in cases), r["incomplete_reason"])
PY
)"
read -r complete ran all_passed reason <<<"$summary"
check "the report is marked incomplete" test "$complete" = False
check "it kept finished cases ($ran)" test "${ran:-0}" -ge 1
check "every kept case finished and passed" test "$all_passed" = True
check "the reason says what stopped it and how far it got ($reason)" grep -qE "^stopped by SIGTERM after $ran of 1000 planned cases$" <<<"$reason"
check "the table was printed with the incomplete verdict" grep -q "verify: INCOMPLETE: stopped by SIGTERM" "$tmp/s1.out"

"$fb" merge "$tmp/s1.json" --out "$tmp/m.json" >"$tmp/m.out" 2>&1
check "a strict merge refuses the incomplete shard (exit 2, got $?)" test $? -eq 2
"$fb" merge "$tmp/s1.json" --allow-incomplete --allow-missing --out "$tmp/m.json" >"$tmp/m.out" 2>&1
rc=$?
check "merge --allow-incomplete exits 1 (incomplete, got $rc)" test "$rc" -eq 1
check "merge says how many planned cases ran" grep -q "^merge: $ran of 2000 planned cases ran$" "$tmp/m.out"
exit "$fail"

#!/usr/bin/env bash
# Issue 38, the peer column on the CPU: `bench --peers torch` with Debian's python3-torch (1.13: no
# torch.compile) on small CPU cases. The eager peer is timed and judged by the harness (passed, 100%
# within), every other peer is listed as skipped with its reason in the console, results.json and the
# report; the report's peer columns and table are filled; compare shows the peers as information.
# Usage: peers_test.sh FUSEBENCH TORCH_PYTHON (a Python that imports torch; empty: the test skips, 77)
set -u
fb="$1"
py="${2:-}"
if [[ -z "$py" ]]; then
  echo "SKIPPED: no Python with torch was found at configure time (Debian: apt-get install python3-torch)"
  exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
# Two models: a 2-D one and a training-mode BatchNorm one (whose buffers the peer updates every call).
configs='[{"model": "44", "label": "default", "config": {"in_channels": 3, "out_channels": 4, "kernel_size": 3,
  "stride": 2, "padding": 1, "output_padding": 1, "multiplier": 0.5, "batch_size": 2, "height": 8, "width": 8}},
 {"model": "15", "label": "default", "config": {"in_channels": 3, "out_channels": 5, "kernel_size": 3, "stride": 2,
  "padding": 1, "batch_size": 2, "depth": 3, "height": 4, "width": 5}}]'

"$fb" bench --device cpu --config "$configs" --min-samples 3 --time-cap 0.05 --peers torch --peer-python "$py" \
  --out "$tmp/run" >"$tmp/run.log" 2>&1; rc=$?
check "bench --peers torch exits 0 (rc $rc)" test "$rc" -eq 0
res="$tmp/run/results.json"
check "the run is complete" grep -q '"complete": true' "$res"
summary=$("$py" - "$res" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
peers = [c for c in r["cases"] if c["implementation"].startswith("peer:")]
out = []
for c in peers:
    p = c.get("peer") or {}
    out.append("{} {} {} stats={} share={} torch={} decided={} msg={}".format(
        c["model"], c["implementation"], c["outcome"], c["stats"] is not None, p.get("share_within_tolerance"),
        p.get("torch_version"), c["decided_by"], c["message"][:90]))
print("\n".join(out))
print("planned", r["planned_cases"], "cases", len(r["cases"]))
PY
)
echo "$summary"
for m in convt2d_mul_gap convt3d_bn_sub; do
  check "$m: peer:eager timed, judged by the harness, 100% within" \
    grep -Eq "^$m peer:eager passed stats=True share=1.0 torch=1\.13[^ ]* decided=fp(32_reference|64_allowance)" <<<"$summary"
  for p in compile compile_tf32 max_autotune max_autotune_tf32; do
    check "$m: peer:$p skipped with the reason" \
      grep -Eq "^$m peer:$p not_supported stats=False share=None torch=1\.13.* msg=skipped: torch.compile does not exist" <<<"$summary"
  done
  check "$m: peer:eager_tf32 skipped: no TF32 on a CPU" \
    grep -Eq "^$m peer:eager_tf32 not_supported stats=False .*TF32 exists only on CUDA" <<<"$summary"
done
check "all 12 peer rows are in the file" test "$(grep -c ' peer:' <<<"$summary")" -eq 12
check "the plan counted the peers: $(tail -n1 <<<"$summary")" grep -Eq "^planned ([0-9]+) cases \1$" <<<"$summary"
check "console: a line per peer" test "$(grep -c '^peer: ' "$tmp/run.log")" -eq 12
check "console: the skipped reason" grep -q "^peer: convt2d_mul_gap/default/peer:compile: not_supported: skipped: torch.compile does not exist" "$tmp/run.log"
check "console: eager against fused" grep -Eq "^peer: convt2d_mul_gap/default/peer:eager: .*within tolerance \(100% within\); fused .* faster" "$tmp/run.log"
check "console: the peers' totals" grep -q "bench: peers (information, never the exit status): 2 within tolerance, 0 outside, 0 error, 10 skipped" "$tmp/run.log"

"$fb" report "$res" --out "$tmp/report" >"$tmp/report.log" 2>&1; rc=$?
check "report exits 0 (rc $rc)" test "$rc" -eq 0
md="$tmp/report/report.md"
check "summary has the two peer columns" grep -q "| vs fastest peer within tol | vs fastest peer |" "$md"
check "summary: fused vs eager, named" grep -Eq "^\| convt2d_mul_gap \| 44 \| fused_host \|.*\(eager [0-9.]+ (µs|us|ms)\) \|" "$md"
check "per-model peer table" grep -q "| default | peer:eager |" "$md"
check "the skipped peers listed with their reason" \
  test "$(grep -c 'peer:[a-z_0-9]*: not_supported: skipped: ' "$md")" -eq 10

# --allow-undecided: on a loaded CPU a case may get fewer samples than the rank test needs; the point
# here is that no peer row can fail it, even with --all-impls.
"$fb" compare "$res" "$res" --all-impls --allow-undecided >"$tmp/compare.log" 2>&1; rc=$?
check "compare of the run with itself exits 0 (rc $rc)" test "$rc" -eq 0
check "compare shows the peers as information" grep -q "peer:eager.*(peer: information, never gated)" "$tmp/compare.log"

# No such Python: every peer skipped with that reason, the run goes on.
"$fb" bench --device cpu --config "$configs" --model 44 --min-samples 3 --time-cap 0.05 --peers torch \
  --peer-python /nonexistent/python3 --out "$tmp/nopy" >"$tmp/nopy.log" 2>&1; rc=$?
check "no Python: exit 0 (rc $rc)" test "$rc" -eq 0
check "no Python: 6 peers skipped with the reason" \
  test "$(grep -c "^peer: .*not_supported: skipped: no Python: '/nonexistent/python3' could not be started" "$tmp/nopy.log")" -eq 6

# Bad usage: one line, exit 2.
err=$("$fb" bench --device cpu --peers pytorch 2>&1 >/dev/null); rc=$?
check "--peers pytorch exits 2 with one line: $err" test "$rc" -eq 2 -a "$(wc -l <<<"$err")" -eq 1
err=$("$fb" bench --device cpu --peers torch --peer-helper /nonexistent.py 2>&1 >/dev/null); rc=$?
check "--peer-helper missing exits 2: $err" test "$rc" -eq 2
exit $fail

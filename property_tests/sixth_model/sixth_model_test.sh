#!/usr/bin/env bash
# The test-only sixth model (property_tests/sixth_model/) through the public CLI path: a fusebench
# built with model.cpp linked in lists it (text and --json, from its declared domain), fuzzes it in
# `verify` (fused_host against the reference, the reference against the fp64 oracle), and fails its
# deliberately wrong twin; the real fusebench knows neither.
# Usage: sixth_model_test.sh FUSEBENCH_WITH_SIXTH_MODEL FUSEBENCH
set -u
fb6="$1"
fb="$2"
. "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"  # fail, check NAME CONDITION..., $tmp

# The real fusebench: the five models only.
"$fb" list >"$tmp/real.txt" 2>&1
check "fusebench list exits 0" test $? -eq 0
check "fusebench list does not show the test model" bash -c "! grep -q test_convt2d_relu '$tmp/real.txt'"
"$fb" list --json >"$tmp/real.json"
check "fusebench list --json does not show the test model" bash -c "! grep -q test_convt2d_relu '$tmp/real.json'"
"$fb" verify --device cpu --model test_convt2d_relu --cases 1 >/dev/null 2>&1
rc=$?
check "fusebench verify --model test_convt2d_relu exits 2 (got $rc)" test "$rc" -eq 2

# The fusebench with the sixth model: the five, then the two test models, rendered like the five.
"$fb6" list >"$tmp/list.txt"
check "list exits 0" test $? -eq 0
check "list shows test_convt2d_relu" grep -q "^test_convt2d_relu  (KernelBench #901)" "$tmp/list.txt"
check "list shows the five models too" test "$(grep -c '^convt' "$tmp/list.txt")" -eq 5
check "list shows the declared domain" grep -q "fuzz domain    : B 1..8, C 1..16, k 1..7, s 1..4, p 0..k (1 in 3: up to PyTorch's bound, p > k), op 0..s-1, H,W 1..24, scale \[-2,2\]; offset inputs +10$" "$tmp/list.txt"
check "list shows fused_host (cpu)" grep -q "implementations: reference (cpu, cuda), fused_host (cpu)$" "$tmp/list.txt"
"$fb6" list --json >"$tmp/list.json"
check "list --json exits 0" test $? -eq 0
python3 - "$tmp/list.json" <<'PY'
import json, sys
models = {m["id"]: m for m in json.load(open(sys.argv[1]))}
m = models["test_convt2d_relu"]
d = m["fuzz_domain"]
assert m["kernelbench_id"] == 901, m
assert d["spatial"] == {"min": 1, "max": 24}, d
assert d["channels"] == {"min": 1, "max": 16}, d
assert d["reals"] == [{"name": "scale", "min": -2.0, "max": 2.0, "distribution": "uniform"}], d
assert d["input_offset"] == 10.0, d
assert "output_padding" in d and "padding" in d, d
assert m["implementations"] == ["reference", "fused_host"], m
assert len([i for i in models if i.startswith("convt")]) == 5, list(models)
PY
check "list --json renders the declared domain" test $? -eq 0

# verify fuzzes it: every case of fused_host passes, the reference meets the fp64 oracle, and the
# fuzz reaches padding above the kernel size and output_padding > 0.
cases=60
"$fb6" verify --device cpu --model test_convt2d_relu --cases $cases --seed 7 --json "$tmp/ok.json" >"$tmp/ok.txt" 2>&1
rc=$?
check "verify test_convt2d_relu exits 0 (got $rc)" test "$rc" -eq 0 || cat "$tmp/ok.txt"
python3 - "$tmp/ok.json" "$cases" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
rows = {row["implementation"]: row for row in r["rows"] if row["model"] == "test_convt2d_relu"}
assert rows["fused_host"]["passed"] == n, rows
assert all(row["incorrect"] == 0 and row["failed"] == 0 for row in rows.values()), rows
assert rows["reference"]["checked_against"] == "fp64 oracle" and rows["reference"]["passed"] == n, rows
cfgs = [c["config"] for c in r["cases"] if c["model"] == "test_convt2d_relu" and c["implementation"] == "fused_host"]
assert len(cfgs) == n, len(cfgs)
assert any(c["padding"] > c["kernel_size"] for c in cfgs), "no case with padding above the kernel size"
assert any(c["output_padding"] > 0 for c in cfgs), "no case with output_padding"
assert len({json.dumps(c, sort_keys=True) for c in cfgs}) > n // 2, "the fuzz repeats itself"
PY
check "verify judged every case of test_convt2d_relu and passed them" test $? -eq 0

# The deliberately wrong variant fails, and the report says incorrect, not failed.
"$fb6" verify --device cpu --model test_convt2d_relu_wrong --cases 20 --seed 7 --json "$tmp/wrong.json" >"$tmp/wrong.txt" 2>&1
rc=$?
check "verify test_convt2d_relu_wrong exits 1 (got $rc)" test "$rc" -eq 1
python3 - "$tmp/wrong.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
row = [x for x in r["rows"] if x["model"] == "test_convt2d_relu_wrong" and x["implementation"] == "fused_host"][0]
assert row["incorrect"] > 0 and row["failed"] == 0, row
PY
check "verify reports the wrong variant's cases incorrect" test $? -eq 0

exit $fail

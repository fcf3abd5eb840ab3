#!/usr/bin/env bash
# End-to-end checks of the fusebench CLI: what a user at a terminal and CI rely on.
set -u
fb="$1"
fail=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

out=$("$fb" list 2>&1)
for id in convt3d_bn_sub convt3d_ln_gelu_scale convt2d_gap_bias_lse convt2d_mul_gap convt3d_scale_bn_gap; do
  check "list shows $id" grep -q "^$id " <<<"$out"
done

# An invalid config exits 2 with one line that names the field.
err=$("$fb" verify --device cpu --model convt2d_mul_gap --config '{"in_channels":3,"out_channels":5,"kernel_size":3,"stride":2,"padding":1,"output_padding":2,"multiplier":0.5,"batch_size":1,"height":5,"width":5}' 2>&1 >/dev/null)
rc=$?
check "invalid config exits 2 (got $rc)" test "$rc" -eq 2
check "invalid config names output_padding" grep -q "output_padding" <<<"$err"
check "invalid config is one line" test "$(wc -l <<<"$err")" -eq 1

"$fb" verify --device cpu --model nope >/dev/null 2>&1
check "unknown model exits 2" test $? -eq 2
"$fb" verify --device cpu --cases 0 >/dev/null 2>&1
check "--cases 0 exits 2" test $? -eq 2

# The same seed gives the same cases (and so the same table).
a=$("$fb" verify --device cpu --cases 3 --seed 9 --model convt2d_mul_gap 2>/dev/null)
rc=$?
b=$("$fb" verify --device cpu --cases 3 --seed 9 --model convt2d_mul_gap 2>/dev/null)
check "verify passes (rc $rc)" test "$rc" -eq 0
check "same seed, same results" test "$a" = "$b"

# --config replays a config; a repro bundle's config.json replays the whole case.
tmp=$(mktemp -d)
cfg='{"in_channels":3,"out_channels":5,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":-0.5,"batch_size":2,"height":7,"width":6}'
"$fb" verify --device cpu --model convt2d_mul_gap --config "$cfg" --case-seed 4 --inputs border >/dev/null 2>&1
check "--config replay passes" test $? -eq 0
echo "$cfg" > "$tmp/cfg.json"
"$fb" verify --device cpu --model convt2d_mul_gap --config "$tmp/cfg.json" --cases 2 >/dev/null 2>&1
check "--config FILE works" test $? -eq 0
"$fb" verify --device cpu --model convt2d_mul_gap --config "$tmp/missing.json" >/dev/null 2>&1
check "missing --config file exits 2" test $? -eq 2
echo '{"in_channels": 3,' > "$tmp/bad.json"
"$fb" verify --device cpu --model convt2d_mul_gap --config "$tmp/bad.json" >/dev/null 2>&1
check "truncated --config JSON exits 2" test $? -eq 2
rm -rf "$tmp"

if [ "$fail" -ne 0 ]; then echo "cli_test: FAILED"; exit 1; fi
echo "cli_test: all passed"

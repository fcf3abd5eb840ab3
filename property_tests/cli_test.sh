#!/usr/bin/env bash
# End-to-end checks of `fusebench list` and `fusebench verify`: what a user at a terminal and CI rely on.
# Every registered model is taken from `fusebench list --json`, so a new model is covered without an edit.
set -u
fb="$1"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp

# A python3 with Debian's torch (python3-torch), for the torch.save interop check; the first that imports it.
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import torch' >/dev/null 2>&1; then py="$p"; break; fi
done

"$fb" list --json >"$tmp/list.json"
check "list --json exits 0" test $? -eq 0
mapfile -t ids < <(sed -n 's/^ *"id": "\(.*\)",$/\1/p' "$tmp/list.json")
check "list --json names models" test "${#ids[@]}" -ge 5
out=$("$fb" list 2>&1)
for id in "${ids[@]}"; do
  check "list shows $id" grep -q "^$id " <<<"$out"
done

# An invalid config exits 2 with one line that names the field.
err=$("$fb" verify --device cpu --model convt2d_mul_gap --config '{"in_channels":3,"out_channels":5,"kernel_size":3,"stride":2,"padding":1,"output_padding":2,"multiplier":0.5,"batch_size":1,"height":5,"width":5}' 2>&1 >/dev/null)
rc=$?
check "invalid config exits 2 (got $rc)" test "$rc" -eq 2
check "invalid config names output_padding" grep -q "output_padding" <<<"$err"
check "invalid config is one line" test "$(wc -l <<<"$err")" -eq 1

# Bad usage and bad input: exit 2 and one line, never a crash.
one_line_exit2() {  # one_line_exit2 NAME ARGS...: the command exits 2 with exactly one line on stderr
  local name="$1"; shift
  local e rc
  e=$("$fb" "$@" 2>&1 >/dev/null)
  rc=$?
  check "$name exits 2 (got $rc)" test "$rc" -eq 2
  check "$name says one line (got $(wc -l <<<"$e"))" test "$(wc -l <<<"$e")" -eq 1
}
small='{"in_channels":3,"out_channels":5,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":-0.5,"batch_size":2,"height":7,"width":6}'
one_line_exit2 "unknown model" verify --device cpu --model nope
one_line_exit2 "--cases 0" verify --device cpu --cases 0
one_line_exit2 "--atol=-inf" verify --device cpu --cases 5 --atol=-inf --rtol=-inf
one_line_exit2 "--atol -1" verify --device cpu --cases 5 --atol -1
one_line_exit2 "--atol nan" verify --device cpu --cases 5 --atol nan
one_line_exit2 "--rtol inf" verify --device cpu --cases 5 --rtol inf
one_line_exit2 "--config DIRECTORY" verify --model convt2d_mul_gap --device cpu --config "$tmp"
one_line_exit2 "--save-failures /proc/x" verify --model convt2d_mul_gap --device cpu --atol 0 --save-failures /proc/x
one_line_exit2 "--case-seed without --config" verify --model convt2d_mul_gap --device cpu --case-seed 3
one_line_exit2 "height 2^62" verify --device cpu --model convt2d_mul_gap --config "${small/\"height\":7/\"height\":4611686018427387904}"
one_line_exit2 "in_channels 3e9" verify --device cpu --model convt2d_mul_gap --config "${small/\"in_channels\":3/\"in_channels\":3000000000}"
one_line_exit2 "kernel_size 100000" verify --device cpu --model convt2d_mul_gap --config "${small/\"kernel_size\":3/\"kernel_size\":100000}"
one_line_exit2 "batch_size 1e9" verify --device cpu --model convt2d_mul_gap --config "${small/\"batch_size\":2/\"batch_size\":1000000000}"
one_line_exit2 "--tensors missing file" verify --device cpu --model convt2d_mul_gap --config "$small" --tensors "$tmp/none.pt"
"$fb" verify --model 44 --device cpu --config "$small" --case-seed 1 >/dev/null 2>&1
check "--model 44 selects convt2d_mul_gap" test $? -eq 0

# The same seed gives the same cases (and so the same table); every case gets a verdict.
a=$("$fb" verify --device cpu --cases 3 --seed 9 --model convt2d_mul_gap 2>/dev/null)
rc=$?
b=$("$fb" verify --device cpu --cases 3 --seed 9 --model convt2d_mul_gap 2>/dev/null)
check "verify passes (rc $rc)" test "$rc" -eq 0
check "same seed, same results" test "$a" = "$b"
check "summary counts cases not judged" grep -q "0 not judged" <<<"$a"

# --config replays a config; --json and --junit write machine-readable results.
"$fb" verify --device cpu --model convt2d_mul_gap --config "$small" --case-seed 4 --inputs border >/dev/null 2>&1
check "--config replay passes" test $? -eq 0
echo "$small" > "$tmp/cfg.json"
"$fb" verify --device cpu --model convt2d_mul_gap --config "$tmp/cfg.json" --cases 2 --json "$tmp/v.json" --junit "$tmp/v.xml" >/dev/null 2>&1
check "--config FILE works" test $? -eq 0
check "--json has the schema" grep -q '"schema": "fusebench-verify"' "$tmp/v.json"
check "--junit is a testsuites document" grep -q '<testsuites name="fusebench verify"' "$tmp/v.xml"
one_line_exit2 "missing --config file" verify --device cpu --model convt2d_mul_gap --config "$tmp/missing.json"
echo '{"in_channels": 3,' > "$tmp/bad.json"
one_line_exit2 "truncated --config JSON" verify --device cpu --model convt2d_mul_gap --config "$tmp/bad.json"

# A deliberately failing case writes a bundle; its repro line carries the tolerances; replaying the
# bundle fails the same way, once, from its saved tensors. (Plain --atol 0 --rtol 0 is no failure for
# a kernel as accurate as PyTorch: the fp64 rule takes over. --strict-fp32 asks for libtorch's bits.)
out=$("$fb" verify --device cpu --model convt2d_mul_gap --cases 1 --strict-fp32 --atol 0 --rtol 0 --save-failures "$tmp/fail" 2>&1)
rc=$?
check "strict fp32 at atol 0 rtol 0 fails (rc $rc)" test "$rc" -eq 1
check "repro line carries --atol 0 --rtol 0 --strict-fp32" grep -q -- "--atol 0 --rtol 0 --strict-fp32" <<<"$out"
bundle=$(ls -d "$tmp"/fail/convt2d_mul_gap_fused_host_* 2>/dev/null | head -n 1)
check "a bundle was written" test -n "$bundle" -a -f "$bundle/tensors.pt" -a -f "$bundle/config.json"
if [ -n "$bundle" ]; then
  out=$("$fb" verify --config "$bundle/config.json" 2>&1)
  rc=$?
  check "bundle replay fails the same way (rc $rc)" test "$rc" -eq 1
  check "bundle replay runs one case" grep -q "^verify: 1 verdicts on 1 cases" <<<"$out"
  check "bundle replay is not labelled stale" sh -c "! grep -q 'stale' <<'EOF'
$out
EOF"
  if [ -n "$py" ]; then
    "$py" - "$bundle/tensors.pt" >"$tmp/keys.txt" 2>&1 <<'EOF'
import sys, torch
d = torch.load(sys.argv[1])
print(sorted(d.keys()))
EOF
    check "torch.load reads the bundle" grep -q "expected_fp64" "$tmp/keys.txt"
  fi
fi

# A user's own tensors, saved from Python with torch.save: every implementation is checked on them.
if [ -n "$py" ]; then
  "$py" - "$tmp/user.pt" <<'EOF'
import sys, torch
torch.manual_seed(0)
conv = torch.nn.ConvTranspose2d(3, 5, 3, stride=2, padding=1, output_padding=1)
d = dict(conv.state_dict())
d = {"conv_transpose." + k: v for k, v in d.items()}
d["input"] = torch.rand(2, 3, 7, 6)
torch.save(d, sys.argv[1])
EOF
  out=$("$fb" verify --device cpu --model convt2d_mul_gap --config "$small" --tensors "$tmp/user.pt" 2>&1)
  rc=$?
  check "torch.save tensors are verified (rc $rc)" test "$rc" -eq 0
  check "torch.save tensors: the fused executor judged" grep -qE "^convt2d_mul_gap +fused_host +1 +1 " <<<"$out"
  one_line_exit2 "tensors of the wrong shape" verify --device cpu --model convt2d_mul_gap --config "${small/\"batch_size\":2/\"batch_size\":3}" --tensors "$tmp/user.pt"
else
  echo "FAIL no python3 with torch (Debian python3-torch): the torch.save interop checks cannot run"
  fail=1
fi

# A crash (here a SIGSEGV sent from outside, mid-run) reports where it happened and dies of the signal.
"$fb" verify --device cpu --cases 100000 >"$tmp/crash.out" 2>"$tmp/crash.err" &
pid=$!
for _ in $(seq 1 300); do grep -q "verify:" "$tmp/crash.err" 2>/dev/null && break; sleep 0.1; done
kill -SEGV "$pid"
{ wait "$pid"; } 2>/dev/null  # (the shell's own "Segmentation fault" notice is not the test's output)
rc=$?
crash=$(cat "$tmp/crash.err")
check "a crash dies of its signal (rc $rc)" test "$rc" -eq 139
check "a crash says internal error: SIGSEGV" grep -q "fusebench: internal error: SIGSEGV" <<<"$crash"
check "a crash says where it came from and on which thread" grep -Eq "sent by a process \(kill\), no fault address, (main thread|not the main thread)" <<<"$crash"
check "a crash names the interrupted instruction" grep -Eq "instruction 0x[0-9a-f]+" <<<"$crash"

if [ "$fail" -ne 0 ]; then echo "cli_test: FAILED"; exit 1; fi
echo "cli_test: all passed"

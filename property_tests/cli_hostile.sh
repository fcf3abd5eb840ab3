#!/usr/bin/env bash
# Hostile inputs across the subcommands (issue 25): each bad input must exit 2 with exactly one line on
# stderr, and must leave every file it was given as it was. Then the behaviours that keep results
# safe: outputs never overwrite inputs or each other, a rerun never destroys an earlier complete
# results.json, and the exit classes of bad output folders. Usage: cli_hostile.sh FUSEBENCH
set -u
fb="$1"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp
cd "$tmp" || exit 1

# refused NAME ARGS...: exit 2, one line on stderr, and within seconds (timeout: a hang is a failure too).
refused() {
  local name="$1"; shift
  local e rc
  e=$(timeout 60 "$fb" "$@" 2>&1 >/dev/null)
  rc=$?
  check "$name: exits 2 (got $rc)" test "$rc" -eq 2
  check "$name: one stderr line (got $(wc -l <<<"$e")): $(head -c 200 <<<"$e")" test "$(wc -l <<<"$e")" -eq 1 -a -n "$e"
}
# unchanged NAME FILE COPY: FILE still has the content saved in COPY.
unchanged() { check "$1: $2 unchanged" cmp -s "$2" "$3"; }

tiny='{"in_channels":3,"out_channels":4,"kernel_size":3,"stride":2,"padding":1,"output_padding":1,"multiplier":0.5,"batch_size":2,"height":8,"width":8}'
one="{\"model\": \"44\", \"label\": \"tiny\", \"config\": $tiny}"
fast=(--device cpu --min-samples 3 --time-cap 0.05)

# Inputs the refusals below must leave alone: a complete bench run and a verify report.
"$fb" bench "${fast[@]}" --config "$one" --out run >/dev/null 2>&1
check "a small bench run completes" grep -q '"complete": true' run/results.json
cp run/results.json run.copy.json
"$fb" verify --device cpu --model convt2d_mul_gap --cases 2 --seed 5 --json v.json --junit v.xml >/dev/null 2>&1
check "a small verify run writes its JSON" grep -q '"fusebench-verify"' v.json
cp v.json v.copy.json

# --- (1) counts: strict, bounded, never an abort, never touching the earlier results --------------
for n in -1 0 100001 2147483648 18446744073709551616 1e3 3.5 ' 3' 0x10 ''; do
  refused "bench --min-samples '$n'" bench --device cpu --config "$one" --min-samples "$n" --out run
done
unchanged "bench --min-samples refusals" run/results.json run.copy.json
check "no partial file beside it either" test ! -e run/results.partial.json
for t in 0 -1 nan inf 1e9 abc; do
  refused "bench --time-cap $t" bench --device cpu --config "$one" --time-cap "$t" --out run
done
for n in -1 0 100000001 2147483648 1e2 abc; do
  refused "verify --cases '$n'" verify --device cpu --model 44 --cases "$n"
done
refused "verify --per-device 0" verify --device cpu --model 44 --cases 2 --devices cpu --per-device 0
refused "verify --per-device -1" verify --device cpu --model 44 --cases 2 --devices cpu --per-device -1

# --- (2) seeds: 0..2^64-1 in decimal digits only, for every subcommand that takes one ---------------
for s in -1 18446744073709551616 1e23 36893488147419115631 0x10 ' 7' 7.0 +7 ''; do
  refused "verify --seed '$s'" verify --device cpu --model 44 --cases 1 --seed "$s"
  refused "bench --seed '$s'" bench --device cpu --config "$one" --seed "$s" --out run
  refused "verify --case-seed '$s'" verify --device cpu --model 44 --config "$tiny" --case-seed "$s"
done
unchanged "seed refusals" run/results.json run.copy.json
out=$("$fb" verify --device cpu --model 44 --cases 1 --seed 18446744073709551615 --json max.json 2>&1); rc=$?
check "--seed 2^64-1 itself runs (rc $rc)" test "$rc" -eq 0
check "and is recorded as given" grep -q '18446744073709551615' max.json

# --- (3) an output equal to an input or to another output: refused before anything runs -----------
refused "verify --json X --junit X" verify --device cpu --model 44 --cases 1 --json same.out --junit same.out
check "nothing was written to X" test ! -e same.out
printf '%s\n' "$tiny" >c.json
cp c.json c.copy.json
refused "verify --config c.json --json c.json" verify --device cpu --model 44 --config c.json --case-seed 1 --json c.json
unchanged "verify --config c.json --json c.json" c.json c.copy.json
refused "verify --config ./c.json --junit ../$(basename "$tmp")/c.json" verify --device cpu --model 44 \
  --config ./c.json --case-seed 1 --junit "../$(basename "$tmp")/c.json"
unchanged "the same file by another name" c.json c.copy.json
# A repro bundle is read as a whole: nothing may be written into it (the refusal comes before it is read).
mkdir -p bundle
printf '%s\n' "$tiny" >bundle/config.json
head -c 256 /dev/urandom >bundle/tensors.pt
cp bundle/tensors.pt tensors.copy.pt
refused "verify --config BUNDLE/config.json --junit BUNDLE/tensors.pt" verify --config bundle/config.json \
  --junit bundle/tensors.pt
unchanged "the bundle's tensors" bundle/tensors.pt tensors.copy.pt
refused "verify --config BUNDLE/config.json --json BUNDLE/new.json" verify --config bundle/config.json \
  --json bundle/new.json
check "nothing written into the bundle" test ! -e bundle/new.json
refused "compare base cur --out base" compare run/results.json run/results.json --out run/results.json
unchanged "compare --out BASE" run/results.json run.copy.json
refused "merge s1 s2 --out s1" merge v.json v.json --out v.json
unchanged "merge --out s1" v.json v.copy.json
refused "merge --out X --junit X" merge v.json --out m.json --junit m.json
refused "merge DIR --gbench DIR/results.json" merge run --out m.json --gbench run/results.json
unchanged "merge --gbench into an input" run/results.json run.copy.json
# (issue 40) By canonical path: a plug-in library (--plugin or FUSEBENCH_PLUGINS), bench's --config
# inside its --out, a bench shard's gbench.json under merge --gbench. Refused before anything is loaded.
head -c 512 /dev/urandom >lib.so
cp lib.so lib.copy.so
ln -sf lib.so link.so
# (lib.so is no library: the refusal must be the clash, said before loading it is even tried.)
clash() {  # clash NAME ARGS...: refused, and for the output clash
  local name="$1"; shift
  refused "$name" "$@"
  check "$name: refused as a clash" grep -q "would be overwritten" <<<"$(timeout 60 "$fb" "$@" 2>&1 >/dev/null)"
}
clash "verify --plugin ./lib.so --json lib.so" verify --device cpu --model 44 --cases 1 --plugin ./lib.so --json lib.so
clash "verify --plugin link.so --junit lib.so (a symlink)" verify --device cpu --model 44 --cases 1 --plugin link.so \
  --junit lib.so
e=$(FUSEBENCH_PLUGINS="$tmp/lib.so" timeout 60 "$fb" verify --device cpu --model 44 --cases 1 --json ./lib.so 2>&1 >/dev/null)
rc=$?
check "FUSEBENCH_PLUGINS=LIB verify --json LIB: exits 2 (got $rc), one line: $e" test "$rc" -eq 2 -a "$(wc -l <<<"$e")" -eq 1
check "FUSEBENCH_PLUGINS=LIB verify --json LIB: refused as a clash" grep -q "would be overwritten" <<<"$e"
mkdir -p D2
cp lib.so D2/results.json
clash "bench --plugin D2/results.json --out D2" bench "${fast[@]}" --config "$one" --plugin D2/results.json --out D2
unchanged "the plug-in library" lib.so lib.copy.so
unchanged "the plug-in library in --out" D2/results.json lib.copy.so
mkdir -p D
printf '%s\n' "$one" >D/results.json
cp D/results.json D.copy.json
refused "bench --config D/results.json --out D" bench "${fast[@]}" --config D/results.json --out D
refused "bench --config ./D/results.json --out D/" bench "${fast[@]}" --config ./D/results.json --out D/
unchanged "bench --config D/results.json --out D" D/results.json D.copy.json
check "nothing written into D" test ! -e D/gbench.json -a ! -e D/results.partial.json
cp run/gbench.json run.gbench.copy.json
refused "merge DIR --gbench DIR/gbench.json" merge run --out m.json --gbench run/gbench.json
refused "merge DIR/results.json --gbench ./DIR/gbench.json" merge run/results.json --out m.json --gbench ./run/gbench.json
unchanged "merge --gbench onto a shard's gbench.json" run/gbench.json run.gbench.copy.json
check "and no merged file" test ! -e m.json
mkdir -p rep/charts
cp run/results.json rep/charts/results.json
refused "report OUT/charts/results.json --out OUT" report rep/charts/results.json --out rep
check "the input inside charts/ is kept" cmp -s rep/charts/results.json run.copy.json
cp run/results.json rep/report.md
refused "report OUT/report.md --out OUT" report rep/report.md --out rep --format md

# --- (6) merge recounts: a shard whose totals or case count disagree with its cases is refused ---------
"$fb" verify --device cpu --model convt2d_mul_gap --cases 4 --shard 1/2 --json s1.json >/dev/null 2>&1
"$fb" verify --device cpu --model convt2d_mul_gap --cases 4 --shard 2/2 --json s2.json >/dev/null 2>&1
"$fb" merge s1.json s2.json --out whole.json >/dev/null 2>&1; rc=$?
check "two honest verify shards merge (rc $rc)" test "$rc" -eq 0
jq '.cases |= map(select(.index != 0))' s1.json >s1.cut.json
refused "merge a verify shard with cases cut out" merge s1.cut.json s2.json --out cut.json
jq '.cases |= map(select(.index != 0)) | .rows |= map(.passed -= 1)' s1.json >s1.cut2.json
refused "merge a verify shard cut with its totals edited to match" merge s1.cut2.json s2.json --out cut.json
jq '.rows[0].passed += 2' s1.json >s1.totals.json
refused "merge a verify shard whose totals were edited" merge s1.totals.json s2.json --out cut.json
# (issue 40) The same number of cases, ended otherwise: its row says passed where its case says incorrect.
jq '(.cases[] | select(.index == 0 and .implementation == "fused_host")).outcome = "incorrect"' s1.json >s1.outcome.json
check "the edited shard has an incorrect case under a row of passes" \
  test "$(jq '[.cases[] | select(.outcome == "incorrect")] | length' s1.outcome.json)" -eq 1
refused "merge a verify shard whose row says passed where its case says incorrect" merge s1.outcome.json s2.json \
  --out cut.json
"$fb" bench "${fast[@]}" --config "[$one, ${one/tiny/tiny2}]" --shard 1/2 --out b1 >/dev/null 2>&1
"$fb" bench "${fast[@]}" --config "[$one, ${one/tiny/tiny2}]" --shard 2/2 --out b2 >/dev/null 2>&1
"$fb" merge b1 b2 --out bench-whole.json >/dev/null 2>&1; rc=$?
check "two honest bench shards merge (rc $rc)" test "$rc" -eq 0
jq '.cases |= .[1:]' b1/results.json >b1.cut.json
refused "merge a bench shard with a case cut out" merge b1.cut.json b2 --out cut.json

# --- (10) compare judges the implementations under test; JUnit names are short, with properties -----
"$fb" compare run/results.json run/results.json --allow-undecided --out - >cmp.out 2>&1; rc=$?
check "compare --out - writes to stdout only (rc $rc)" test "$rc" -eq 0 -a ! -e ./- 
check "and the table is there" grep -q "| case | base median" cmp.out
check "a CPU run's ref_tf32 is not a failure" grep -Eq "ref_tf32 \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| same \(not_supported in BASE, not_supported in CUR\)" cmp.out
check "a CPU run names its CPU" test -n "$(jq -r '.environment.cpu_name // ""' run/results.json)"
check "JUnit cases are named model/impl/case N" grep -q 'name="convt2d_mul_gap/fused_host/case 0"' v.xml
check "no config JSON in a JUnit name" test -z "$(grep -o 'name="[^"]*{[^"]*"' v.xml)"
check "JUnit carries the seed" grep -q '<property name="seed" value="5"/>' v.xml
check "JUnit carries each case's seed and config" grep -q '<property name="config" value="{' v.xml
check "JUnit carries device and commit" grep -q '<property name="commit" value="' v.xml

# --- (8) a bundle's version is checked; flags a bundle replay would ignore are refused ---------------
"$fb" verify --device cpu --model convt2d_mul_gap --cases 1 --strict-fp32 --atol 0 --rtol 0 --save-failures fails \
  >/dev/null 2>&1
real=$(ls -d fails/convt2d_mul_gap_fused_host_* 2>/dev/null | head -n 1)
check "a failing case wrote a repro bundle" test -n "$real" -a -f "$real/config.json"
for flag in "--model 44" "--model convt2d_mul_gap" "--case-seed 3" "--cases 5" "--seed 9" "--inputs normal" \
            "--params default" "--tensors $real/tensors.pt"; do
  # shellcheck disable=SC2086
  refused "a bundle replay with $flag (it would be ignored)" verify --config "$real/config.json" $flag
done
cp -r "$real" future
jq '.fusebench_bundle = 99' "$real/config.json" >future/config.json
refused "a bundle of version 99" verify --config future/config.json
jq '.fusebench_bundle = "2"' "$real/config.json" >future/config.json
refused "a bundle whose version is a string" verify --config future/config.json
jq '.case_seed = -1' "$real/config.json" >future/config.json
refused "a bundle whose case_seed is -1" verify --config future/config.json
jq '.case_seed = "12x"' "$real/config.json" >future/config.json
refused "a bundle whose case_seed is not decimal" verify --config future/config.json

# --- (10) '-' is stdout, for one output at most; JSON seeds are decimal strings or whole numbers -------
refused "verify --json - --junit -" verify --device cpu --model 44 --cases 1 --json - --junit -
refused "merge --out - --junit -" merge v.json --out - --junit -
refused "verify --json DIR" verify --device cpu --model 44 --cases 1 --json rep
for bad in '"-1"' '"1e3"' '" 7"' '"18446744073709551616"' '-1' '1.5' '"0x10"' 'null'; do
  jq ".seed = $bad" v.json >badseed.json
  refused "merge a verify file whose seed is $bad" merge badseed.json --out m.json
  jq ".environment.seed = $bad" run/results.json >badseed.json
  refused "merge a results file whose seed is $bad" merge badseed.json --out m.json
done
check "seeds are written as decimal strings" test "$(jq -r '.seed | type' v.json)" = string

# --- (4) a rerun never destroys the earlier complete results.json ----------------------------------
# A run long enough to interrupt: min-samples beats the time cap.
long="[{\"model\": \"44\", \"label\": \"a\", \"config\": $tiny}, {\"model\": \"44\", \"label\": \"b\", \"config\": $tiny}]"
"$fb" bench --device cpu --config "$long" --min-samples 100000 --time-cap 2 --out run >rerun.out 2>rerun.err &
pid=$!
for _ in $(seq 1 600); do  # up to 60 s for the rerun's first case
  grep -q '"implementation"' run/results.partial.json 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"; rc=$?
check "the interrupted rerun exits 130 (got $rc)" test "$rc" -eq 130
unchanged "the interrupted rerun" run/results.json run.copy.json
check "its partial file is beside it, marked incomplete" grep -q '"complete": false' run/results.partial.json
check "and says so: $(tail -n 1 rerun.err)" grep -q "results.partial.json marked incomplete, the earlier results.json kept" rerun.err
"$fb" bench "${fast[@]}" --config "$one" --seed 2 --out run >/dev/null 2>&1; rc=$?
check "a complete rerun exits 0 (rc $rc)" test "$rc" -eq 0
check "and replaces results.json" grep -q '"seed": "2"' run/results.json
check "leaving no partial file" test ! -e run/results.partial.json -a ! -e run/gbench.partial.json
cp run/results.json run.copy.json

# --- (7) exit classes of bad output places ---------------------------------------------------------
touch a_file
refused "bench --out EXISTING_FILE" bench "${fast[@]}" --config "$one" --out a_file
refused "bench --out /proc/x" bench "${fast[@]}" --config "$one" --out /proc/x
"$fb" report run/results.json --out rep2 --format charts >/dev/null 2>&1
ls rep2/charts >charts.before 2>/dev/null
refused "report --gnuplot /nonexistent" report run/results.json --out rep2 --gnuplot /nonexistent
ls rep2/charts >charts.after 2>/dev/null
check "report --gnuplot /nonexistent keeps the previous charts" cmp -s charts.before charts.after

exit $fail

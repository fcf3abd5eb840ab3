#!/usr/bin/env bash
# End-to-end checks of `fusebench history` on the repository's own results: the page parses as XML
# (python3's parser), holds one chart per (GPU, model) and every series of history.csv, names #15's
# steps, and bad or mixed input exits 2 with one line.
set -u
fb="$1"
src="$2"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp

"$fb" history "$src/reports" --out "$tmp/all" >"$tmp/all.log" 2>&1
check "history of reports/ exits 0" test $? -eq 0
for f in index.html history.md history.csv; do check "wrote $f" test -s "$tmp/all/$f"; done
check "#15's 1.13 ms -> 873 us step is printed" grep -q "NVIDIA H100 80GB HBM3 convt3d_bn_sub fused_cuda default: 40f9cd5-dirty..20dcfc3-dirty 1.13 ms -> 873.1 us" "$tmp/all.log"
check "the H100 and the H200 are both there" grep -q "NVIDIA H200" "$tmp/all/history.md"
check "older files say they have no source digest" grep -q "no source digest" "$tmp/all/history.md"

# Provenance: a copy of a committed run (the H200 baseline of 62520d2, kept as a fixture: a file from
# before digests) whose digest names no commit (its sources were edited) is
# shown as a mismatch, by history and by compare; compare's exit status does not change for it.
mkdir -p "$tmp/edited"
python3 - "$src/property_tests/fixtures/baseline-nvidia-h200-62520d2.json" "$tmp/edited/results.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["environment"]["source_digest"] = "0" * 64
doc["environment"]["date"] = "2099-01-01T00:00:00Z"  # another run than the committed one
json.dump(doc, open(sys.argv[2], "w"))
PY
"$fb" history "$tmp/edited" --repo "$src" --out "$tmp/edited-history" >"$tmp/edited.log" 2>&1
check "history of an edited run exits 0" test $? -eq 0
check "history shows the digest mismatch" grep -q "DIGEST MISMATCH: recorded 87e7d8a9b8f64190e2f725667b3b2f037904a3ea-dirty, and no commit of the repository has these sources" "$tmp/edited-history/history.md"
"$fb" compare "$src/property_tests/fixtures/baseline-nvidia-h200-62520d2.json" "$tmp/edited/results.json" --allow-different-gpu >"$tmp/compare.log" 2>&1
rc=$?
check "compare names both files' provenance" grep -q "^Provenance: BASE commit 87e7d8a9b8f64190e2f725667b3b2f037904a3ea-dirty: no source digest" "$tmp/compare.log"
# CUR lies outside the repository, BASE inside it: the repository holding BASE checks CUR too.
check "compare shows CUR's digest mismatch" grep -q "^Provenance: CUR commit .*DIGEST MISMATCH" "$tmp/compare.log"
check "compare's verdict is unchanged by it (the same timings: exit 0)" test "$rc" -eq 0

# The page: well-formed XML, one chart per (GPU, model) of the CSV, every series of the CSV drawn,
# no external reference (no script, no link, no http).
python3 - "$tmp/all/index.html" "$tmp/all/history.csv" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
page, table = sys.argv[1], sys.argv[2]
root = ET.parse(page).getroot()  # raises on anything not well-formed
svg = "{http://www.w3.org/2000/svg}"
xhtml = "{http://www.w3.org/1999/xhtml}"
charts = [e for e in root.iter(svg + "svg") if e.get("class") == "chart"]
drawn_charts = {(c.get("data-gpu"), c.get("data-model")) for c in charts}
rows = list(csv.DictReader(open(table, newline="")))
expected_charts = {(r["gpu"], r["model"]) for r in rows}
assert len(charts) == len(drawn_charts), "a (GPU, model) drawn twice"
assert drawn_charts == expected_charts, (drawn_charts ^ expected_charts)
for c in charts:
    # Every series of the CSV, with one marker per CSV row (point) in the time panel.
    want = {}
    for r in rows:
        if (r["gpu"], r["model"]) == (c.get("data-gpu"), c.get("data-model")):
            name = r["implementation"] + " " + r["config_label"] + ("" if r["config_variant"] == "1" else " (config %s)" % r["config_variant"])
            want[name] = want.get(name, 0) + 1
    drawn = {}
    for g in c.iter(svg + "g"):
        if g.get("class") == "series":
            drawn[g.get("data-series")] = sum(1 for e in g if e.get("class") == "point")
    assert drawn == want, (c.get("data-model"), drawn, want)
for tag in ("script", "link", "img", "iframe"):
    assert not list(root.iter(xhtml + tag)), tag
text = open(page).read()
assert "http://" not in text.replace("http://www.w3.org/", ""), "a network reference"
assert "https://" not in text, "a network reference"
steps = [tr for tr in root.iter(xhtml + "tr") if tr.get("class") in ("slower", "faster")]
assert any("convt3d_bn_sub" in "".join(tr.itertext()) and "1.13 ms" in "".join(tr.itertext()) for tr in steps), "no #15 step row"
print("page: %d charts, %d step rows" % (len(charts), len(steps)))
PY
check "index.html is well-formed, one chart per (GPU, model), every series, no network" test $? -eq 0

# One GPU only.
"$fb" history "$src/reports" --gpu nvidia-h200 --out "$tmp/h200" >/dev/null 2>&1
check "--gpu nvidia-h200 exits 0" test $? -eq 0
check "--gpu keeps only the H200" bash -c "! grep -q 'H100' '$tmp/h200/history.csv'"

# Bad usage and bad or mixed input: exit 2 and one line on stderr, nothing written.
one_line_exit2() {  # one_line_exit2 NAME ARGS...
  local name="$1"; shift
  local e rc
  e=$("$fb" "$@" 2>&1 >/dev/null)
  rc=$?
  check "$name exits 2 (got $rc)" test "$rc" -eq 2
  check "$name is one line" test "$(wc -l <<<"$e")" -eq 1
}
one_line_exit2 "missing path" history "$tmp/nothing-here" --out "$tmp/x"
printf '{"schema": "fusebench-results", "version": 2' >"$tmp/truncated.json"
one_line_exit2 "truncated results file" history "$tmp/truncated.json" --out "$tmp/x"
mkdir -p "$tmp/mixed"
cp "$src/reports/nvidia-h100-80gb-hbm3/results.json" "$tmp/mixed/a.json"
# The same run with one median changed (the first one, whatever the committed numbers are: 1 put
# before its digits).
sed '0,/"median": /s/"median": /"median": 1/' "$src/reports/nvidia-h100-80gb-hbm3/results.json" >"$tmp/mixed/b.json"
cmp -s "$tmp/mixed/a.json" "$tmp/mixed/b.json" && { echo "FAIL the altered copy equals the original"; fail=1; }
one_line_exit2 "two files holding one run with different contents" history "$tmp/mixed" --out "$tmp/x"
sed 's/"shard": "1\/1"/"shard": "1\/2"/' "$src/reports/nvidia-h100-80gb-hbm3/results.json" >"$tmp/shard.json"
one_line_exit2 "a shard" history "$tmp/shard.json" --out "$tmp/x"
one_line_exit2 "a JSON file that is not a results file, named" history "$src/reports/nvidia-h100-80gb-hbm3/gbench.json" --out "$tmp/x"
one_line_exit2 "an unknown GPU" history "$src/reports" --gpu nvidia-a100 --out "$tmp/x"
one_line_exit2 "a negative --min-effect" history "$src/reports" --min-effect -1 --out "$tmp/x"
one_line_exit2 "no --out" history "$src/reports"
check "nothing written for bad input" test ! -e "$tmp/x"
"$fb" history --help >"$tmp/help.txt" 2>&1
check "--help ends with examples" grep -q "Examples:" "$tmp/help.txt"

# Atomic output: a second render replaces the files and leaves no temporary behind.
"$fb" history "$src/reports" --out "$tmp/all" >/dev/null 2>&1
check "re-render exits 0" test $? -eq 0
check "no temporary files left" test -z "$(find "$tmp/all" -name '*.tmp')"
exit $fail

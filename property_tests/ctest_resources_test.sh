#!/usr/bin/env bash
# ctest's resource allocation for the GPU tests, as far as a machine without GPUs can check it:
#   1. in this build, every test named *Cuda_* (and fused_cuda_selftest) asks for RESOURCE_GROUPS
#      gpus:1, and no other test asks for anything;
#   2. scripts/gpu-resources writes a spec with one entry per GPU (nvidia-smi, or CUDA_VISIBLE_DEVICES);
#   3. ctest accepts that spec and runs such tests one per GPU at a time (a scratch project whose
#      tests record the GPU they were given and when they ran); a real GPU test binary turns its
#      allocation into CUDA_VISIBLE_DEVICES (property_tests/ctest_gpu_allocation.cpp).
# Usage: ctest_resources_test.sh BUILD_DIR REPO_ROOT GPU_TEST_BINARY
set -u
build="$1" root="$2" gpu_test_binary="$3"
. "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"  # fail, check NAME CONDITION..., $tmp

# 1. The properties of this build's tests, as ctest itself reports them (--show-only runs nothing).
# It reads a copy of the build's test files: even --show-only rewrites Testing/Temporary/LastTest.log,
# which the ctest running this test is writing (and scripts/test reads afterwards).
(cd "$build" && find . -name CTestTestfile.cmake | while read -r f; do
  mkdir -p "$tmp/tests/$(dirname "$f")" && cp "$f" "$tmp/tests/$f"
done)
ctest --test-dir "$tmp/tests" --show-only=json-v1 >"$tmp/tests.json" 2>"$tmp/show.err"
check "ctest --show-only=json-v1 lists the tests" test -s "$tmp/tests.json"
out=$(python3 - "$tmp/tests.json" <<'EOF'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
def groups(t):
    for p in t.get("properties", []):
        if p["name"] == "RESOURCE_GROUPS":
            return p["value"]
    return None
gpu = [t["name"] for t in tests if "Cuda_" in t["name"] or t["name"] == "fused_cuda_selftest"]
bad = []
for t in tests:
    g = groups(t)
    wants_gpu = t["name"] in gpu
    one_gpu = g == [{"requirements": [{".type": "gpus", "slots": 1}]}]
    if wants_gpu != one_gpu:
        bad.append(f"{t['name']}: RESOURCE_GROUPS {g}")
print(f"gpu_tests={len(gpu)} selftest={'fused_cuda_selftest' in gpu} bad={len(bad)}")
for b in bad[:10]:
    print("  " + b)
EOF
)
echo "$out"
check "the build has GPU tests" grep -Eq "gpu_tests=([1-9][0-9]*)" <<<"$out"
check "exactly the GPU tests take one GPU each" grep -q "bad=0" <<<"$out"
if [[ -f "$build/CMakeCache.txt" ]] && grep -q '^FUSEBENCH_HAVE_CUDA:INTERNAL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  check "fused_cuda_selftest is one of them" grep -q "selftest=True" <<<"$out"
fi

# 2. The spec: one entry per GPU that nvidia-smi lists (a stub here), or per CUDA_VISIBLE_DEVICES entry.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
echo "GPU 0: NVIDIA H200 (UUID: GPU-aaaa)"
echo "GPU 1: NVIDIA H200 (UUID: GPU-bbbb)"
EOF
chmod +x "$tmp/bin/nvidia-smi"
env -u CUDA_VISIBLE_DEVICES PATH="$tmp/bin:$PATH" bash "$root/scripts/gpu-resources" --out "$tmp/spec.json" 2>"$tmp/gen.err"
check "gpu-resources exits 0 with nvidia-smi's two GPUs" test $? -eq 0
check "it says so: $(cat "$tmp/gen.err")" grep -q "2 GPU(s), 1 slot(s) each" "$tmp/gen.err"
n=$(CUDA_VISIBLE_DEVICES=4,5,7 PATH="$tmp/bin:$PATH" bash "$root/scripts/gpu-resources" 2>/dev/null |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["local"][0]["gpus"]))')
check "under CUDA_VISIBLE_DEVICES=4,5,7 it lists 3 GPUs (got $n)" test "$n" = 3
env -u CUDA_VISIBLE_DEVICES PATH="/usr/bin:/bin" bash "$root/scripts/gpu-resources" >/dev/null 2>&1
check "without GPUs it refuses (exit 2)" test $? -eq 2
# The count scripts/gpu-gate spreads its ctest and verify stages over.
n=$(env -u CUDA_VISIBLE_DEVICES PATH="$tmp/bin:$PATH" bash "$root/scripts/gpu-resources" --print-count)
check "--print-count counts nvidia-smi's 2 GPUs (got $n)" test "$n" = 2
n=$(CUDA_VISIBLE_DEVICES=3 PATH="$tmp/bin:$PATH" bash "$root/scripts/gpu-resources" --print-count)
check "--print-count under CUDA_VISIBLE_DEVICES=3 says 1 (got $n)" test "$n" = 1
n=$(env -u CUDA_VISIBLE_DEVICES PATH="/usr/bin:/bin" bash "$root/scripts/gpu-resources" --print-count)
check "--print-count without GPUs says 0 (got $n)" test "$n" = 0

# 3. ctest with that spec: five one-GPU tests on two GPUs, -j 4. Each records its allocation and its
# start and end; two tests on one GPU must never overlap. Two of them are the real GPU test binary,
# which must say which CUDA_VISIBLE_DEVICES it took from the allocation.
mkdir -p "$tmp/project" "$tmp/log"
cat >"$tmp/probe.sh" <<'EOF'
#!/bin/sh
# probe.sh LOG_DIR NAME [COMMAND...]: records the GPU ctest gave this test, then runs COMMAND (or sleeps).
log="$1" name="$2"; shift 2
echo "$CTEST_RESOURCE_GROUP_0_GPUS $(date +%s.%N)" >"$log/$name.start"
if [ $# -gt 0 ]; then "$@" >"$log/$name.out" 2>&1; else sleep 1; fi
date +%s.%N >"$log/$name.end"
EOF
cat >"$tmp/project/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(resource_probe NONE)
enable_testing()
foreach(name probe_1 probe_2 probe_3)
  add_test(NAME \${name} COMMAND sh "$tmp/probe.sh" "$tmp/log" \${name})
  set_tests_properties(\${name} PROPERTIES RESOURCE_GROUPS "gpus:1")
endforeach()
foreach(name real_1 real_2)
  add_test(NAME \${name} COMMAND sh "$tmp/probe.sh" "$tmp/log" \${name} "$gpu_test_binary"
                                  "--gtest_filter=*Cuda_ReferenceMatchesFp64Oracle/convt2d_mul_gap")
  set_tests_properties(\${name} PROPERTIES RESOURCE_GROUPS "gpus:1")
endforeach()
EOF
cmake -S "$tmp/project" -B "$tmp/project/build" -G Ninja >"$tmp/configure.log" 2>&1
check "the scratch project configures" test $? -eq 0
ctest --test-dir "$tmp/project/build" --resource-spec-file "$tmp/spec.json" -j 4 >"$tmp/ctest.log" 2>&1
rc=$?
check "ctest accepts the spec and runs the tests (rc $rc)" test "$rc" -eq 0
out=$(python3 - "$tmp/log" <<'EOF'
import os, sys, re
d = sys.argv[1]
runs = []
for f in sorted(os.listdir(d)):
    if f.endswith(".start"):
        name = f[:-6]
        alloc, start = open(os.path.join(d, f)).read().split()
        end = float(open(os.path.join(d, name + ".end")).read())
        gpu = re.match(r"id:(\w+),slots:1", alloc).group(1)
        runs.append((name, gpu, float(start), end))
ids = sorted({r[1] for r in runs})
overlap = [(a[0], b[0]) for a in runs for b in runs
           if a[0] < b[0] and a[1] == b[1] and a[2] < b[3] and b[2] < a[3]]
print(f"runs={len(runs)} ids={','.join(ids)} overlapping={overlap}")
EOF
)
echo "$out"
check "all five ran, on GPUs 0 and 1 only" grep -q "runs=5 ids=0,1 " <<<"$out"
check "no two ran on one GPU at once" grep -q "overlapping=\[\]" <<<"$out"
for i in 1 2; do
  id=$(sed -n 's/^id:\([0-9]*\),.*/\1/p' "$tmp/log/real_$i.start")
  check "the GPU test binary took GPU $id as CUDA_VISIBLE_DEVICES=$id" \
    grep -q "ctest resource allocation: this test runs on CUDA_VISIBLE_DEVICES=$id$" "$tmp/log/real_$i.out"
done

if [ "$fail" -ne 0 ]; then echo "ctest_resources_test: FAILED"; exit 1; fi
echo "ctest_resources_test: all passed"

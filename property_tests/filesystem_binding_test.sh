#!/usr/bin/env bash
# No std::filesystem function an executable calls may be bound to libtorch's or c10's copy
# (reference/CMakeLists.txt says why: the pip libtorch 2.11's libtorch.so exports its own copies,
# and bound to its remove_all fusebench jumped to address 0). Binds every symbol at start-up
# (LD_BIND_NOW) and reads the dynamic linker's bindings (LD_DEBUG) for `EXECUTABLE --help`.
# Passes when libstdc++ comes ahead of libtorch in DT_NEEDED and every std::filesystem binding goes to
# libstdc++ or the executable itself; fails otherwise, or when there are no bindings to judge.
# Usage: filesystem_binding_test.sh EXECUTABLE...
set -uo pipefail
rc=0
for exe in "$@"; do
  # 1. libstdc++.so ahead of every libtorch/c10 library in DT_NEEDED (what makes 2 hold wherever
  #    libtorch exports such functions; Debian's libtorch 1.13 exports none, so only this part
  #    tells the old link from the new one on CI).
  needed="$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
  stdcxx="$(grep -n '^libstdc++\.so' <<<"$needed" | head -1 | cut -d: -f1)"
  torch="$(grep -n '^libtorch\|^libc10' <<<"$needed" | head -1 | cut -d: -f1)"
  if [[ -z "$stdcxx" || -z "$torch" || "$stdcxx" -gt "$torch" ]]; then
    echo "FAIL $exe: libstdc++ not ahead of libtorch in DT_NEEDED: $(tr '\n' ' ' <<<"$needed")"; rc=1
    continue
  fi
  # 2. Every std::filesystem binding to libstdc++ or the executable, none to libtorch/c10.
  bindings="$(LD_BIND_NOW=1 LD_DEBUG=bindings "$exe" --help 2>&1 >/dev/null |
              grep -F "binding file $exe [" | grep 'filesystem')"
  n="$(grep -c . <<<"$bindings")"
  bad="$(grep -E ' to [^ ]*(libtorch|libc10)[^ ]* ' <<<"$bindings")"
  if [[ -z "$bindings" ]]; then
    echo "FAIL $exe: no std::filesystem binding seen (LD_DEBUG unavailable, or nothing to judge)"; rc=1
  elif [[ -n "$bad" ]]; then
    echo "FAIL $exe: $(grep -c . <<<"$bad") of $n std::filesystem bindings go to libtorch/c10, e.g.:"
    head -3 <<<"$bad"; rc=1
  else
    targets="$(sed -E 's/.* to ([^ ]*) \[.*/\1/' <<<"$bindings" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
    echo "ok   $exe: $n std::filesystem bindings, to:$targets"
  fi
done
exit $rc

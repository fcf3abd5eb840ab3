#!/usr/bin/env bash
# scripts/sass-lint fences: a listed work counter (WORK_COUNTERS) is reported as one and passes,
# and the exemption needs every part of its name: a kernel matching only one part, with an
# unfenced global atomic, still fails the lint.
set -euo pipefail
lint="$(dirname "${BASH_SOURCE[0]}")/../scripts/sass-lint"
sass() {  # kernel names, one unfenced global atomic each (cuobjdump -sass layout)
  for k in "$@"; do
    printf '\t\tFunction : %s\n        /*0000*/   LDC R1, c[0x0][0x28] ;\n' "$k"
    printf '        /*0010*/   ATOMG.E.ADD.STRONG.GPU PT, R0, desc[UR4][R2.64], R5 ;\n        /*0020*/   EXIT ;\n'
  done
}
listed=_ZN2fb5fused21convt3d_ln_gelu_scale12_GLOBAL__N_117persistent_kernelEv
out="$(sass "$listed" | python3 "$lint" fences -)" || { echo "the listed work counter failed the lint:"; echo "$out"; exit 1; }
grep -q '^work counter (no release): ' <<<"$out" || { echo "not reported as a work counter:"; echo "$out"; exit 1; }
for partial in _ZN2fb5fused21convt3d_ln_gelu_scale12_GLOBAL__N_111pass_kernelEv \
               _ZN2fb5fused7other_m12_GLOBAL__N_117persistent_kernelEv; do
  if out="$(sass "$partial" | python3 "$lint" fences -)"; then
    echo "a kernel matching one part of a listed name passed unfenced: $partial"; echo "$out"; exit 1
  fi
  grep -q '^NO FENCE: ' <<<"$out" || { echo "no NO FENCE line for $partial:"; echo "$out"; exit 1; }
done
echo "work counters: the listed kernel passes and is reported; partial matches fail"

# Sourced by the shell tests of property_tests/ (". check_lib.sh"): `check NAME CONDITION...` runs the
# condition, prints "ok   NAME" or "FAIL NAME" and remembers a failure in $fail (the script ends with
# `exit $fail`); $tmp is a scratch folder, removed when the script exits.
fail=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

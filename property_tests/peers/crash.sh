# A peer helper that dies of SIGSEGV before saying anything (property_tests/peers_hostile_test.sh).
echo "fake: about to crash" >&2
kill -SEGV $$

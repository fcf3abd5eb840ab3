# A peer helper that never answers (property_tests/peers_hostile_test.sh): killed at --peer-timeout.
sleep 60

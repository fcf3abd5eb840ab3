# A peer helper that prints garbage instead of its records (property_tests/peers_hostile_test.sh).
echo 'Traceback? {"peer": eager'
echo "warning: something"

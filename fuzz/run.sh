#!/bin/sh
# run.sh - run fuzz targets one after another for a time each, logging to
# build/fuzz/logs/TARGET.log and keeping crashers in build/fuzz/art/TARGET/.
# Usage: sh fuzz/run.sh SECONDS TARGET...   (after make fuzz and fuzz/seed.sh)
# One process per target (libFuzzer's -jobs=1 would fork a worker logging to
# ./fuzz-0.log, which two parallel runs would share).
set -u
secs=$1; shift
for t in "$@"; do
	mkdir -p build/fuzz/art/$t build/fuzz/logs
	build/fuzz/fuzz_$t -runs=10000000 -max_total_time="$secs" -max_len=65536 \
		-timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix=build/fuzz/art/$t/ build/fuzz/corpus/$t >build/fuzz/logs/$t.log 2>&1
	echo "$t: exit $? $(grep -aE '^stat::number_of_executed_units' build/fuzz/logs/$t.log)"
done

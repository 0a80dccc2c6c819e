#!/bin/sh
# run.sh - run fuzz targets one after another, each until it has executed
# 10,000,001 inputs or SECONDS have passed, logging to
# build/fuzz/logs/TARGET.log and keeping crashers in build/fuzz/art/TARGET/.
# Usage: sh fuzz/run.sh SECONDS TARGET...   (after make fuzz and fuzz/seed.sh)
# One process at a time, niced (the machine is shared); libFuzzer's
# -jobs=1 would fork a worker logging to ./fuzz-0.log instead.  New inputs
# go to build/fuzz/corpus/TARGET; build/fuzz/corpus-old/TARGET (inputs
# kept from earlier campaigns), when present, is read too.
# RUNS=N overrides the execution target, MALLOC_MB=N libFuzzer's
# -malloc_limit_mb (1024): raise it to fuzz on past a known, reported
# huge allocation.
set -u
. fuzz/maxlen.sh
secs=$1; shift
for t in "$@"; do
	mkdir -p build/fuzz/art/$t build/fuzz/logs build/fuzz/corpus/$t
	old=
	[ -d build/fuzz/corpus-old/$t ] && old=build/fuzz/corpus-old/$t
	# shellcheck disable=SC2086
	nice -n 10 build/fuzz/fuzz_$t -runs="${RUNS:-10000001}" -max_total_time="$secs" \
		-max_len="$(fuzz_max_len $t)" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb="${MALLOC_MB:-1024}" \
		-print_final_stats=1 -artifact_prefix=build/fuzz/art/$t/ \
		build/fuzz/corpus/$t $old >build/fuzz/logs/$t.log 2>&1
	echo "$t: exit $? $(grep -aE '^stat::number_of_executed_units' build/fuzz/logs/$t.log)"
done

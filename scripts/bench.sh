#!/bin/sh
# bench.sh - `make bench`: throughput and memory, as ratios against
# baselines measured in the same run (these machines are noisy).
#
# Inputs are generated into bench-data/ (kept out of git).  Each figure
# is the median of RUNS runs.  BENCH_MB sets the Barman input size.
set -eu
BUILD=${BUILD:-build/rel}
BIN=$BUILD/bin
TOOLS=$BUILD/tools
RUNS=${RUNS:-5}
MB=${BENCH_MB:-256}
DATA=bench-data
mkdir -p "$DATA"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# secs CMD... : wall seconds of one run
secs() {
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s.%N)
	awk -v a="$s" -v b="$e" 'BEGIN {print b - a}'
}
med_secs() {
	i=0
	while [ $i -lt "$RUNS" ]; do secs "$@"; i=$((i + 1)); done | median
}
rss_kb() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
	else
		echo 0
	fi
}
calc() { awk "BEGIN {print $1}"; }
row() { printf '%-34s %14s %14s %8s %s\n' "$@"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "runs per figure: $RUNS (median)"
echo
"$TOOLS/packbench" --runs="$RUNS"
echo

if [ -x "$TOOLS/barmangen" ]; then
	in="$DATA/barman-${MB}M.bin"
	[ -f "$in" ] || "$TOOLS/barmangen" --seed 1 --size $((MB * 1048576)) -o "$in" >/dev/null
	out="$DATA/out.apc"
	bytes=$(stat -c %s "$in")
	cat_s=$(med_secs cat "$in")
	conv_s=$(med_secs "$BIN/apcconv" -q --overwrite "$in" -o "$out")
	scal_s=$(APC_NO_SIMD=1 med_secs "$BIN/apcconv" -q --overwrite "$in" -o "$out")
	cat_mbs=$(calc "$bytes / $cat_s / 1000000")
	conv_mbs=$(calc "$bytes / $conv_s / 1000000")
	scal_mbs=$(calc "$bytes / $scal_s / 1000000")
	row "figure" "measured" "baseline" "ratio" "goal"
	row "barman->apc ${MB} MiB (MB/s) vs cat" "$(printf %.1f "$conv_mbs")" "$(printf %.1f "$cat_mbs")" \
		"$(printf %.2f "$(calc "$conv_mbs / $cat_mbs")")" ">= 0.45"
	row "barman->apc vs forced scalar" "$(printf %.1f "$conv_mbs")" "$(printf %.1f "$scal_mbs")" \
		"$(printf %.2f "$(calc "$conv_mbs / $scal_mbs")")" ">= 3.5"
	small="$DATA/barman-100M.bin"
	[ -f "$small" ] || "$TOOLS/barmangen" --seed 2 --size $((100 * 1048576)) -o "$small" >/dev/null
	rss_big=$(rss_kb "$BIN/apcconv" -q --overwrite "$in" -o "$out")
	rss_small=$(rss_kb "$BIN/apcconv" -q --overwrite "$small" -o "$out")
	row "peak RSS ${MB} MiB input (KiB)" "$rss_big" "$rss_small" \
		"$(printf %.2f "$(calc "$rss_big / $rss_small")")" "<= 65536 KiB, ratio <= 1.1"
	rm -rf "$out"
else
	echo "(no barmangen: Barman figures skipped)"
fi

#!/usr/bin/env bats
# fastpath.bats - the fast paths change speed, never output: every input
# converts to the same bytes (and the same exit status and messages) with
# APC_NO_SIMD=1, which forces the scalar reference paths everywhere
# (packed integers, Barman counter rows, the writer's direct packing);
# and with APC_NO_THREADS=1, which reads and writes on the main thread.

load helpers

setup() {
	TMP="$(mktemp -d)"
	export SOURCE_DATE_EPOCH=1700000000
}

teardown() {
	rm -rf "$TMP"
}

# same_both IN NAME : convert IN with and without APC_NO_SIMD=1 and
# compare status, stderr and every file of the two captures.
same_both() {
	local in=$1 name=$2 s1=0 s2=0
	"$APC_BIN/apcconv" -q "$in" -o "$TMP/$name.fast.apc" 2>"$TMP/$name.fast.err" || s1=$?
	APC_NO_SIMD=1 "$APC_BIN/apcconv" -q "$in" -o "$TMP/$name.ref.apc" 2>"$TMP/$name.ref.err" || s2=$?
	[ "$s1" -eq "$s2" ] || { echo "$name: exit $s1 fast, $s2 reference"; return 1; }
	sed "s/\.fast\.apc/.X.apc/g" "$TMP/$name.fast.err" >"$TMP/$name.fast.err2"
	sed "s/\.ref\.apc/.X.apc/g" "$TMP/$name.ref.err" >"$TMP/$name.ref.err2"
	diff "$TMP/$name.ref.err2" "$TMP/$name.fast.err2" || { echo "$name: messages differ"; return 1; }
	# damaged input (exit 1) still keeps what came before the damage
	[ -d "$TMP/$name.fast.apc" ] || [ ! -e "$TMP/$name.ref.apc" ] || { echo "$name: only the reference wrote"; return 1; }
	[ -d "$TMP/$name.ref.apc" ] || [ ! -e "$TMP/$name.fast.apc" ] || { echo "$name: only the fast path wrote"; return 1; }
	if [ -d "$TMP/$name.ref.apc" ]; then
		for f in 0000000000 captured.xml events.xml session.xml; do
			cmp "$TMP/$name.ref.apc/$f" "$TMP/$name.fast.apc/$f" ||
				{ echo "$name: $f differs"; return 1; }
		done
	fi
}

@test "fast paths: every bundled Barman fixture converts to the same bytes as the reference" {
	n=0
	for f in "$APC_ROOT"/testdata/barman/*.bin; do
		same_both "$f" "$(basename "$f" .bin)"
		n=$((n + 1))
	done
	[ "$n" -ge 10 ]
}

@test "fast paths: the real Barman captures convert to the same bytes as the reference" {
	need_shared
	for f in "$SHARED"/barman/*.bin; do
		same_both "$f" "$(basename "$f" .bin)"
	done
}

@test "fast paths: generated Barman captures (both endians, 32/64-bit, custom charts) give the same bytes" {
	G="$APC_TOOLS/barmangen"
	[ -x "$G" ] || skip "barmangen not built"
	"$G" --seed 11 --size 3000000 --cores 4 --charts 2 --series 3 -o "$TMP/a.bin" >/dev/null
	"$G" --seed 12 --size 2000000 --endian big --bits 32 -o "$TMP/b.bin" >/dev/null
	"$G" --seed 13 --size 2000000 --circular -o "$TMP/c.bin" >/dev/null
	for x in a b c; do
		same_both "$TMP/$x.bin" "$x"
	done
}

@test "fast paths: LTT and TPTP inputs give the same bytes as the reference" {
	[ -x "$APC_TOOLS/lttgen" ] && [ -x "$APC_TOOLS/tptpgen" ] || skip "generators not built"
	"$APC_TOOLS/lttgen" --seed 5 --events 20000 -o "$TMP/ltt" >/dev/null
	"$APC_TOOLS/tptpgen" --seed 5 --calls 3000 -o "$TMP/t.trcxml" >/dev/null
	"$APC_TOOLS/tptpgen" --seed 5 --calls 3000 --binary -o "$TMP/t.trcbin" >/dev/null
	same_both "$TMP/ltt" ltt
	same_both "$TMP/t.trcxml" txml
	same_both "$TMP/t.trcbin" tbin
	if [ -d "$SHARED" ]; then
		same_both "$SHARED/ltt/smp_example" smp
		for f in "$SHARED"/tptp/*.trcxml; do
			same_both "$f" "$(basename "$f" .trcxml)"
		done
	fi
}

# same_threads IN NAME : convert IN with the reader and the data file's
# writes on threads of their own (the default) and with APC_NO_THREADS=1;
# compare status, messages (summary included), the figures of
# --stats=json (events per kind, time range: the reader thread tallies
# some batches) and every file.
same_threads() {
	local in=$1 name=$2 s1=0 s2=0
	"$APC_BIN/apcconv" --stats=json "$in" -o "$TMP/$name.thr.apc" >"$TMP/$name.thr.json" \
		2>"$TMP/$name.thr.err" || s1=$?
	APC_NO_THREADS=1 "$APC_BIN/apcconv" --stats=json "$in" -o "$TMP/$name.one.apc" \
		>"$TMP/$name.one.json" 2>"$TMP/$name.one.err" || s2=$?
	[ "$s1" -eq "$s2" ] || { echo "$name: exit $s1 threaded, $s2 not"; return 1; }
	python3 - "$TMP/$name.one.json" "$TMP/$name.thr.json" <<-'PY' || { echo "$name: stats differ"; return 1; }
	import json, sys
	a, b = (json.load(open(f)) for f in sys.argv[1:3])
	for k in ("seconds", "output", "threads", "cpu_user_s", "cpu_system_s", "max_rss_kib"):
	    a.pop(k, None); b.pop(k, None)
	assert a["events"] > 0 and a == b, (a, b)
	PY
	sed "s/\.thr\.apc/.X.apc/g; s/, [0-9.]* s\(;\|$\)/\1/" "$TMP/$name.thr.err" >"$TMP/$name.thr.err2"
	sed "s/\.one\.apc/.X.apc/g; s/, [0-9.]* s\(;\|$\)/\1/" "$TMP/$name.one.err" >"$TMP/$name.one.err2"
	diff "$TMP/$name.one.err2" "$TMP/$name.thr.err2" || { echo "$name: messages differ"; return 1; }
	[ -d "$TMP/$name.one.apc" ] || { echo "$name: no output"; return 1; }
	for f in 0000000000 captured.xml events.xml session.xml; do
		cmp "$TMP/$name.one.apc/$f" "$TMP/$name.thr.apc/$f" || { echo "$name: $f differs"; return 1; }
	done
}

@test "threads: reading ahead and writing from a helper thread change nothing, whole or damaged input" {
	for t in barmangen lttgen tptpgen; do [ -x "$APC_TOOLS/$t" ] || skip "$t not built"; done
	# 6 MB of Barman: many batches in flight, several 1 MiB write buffers
	"$APC_TOOLS/barmangen" --seed 21 --size 6000000 --cores 4 --charts 2 --series 2 --tasks 3 -o "$TMP/b.bin" >/dev/null
	same_threads "$TMP/b.bin" barman
	[ "$(stat -c %s "$TMP/barman.one.apc/0000000000")" -gt 2500000 ]
	# damaged: the error, the salvage and the loss report agree
	head -c 4000000 "$TMP/b.bin" >"$TMP/bt.bin"
	same_threads "$TMP/bt.bin" barman-truncated
	grep -q "offset" "$TMP/barman-truncated.thr.err"
	"$APC_TOOLS/lttgen" --seed 22 --events 100000 --cpus 4 -o "$TMP/ltt" >/dev/null
	same_threads "$TMP/ltt" ltt
	tar -C "$TMP" -czf "$TMP/ltt.tgz" ltt
	same_threads "$TMP/ltt.tgz" ltt-tarball
	"$APC_TOOLS/tptpgen" --seed 23 --calls 20000 --binary -o "$TMP/t.trcbin" >/dev/null
	same_threads "$TMP/t.trcbin" tptp-bin
	"$APC_TOOLS/tptpgen" --seed 24 --calls 20000 --binary --truncate 300000 -o "$TMP/tt.trcbin" >/dev/null
	same_threads "$TMP/tt.trcbin" tptp-bin-truncated
	grep -q "offset" "$TMP/tptp-bin-truncated.thr.err"
	"$APC_TOOLS/tptpgen" --seed 25 --calls 20000 -o "$TMP/t.trcxml" >/dev/null
	same_threads "$TMP/t.trcxml" tptp-xml
	# a capture as input: its reader reads ahead too, and the reorder
	# window sits between the threads
	cp -r "$TMP/barman.one.apc" "$TMP/cap.apc"
	same_threads "$TMP/cap.apc" apc
	cp -r "$TMP/cap.apc" "$TMP/cut.apc"
	truncate -s 2000000 "$TMP/cut.apc/0000000000"
	same_threads "$TMP/cut.apc" apc-truncated
	grep -q "offset" "$TMP/apc-truncated.thr.err"
	# and the threads did run (--stats=json says which)
	threads() { python3 -c 'import json, sys; t = json.load(sys.stdin)["threads"]; print(t["reader"], t["writer"])'; }
	if [ "$(nproc)" -gt 1 ]; then
		[ "$("$APC_BIN/apcconv" -q --stats=json "$TMP/ltt" -o "$TMP/s1.apc" | threads)" = "True True" ]
	fi
	[ "$(APC_NO_THREADS=1 "$APC_BIN/apcconv" -q --stats=json "$TMP/ltt" -o "$TMP/s2.apc" | threads)" = "False False" ]
	if command -v taskset >/dev/null; then
		# one CPU allowed: one thread
		[ "$(taskset -c 0 "$APC_BIN/apcconv" -q --stats=json "$TMP/ltt" -o "$TMP/s3.apc" | threads)" = "False False" ]
		cmp "$TMP/s2.apc/0000000000" "$TMP/s3.apc/0000000000"
	fi
}

@test "threads: input from a pipe converts as from the file" {
	[ -x "$APC_TOOLS/barmangen" ] || skip "barmangen not built"
	"$APC_TOOLS/barmangen" --seed 26 --size 2000000 -o "$TMP/p.bin" >/dev/null
	"$APC_BIN/apcconv" -q "$TMP/p.bin" -o "$TMP/file.apc"
	"$APC_BIN/apcconv" -q --stats=json -f barman - -o "$TMP/pipe.apc" <"$TMP/p.bin" >"$TMP/pipe.json"
	cmp "$TMP/file.apc/0000000000" "$TMP/pipe.apc/0000000000"
	# a pipe is read on the main thread: a quiet one must not hold up ^C
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["threads"]["reader"] is False' "$TMP/pipe.json"
}

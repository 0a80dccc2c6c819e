#!/usr/bin/env bats
# sweep.bats - reliability of apcconv on damaged, hostile and interrupted
# input (issue 7).
#
# Sweep: every sample in testdata/ and ../shared/testdata (skipped visibly
# when absent) is cut at several offsets and, separately, has a few bytes
# flipped (seeded, so runs repeat), then converted under `timeout 20`.
# Each run must end by itself (no crash, no hang) with status 0, 1 or 2;
# on 1 or 2 stderr names the damaged file, and on 1 also a byte offset
# (unless the format could not even be told); an output that exists must
# pass apcverify; and a run that wrote nothing leaves nothing behind (no
# NAME.apc, no hidden .NAME.apc.tmp-* sibling).
#
# Interrupts: SIGINT, SIGTERM and SIGHUP leave neither the capture nor its
# temporary sibling.  kill -9 cannot be caught: the documented guarantee
# is that the final NAME.apc never exists half-written; only the hidden
# temporary sibling .NAME.apc.tmp-XXXXXX may remain, and it is removed
# by hand (or by the next tmp cleaner).  A closed pipe downstream
# (`apcconv X -o - | head -c 100`) ends the run without a message.

load helpers

setup() {
	TMP="$(mktemp -d)"
	SWEEP_LOG="$TMP/sweep.log"
}

teardown() {
	[ -z "${feeder:-}" ] || kill "$feeder" 2>/dev/null || true
	rm -rf "$TMP"
}

# Offsets to cut a file of size $1 at: the first bytes (headers), and
# fractions of the way through (data).
cut_offsets() {
	local sz=$1
	echo 1 4 16 64 $((sz / 7)) $((sz / 3)) $((sz / 2)) $((sz * 5 / 6)) $((sz - 1))
}

# flip FILE SEED N : xor N seeded random bytes of FILE (in place) with
# non-zero values; prints the first offset flipped.
flip() {
	python3 - "$1" "$2" "$3" <<'EOF'
import random, sys
path, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = bytearray(open(path, "rb").read())
rnd = random.Random(seed)
offs = sorted(rnd.randrange(len(data)) for _ in range(n)) if data else []
for o in offs:
    data[o] ^= rnd.randrange(1, 256)
open(path, "wb").write(data)
print(offs[0] if offs else 0)
EOF
}

# no_leftovers DIR NAME : neither NAME nor a hidden .NAME.tmp-* in DIR.
no_leftovers() {
	local d=$1 n=$2
	[ ! -e "$d/$n" ] || { echo "left behind: $d/$n"; return 1; }
	if ls -a "$d" | grep -q "^\.$n\.tmp-"; then
		echo "temporary sibling left behind in $d: $(ls -a "$d" | grep "^\.$n\.tmp-")"
		return 1
	fi
}

# check_run LABEL INPUT_SHOWN : judge the last conversion ($rc, $TMP/err,
# $TMP/out/o.apc).  INPUT_SHOWN is the file name stderr must mention.
check_run() {
	local label=$1 shown=$2
	if [ "$rc" -eq 124 ] || [ "$rc" -ge 128 ]; then
		echo "$label: crashed or hung (status $rc)"; cat "$TMP/err"; return 1
	fi
	# Sanitizer reports exit 66/67 under tests/run.sh, but 1 when the
	# sweep runs without it: look for the report itself too.
	if grep -q "Sanitizer\|runtime error:" "$TMP/err"; then
		echo "$label: sanitizer report"; head -20 "$TMP/err"; return 1
	fi
	if [ "$rc" -gt 2 ]; then
		echo "$label: status $rc"; cat "$TMP/err"; return 1
	fi
	if [ "$rc" -ne 0 ]; then
		grep -qF "$shown" "$TMP/err" || { echo "$label: message does not name $shown:"; cat "$TMP/err"; return 1; }
		# No offset to name: an input that holds nothing a capture could
		# show (apcconv then writes none).  One no reader claims is 2.
		if [ "$rc" -eq 1 ] && ! grep -q "no counter values, samples or thread activity" "$TMP/err"; then
			grep -q "offset 0x[0-9a-f]" "$TMP/err" || { echo "$label: message has no offset:"; cat "$TMP/err"; return 1; }
		fi
	fi
	if [ -e "$TMP/out/o.apc" ]; then
		verify_output "$label" || return 1
		[ "$rc" -ne 2 ] || { echo "$label: status 2 left an output"; return 1; }
	else
		[ "$rc" -ne 0 ] || { echo "$label: status 0 without output"; return 1; }
	fi
	if ls -a "$TMP/out" | grep -q '^\.o\.apc\.tmp-'; then
		echo "$label: temporary sibling left behind"; return 1
	fi
	echo "$label rc=$rc" >>"$SWEEP_LOG"
}

# verify_output LABEL : apcverify the output: no error at all.  (A cut
# before the first data message once left a capture without data, which
# apcverify rejects [no-data]: apcconv now writes none.  Damaged strings
# in headers once reached the XML unchecked, and far-future timestamps
# once produced frames out of order: all fixed, and these sweeps are
# what would catch them again.)
verify_output() {
	local errs
	errs=$("$APC_BIN/apcverify" "$TMP/out/o.apc" 2>&1 | grep ': error: ' || true)
	[ -z "$errs" ] && return 0
	echo "$1: status $rc but the output fails apcverify:"
	echo "$errs" | head -5
	return 1
}

# kept_before_cut LABEL OFF SIZE : a cut past the middle of a sample
# (well into its data) that is reported as damage must still have
# converted what came before it.
kept_before_cut() {
	if [ "$rc" -eq 1 ] && [ "$2" -ge $(($3 / 2)) ] && [ "$3" -ge 4096 ] && [ ! -d "$TMP/out/o.apc" ]; then
		echo "$1: damage reported but nothing before it was kept:"; cat "$TMP/err"; return 1
	fi
}

# convert INPUT [ARGS] : apcconv INPUT into $TMP/out/o.apc, status in $rc.
convert() {
	rm -rf "$TMP/out"
	mkdir -p "$TMP/out"
	rc=0
	timeout -k 10 20 "$APC_BIN/apcconv" -q --overwrite "$@" -o "$TMP/out/o.apc" 2>"$TMP/err" || rc=$?
}

# sweep_file SAMPLE [FORMAT] : truncations and flips of a single file.
sweep_file() {
	local src=$1 from=${2:-} name sz off s first
	name=$(basename "$src")
	sz=$(stat -c %s "$src")
	mkdir -p "$TMP/w"
	for off in $(cut_offsets "$sz"); do
		[ "$off" -ge 1 ] && [ "$off" -lt "$sz" ] || continue
		head -c "$off" "$src" >"$TMP/w/$name"
		convert "$TMP/w/$name" ${from:+-f "$from"}
		check_run "$name cut at $off" "$name" || return 1
		kept_before_cut "$name cut at $off" "$off" "$sz" || return 1
	done
	for s in 1 2 3; do
		cp "$src" "$TMP/w/$name"
		chmod u+w "$TMP/w/$name"
		first=$(flip "$TMP/w/$name" "$s" $((s * 3)))
		convert "$TMP/w/$name" ${from:+-f "$from"}
		check_run "$name flipped (seed $s, first at $first)" "$name" || return 1
	done
}

# sweep_tree DIR MEMBER : truncations and flips of one member of a
# folder input (an .apc capture's 0000000000, an LTT cpu/0).
sweep_tree() {
	local src=$1 member=$2 name sz full off s first
	name=$(basename "$src")
	full=$(stat -c %s "$src/$member")
	sz=$full
	[ "$sz" -gt 300000 ] && sz=300000 # the sweep looks at the first part of big members
	for off in $(cut_offsets "$sz") flip1 flip2; do
		rm -rf "${TMP:?}/w"
		mkdir "$TMP/w"
		cp -r "$src" "$TMP/w/$name"
		chmod -R u+w "$TMP/w/$name"
		case $off in
		flip*)
			first=$(flip "$TMP/w/$name/$member" "${off#flip}" 5)
			convert "$TMP/w/$name"
			check_run "$name/$member flipped (seed ${off#flip}, first at $first)" "$name" || return 1
			;;
		*)
			[ "$off" -ge 1 ] || continue
			truncate -s "$off" "$TMP/w/$name/$member"
			convert "$TMP/w/$name"
			check_run "$name/$member cut at $off" "$name" || return 1
			kept_before_cut "$name/$member cut at $off" "$off" "$full" || return 1
			;;
		esac
	done
}

@test "sweep: project testdata (barman dumps) cut and flipped" {
	n=0
	for f in "$APC_ROOT"/testdata/*/*.bin; do
		sweep_file "$f"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
	# Cuts inside the data are reported as damage (status 1).
	grep -q 'rc=1' "$SWEEP_LOG"
}

@test "sweep: truncated project samples keep the data before the damage" {
	f="$APC_ROOT/testdata/barman/le64_linear_v3.bin"
	sz=$(stat -c %s "$f")
	head -c $((sz / 2)) "$f" >"$TMP/half.bin"
	convert "$TMP/half.bin"
	[ "$rc" -eq 1 ]
	grep -q "half.bin: offset 0x" "$TMP/err"
	"$APC_BIN/apcverify" -q "$TMP/out/o.apc"
	# Fewer messages than the whole file gives, but some.
	half=$("$APC_BIN/apcdump" "$TMP/out/o.apc" | wc -l)
	convert "$f"
	[ "$rc" -eq 0 ]
	whole=$("$APC_BIN/apcdump" "$TMP/out/o.apc" | wc -l)
	[ "$half" -gt 0 ]
	[ "$half" -lt "$whole" ]
}

@test "sweep: generated LTT, TPTP and Annotate traces cut and flipped" {
	"$APC_TOOLS/lttgen" -o "$TMP/gen_ltt" --seed 3 --events 400 --block-size 1024 >/dev/null
	sweep_tree "$TMP/gen_ltt" cpu/0
	"$APC_TOOLS/tptpgen" --seed 4 --threads 3 --calls 40 -o "$TMP/gen.trcxml" >/dev/null
	cp "$TMP/gen.trcxml" "$TMP/gen_src.trcxml"
	sweep_file "$TMP/gen_src.trcxml"
	"$APC_TOOLS/tptpgen" --binary --seed 5 --threads 3 --calls 40 -o "$TMP/gen_src.trcbin" >/dev/null
	sweep_file "$TMP/gen_src.trcbin"
}

# sweep_compressed PROG EXT: the LTT tarball and the Barman dump
# compressed by PROG, swept.
sweep_compressed() {
	$1 -c "$TMP/l.tar" >"$TMP/l.tar.$2"
	sweep_file "$TMP/l.tar.$2"
	$1 -c "$TMP/b.bin" >"$TMP/b.bin.$2"
	sweep_file "$TMP/b.bin.$2"
}

@test "sweep: an LTT tarball and a Barman dump in every compression installed, cut and flipped" {
	# several blocks of each compression (bzip2 -1: 100 kB, zstd: 128 KiB),
	# so a cut past the middle has whole blocks before it to keep
	"$APC_TOOLS/lttgen" -o "$TMP/ltt" --seed 3 --events 30000 >/dev/null
	tar -C "$TMP" -cf "$TMP/l.tar" ltt/info ltt/eventdefs ltt/control ltt/cpu
	"$APC_TOOLS/barmangen" -o "$TMP/b.bin" --seed 5 --records 10000 --buffer 1000000
	each_compressor sweep_compressed "gzip:gz" "bzip2 -1:bz2" "xz:xz" "xz --format=lzma:lzma" \
		"zstd -q:zst" "lz4 -q -B4:lz4" "$PYLZIP:lz"
}

@test "sweep: shared barman, TPTP and Annotate samples cut and flipped" {
	need_shared
	for f in "$SHARED"/barman/*.bin "$SHARED"/tptp/*.trcxml; do
		sweep_file "$f"
	done
	for f in "$SHARED"/annotate/v*/stream1.annotate.bin; do
		sweep_file "$f" annotate
	done
}

@test "sweep: shared .apc captures and LTT trace cut and flipped" {
	need_shared
	for d in "$SHARED"/apc/*.apc; do
		sweep_tree "$d" 0000000000
	done
	sweep_tree "$SHARED/ltt/smp_example" cpu/0
}

# ---- interrupts ----------------------------------------------------------

# start_blocked : apcconv reading a TPTP XML trace from a FIFO whose
# writer sent a header and some events and then waits; pid in $pid.
start_blocked() {
	mkfifo "$TMP/fifo"
	"$APC_TOOLS/tptpgen" --seed 7 --threads 2 --calls 2000 --bare -o "$TMP/t.xml" >/dev/null
	mkdir -p "$TMP/out"
	"$APC_BIN/apcconv" -q -f tptp-xml "$TMP/fifo" -o "$TMP/out/o.apc" 2>"$TMP/err" &
	pid=$!
	# The feeder writes, then keeps the FIFO open; it is bounded in
	# time, so a test whose apcconv died early fails instead of
	# hanging in open() or write().
	# (bats' descriptors go first: a feeder blocked opening the FIFO
	# must not hold them.)
	( timeout -k 10 30 head -c 200000 "$TMP/t.xml"; exec sleep 60 ) >/dev/null 2>&1 3>&- >"$TMP/fifo" &
	feeder=$!
	# Wait for the writer's temporary folder: the run is under way.
	for _ in $(seq 100); do
		ls -a "$TMP/out" | grep -q '^\.o\.apc\.tmp-' && break
		sleep 0.05
	done
}

finish_blocked() {
	kill "$feeder" 2>/dev/null || true
	wait "$feeder" 2>/dev/null || true
	rc=0
	wait "$pid" || rc=$?
}

# kill_blocked SIGNAL: a conversion blocked on its input, its hidden
# temporary folder made, is sent SIGNAL; $rc is then its exit status.
kill_blocked() {
	start_blocked
	ls -a "$TMP/out" | grep -q '^\.o\.apc\.tmp-'
	kill -"$1" "$pid"
	finish_blocked
}

# interrupted SIGNAL: on SIGNAL the conversion says it was interrupted,
# exits 2 and leaves nothing in its output folder.
interrupted() {
	kill_blocked "$1"
	echo "status $rc: $(cat "$TMP/err")"
	[ "$rc" -eq 2 ]
	grep -qi interrupted "$TMP/err"
	[ -z "$(ls -A "$TMP/out")" ]
}

@test "interrupt: SIGINT leaves no capture and no temporary folder" {
	interrupted INT
	no_leftovers "$TMP/out" o.apc
}

@test "interrupt: SIGTERM leaves no capture and no temporary folder" {
	interrupted TERM
}

@test "interrupt: SIGHUP (a closed terminal) leaves no capture and no temporary folder" {
	interrupted HUP
	no_leftovers "$TMP/out" o.apc
}

@test "interrupt: kill -9 never leaves a half-written NAME.apc (only a hidden temporary sibling)" {
	kill_blocked KILL
	[ "$rc" -eq 137 ]
	[ ! -e "$TMP/out/o.apc" ]
	# Whatever remains is hidden and named as the temporary of o.apc.
	for f in $(ls -A "$TMP/out"); do
		case $f in .o.apc.tmp-*) ;; *) echo "unexpected $f"; false ;; esac
	done
}

@test "pipe: apcconv X -o - | head -c 100 ends quietly" {
	"$APC_TOOLS/barmangen" -o "$TMP/big.bin" --seed 3 --records 200000 --size 8000000 >/dev/null
	set +e
	timeout -k 10 60 "$APC_BIN/apcconv" "$TMP/big.bin" -o - 2>"$TMP/err" | head -c 100 >"$TMP/head"
	st=("${PIPESTATUS[@]}")
	set -e
	[ "${st[0]}" -ne 124 ]
	[ "${st[0]}" -lt 128 ]
	[ "$(stat -c %s "$TMP/head")" -eq 100 ]
	[ ! -s "$TMP/err" ] || { cat "$TMP/err"; false; }
}

# ---- hostile input -------------------------------------------------------

laughs_dtd() {
	printf '<?xml version="1.0"?>\n<!DOCTYPE %s [\n <!ENTITY l0 "lol">\n' "$1"
	for i in 1 2 3 4 5 6 7 8 9; do
		printf ' <!ENTITY l%d "' $i
		for _ in 1 2 3 4 5 6 7 8 9 10; do printf '&l%d;' $((i - 1)); done
		printf '">\n'
	done
	printf ' <!ENTITY ext SYSTEM "file:///etc/passwd">\n]>\n'
}

@test "hostile: billion laughs and an external entity in TPTP XML" {
	{ laughs_dtd TRACE
	  printf '<TRACE><node nodeId="1" hostname="&l9;" time="1.0"/>\n'
	  printf '<threadStart threadId="1" time="1.5" threadName="&l9;"/>\n'
	  printf '<threadStart threadId="2" time="1.6" threadName="&ext;"/></TRACE>\n'; } >"$TMP/laughs.trcxml"
	convert "$TMP/laughs.trcxml" -f tptp-xml
	check_run laughs laughs.trcxml
	! grep -q "root:" "$TMP/err" || false
	if [ -d "$TMP/out/o.apc" ]; then
		[ "$(du -sk "$TMP/out/o.apc" | cut -f1)" -lt 10000 ]
		! grep -rq "root:" "$TMP/out/o.apc" || false
	fi
}

@test "hostile: entity declarations in captured.xml are refused, quickly" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/c.apc"
	cp "$TMP/c.apc/captured.xml" "$TMP/good_captured.xml"
	{ laughs_dtd captured
	  sed -e '1{/^<?xml/d}' -e 's/<target name="[^"]*"/<target name="\&l9;"/' "$TMP/c.apc/captured.xml"; } >"$TMP/cx"
	mv "$TMP/cx" "$TMP/c.apc/captured.xml"
	rc=0
	timeout -k 10 20 "$APC_BIN/apcverify" "$TMP/c.apc" >"$TMP/vout" 2>&1 || rc=$?
	[ "$rc" -eq 1 ]
	grep -q "captured.xml: error: .*entit" "$TMP/vout"
	convert "$TMP/c.apc"
	[ "$rc" -ne 0 ]
	[ "$rc" -ne 124 ]
	[ "$rc" -lt 128 ]
	grep -q "captured.xml" "$TMP/err"
	[ ! -e "$TMP/out/o.apc" ]
	rc=0
	timeout -k 10 20 "$APC_BIN/apcdump" --xml "$TMP/c.apc" >/dev/null 2>&1 || rc=$?
	[ "$rc" -ne 124 ]
	[ "$rc" -lt 128 ]
	# One small entity does not trip libxml2's limits: refused all the same.
	{ printf '<?xml version="1.0"?>\n<!DOCTYPE captured [ <!ENTITY x "y"> ]>\n'
	  sed -e '1{/^<?xml/d}' -e 's/<target name="[^"]*"/<target name="\&x;"/' "$TMP/good_captured.xml"; } >"$TMP/c.apc/captured.xml"
	convert "$TMP/c.apc"
	[ "$rc" -eq 1 ]
	grep -q "captured.xml declares XML entities (refused)" "$TMP/err"
	rc=0
	"$APC_BIN/apcverify" "$TMP/c.apc" >"$TMP/vout" 2>&1 || rc=$?
	[ "$rc" -eq 1 ]
	grep -q "captured.xml: error: declares XML entities (refused)" "$TMP/vout"
}

@test "hostile: entity expansion and deep nesting in LTT system.xml and eventdefs" {
	"$APC_TOOLS/lttgen" -o "$TMP/l" --seed 1 --events 100 --block-size 1024 >/dev/null
	{ laughs_dtd system; sed 's/node_name="[^"]*"/node_name="\&l9;"/' "$TMP/l/info/system.xml"; } >"$TMP/sx"
	cp "$TMP/sx" "$TMP/l/info/system.xml"
	{ laughs_dtd facility; printf '<facility name="&l9;">'; for _ in $(seq 5000); do printf '<struct>'; done; printf '</facility>\n'; } >"$TMP/l/eventdefs/deep.xml"
	convert "$TMP/l"
	[ "$rc" -ne 124 ]
	[ "$rc" -lt 128 ]
	[ ! -e "$TMP/out/o.apc" ] || [ "$(du -sk "$TMP/out/o.apc" | cut -f1)" -lt 10000 ]
}

@test "hostile: huge declared lengths in tiny files" {
	# An APC data file whose first frame claims 2^31-1 bytes.
	mkdir -p "$TMP/h.apc"
	printf '\377\377\377\177\001' >"$TMP/h.apc/0000000000"
	convert "$TMP/h.apc/0000000000" -f apc
	check_run "frame length 2^31-1" 0000000000
	[ "$rc" -ne 0 ]
	# An annotate stream whose first message body claims 2^32-1 bytes.
	{ printf 'ANNOTATE 4\n\052\0\0\0\052\0\0\0\0'; printf '\001\377\377\377\377hi'; } >"$TMP/h.ann"
	convert "$TMP/h.ann" -f annotate
	check_run "annotate body 2^32-1" h.ann
	[ "$rc" -eq 1 ]
	# A TPTP binary message claiming 2^32-1 bytes after a valid header.
	"$APC_TOOLS/tptpgen" --binary --seed 1 --threads 1 --calls 2 -o "$TMP/h.trcbin" >/dev/null
	printf '\003\361\377\377\377\377' >>"$TMP/h.trcbin"
	convert "$TMP/h.trcbin"
	check_run "tptp length 2^32-1" h.trcbin
	[ "$rc" -eq 1 ]
}

@test "hostile: barman and TPTP binary header words set near 2^32 and 2^64" {
	"$APC_TOOLS/tptpgen" --binary --seed 2 --threads 1 --calls 3 -o "$TMP/small.trcbin" >/dev/null
	mkdir "$TMP/v"
	# Every 4th byte of the first 512 of a barman dump, every byte of the
	# TPTP header and first messages: overwrite 4 or 8 bytes there with
	# 2^32-1, 2^32 or 2^64-1 (both byte orders are all-ones or symmetric).
	python3 - "$APC_ROOT/testdata/barman/le64_linear_v3.bin" "$TMP/small.trcbin" "$TMP/v" <<'EOF2'
import struct, sys
bar, tptp, out = sys.argv[1], sys.argv[2], sys.argv[3]
vals = [b"\xff" * 4, struct.pack("<Q", 1 << 32), b"\xff" * 8]
for name, path, offs in (("b", bar, range(0, 512, 4)), ("t", tptp, range(0, 64))):
    data = open(path, "rb").read()
    for o in offs:
        for i, v in enumerate(vals):
            d = bytearray(data)
            d[o:o + len(v)] = v
            open("%s/%s_%04d_%d" % (out, name, o, i), "wb").write(bytes(d[:len(data)]))
EOF2
	n=0
	for f in "$TMP"/v/*; do
		case $(basename "$f") in b_*) from=barman ;; *) from=tptp-bin ;; esac
		convert "$f" -f "$from"
		check_run "$(basename "$f")" "$(basename "$f")" || return 1
		n=$((n + 1))
	done
	[ "$n" -eq $((128 * 3 + 64 * 3)) ]
}

# ---- archives with escaping paths ------------------------------------------

@test "archive: absolute and .. members are skipped, never followed" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/good.apc"
	python3 - "$TMP" <<'EOF'
import io, sys, tarfile
tmp = sys.argv[1]
def add(t, name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
with tarfile.open(tmp + "/evil.tar", "w") as t:
    for leaf in ("0000000000", "captured.xml", "events.xml"):
        t.add(tmp + "/good.apc/" + leaf, arcname="good.apc/" + leaf)
    add(t, "../escape.txt", b"outside\n")
    add(t, "/tmp/apc-absolute-escape.txt", b"absolute\n")
    add(t, "good.apc/../../escape2.txt", b"outside\n")
# Only escaping copies of the data file: nothing usable may be found.
with tarfile.open(tmp + "/onlyevil.tar", "w") as t:
    data = open(tmp + "/good.apc/0000000000", "rb").read()
    add(t, "../0000000000", data)
    add(t, "/0000000000", data)
EOF
	mkdir "$TMP/work"
	cd "$TMP/work"
	convert "$TMP/evil.tar"
	[ "$rc" -eq 0 ]
	[ ! -e "$TMP/escape.txt" ]
	[ ! -e "$TMP/escape2.txt" ]
	[ ! -e /tmp/apc-absolute-escape.txt ]
	[ -z "$(ls -A "$TMP/work")" ]
	mv "$TMP/out/o.apc" "$TMP/fromtar.apc"
	convert "$TMP/good.apc"
	cmp "$TMP/out/o.apc/0000000000" "$TMP/fromtar.apc/0000000000"
	convert "$TMP/onlyevil.tar"
	[ "$rc" -ne 0 ]
	[ "$rc" -lt 128 ]
	[ ! -e "$TMP/out/o.apc" ]
	[ ! -e "$TMP/0000000000" ]
	[ ! -e /0000000000 ]
}

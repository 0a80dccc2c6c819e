#!/usr/bin/env bats
# tptp.bats - the TPTP binary reader (.trcbin) on damaged traces made by
# tools/tptpgen: where a trace ends early, and lengths that do not fit.

load helpers

setup() {
	TMP="$(mktemp -d)"
	need_python
	[ -x "$APC_TOOLS/tptpgen" ] || skip "tptpgen not built"
	"$APC_TOOLS/tptpgen" --seed 5 --threads 3 --calls 400 --binary -o "$TMP/t1.trcbin" >/dev/null
}

# msgs FILE: each message of a little-endian .trcbin whose lengths do not
# count the header (tptpgen's default): "offset id length", one a line.
msgs() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
p = struct.unpack_from("<I", d, 8)[0]
while p + 6 <= len(d):
    i, n = struct.unpack_from("<HI", d, p)
    print(p, i, n)
    p += 6 + n
EOF
}

# events: the event count of the summary line in $output.
events() {
	sed -n 's/.* bytes in, \([0-9]*\) events,.*/\1/p' <<<"$output"
}

# ---- a trace that ends without its traceEnd ----------------------------------

@test "tptp-bin: a trace cut at a message boundary (no traceEnd) is damage at its end, the data before kept" {
	run apcconv "$TMP/t1.trcbin" -o "$TMP/whole.apc"
	[ "$status" -eq 0 ]
	[ "$(events)" -eq 1954 ]
	# cuts at message boundaries: the audit's four, and their event counts
	for ce in 38052:348 44696:403 54964:483 212004:1726; do
		c=${ce%:*} e=${ce#*:}
		msgs "$TMP/t1.trcbin" | grep -q "^$c " # a boundary
		head -c "$c" "$TMP/t1.trcbin" >"$TMP/cut.trcbin"
		rm -rf "$TMP/cut.apc"
		run apcconv "$TMP/cut.trcbin" -o "$TMP/cut.apc"
		echo "$output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"apcconv: $TMP/cut.trcbin: offset $(printf 0x%x "$c"): the trace ends without its traceEnd (cut short?); kept everything before it"* ]]
		[ "$(events)" -eq "$e" ]
		[[ "$output" == *"tptp calls still open at the end"* ]]
		apcverify -q "$TMP/cut.apc"
	done
}

@test "tptp-bin: cut after traceEnd, or a fragment with no traceStart, ends where it ends (exit 0), as in XML" {
	# the last two messages are traceEnd (1006) and agentDestroy (1004)
	msgs "$TMP/t1.trcbin" | tail -2 | awk '{print $2}' | tr '\n' ' ' | grep -qx '1006 1004 '
	last=$(msgs "$TMP/t1.trcbin" | tail -1 | cut -d' ' -f1)
	head -c "$last" "$TMP/t1.trcbin" >"$TMP/noad.trcbin"
	run apcconv "$TMP/noad.trcbin" -o "$TMP/noad.apc"
	[ "$status" -eq 0 ]
	[ "$(events)" -eq 1954 ]
	# traceStart (1005) taken out, then cut at a message boundary
	# mid-trace: a fragment claims no beginning, so no end is missing
	python3 - "$TMP/t1.trcbin" "$TMP/frag.trcbin" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
p, out = 12, bytearray(d[:12])
while p + 6 <= len(d) and p < 38052:
    i, n = struct.unpack_from("<HI", d, p)
    if i != 1005:
        out += d[p:p + 6 + n]
    p += 6 + n
assert b"\xed\x03" not in bytes(out[12:14])
open(sys.argv[2], "wb").write(out)
EOF
	! msgs "$TMP/frag.trcbin" | grep -q ' 1005 ' || false
	run apcconv "$TMP/frag.trcbin" -o "$TMP/frag.apc"
	[ "$status" -eq 0 ]
	[ "$(events)" -eq 348 ]
	# the XML reader: a bare stream without traceStart, cut at an
	# element boundary, is the same fragment: exit 0
	"$APC_TOOLS/tptpgen" --seed 5 --threads 3 --calls 400 --bare -o "$TMP/t1.trcxml" >/dev/null
	grep -v '<traceStart' "$TMP/t1.trcxml" | head -n 400 >"$TMP/frag.trcxml"
	run apcconv "$TMP/frag.trcxml" -o "$TMP/fragx.apc"
	[ "$status" -eq 0 ]
}

@test "tptp-bin: a trace restarted after its traceEnd and cut is damage; one cut before any data too" {
	# a second traceStart after the traceEnd, then the cut: the trace
	# that started last did not end
	python3 - "$TMP/t1.trcbin" "$TMP/re.trcbin" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
# traceStart: trace id, agent id, time, collation: 1 + 1 + 8 + 1 bytes
ts = struct.pack("<HI", 1005, 11) + b"\0\0" + struct.pack("<Q", 0) + b"\0"
open(sys.argv[2], "wb").write(d + ts)
EOF
	run apcconv "$TMP/re.trcbin" -o "$TMP/re.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"re.trcbin: offset $(printf 0x%x $(($(stat -c %s "$TMP/t1.trcbin") + 17))): the trace ends without its traceEnd"* ]]
	[ "$(events)" -eq 1954 ]
	# cut right after traceStart and the option: nothing to convert, and
	# the cut named
	opt=$(msgs "$TMP/t1.trcbin" | awk '$2 == 1008 {print $1 + 6 + $3; exit}')
	head -c "$opt" "$TMP/t1.trcbin" >"$TMP/hdr.trcbin"
	run apcconv "$TMP/hdr.trcbin" -o "$TMP/hdr.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"hdr.trcbin: offset $(printf 0x%x "$opt"): the trace ends without its traceEnd"* ]]
}

@test "tptp-bin: whole generated traces still convert with exit 0 and no damage" {
	# one trace in its four encodings gives the same capture
	for e in "" --big-endian --len-incl-header "--big-endian --len-incl-header --platform32"; do
		# shellcheck disable=SC2086
		"$APC_TOOLS/tptpgen" --seed 5 --threads 3 --calls 400 --binary $e -o "$TMP/e.trcbin" >/dev/null
		rm -rf "$TMP/e.apc"
		run apcconv "$TMP/e.trcbin" -o "$TMP/e.apc"
		[ "$status" -eq 0 ]
		[ "$(events)" -eq 1954 ]
		apcdump "$TMP/e.apc" | grep -v ' summary ' | awk '{ $1 = $2 = ""; print }' >"$TMP/e.dump$e"
		cmp "$TMP/e.dump" "$TMP/e.dump$e"
	done
	for a in "--seed 1" "--seed 2 --big-endian" "--seed 3 --len-incl-header" "--seed 4 --platform32 --mhz" \
		"--seed 6 --monitor-stacks" "--seed 7 --leave-open" "--seed 8 --threads 6 --calls 900"; do
		# shellcheck disable=SC2086
		"$APC_TOOLS/tptpgen" $a --binary -o "$TMP/w.trcbin" >/dev/null
		rm -rf "$TMP/w.apc"
		run apcconv "$TMP/w.trcbin" -o "$TMP/w.apc"
		echo "$a: $output"
		[ "$status" -eq 0 ]
		[[ "$output" != *offset* ]]
		[[ "$output" != *"bytes past the known fields"* ]]
		[[ "$output" != *"skipped"* ]]
		apcverify -q "$TMP/w.apc"
	done
}

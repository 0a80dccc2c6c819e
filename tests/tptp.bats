#!/usr/bin/env bats
# tptp.bats - the TPTP binary reader (.trcbin) on damaged traces made by
# tools/tptpgen: where a trace ends early, and lengths that do not fit;
# and a bare XML stream that ends early.

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

@test "tptp-xml: a bare stream with a traceStart cut at an element boundary is damage at its end, as in binary" {
	"$APC_TOOLS/tptpgen" --seed 5 --threads 3 --calls 400 --bare -o "$TMP/t1.trcxml" >/dev/null
	run apcconv "$TMP/t1.trcxml" -o "$TMP/whole.apc"
	[ "$status" -eq 0 ]
	[ "$(events)" -eq 1954 ]
	# the first 1200 lines: whole elements, the traceStart among them
	head -n 1200 "$TMP/t1.trcxml" >"$TMP/cut.trcxml"
	grep -q '<traceStart' "$TMP/cut.trcxml"
	size=$(stat -c %s "$TMP/cut.trcxml")
	run apcconv "$TMP/cut.trcxml" -o "$TMP/cut.apc"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TMP/cut.trcxml: offset $(printf 0x%x "$size"): the trace ends without its traceEnd (cut short?); kept everything before it" ]
	[ "$(events)" -gt 0 ]
	[ -d "$TMP/cut.apc" ]
	# cut after the traceEnd (agentDestroy lost): whole, exit 0
	grep -v '<agentDestroy' "$TMP/t1.trcxml" >"$TMP/noad.trcxml"
	run apcconv "$TMP/noad.trcxml" -o "$TMP/noad.apc"
	[ "$status" -eq 0 ]
	[ "$(events)" -eq 1954 ]
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

# ---- lengths that do not fit their message ---------------------------------

# patch IN OUT: OUT is IN after the Python on stdin has changed the
# bytearray d (msgs(d) lists (offset, id, length) as msgs does).
patch() {
	python3 - "$1" "$2" <<<"import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
def msgs(d):
    p, out = struct.unpack_from('<I', d, 8)[0], []
    while p + 6 <= len(d):
        i, n = struct.unpack_from('<HI', d, p)
        out.append((p, i, n))
        p += 6 + n
    return out
$(cat)
open(sys.argv[2], 'wb').write(d)"
}

@test "tptp-bin: a damaged length is damage at its message, not 65 KB skipped (the audit's byte 3885)" {
	patch "$TMP/t1.trcbin" "$TMP/lf.trcbin" <<<"d[3885] ^= 0xff"
	msgs "$TMP/t1.trcbin" | grep -qx '3882 1015 78'
	run apcconv "$TMP/lf.trcbin" -o "$TMP/lf.apc"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"apcconv: $TMP/lf.trcbin: offset 0xf2a: methodEntry length 65358, but its fields end at 78 and the next message follows them (damaged length?); kept everything before it"* ]]
	[[ "$output" != *"bytes past the known fields"* ]]
	[[ "$output" != *"skipped"* ]]
	# kept: what the trace cut at that message gives
	kept=$(events)
	[ "$kept" -eq 52 ]
	head -c 3882 "$TMP/t1.trcbin" >"$TMP/c.trcbin"
	run apcconv "$TMP/c.trcbin" -o "$TMP/c.apc"
	[ "$(events)" -eq "$kept" ]
	apcverify -q "$TMP/lf.apc"
	# the same with lengths that count the header: the fields end at 84
	"$APC_TOOLS/tptpgen" --seed 5 --threads 3 --calls 400 --binary --len-incl-header -o "$TMP/i.trcbin" >/dev/null
	patch "$TMP/i.trcbin" "$TMP/li.trcbin" <<<"d[3885] ^= 0xff"
	run apcconv "$TMP/li.trcbin" -o "$TMP/li.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"li.trcbin: offset 0xf2a: methodEntry length 65364, but its fields end at 84 and the next message follows them"* ]]
	# and a length too short for the fields
	patch "$TMP/t1.trcbin" "$TMP/sh.trcbin" <<<"d[3884] = 70"
	run apcconv "$TMP/sh.trcbin" -o "$TMP/sh.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"sh.trcbin: offset 0xf2a: methodEntry length 70, but its fields end at 78 and the next message follows them (damaged length?)"* ]]
	[ "$(events)" -eq "$kept" ]
}

@test "tptp-bin: every length-byte flip of messages 3-80 is damage at the flipped message, the messages before kept" {
	# the events each cut at a message boundary keeps
	msgs "$TMP/t1.trcbin" | sed -n '3,80p' >"$TMP/m"
	while read -r off id len; do
		head -c "$off" "$TMP/t1.trcbin" >"$TMP/c.trcbin"
		run apcconv "$TMP/c.trcbin" -o "$TMP/c.apc"
		rm -rf "$TMP/c.apc"
		echo "$off $(events)" >>"$TMP/kept"
	done <"$TMP/m"
	n=0
	while read -r off id len; do
		want=$(awk -v o="$off" '$1 == o {print $2}' "$TMP/kept")
		for b in 2 3 4 5; do
			for x in 255 1; do
				patch "$TMP/t1.trcbin" "$TMP/f.trcbin" <<<"d[$off + $b] ^= $x"
				run apcconv "$TMP/f.trcbin" -o "$TMP/f.apc"
				if [ "$status" -ne 1 ] || [[ "$output" != *"f.trcbin: offset $(printf 0x%x "$off"): "* ]] ||
					[ "$(events)" != "$want" ]; then
					echo "message at $off (id $id, length $len), byte $b ^ $x, want $want events:"
					echo "$output"
					false
				fi
				rm -rf "$TMP/f.apc"
				n=$((n + 1))
			done
		done
	done <"$TMP/m"
	[ "$n" -eq 624 ]
}

@test "tptp-bin: a newer writer's added fields, and unknown messages, are still skipped by length and counted (exit 0)" {
	run apcconv "$TMP/t1.trcbin" -o "$TMP/t1.apc"
	apcdump "$TMP/t1.apc" | grep -v ' summary ' | awk '{ $1 = $2 = ""; print }' >"$TMP/t1.dump"
	# every methodEntry 8 bytes longer (a Long more: 0, or not), the
	# first methodExit 3 bytes; unknown messages (system 7, data 1500
	# and 2000, three in a row) after the 21st message
	patch "$TMP/t1.trcbin" "$TMP/x.trcbin" <<'PY'
out = bytearray(d[:12])
nx = 0
for k, (p, i, n) in enumerate(msgs(d)):
    body = bytes(d[p + 6:p + 6 + n])
    if i == 1015:
        body += (b"\0" * 8) if k % 2 else struct.pack("<Q", 0x1234567890abcdef)
    if i == 1016 and nx == 0:
        body += b"\x01\x02\x03"
        nx = 1
    out += struct.pack("<HI", i, len(body)) + body
    if k == 20:
        for u, ln in ((7, 5), (1500, 0), (2000, 40)):
            out += struct.pack("<HI", u, ln) + b"\xaa" * ln
d = out
PY
	entries=$(msgs "$TMP/t1.trcbin" | awk '$2 == 1015' | wc -l)
	run apcconv "$TMP/x.trcbin" -o "$TMP/x.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(events)" -eq 1954 ]
	[[ "$output" == *"tptp binary methodEntry messages with bytes past the known fields (not read): $entries,"* ]]
	[[ "$output" == *"tptp binary methodExit messages with bytes past the known fields (not read): 1,"* ]]
	[[ "$output" == *"tptp binary system message 7: 1"* ]]
	[[ "$output" == *"tptp binary message id 1500 (skipped): 1"* ]]
	[[ "$output" == *"tptp binary message id 2000 (skipped): 1"* ]]
	apcdump "$TMP/x.apc" | grep -v ' summary ' | awk '{ $1 = $2 = ""; print }' | cmp - "$TMP/t1.dump"
}

@test "tptp-bin: the last message with 1 to 9 bytes added is a newer writer's, not a damaged length (exit 0)" {
	# The file then ends inside what would be a header after its
	# fields: that is no message, so no proof the length is wrong.
	run apcconv "$TMP/t1.trcbin" -o "$TMP/t1.apc"
	[ "$status" -eq 0 ]
	for k in 1 4 5 6 9; do
		patch "$TMP/t1.trcbin" "$TMP/x$k.trcbin" <<PY
p, i, n = list(msgs(d))[-1]
assert i == 1004
d = d[:p] + struct.pack("<HI", i, n + $k) + d[p + 6:] + b"\x07" * $k
PY
		run apcconv "$TMP/x$k.trcbin" -o "$TMP/x$k.apc"
		echo "$k: $output"
		[ "$status" -eq 0 ]
		[ "$(events)" -eq 1954 ]
		[[ "$output" == *"tptp binary agentDestroy messages with bytes past the known fields (not read): 1"* ]]
	done
}

@test "tptp-bin: an unknown message whose length leads nowhere, id 0 and ids past 32767 are out of step: damage there" {
	# an unknown id (1500) whose length misses the next message
	patch "$TMP/t1.trcbin" "$TMP/u.trcbin" <<'PY'
p = msgs(d)[20][0]
d[p:p] = struct.pack("<HI", 1500, 9) + b"\xaa" * 8
PY
	off=$(msgs "$TMP/t1.trcbin" | sed -n 21p | cut -d' ' -f1)
	run apcconv "$TMP/u.trcbin" -o "$TMP/u.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"u.trcbin: offset $(printf 0x%x "$off"): message id 1500 (unknown) of length 9 is not followed by another message: the stream is out of step here (damaged?); kept everything before it"* ]]
	# zero bytes after the whole trace (a preallocated file's tail)
	cp "$TMP/t1.trcbin" "$TMP/z.trcbin"
	head -c 64 /dev/zero >>"$TMP/z.trcbin"
	run apcconv "$TMP/z.trcbin" -o "$TMP/z.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"z.trcbin: offset $(printf 0x%x "$(stat -c %s "$TMP/t1.trcbin")"): message id 0 is not one a writer uses (1..32767): the stream is out of step here (damaged?); kept everything before it"* ]]
	[ "$(events)" -eq 1954 ]
	# an id's high byte flipped: 1015 ^ 0xff00
	off=$(msgs "$TMP/t1.trcbin" | sed -n 40p | cut -d' ' -f1)
	patch "$TMP/t1.trcbin" "$TMP/h.trcbin" <<<"d[$off + 1] ^= 0xff"
	run apcconv "$TMP/h.trcbin" -o "$TMP/h.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"h.trcbin: offset $(printf 0x%x "$off"): message id 64"*" is not one a writer uses (1..32767)"* ]]
}

@test "tptp-xml: UTF-16 XML is told as such with the iconv line that converts it, which then converts whole" {
	command -v iconv >/dev/null || skip "no iconv"
	"$APC_TOOLS/tptpgen" --seed 5 --threads 2 --calls 100 -o "$TMP/t.xml" >/dev/null
	apcconv -q "$TMP/t.xml" -o "$TMP/t.apc"
	apcdump "$TMP/t.apc" >"$TMP/t.txt"
	iconv -f UTF-8 -t UTF-16 "$TMP/t.xml" >"$TMP/bom.xml"     # with a byte-order mark
	iconv -f UTF-8 -t UTF-16LE "$TMP/t.xml" >"$TMP/le.xml"    # without
	iconv -f UTF-8 -t UTF-16BE "$TMP/t.xml" >"$TMP/be.xml"
	for f in bom le be; do
		conv 1 "$TMP/$f.xml" -o "$TMP/$f.apc"
		[[ "${lines[0]}" == "apcconv: $TMP/$f.xml: offset 0x0: UTF-16 ("*"-endian) XML, which is not read here: convert it to UTF-8 first (iconv -f UTF-16"?"E -t UTF-8; an encoding its <?xml?> line names must then say UTF-8)" ]]
		[ ! -e "$TMP/$f.apc" ]
		enc=$(sed -n 's/.*(iconv -f \(UTF-16[LB]E\) -t UTF-8.*/\1/p' <<<"${lines[0]}")
		iconv -f "$enc" -t UTF-8 "$TMP/$f.xml" >"$TMP/$f.8.xml"
		conv 0 "$TMP/$f.8.xml" -o "$TMP/$f.8.apc"
		apcdump "$TMP/$f.8.apc" | cmp - "$TMP/t.txt"
	done
	# libxml2's two-line message (the bytes that are not UTF-8) is one line
	{ head -c 300 "$TMP/t.xml"; printf '\376\377'; tail -c +301 "$TMP/t.xml"; } >"$TMP/mid.xml"
	conv 1 "$TMP/mid.xml" -o "$TMP/mid.apc"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *": not well-formed XML: input is not proper UTF-8, indicate encoding !; Bytes: 0xFE 0xFF "*"; kept everything before it" ]]
}

@test "tptp-bin: strings in the encoding system message 1 names are made UTF-8, as the XML twin's are" {
	name=$(printf 'Proc\351\301\322')
	for enc in ISO-8859-1 KOI8-R; do
		for form in xml trcbin; do
			"$APC_TOOLS/tptpgen" --seed 2 --threads 2 --calls 20 --encoding "$enc" --process-name "$name" \
				$([ $form = trcbin ] && echo --binary) -o "$TMP/e.$form" >/dev/null
			conv 0 "$TMP/e.$form" -o "$TMP/e.$form.apc" --overwrite
			apcdump "$TMP/e.$form.apc" | grep -o 'thread_name *ts=0 tid=4242 name=".*"' >"$TMP/$form.name"
		done
		cmp "$TMP/xml.name" "$TMP/trcbin.name"
		want=$(python3 -c 'import sys; print(b"Proc\xe9\xc1\xd2".decode(sys.argv[1]))' "$enc")
		grep -qF "name=\"$want\"" "$TMP/trcbin.name"
	done
	# Java's name for it
	"$APC_TOOLS/tptpgen" --seed 2 --threads 2 --calls 20 --encoding ISO8859_1 --process-name "$name" --binary -o "$TMP/j.trcbin" >/dev/null
	conv 0 "$TMP/j.trcbin" -o "$TMP/j.apc"
	apcdump "$TMP/j.apc" | grep -qF 'name="Procé'
	# a name iconv does not know: the bytes as they are, counted
	"$APC_TOOLS/tptpgen" --seed 2 --threads 2 --calls 20 --encoding NO-SUCH-CODE --process-name "$name" --binary -o "$TMP/n.trcbin" >/dev/null
	run apcconv "$TMP/n.trcbin" -o "$TMP/n.apc" --stats=json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"tptp binary encoding NO-SUCH-CODE, which iconv does not know (strings kept as bytes)":1'* ]]
	apcdump "$TMP/n.apc" | grep -qF 'tid=4242 name="Proc\xe9\xc1\xd2"' # (apcdump shows bytes not UTF-8 so)
	# a byte the encoding has no character for: U+FFFD, counted
	"$APC_TOOLS/tptpgen" --seed 2 --threads 2 --calls 20 --encoding EUC-JP --process-name "$(printf 'P\377q')" --binary -o "$TMP/b.trcbin" >/dev/null
	run apcconv "$TMP/b.trcbin" -o "$TMP/b.apc" --stats=json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"tptp binary strings with bytes their encoding has no character for (each made U+FFFD)":1'* ]]
	apcdump "$TMP/b.apc" | grep -qF 'name="P�q"'
}

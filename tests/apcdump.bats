#!/usr/bin/env bats
# apcdump.bats - apcdump on the real gatord captures (skipped when
# ../shared/testdata is absent), its filters and formats, and bad input.

load helpers

CAPS="v68_nonroot.apc v68_sleep.apc sleep_counters.apc v68_nonroot_annotate.apc"

# Frames in a data file, counted from the length words alone (python3),
# independently of the C reader.
count_frames() {
	python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
o = n = 0
while o < len(d):
    o += 4 + struct.unpack_from("<i", d, o)[0]
    n += 1
print(n)' "$1"
}

@test "apcdump lists every real capture with exit 0, text and JSON agree" {
	need_shared
	for c in $CAPS; do
		exits 0 apcdump "$SHARED/apc/$c"
		text_lines=${#lines[@]}
		[ "$text_lines" -gt 10 ]
		json_lines=$(apcdump --json "$SHARED/apc/$c" | wc -l)
		[ "$json_lines" -eq "$text_lines" ]
		# The summary counts the same messages the listing shows.
		msgs=$(apcdump --summary "$SHARED/apc/$c" | awk '/^Messages:/ {print $2}')
		[ "$msgs" -eq "$text_lines" ]
	done
}

@test "every frame of the file appears in the listing and the summary" {
	need_shared
	need_python
	for c in $CAPS; do
		want=$(count_frames "$SHARED/apc/$c/0000000000")
		got=$(apcdump "$SHARED/apc/$c" | awk '{print $1}' | sort -u | wc -l)
		[ "$got" -eq "$want" ]
		sum=$(apcdump --summary "$SHARED/apc/$c" | awk '/^Frames:/ {print $2}')
		[ "$sum" -eq "$want" ]
	done
}

@test "JSON lines parse and carry the schema's members" {
	need_shared
	need_python
	for c in $CAPS; do
		apcdump --json "$SHARED/apc/$c" | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    o = json.loads(line)
    for k in ("frame", "offset", "type", "msg"):
        assert k in o, (k, line)
    n += 1
assert n > 0'
	done
}

@test "--summary names the counters of captured.xml" {
	need_shared
	for c in $CAPS; do
		out=$(apcdump --summary "$SHARED/apc/$c")
		for t in $(sed -n 's/.*<counter key="[^"]*" \(type\|counter\)="\([^"]*\)".*/\2/p' \
			"$SHARED/apc/$c/captured.xml"); do
			echo "$out" | grep -q -- "$t"
		done
	done
	# v68_nonroot has values for the meminfo counters.
	apcdump --summary "$SHARED/apc/v68_nonroot.apc" |
		grep -E 'Linux_meminfo_memfree +[1-9][0-9]* values'
}

# ann_cap DIR BACK: a capture with two annotate connections (fds 5 and
# 6) whose string annotations interleave in time across the fds, each fd
# in order; BACK=1 sends fd 6's last one back before its previous one.
ann_cap() {
	need_python
	mkdir -p "$1"
	python3 - "$1" "$2" <<'EOF2'
import os, struct, sys
d, back = sys.argv[1], sys.argv[2] == "1"
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, frames, write_cap
def ann(ts, text):
    body = p(ts) + p(0) + text
    return b"\x01" + struct.pack("<I", len(body)) + body
setup = lambda tid: b"ANNOTATE 4\n" + struct.pack("<II", tid, tid) + b"\x00"
write_cap(d, frames([
    summary(),
    p(5) + p(0) + p(0) + p(10) + p(0x11) + p(1),
    p(10) + p(5) + setup(40) + ann(100, b"a") + ann(300, b"b"),
    p(10) + p(6) + setup(41) + ann(200, b"c") + ann(150 if back else 400, b"d"),
]))
EOF2
}

@test "--summary orders annotations per fd, as connections interleave" {
	ann_cap "$TMP/ok.apc" 0
	run apcdump "$TMP/ok.apc"
	echo "$output"
	[ "$(grep -c 'annotate_str .*ts=' <<<"$output")" -eq 4 ]
	exits 0 apcdump --summary "$TMP/ok.apc"
	grep -q '^Timestamps in order: yes ' <<<"$output"
	grep -qx 'Annotation times: *in order per fd' <<<"$output"
	apcdump --summary --json "$TMP/ok.apc" | grep -q '"in_order":true,"regressions":0,"annotation_regressions":0,'
	# An annotation's time is its client's (apcverify checks none for
	# order): a step back is said on a line of its own, not as disorder.
	ann_cap "$TMP/back.apc" 1
	exits 0 apcdump --summary "$TMP/back.apc"
	grep -q '^Timestamps in order: yes ' <<<"$output"
	grep -q '^Annotation times: *1 step back per fd, first at offset 0x[0-9a-f]* (client times, not disorder)$' <<<"$output"
	apcdump --summary --json "$TMP/back.apc" | grep -q '"in_order":true,"regressions":0,"annotation_regressions":1,'
	# JSON gives the first's offset too, as the text does
	off=$(grep -o '^Annotation times: .*first at offset 0x[0-9a-f]*' <<<"$output" | grep -o '0x[0-9a-f]*$')
	apcdump --summary --json "$TMP/back.apc" | grep -q "\"first_annotation_regression_offset\":$((off)),"
	exits 0 apcverify "$TMP/back.apc"
}

@test "--summary: a frame's own timestamps going back are still disorder" {
	cap_py "$TMP/b.apc" <<'EOF2'
F = [summary(), block_counter(ts=50), block_counter(ts=40)]
EOF2
	exits 0 apcdump --summary "$TMP/b.apc"
	grep -q '^Timestamps in order: no (1 regression per frame type and core, first at offset 0x' <<<"$output"
	apcdump --summary --json "$TMP/b.apc" | grep -q '"in_order":false,"regressions":1,"annotation_regressions":0,'
}

@test "--summary: the gatord 6.8 quirks apcverify accepts are said apart, by its rules" {
	# name: a new thread's first Name 50 us before the Name ahead of it;
	# exit: a sched switch 50 ns before the thread exit written ahead of it
	cap_py "$TMP/q.apc" <<'EOF2'
def name(*m): return p(3) + p(0) + b"".join(p(2) + p(ts) + p(tid) + s(b"t") for ts, tid in m)
def sched(*m): return p(7) + p(0) + b"".join(m)
F = [summary(), name((100000, 1), (50000, 2)),
     sched(p(2) + p(200) + p(5), p(1) + p(150) + p(6) + p(0)), block_counter()]
EOF2
	verify 0 "$TMP/q.apc"
	grep -q '\[ts-gatord-name\]$' <<<"$output"
	grep -q '\[ts-gatord-exit\]$' <<<"$output"
	exits 0 apcdump --summary "$TMP/q.apc"
	grep -qx 'Timestamps in order: no (2 regressions per frame type and core, first at offset 0x[0-9a-f]*; all gatord 6.8 quirks apcverify accepts: 1 first thread name, 1 switch after an exit)' <<<"$output"
	apcdump --summary --json "$TMP/q.apc" | grep -q '"in_order":false,"regressions":2,.*"gatord_quirk_regressions":2[,}]'
	# what apcverify rejects is not called a quirk: a Name of a thread
	# named before, a first Name over 1 s back, a switch after a switch,
	# a switch over 1 s behind the exit
	cap_py "$TMP/r.apc" <<'EOF2'
def name(*m): return p(3) + p(0) + b"".join(p(2) + p(ts) + p(tid) + s(b"t") for ts, tid in m)
def sched(*m): return p(7) + p(0) + b"".join(m)
F = [summary(), name((100000, 1), (50000, 1)), name((2000000000, 3), (900000000, 4)),
     sched(p(1) + p(200) + p(5) + p(0), p(1) + p(150) + p(6) + p(0)),
     sched(p(2) + p(3000000000) + p(5), p(1) + p(1900000000) + p(6) + p(0)), block_counter()]
EOF2
	verify 1 "$TMP/r.apc"
	[ "$(grep -c 'error: .*\[ts-frame\]$\|error: .*\[ts-core\]$' <<<"$output")" -eq 4 ]
	! grep -q 'ts-gatord' <<<"$output"
	exits 0 apcdump --summary "$TMP/r.apc"
	grep -qx 'Timestamps in order: no (4 regressions per frame type and core, first at offset 0x[0-9a-f]*)' <<<"$output"
	apcdump --summary --json "$TMP/r.apc" | grep -q '"gatord_quirk_regressions":0[,}]'
	# both: the first that is not a quirk is pointed at
	cap_py "$TMP/m.apc" <<'EOF2'
def name(*m): return p(3) + p(0) + b"".join(p(2) + p(ts) + p(tid) + s(b"t") for ts, tid in m)
F = [summary(), name((100000, 1), (50000, 2)), block_counter(ts=50), block_counter(ts=40)]
EOF2
	exits 0 apcdump --summary "$TMP/m.apc"
	bc=$(printf 0x%x "$(apcdump --frame=block_counter "$TMP/m.apc" | awk 'NR == 2 {print $2}')")
	grep -qx "Timestamps in order: no (2 regressions per frame type and core, first at offset 0x[0-9a-f]*; 1 of them a gatord 6.8 quirk apcverify accepts (1 first thread name, 0 switches after an exit), the first other at offset $bc)" <<<"$output"
}

@test "--summary on the real captures: their steps back are the quirks apcverify accepts" {
	need_shared
	for c in $CAPS; do
		verify 0 "$SHARED/apc/$c"
		exits 0 apcdump --summary "$SHARED/apc/$c"
		l=$(grep '^Timestamps in order:' <<<"$output")
		[ "$l" = "Timestamps in order: yes (per frame type and core)" ] ||
			[[ "$l" == *"; all gatord 6.8 quirks apcverify accepts: "* ]] ||
			[[ "$l" == *"; a gatord 6.8 quirk apcverify accepts: "* ]]
		x=$(grep '^Across frame types:' <<<"$output")
		[ "$x" = "Across frame types:  0 steps back per core" ] ||
			[[ "$x" == *" (apcverify warns of them, ts-cross-type: gatord writes each frame type from its own buffer)" ]]
	done
	exits 0 apcdump --summary "$SHARED/apc/v68_nonroot_annotate.apc"
	grep -qx 'Timestamps in order: no (2 regressions per frame type and core, first at offset 0x14a87; all gatord 6.8 quirks apcverify accepts: 1 first thread name, 1 switch after an exit)' <<<"$output"
}

# x_verify: from apcverify's $output, its [ts-cross-type] count (the
# "first of N", 1 without one, 0 with no such warning), the largest step
# back in ns and the first one's offset, on one line.
x_verify() {
	local w n back off
	w=$(grep '\[ts-cross-type\]$' <<<"$output") || { echo "0 - -"; return; }
	off=$(sed -n 's/.* @\(0x[0-9a-f]*\): warning: .*/\1/p' <<<"$w")
	if [[ "$w" == *"(first of "* ]]; then
		n=$(sed -n 's/.*(first of \([0-9]*\); largest step back \([0-9]*\) ns).*/\1/p' <<<"$w")
		back=$(sed -n 's/.*(first of \([0-9]*\); largest step back \([0-9]*\) ns).*/\2/p' <<<"$w")
	else
		n=1
		back=$(sed -n 's/.* is \([0-9]*\) ns before the .*/\1/p' <<<"$w")
	fi
	echo "$n $back $off"
}

# x_dump: the same three from apcdump --summary's $output.
x_dump() {
	local l
	l=$(grep '^Across frame types:' <<<"$output")
	if [[ "$l" == "Across frame types:  0 steps back per core" ]]; then
		echo "0 - -"
		return
	fi
	sed -n 's/^Across frame types:  \([0-9]*\) steps\{0,1\} back per core, first at offset \(0x[0-9a-f]*\), largest \([0-9]*\) ns (.*/\1 \3 \2/p' <<<"$l"
}

@test "--summary counts steps back across frame types as apcverify does, on the real captures" {
	need_shared
	for c in $CAPS; do
		verify 0 "$SHARED/apc/$c"
		v=$(x_verify)
		exits 0 apcdump --summary "$SHARED/apc/$c"
		d=$(x_dump)
		echo "$c: apcverify $v, apcdump $d"
		[ -n "$d" ]
		[ "$d" = "$v" ]
		n=$(apcdump --summary --json "$SHARED/apc/$c" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cross_type_regressions"])')
		[ "$n" = "${v%% *}" ]
	done
	# the one with annotations: 3, not the 874 messages behind the latest time on their core
	exits 0 apcverify "$SHARED/apc/v68_nonroot_annotate.apc"
	[ "$(x_verify)" = "3 6983516262 0x14d5c" ]
	exits 0 apcdump --summary "$SHARED/apc/v68_nonroot_annotate.apc"
	grep -qx 'Across frame types:  3 steps back per core, first at offset 0x14d5c, largest 6983516262 ns (apcverify warns of them, ts-cross-type: gatord writes each frame type from its own buffer)' <<<"$output"
	apcdump --summary --json "$SHARED/apc/v68_nonroot_annotate.apc" |
		grep -q '"cross_type_regressions":3,"cross_type_largest_step_back":6983516262[,}]'
}

@test "--summary: a step back across frame types is from the message before on the core, as apcverify's" {
	# core 0: a thread name at 1000, then sched switches at 100 (back
	# from the name: one step), 200, 300, then 250 (back per frame type:
	# ts-core, not again across types); a counter frame whose core 0
	# value steps back inside the frame (ts-frame, not across types);
	# gatord 6.8's Proc frame (its online cpu 0 at 9000: no CPU's own
	# time), then a block counter at 3000 on core 0
	cap_py "$TMP/x.apc" <<'EOF2'
def sched(*ts): return p(7) + p(0) + b"".join(p(1) + p(t) + p(5) + p(0) for t in ts)
F = [summary(),
     p(3) + p(0) + p(2) + p(1000) + p(5) + s(b"t"),
     sched(100, 200, 300), sched(250),
     p(4) + p(5000) + p(1) + p(0x11) + p(1) + p(50) + p(0) + p(0x11) + p(2),
     p(11) + p(0) + p(7) + p(9000) + p(0),
     block_counter(ts=3000)]
EOF2
	first=$(printf 0x%x "$(apcdump --frame=sched_trace "$TMP/x.apc" | awk 'NR == 1 {print $2}')")
	exits 1 apcverify "$TMP/x.apc"
	v=$(x_verify)
	[ "$v" = "1 900 $first" ]
	exits 0 apcdump --summary "$TMP/x.apc"
	[ "$(x_dump)" = "$v" ]
	grep -q '^Across frame types:  1 step back per core, first at offset 0x[0-9a-f]*, largest 900 ns (' <<<"$output"
	apcdump --summary --json "$TMP/x.apc" | grep -q '"cross_type_regressions":1,"cross_type_largest_step_back":900[,}]'
	# none: said so, and 0 in JSON
	cap_py "$TMP/y.apc" <<'EOF2'
F = [summary(), p(3) + p(0) + p(2) + p(10) + p(5) + s(b"t"), block_counter(ts=20)]
EOF2
	exits 0 apcdump --summary "$TMP/y.apc"
	grep -qx 'Across frame types:  0 steps back per core' <<<"$output"
	apcdump --summary --json "$TMP/y.apc" | grep -q '"cross_type_regressions":0,"cross_type_largest_step_back":0[,}]'
}

@test "--summary: gatord 6.8 Proc frame times are ordered per frame core, as apcverify orders them" {
	# online cpu 1 at 9000, then online cpu 0 at 5000, in one Proc frame
	# on core 0: a step back in the frame's one buffer, though each CPU's
	# own times go forward
	cap_py "$TMP/p.apc" <<'EOF2'
F = [summary(), block_counter(ts=100), p(11) + p(0) + p(7) + p(9000) + p(1) + p(7) + p(5000) + p(0)]
EOF2
	exits 1 apcverify "$TMP/p.apc"
	grep -q 'timestamp 5000 is 4000 ns before the previous one in the same frame \[ts-frame\]' <<<"$output"
	exits 0 apcdump --summary "$TMP/p.apc"
	grep -q '^Timestamps in order: no (1 regression per frame type and core' <<<"$output"
	# in order in the buffer, whatever the CPUs: no step back
	cap_py "$TMP/q.apc" <<'EOF2'
F = [summary(), block_counter(ts=100), p(11) + p(0) + p(7) + p(5000) + p(1) + p(7) + p(9000) + p(0)]
EOF2
	exits 0 apcverify "$TMP/q.apc"
	exits 0 apcdump --summary "$TMP/q.apc"
	grep -q '^Timestamps in order: yes' <<<"$output"
}

@test "--summary agrees with apcverify on gatord's explicit-time counter value (annotate v5 stream1)" {
	need_shared
	conv 0 -q "$SHARED/annotate/v5/stream1.annotate.bin" -o "$TMP/s1.apc"
	verify 0 "$TMP/s1.apc"
	[[ "$output" == *": ok ("* ]]
	exits 0 apcdump --summary "$TMP/s1.apc"
	grep -q '^Timestamps in order: yes ' <<<"$output"
	grep -q '^Annotation times: *1 step back per fd' <<<"$output"
	# the step back is seq 44's gator_annotate_counter_time_value
	t=$(grep '"seq":44,' "$SHARED/annotate/v5/truth.jsonl" | sed 's/.*"time":\([0-9]*\).*/\1/')
	apcdump --json "$TMP/s1.apc" | grep '"msg":"annotate_counter_value"' > "$TMP/cv"
	delta=$(apcdump --json --frame=summary "$TMP/s1.apc" | sed -n 's/.*"monotonic_delta":\(-*[0-9]*\).*/\1/p')
	grep -q "\"ts\":$((t - delta))," "$TMP/cv"
}

@test "--summary lists every thread a message names, with or without a name" {
	need_python
	mkdir -p "$TMP/t.apc"
	python3 - "$TMP/t.apc" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, summary, frames, write_cap
write_cap(sys.argv[1], frames([
    summary(),
    p(3) + p(0) + p(2) + p(10) + p(42) + s(b"main"),          # Name: tid 42
    p(7) + p(0) + p(2) + p(20) + p(42) + p(1) + p(30) + p(43) + p(0),
]))
EOF2
	run apcdump "$TMP/t.apc"
	echo "$output"
	exits 0 apcdump --summary "$TMP/t.apc"
	grep -q '^Threads: *2 (1 named)$' <<<"$output"
	grep -q '^  tid 42  *2 messages  "main"$' <<<"$output"
	grep -q '^  tid 43  *1 message   (no name)$' <<<"$output"
	apcdump --summary --json "$TMP/t.apc" | python3 -c '
import json, sys
t = json.load(sys.stdin)["threads"]
assert t == [{"tid": 42, "messages": 2, "name": "main"},
             {"tid": 43, "messages": 1, "name": None}], t'
}

@test "--summary --json is one object with the counters" {
	need_shared
	need_python
	apcdump --summary --json "$SHARED/apc/sleep_counters.apc" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1
o = json.loads(lines[0])
assert o["protocol"] == 950 and o["summary_clocks"] == 4
names = [c["name"] for c in o["counters"]]
assert "Linux_meminfo_memfree" in names, names
assert o["frame_types"]["summary"]["frames"] == 1'
}

@test "--frame=summary lists one line; names and numbers agree" {
	need_shared
	exits 0 apcdump --frame=summary "$SHARED/apc/v68_nonroot.apc"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *summary* ]]
	a=$(apcdump --frame=sched_trace,13 "$SHARED/apc/v68_nonroot.apc" | wc -l)
	b=$(apcdump --frame=7,activity_trace "$SHARED/apc/v68_nonroot.apc" | wc -l)
	[ "$a" -eq "$b" ]
	[ "$a" -gt 0 ]
	# Every listed line is of one of the two types.
	! apcdump --frame=7,13 "$SHARED/apc/v68_nonroot.apc" | awk '{print $3}' |
		grep -v -E '^(sched_trace|activity_trace)$' || false
}

@test "-c, --core and --begin/--end narrow the listing" {
	need_shared
	exits 0 apcdump -c 5 "$SHARED/apc/v68_nonroot.apc"
	[ "${#lines[@]}" -eq 5 ]
	! apcdump --core=1 "$SHARED/apc/v68_nonroot.apc" | awk '{print $4}' | grep -v '^1$' || false
	[ "$(apcdump --core=1 "$SHARED/apc/v68_nonroot.apc" | wc -l)" -gt 0 ]
	# Timestamps inside the window only.
	apcdump --begin=1s --end=1500ms "$SHARED/apc/v68_nonroot.apc" |
		sed -n 's/.* ts=\([0-9]*\).*/\1/p' > "$TMP/ts"
	[ -s "$TMP/ts" ]
	awk '$1 < 1000000000 || $1 > 1500000000 { bad = 1 } END { exit bad }' "$TMP/ts"
}

@test "--end before --begin is a usage error; both at one time is one instant" {
	need_shared
	run apcdump --begin=2ms --end=1ms "$SHARED/apc/v68_sleep.apc"
	[ "$status" -eq 2 ]
	[ "$output" = "apcdump: --end is before --begin (an empty window lists nothing)
Try 'apcdump --help' for more information." ]
	run apcdump --summary --begin=2s --end=1999ms "$SHARED/apc/v68_sleep.apc"
	[ "$status" -eq 2 ]
	# the window holds both its ends
	ts=$(apcdump --json "$SHARED/apc/v68_sleep.apc" | python3 -c '
import json, sys
print(next(o["ts"] for o in map(json.loads, sys.stdin) if o.get("ts")))')
	exits 0 apcdump --begin=$ts --end=$ts "$SHARED/apc/v68_sleep.apc"
	[ "${#lines[@]}" -ge 1 ]
}

@test "annotations in External frames are decoded" {
	need_shared
	exits 0 apcdump --frame=external "$SHARED/apc/v68_nonroot_annotate.apc"
	[[ "$output" == *'annotate_setup'* ]]
	[[ "$output" == *'text="Group One"'* ]]
	apcdump --summary "$SHARED/apc/v68_nonroot_annotate.apc" | grep -q 'Channel 1 (group 1)\|Worker A channel 1'
}

@test "-x adds xxd-style bytes; --xml prints captured.xml fields" {
	need_shared
	exits 0 apcdump -x -c 1 "$SHARED/apc/v68_nonroot.apc"
	[[ "${lines[1]}" == *"00000000: 8700 0000 0101 0b31"* ]]
	exits 0 apcdump --xml "$SHARED/apc/v68_nonroot.apc"
	[[ "$output" == *"captured.protocol:"*"680"* ]]
	[[ "$output" == *"Linux_block_rq_wr"* ]]
}

@test "archives, bare data files and stdin list the same" {
	need_shared
	want=$(apcdump "$SHARED/apc/v68_nonroot.apc" | wc -l)
	tar -C "$SHARED/apc" -czf "$TMP/c.tar.gz" v68_nonroot.apc
	[ "$(apcdump "$TMP/c.tar.gz" | wc -l)" -eq "$want" ]
	[ "$(apcdump "$SHARED/apc/v68_nonroot.apc/0000000000" | wc -l)" -eq "$want" ]
	[ "$(apcdump - < "$SHARED/apc/v68_nonroot.apc/0000000000" | wc -l)" -eq "$want" ]
}

@test "a truncated capture exits 1 naming the offset, and others still run" {
	need_shared
	mkdir "$TMP/bad.apc"
	head -c 5000 "$SHARED/apc/v68_nonroot.apc/0000000000" > "$TMP/bad.apc/0000000000"
	exits 1 apcdump "$TMP/bad.apc" "$SHARED/apc/v68_sleep.apc"
	[[ "$output" == *"apcdump: "*"offset 0x"*"truncated capture"* ]]
	# The good capture after it was listed too.
	[[ "$output" == *"perf_attr"* ]]
}

@test "hand-made damage: bad length, overlong integer" {
	# Name frame, core 0, cookie name whose packed32 cookie takes 6 bytes.
	printf '\x09\x00\x00\x00\x03\x00\x01\x80\x80\x80\x80\x80\x00' > "$TMP/overlong"
	exits 1 apcdump "$TMP/overlong"
	[[ "$output" == *"offset 0x7: "*"overlong"* ]]
	printf '\xff\xff\xff\xff' > "$TMP/neg"
	exits 1 apcdump "$TMP/neg"
	[[ "$output" == *"offset 0x0: "*"negative"* ]]
}

@test "missing file and bad options exit 2" {
	exits 2 apcdump "$TMP/does-not-exist.apc"
	[[ "$output" == apcdump:* ]]
	exits 2 apcdump --frame=nonsense x
	exits 2 apcdump --begin=soon x
	exits 2 apcdump
	bad_option apcdump
}

@test "-h and -V" {
	exits 0 apcdump --help
	[[ "$output" == *"usage: apcdump"* ]]
	exits 0 apcdump -V
	# the same form in all three tools
	[[ "$output" == "apcdump (apctools) "[0-9]* ]]
	[ "${output#apcdump }" = "$(apcconv --version | sed 's/^apcconv //')" ]
	[ "${output#apcdump }" = "$(apcverify --version | sed 's/^apcverify //')" ]
}

@test "strings with quotes, control bytes and bad UTF-8 stay valid JSON and text" {
	need_python
	# Name frame, core 0: thread name (code 2), ts 0, tid 5, 7 bytes a"b\x01\xff\n.
	printf '\x0d\x00\x00\x00\x03\x00\x02\x00\x05\x07a"b\x01\xffc\n' > "$TMP/names"
	exits 0 apcdump "$TMP/names"
	[[ "$output" == *'name="a\"b\x01\xffc\n"'* ]]
	apcdump --json "$TMP/names" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["name"] == "a\"b\x01\ufffdc\n", repr(o["name"])
assert o["tid"] == 5 and o["core"] == 0 and o["msg"] == "thread_name"'
}

@test "every annotation in v68_nonroot_annotate.apc matches its truth file, per thread" {
	need_shared
	apcdump --json "$SHARED/apc/v68_nonroot_annotate.apc" > "$TMP/j"
	python3 - "$TMP/j" "$SHARED/apc/v68_nonroot_annotate.truth.jsonl" <<'PY'
import json, sys
from collections import defaultdict
tid_of, got = {}, defaultdict(list)
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["msg"] == "annotate_setup":
        tid_of[o["fd"]] = o["tid"]
    elif o["msg"].startswith("annotate_"):
        got[tid_of[o["fd"]]].append(o)
want = defaultdict(list)
for line in open(sys.argv[2]):
    t = json.loads(line)
    if t.get("code"):  # setup has none, flush is 0: neither is a message
        want[t["tid"]].append(t)
assert sorted(got) == sorted(want), (sorted(got), sorted(want))
n = 0
for tid in want:
    assert len(got[tid]) == len(want[tid]), (tid, len(got[tid]), len(want[tid]))
    for g, w in zip(got[tid], want[tid]):
        a = w["args"]
        assert g["code"] == w["code"], (tid, g, w)
        if "str" in a and a["str"] is not None and w["code"] in (1, 2, 3, 4, 6, 7):
            assert g["text"] == a["str"], (g["text"], a["str"])
        for k in ("channel", "group"):
            if k in a:
                assert g[k] == a[k], (k, g, w)
        n += 1
print(n, "annotations matched")
assert n == 72, n
PY
}

@test "a problem's message follows the lines listed before it (2>&1)" {
	need_shared
	mkdir "$TMP/cut.apc"
	head -c 5000 "$SHARED/apc/v68_nonroot.apc/0000000000" > "$TMP/cut.apc/0000000000"
	rc=0
	apcdump "$TMP/cut.apc" > "$TMP/all" 2>&1 || rc=$?
	[ "$rc" -eq 1 ]
	listed=$(apcdump "$TMP/cut.apc" 2>/dev/null | wc -l)
	[ "$listed" -gt 0 ]
	# Every listed line comes first, then the message, even though the
	# listing is written in large blocks.
	[ "$(wc -l < "$TMP/all")" -eq $((listed + 1)) ]
	[[ "$(tail -n 1 "$TMP/all")" == "apcdump: "*"truncated capture"* ]]
	[ "$(head -n "$listed" "$TMP/all" | grep -c '^apcdump: ')" -eq 0 ]
}

@test "large listings: a closed pipe ends quietly, a full disk is reported" {
	need_shared
	# About 5 MB of text, far more than a pipe or the output buffer holds.
	set +e
	apcdump "$SHARED/apc/v68_sleep.apc" 2> "$TMP/err" | head -n 2 > "$TMP/two"
	set -e
	[ "$(wc -l < "$TMP/two")" -eq 2 ]
	[ ! -s "$TMP/err" ]
	if [ -w /dev/full ]; then
		exits 2 sh -c 'exec "$0" "$1" > /dev/full' "$APC_BIN/apcdump" "$SHARED/apc/v68_sleep.apc"
		[ "$output" = "apcdump: stdout: cannot write: no space left on device" ]
	fi
}

@test "--help and --version that stdout cannot take: exit 2, the reason on stderr" {
	[ -w /dev/full ] || skip "/dev/full is not writable here"
	for opt in --help --version; do
		exits 2 sh -c 'exec "$0" "$1" > /dev/full' "$APC_BIN/apcdump" $opt
		[ "$output" = "apcdump: stdout: cannot write: no space left on device" ]
	done
}

@test "the listing is the same whole and in pieces (--count, several inputs)" {
	need_shared
	apcdump "$SHARED/apc/v68_sleep.apc" > "$TMP/whole"
	n=$(wc -l < "$TMP/whole")
	apcdump -c $((n / 2)) "$SHARED/apc/v68_sleep.apc" > "$TMP/half"
	head -n $((n / 2)) "$TMP/whole" | cmp - "$TMP/half"
	apcdump "$SHARED/apc/v68_sleep.apc" "$SHARED/apc/v68_sleep.apc" > "$TMP/twice"
	# each after the line that names it
	{
		echo "==> $SHARED/apc/v68_sleep.apc <=="
		cat "$TMP/whole"
		echo "==> $SHARED/apc/v68_sleep.apc <=="
		cat "$TMP/whole"
	} | cmp - "$TMP/twice"
}

@test "--core is decimal and --frame numbers do not wrap" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	exits 0 apcdump --core=08 "$TMP/d.apc"
	exits 2 apcdump --core=0x1 "$TMP/d.apc"
	[ "$(apcdump --core=01 "$TMP/d.apc" | md5sum)" = "$(apcdump --core=1 "$TMP/d.apc" | md5sum)" ]
	exits 2 apcdump --frame=4294967297 "$TMP/d.apc"
	grep -q "unknown frame type '4294967297'" <<<"$output"
}

# --core selects by the frame's core or the message's own core field: a
# core name, an annotation's counter value or activity switch are of the
# core they name, in the text and the JSON listing alike.
@test "--core selects messages by their own core field, text and JSON alike" {
	need_python
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	exits 0 apcdump --core=1 --frame=summary "$TMP/d.apc"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *'core_name        core=1 '* ]]
	run apcdump --json --core=1 --frame=summary "$TMP/d.apc"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *'"msg":"core_name"'*'"field_core":1,'* ]]
	need_shared
	a="$SHARED/apc/v68_nonroot_annotate.apc"
	for core in 0 1; do
		apcdump --core=$core "$a" | awk '{print $1, $2, $5}' > "$TMP/text"
		apcdump --json --core=$core "$a" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    print(o["frame"], "0x%08x" % o["offset"], o["msg"])' > "$TMP/json"
		cmp "$TMP/text" "$TMP/json"
		want=$(apcdump "$a" | grep -cE "annotate_(counter_value|activity_switch) .* core=$core ")
		[ "$want" -gt 0 ]
		[ "$(grep -cE 'annotate_(counter_value|activity_switch)$' "$TMP/text")" -eq "$want" ]
	done
	# Annotations without a core field belong to no core.
	! grep -q annotate_str "$TMP/text" || false
}

@test "a missing input: PROG: FILE: message, lowercase, in all three tools" {
	for prog in apcconv apcdump apcverify; do
		run "$prog" "$TMP/nosuch.apc"
		echo "$output"
		[ "$status" -ne 0 ]
		[ "$output" = "$prog: $TMP/nosuch.apc: cannot open: no such file or directory" ]
	done
}

# cut_tar_listed EXT STREAM WHOLE: $TMP/c.apc.tar.EXT cut to two thirds
# (as cut.apc.tar.EXT) lists more than 100 of its WHOLE lines, then names
# the cut, its STREAM's (gzip, xz...) first, then the tar's; exit 1, and
# 1 from --summary too.
cut_tar_listed() {
	local ext=$1 name=$2 whole=$3 n listed cut="$TMP/cut.apc.tar.$1"
	n=$(($(stat -c %s "$TMP/c.apc.tar.$ext") * 2 / 3))
	head -c $n "$TMP/c.apc.tar.$ext" >"$cut"
	exits 1 apcdump "$cut"
	[[ "${lines[-1]}" == "apcdump: $cut: offset 0x"*": truncated $name stream (the compressed data ends at byte $n); truncated tar archive: it ends inside the data of c.apc/0000000000 ("*" of its "*" bytes)" ]]
	listed=$(apcdump "$cut" 2>/dev/null | wc -l)
	[ "$listed" -gt 100 ]
	[ "$listed" -lt "$whole" ]
	exits 1 apcdump --summary "$cut"
}

@test "a cut .apc.tar.gz, .tar or .zip: the frames before the cut, then the archive named as truncated" {
	for ext in tar.gz tar zip; do
		apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/c.apc.$ext"
	done
	whole=$(apcdump "$TMP/c.apc.tar.gz" | wc -l)
	# in the gzip stream's header: nothing to list
	head -c 5 "$TMP/c.apc.tar.gz" > "$TMP/h.apc.tar.gz"
	exits 1 apcdump "$TMP/h.apc.tar.gz"
	[ "$output" = "apcdump: $TMP/h.apc.tar.gz: offset 0x0: truncated gzip stream (the compressed data ends at byte 5)" ]
	# in the data file: what is there is listed, then the cut
	cut_tar_listed gz gzip "$whole"
	grep -q "^File: .*cut.apc.tar.gz" <<<"$output"
	# a tar cut in a member header
	head -c 600 "$TMP/c.apc.tar" > "$TMP/cut.apc.tar"
	exits 1 apcdump "$TMP/cut.apc.tar"
	[ "$output" = "apcdump: $TMP/cut.apc.tar: offset 0x258: truncated tar archive: it ends inside the member header after c.apc/ (88 of its 512 bytes)" ]
	# a zip without its end record: every frame, and the cut
	head -c $(($(stat -c %s "$TMP/c.apc.zip") - 22)) "$TMP/c.apc.zip" > "$TMP/cut.apc.zip"
	exits 1 apcdump "$TMP/cut.apc.zip"
	[[ "${lines[-1]}" == "apcdump: $TMP/cut.apc.zip: offset 0x"*": truncated zip archive: it has no end of central directory record" ]]
	[ "$(apcdump "$TMP/cut.apc.zip" 2>/dev/null | wc -l)" -eq "$whole" ]
	# a bare data file's .gz: listed up to the cut
	mkdir "$TMP/d" && tar -C "$TMP/d" -xf "$TMP/c.apc.tar"
	gzip -c "$TMP/d/c.apc/0000000000" > "$TMP/data.gz"
	n=$(($(stat -c %s "$TMP/data.gz") / 2))
	head -c $n "$TMP/data.gz" > "$TMP/cut.gz"
	exits 1 apcdump "$TMP/cut.gz"
	[[ "${lines[-1]}" == "apcdump: $TMP/cut.gz: offset 0x"*": truncated gzip stream (the compressed data ends at byte $n)" ]]
}

# tar_compressed PROG EXT NAME: $TMP/c.apc.tar compressed by PROG lists
# its $whole lines, and cut, part of them (cut_tar_listed).
tar_compressed() {
	$1 -c "$TMP/c.apc.tar" >"$TMP/c.apc.tar.$2"
	[ "$(apcdump "$TMP/c.apc.tar.$2" | wc -l)" -eq "$whole" ]
	cut_tar_listed "$2" "$3" "$whole"
}

@test "a cut .apc.tar.bz2, .xz, .zst or .lz4: the frames before the cut, then the compressed stream named as cut" {
	local whole
	"$APC_TOOLS/barmangen" -o "$TMP/b.bin" --seed 5 --records 10000 --buffer 1000000
	apcconv -q "$TMP/b.bin" -o "$TMP/c.apc.tar"
	whole=$(apcdump "$TMP/c.apc.tar" | wc -l)
	each_compressor tar_compressed "bzip2 -1:bz2:bzip2" "xz:xz:xz" "zstd -q:zst:zstd" "lz4 -q -B4:lz4:lz4"
}

# An empty data file lists nothing: that is an error naming it, counted
# in --summary, never an empty listing that exits 0.
@test "an empty data file or stdin: an error naming it, in the listing and --summary" {
	mkdir "$TMP/e.apc"
	: >"$TMP/e.apc/0000000000"
	exits 1 apcdump "$TMP/e.apc"
	[ "$output" = "apcdump: $TMP/e.apc/0000000000: empty capture: the data file has no frames" ]
	exits 1 sh -c ': | "$0" -' "$APC_BIN/apcdump"
	[ "$output" = "apcdump: <stdin>: empty capture: the data file has no frames" ]
	exits 1 apcdump --summary "$TMP/e.apc"
	grep -q '^Frames: *0$' <<<"$output"
	grep -q '^Problems: *1$' <<<"$output"
	rc=0
	apcdump --summary --json "$TMP/e.apc" >"$TMP/j" 2>"$TMP/err" || rc=$?
	[ "$rc" -eq 1 ]
	grep -q '"frames":0,' "$TMP/j"
	grep -q '"errors":1[,}]' "$TMP/j"
	grep -q 'e.apc/0000000000: empty capture' "$TMP/err"
	# a capture that lists nothing only because of a filter is no problem
	printf '\x0d\x00\x00\x00\x03\x00\x02\x00\x05\x07abcdefg' >"$TMP/one"
	exits 0 apcdump --frame=summary "$TMP/one"
	[ -z "$output" ]
}

@test "--summary --json: one object per input, one that cannot be opened too (io_error)" {
	need_python
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	rc=0
	apcdump --summary --json "$TMP/d.apc" "$TMP/nosuch.apc" "$TMP/d.apc" >"$TMP/j" 2>"$TMP/err" || rc=$?
	cat "$TMP/j" "$TMP/err"
	[ "$rc" -eq 2 ]
	[ "$(cat "$TMP/err")" = "apcdump: $TMP/nosuch.apc: cannot open: no such file or directory" ]
	python3 - "$TMP/j" "$TMP" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
t = sys.argv[2]
assert [o["file"] for o in objs] == [t + "/d.apc", t + "/nosuch.apc", t + "/d.apc"], objs
assert objs[1]["io_error"] == "cannot open: no such file or directory", objs[1]
assert objs[1]["frames"] == 0 and objs[1]["errors"] == 0, objs[1]
for o in (objs[0], objs[2]):
    assert o["io_error"] is None and o["errors"] == 0 and o["frames"] > 0, o
# one shape for all (first_ts, last_ts and the data's only when there are timestamps)
assert set(objs[1]) == set(objs[0]) - {"first_ts", "last_ts", "data_first_ts", "data_last_ts"}, \
    (list(objs[0]), list(objs[1]))
PY
	# text keeps to the message on stderr
	exits 2 apcdump --summary "$TMP/nosuch.apc"
	[ "$output" = "apcdump: $TMP/nosuch.apc: cannot open: no such file or directory" ]
}

# foreign_inputs: $TMP/f/ holds inputs apcconv converts and apcdump and
# apcverify do not read: a Barman dump (also gzipped), an LTT trace
# folder (also as a .tar.gz), TPTP binary and XML traces.
foreign_inputs() {
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	mkdir "$TMP/f"
	"$APC_TOOLS/barmangen" -o "$TMP/f/b.bin" --seed 2 --records 50 >/dev/null
	gzip -c "$TMP/f/b.bin" >"$TMP/f/b.bin.gz"
	"$APC_TOOLS/lttgen" --seed 3 --events 30 -o "$TMP/f/ltt" >/dev/null
	tar -C "$TMP/f" -czf "$TMP/f/ltt.tar.gz" ltt
	"$APC_TOOLS/tptpgen" --seed 4 --calls 5 --binary -o "$TMP/f/t.trcbin" >/dev/null
	"$APC_TOOLS/tptpgen" --seed 4 --calls 5 -o "$TMP/f/t.trcxml" >/dev/null
}

@test "a trace apcconv converts is named as such, not read as broken frames: exit 2" {
	foreign_inputs
	for f in b.bin:barman b.bin.gz:barman ltt:ltt ltt.tar.gz:ltt t.trcbin:tptp-bin t.trcxml:tptp-xml; do
		want="apcdump: $TMP/f/${f%%:*}: not an APC capture but ${f#*:} input: convert it with apcconv first"
		exits 2 apcdump "$TMP/f/${f%%:*}"
		[ "$output" = "$want" ]
		exits 2 apcdump --summary "$TMP/f/${f%%:*}"
		[ "$output" = "$want" ]
		exits 2 apcdump --xml "$TMP/f/${f%%:*}"
		[ "$output" = "$want" ]
	done
	exits 2 sh -c 'exec "$0" - <"$1"' "$APC_BIN/apcdump" "$TMP/f/b.bin"
	[ "$output" = "apcdump: <stdin>: not an APC capture but barman input: convert it with apcconv first" ]
	# the others given with it are still listed
	apcconv -q "$TMP/f/b.bin" -o "$TMP/b.apc"
	exits 2 apcdump -c 1 "$TMP/f/b.bin" "$TMP/b.apc"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = "==> $TMP/b.apc <==" ]
	[[ "${lines[2]}" == *" summary "* ]]
	# only when the first frame is bad: a data file whose first frame is
	# a good one, and whose thread name holds a Barman magic, is listed
	printf '\x12\x00\x00\x00\x03\x00\x02\x00\x05\x0cBARMAN64\x00\x00\x00\x03' >"$TMP/name"
	exits 0 apcdump "$TMP/name"
	[[ "$output" == *' thread_name      ts=0 tid=5 name="BARMAN64\x00\x00\x00\x03"' ]]
}

@test "several inputs: each listing is named (==> FILE <==, JSON \"file\"); one input is not" {
	need_python
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/a.apc"
	apcconv -q "$APC_ROOT/testdata/barman/le32_linear_v1.bin" -o "$TMP/b.apc"
	apcdump -c 3 "$TMP/a.apc" >"$TMP/a"
	apcdump -c 3 "$TMP/b.apc" >"$TMP/b"
	# one input: no name anywhere
	! grep -q '==>' "$TMP/a" || false
	! apcdump --json -c 3 "$TMP/a.apc" | grep -q '"file"' || false
	exits 0 apcdump -c 3 "$TMP/a.apc" "$TMP/b.apc"
	[ "$output" = "==> $TMP/a.apc <==
$(cat "$TMP/a")
==> $TMP/b.apc <==
$(cat "$TMP/b")" ]
	# a capture that cannot be opened, or is none, gets its message, not
	# a name line; an empty one gets both
	"$APC_TOOLS/barmangen" -o "$TMP/raw.bin" --seed 2 --records 50 >/dev/null
	mkdir "$TMP/e.apc"
	: >"$TMP/e.apc/0000000000"
	apcdump -c 3 "$TMP/a.apc" "$TMP/nosuch.apc" "$TMP/raw.bin" "$TMP/e.apc" "$TMP/b.apc" \
		>"$TMP/out" 2>"$TMP/err" || true
	[ "$(grep '^==> ' "$TMP/out")" = "==> $TMP/a.apc <==
==> $TMP/e.apc <==
==> $TMP/b.apc <==" ]
	[ "$(wc -l <"$TMP/err")" -eq 3 ]
	# JSON: "file" first in each object, the listing otherwise the same
	apcdump --json -c 3 "$TMP/a.apc" "$TMP/b.apc" >"$TMP/j"
	python3 - "$TMP/j" "$TMP" "$APC_BIN" <<'PY'
import json, subprocess, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
t = sys.argv[2]
assert [o["file"] for o in objs] == [t + "/a.apc"] * 3 + [t + "/b.apc"] * 3, objs
assert all(list(o)[0] == "file" for o in objs)
for name, part in (("a", objs[:3]), ("b", objs[3:])):
    one = subprocess.run([sys.argv[3] + "/apcdump", "--json", "-c", "3", t + "/" + name + ".apc"],
                         capture_output=True, check=True).stdout.decode().splitlines()
    assert [dict((k, v) for k, v in o.items() if k != "file") for o in part] == [json.loads(l) for l in one]
PY
}

@test "--summary and --xml refuse the listing's options; --frame= needs a type" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	for mode in --summary --xml; do
		for opt in --frame=summary:--frame --core=0:--core --begin=1ms:--begin \
			--end=1s:--end -c1:-c/--count --count=1:-c/--count -x:-x/--hex; do
			exits 2 apcdump $mode "${opt%%:*}" "$TMP/d.apc"
			[ "$output" = "apcdump: ${opt#*:} has no effect with $mode (it is for the listing)
Try 'apcdump --help' for more information." ]
		done
		exits 0 apcdump $mode -v -j "$TMP/d.apc"
	done
	exits 2 apcdump --frame= "$TMP/d.apc"
	[ "${lines[0]}" = "apcdump: empty frame type list (names or numbers, separated by commas)" ]
	for bad in summary, ,summary summary,,7; do
		exits 2 apcdump --frame=$bad "$TMP/d.apc"
		[ "${lines[0]}" = "apcdump: bad frame type list '$bad'" ]
	done
	exits 0 apcdump --frame=summary,7 "$TMP/d.apc"
}

@test "--summary: the time span takes in CAM jobs' own times (TPTP method calls), as apcconv's" {
	need_shared
	for f in "$SHARED"/tptp/*.trcxml; do
		rm -rf "$TMP/t.apc"
		span=$(apcconv "$f" -o "$TMP/t.apc" 2>&1 | grep -o 'span [0-9.]* s')
		exits 0 apcdump --summary "$TMP/t.apc"
		[[ "$output" == *"Time span:           ${span#span }"* ]]
	done
	# jag_dmtrace: method calls run 4.7 ms past the last thread name
	rm -rf "$TMP/j.apc"
	apcconv -q "$SHARED/tptp/jag_dmtrace.trcxml" -o "$TMP/j.apc"
	exits 0 apcdump --summary --json "$TMP/j.apc"
	[ "$(python3 -c 'import json,sys; o=json.loads(sys.argv[1]); print(o["first_ts"], o["last_ts"])' "$output")" = "0 4716000" ]
}

# The summary's annotation groups, channels and annotate connections (JSON)
# against a truth.jsonl of what each client thread called.
summary_vs_truth() {
	python3 - "$1" "$2" <<'PY'
import json, sys
from collections import Counter
o = json.load(open(sys.argv[1]))
pid, groups, chans, counts, conns = {}, {}, {}, Counter(), {}
for line in open(sys.argv[2]):
    t = json.loads(line)
    tid, a, code = t["tid"], t.get("args", {}), t.get("code")
    if "pid" in t:
        pid[tid] = t["pid"]
    if not code:  # the setup, a flush: no message
        continue
    k = conns.setdefault(tid, Counter())
    k["messages"] += 1
    k["annotations"] += code in (1, 2)
    k["markers"] += code in (6, 7)
    k["jobs"] += code in (12, 14)
    if code == 4:
        groups[tid, a["group"]] = a["str"]
    elif code == 3:
        chans[tid, a["channel"]] = (a["group"], a["str"])
    elif code in (1, 2):
        counts[tid, a["channel"]] += 1
tid0 = next(iter(pid))
pid_of = lambda tid: pid.get(tid, pid[tid0])  # the worker threads' pid is the process's
got = {(g["tid"], g["group"]): g["name"] for g in o["groups"]}
assert got == groups, (got, groups)
assert all(g["pid"] == pid_of(g["tid"]) for g in o["groups"]), o["groups"]
want = {k: (chans.get(k, (0, None)), counts[k]) for k in set(chans) | set(counts)}
got = {(c["tid"], c["channel"]): ((c["group"], c["name"]), c["annotations"]) for c in o["channels"]}
assert got == want, (got, want)
assert all(c["pid"] == pid_of(c["tid"]) for c in o["channels"]), o["channels"]
got = {k["tid"]: {n: k[n] for n in ("messages", "annotations", "markers", "jobs")}
       for k in o["annotate_connections"]}
assert got == {tid: {n: k[n] for n in ("messages", "annotations", "markers", "jobs")}
               for tid, k in conns.items()}, (got, conns)
assert all(k["pid"] == pid_of(k["tid"]) for k in o["annotate_connections"]), o["annotate_connections"]
print(len(o["channels"]), "channels", len(o["groups"]), "groups matched")
PY
}

@test "--summary: annotation channels and groups are per connection (tid), as the clients named them" {
	need_shared
	exits 0 apcdump --summary --json "$SHARED/apc/v68_nonroot_annotate.apc"
	printf '%s\n' "$output" > "$TMP/s.json"
	exits 0 summary_vs_truth "$TMP/s.json" "$SHARED/apc/v68_nonroot_annotate.truth.jsonl"
	[ "$output" = "8 channels 3 groups matched" ]
	a="$SHARED/annotate/v5"
	apcconv -q "$a/stream1.annotate.bin" "$a/stream2.annotate.bin" "$a/stream3.annotate.bin" -o "$TMP/v5.apc"
	apcdump --summary --json "$TMP/v5.apc" > "$TMP/s.json"
	exits 0 summary_vs_truth "$TMP/s.json" "$a/truth.jsonl"
	[ "$output" = "8 channels 3 groups matched" ]
	# The text: each thread's channel 1 under its own name, the groups too.
	exits 0 apcdump --summary "$TMP/v5.apc"
	[[ "$output" == *'  tid 24329    pid 24329    channel 1      group 1      "Channel 1 (group 1)" 4 annotations'* ]]
	[[ "$output" == *'  tid 24357    pid 24329    channel 1      group 1      "Worker A channel 1" 2 annotations'* ]]
	[[ "$output" == *'  tid 24329    pid 24329    group 2      "Gruppe Zwei ü"'* ]]
	[[ "$output" == *'  tid 24357    pid 24329    group 1      "Worker A group"'* ]]
	[[ "$output" == *'Annotation channels: 8'* ]]
}

@test "--summary: annotate connections count each thread's jobs (TPTP method calls) and markers" {
	need_shared
	apcconv -q "$SHARED/tptp/jag_dmtrace.trcxml" -o "$TMP/j.apc"
	exits 0 apcdump --summary "$TMP/j.apc"
	[[ "$output" == *'Annotate connections: 2'* ]]
	[[ "$output" == *'  tid 12       pid 3812     v4     2064 messages        0 annotations      0 markers     2057 jobs  "Thread-106"'* ]]
	exits 0 apcdump --summary --json "$TMP/j.apc"
	[ "$(python3 -c 'import json,sys; print(sum(k["jobs"] for k in json.loads(sys.argv[1])["annotate_connections"]))' "$output")" = 2057 ]
}

# cap_py DIR: a capture folder DIR whose frames the Python on stdin
# gives as the list F (apcpack's helpers imported); captured.xml as
# apcpack's write_cap writes it.
cap_py() {
	need_python
	mkdir -p "$1"
	python3 -c '
import os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, summary, block_counter, frames, write_cap
F = []
exec(sys.stdin.read())
write_cap(sys.argv[1], frames(F))' "$1"
}

@test "a frame code that reads as a negative number is an unknown type: opaque, exit 0 as type 8" {
	# 0x58 is a whole packed32: -40.  0x80 alone is a packed32 cut short.
	cap_py "$TMP/neg.apc" <<'EOF2'
F = [summary(), block_counter(), p(-40) + b"\x00\x01\x02", p(8) + b"\x00\x01\x02"]
EOF2
	exits 0 apcdump "$TMP/neg.apc"
	grep -E '^ +2 0x0+[0-9a-f]+ type_-40 +- opaque +data=<3 bytes 000102>$' <<<"$output"
	grep -E '^ +3 0x0+[0-9a-f]+ type_8 +- opaque +data=<3 bytes 000102>$' <<<"$output"
	apcdump --json "$TMP/neg.apc" | grep -q '"frame":2,.*"type":"type_-40","msg":"opaque"'
	exits 0 apcdump --summary "$TMP/neg.apc"
	grep -E '^  -40 type_-40 +1 frame +1 message$' <<<"$output"
	cap_py "$TMP/bad.apc" <<'EOF2'
F = [summary(), block_counter(), b"\x80"]
EOF2
	exits 1 apcdump "$TMP/bad.apc"
	[[ "$output" == *"frame 2: bad frame code"* ]]
}

@test "a malformed captured.xml is a data problem, said once: exit 1, with and without --xml" {
	cap_py "$TMP/c.apc" <<'EOF2'
F = [summary(), block_counter()]
EOF2
	printf '<?xml version="1.0"?>\n<captured protocol="680">\n<counters></counterz>\n</captured>\n' \
		> "$TMP/c.apc/captured.xml"
	exits 1 apcdump --xml "$TMP/c.apc"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "apcdump: $TMP/c.apc/captured.xml: line 3: not well-formed XML: "*"counterz" ]]
	exits 1 apcdump --xml --json "$TMP/c.apc"
	[ "${#lines[@]}" -eq 1 ]
	exits 1 apcdump "$TMP/c.apc"
	[ "$(grep -c 'not well-formed' <<<"$output")" -eq 1 ]
	# apcverify says exit 1 for it too
	exits 1 apcverify "$TMP/c.apc"
	# no captured.xml at all is still an input that lacks a member: exit 2
	rm "$TMP/c.apc/captured.xml"
	exits 2 apcdump --xml "$TMP/c.apc"
	[ "$output" = "apcdump: $TMP/c.apc: no captured.xml in the capture" ]
}

@test "an fd that disconnects inside an annotate message is a problem: named, counted, exit 1" {
	cap_py "$TMP/d.apc" <<'EOF2'
setup = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\x00"
body = p(100) + p(0) + b"a"
msg = b"\x01" + struct.pack("<I", len(body)) + body
F = [summary(), block_counter(), p(10) + p(7) + setup + msg + msg[:2],
     p(10) + p(-1) + p(7)]
EOF2
	exits 1 apcdump "$TMP/d.apc"
	grep -q 'annotate_str .*ts=.* fd=7 channel=0 text="a"' <<<"$output"
	grep -E "^apcdump: $TMP/d.apc/0000000000: offset 0x[0-9a-f]+: frame 3: external fd 7 disconnects inside an annotate message \(2 bytes pending\)$" <<<"$output"
	exits 1 apcdump --summary "$TMP/d.apc"
	grep -q '^Problems: *1$' <<<"$output"
	# the capture ending inside a message is only stopped (apcverify warns)
	cap_py "$TMP/e.apc" <<'EOF2'
setup = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\x00"
F = [summary(), block_counter(), p(10) + p(7) + setup + b"\x01\x05"]
EOF2
	exits 0 apcdump "$TMP/e.apc"
}

@test "an annotate decode problem: the frame's file offset in the offset slot, the stream offset labelled" {
	# fd 7's stream: setup (20 bytes), then code 0xee at stream offset 0x14
	cap_py "$TMP/a.apc" <<'EOF2'
setup = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\x00"
F = [summary(), block_counter(), p(10) + p(7) + setup + b"\xee" + struct.pack("<I", 2) + b"xy"]
EOF2
	# the External frame is the third: its length word's offset, plus 4
	# and the one-byte frame code, is where its message starts
	off=$(python3 -c 'import os,sys; d=open(sys.argv[1],"rb").read(); import struct
o=0
for _ in range(2): o += 4 + struct.unpack_from("<i", d, o)[0]
print("0x%x" % (o + 5))' "$TMP/a.apc/0000000000")
	exits 1 apcdump "$TMP/a.apc"
	[ "$(grep -c '^apcdump: ' <<<"$output")" -eq 1 ]
	grep -xF "apcdump: $TMP/a.apc/0000000000: offset $off: frame 2: external fd 7, stream offset 0x14: unknown annotate v4 message code 0xee (length 2)" <<<"$output"
	# the same offset as apcverify's frame 2 @0x...
	exits 1 apcverify "$TMP/a.apc"
	grep -q "frame 2 @$off: error: annotate stream on fd 7, stream offset 0x14: " <<<"$output"
}

@test "--summary: for a Barman trace the data's span (no names and links at 0) is apcconv's" {
	for f in "$APC_ROOT/testdata/barman/demo.bin" "$SHARED/barman/capture2_circular64.bin"; do
		[ -f "$f" ] || continue
		rm -rf "$TMP/b.apc"
		span=$(apcconv "$f" -o "$TMP/b.apc" 2>&1 | grep -o 'span [0-9.]* s')
		[ -n "$span" ]
		exits 0 apcdump --summary "$TMP/b.apc"
		# the whole span starts at the names' 0; the data's is apcconv's
		grep -q '^First timestamp: *0 ns$' <<<"$output"
		grep -q "^Time span: *[0-9.]* s (${span#span } from [1-9][0-9]* ns, without thread names and links at 0)\$" <<<"$output"
		apcdump --summary --json "$TMP/b.apc" | python3 -c '
import json, sys
o = json.load(sys.stdin)
want = round(float(sys.argv[1]) * 1e9)
assert o["first_ts"] == 0 and o["data_first_ts"] > 0, o
assert o["data_last_ts"] - o["data_first_ts"] == want, (o, want)' "$(awk '{print $2}' <<<"$span")"
	done
	# a capture with no name at 0 has one span, said once
	cap_py "$TMP/c.apc" <<'EOF2'
F = [summary(), block_counter(ts=20), block_counter(ts=70)]
EOF2
	exits 0 apcdump --summary "$TMP/c.apc"
	grep -qx 'Time span: *0.000000050 s' <<<"$output"
}

@test "--summary counts per core the messages --core=N lists (core_name included)" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	exits 0 apcdump --summary "$TMP/d.apc"
	for c in 0 1; do
		n=$(awk -v c=$c '$1 == "core" && $2 == c {print $3}' <<<"$output")
		[ -n "$n" ]
		[ "$n" -eq "$(apcdump --core=$c "$TMP/d.apc" | wc -l)" ]
		[ "$n" -eq "$(apcdump --json --core=$c "$TMP/d.apc" | wc -l)" ]
	done
}

@test "a Proc frame's core 0 is no core: only online_cpu, offline_cpu and perf_counter name one, in --core and the summary" {
	# gatord writes 0 as every Proc frame's core; here proc, a perf_keys
	# and online_cpu of CPU 1 in one, and a Block Counter on core 1
	cap_py "$TMP/p.apc" <<'EOF2'
cs = lambda t: t + b"\0"
F = [summary(), block_counter(core=1, ts=100),
     p(11) + p(0) + p(5) + p(100) + p(101) + cs(b"/bin/x") + cs(b"x")
     + p(2) + p(1) + p(0x21) + p(3) + p(7) + p(9000) + p(1)
     + p(10) + p(9500) + p(2) + p(0x21) + p(77) + p(-1)]
EOF2
	exits 0 apcdump "$TMP/p.apc"
	# the listing shows the frame's core as written, and the CPU
	# online_cpu names, the core a perf_counter value is of
	[ "$(grep -Ec ' proc +0 +(proc|perf_keys) ' <<<"$output")" -eq 2 ]
	grep -Eq ' proc +1 +online_cpu ' <<<"$output"
	grep -Eq ' proc +2 +perf_counter .* value=77$' <<<"$output"
	exits 0 apcdump --core=0 "$TMP/p.apc"
	[ -z "$output" ]
	exits 0 apcdump --core=1 "$TMP/p.apc"
	[ "${#lines[@]}" -eq 2 ]
	grep -q ' block_counter .* key=0x11 ' <<<"$output"
	grep -q ' online_cpu .* cpu=1$' <<<"$output"
	exits 0 apcdump --core=2 "$TMP/p.apc"
	[ "${#lines[@]}" -eq 1 ]
	exits 0 apcdump --summary "$TMP/p.apc"
	grep -q '^Cores: *2$' <<<"$output"
	grep -Eq '^  core 1 +2 messages$' <<<"$output"
	grep -Eq '^  core 2 +1 message$' <<<"$output"
	exits 0 apcdump --summary --json "$TMP/p.apc"
	[[ "$output" == *'"cores":[{"core":1,"messages":2},{"core":2,"messages":1}]'* ]]
}

@test "--xml: the values stay in one column, however long a key" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	exits 0 apcdump --xml "$TMP/d.apc"
	grep -q '^  captured.backtrace_processing: ' <<<"$output"
	# every key: value line (not the counters' key lines) starts its
	# value in the same column
	cols=$(grep -E '^  [a-z_]+(\.[a-z_]+)?: ' <<<"$output" |
		awk '{ match($0, /: +/); print RSTART + RLENGTH }' | sort -u | wc -l)
	[ "$cols" -eq 1 ]
}

@test "--begin/--end: finer than a nanosecond rounds to the nearest; too large is said so" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	# the first block counter time of demo is 5012921
	dump --frame=block_counter --begin=5.0129214ms -c1 "$TMP/d.apc"
	[[ "$output" == *" ts=5012921 "* ]]
	dump --frame=block_counter --begin=5.0129215ms --end=5.0129225ms "$TMP/d.apc"
	[ -z "$output" ]
	dump --frame=block_counter --begin=5012921 --end=5.0129206ms "$TMP/d.apc"
	[[ "$output" == *" ts=5012921 "* ]]
	exits 2 apcdump --begin=99999999999s "$TMP/d.apc"
	[ "${lines[0]}" = "apcdump: --begin time '99999999999s' is too large (at most 9223372036.854775807s)" ]
	exits 2 apcdump --end=9223372036854775808 "$TMP/d.apc"
	[ "${lines[0]}" = "apcdump: --end time '9223372036854775808' is too large (at most 9223372036.854775807s)" ]
	exits 0 apcdump --end=9223372036.854775807s -c1 "$TMP/d.apc"
	exits 2 apcdump --begin=soon "$TMP/d.apc"
	[ "${lines[0]}" = "apcdump: bad --begin time 'soon' (e.g. 1500, 1.5s, 20ms, 3us)" ]
}

@test "--begin/--end: apcconv and apcdump read a time alike and refuse it in the same words" {
	for t in soon 99999999999s 9223372036854775808 5x -1 1.2.3; do
		exits 2 apcdump --begin="$t" "$APC_ROOT/testdata/barman/demo.bin"
		d=${lines[0]#apcdump: }
		exits 2 apcconv --begin="$t" "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/x.apc"
		[ "${lines[0]#apcconv: }" = "$d" ]
	done
	# a sub-nanosecond time that apcdump takes, apcconv takes too, and
	# both keep the same: demo's first counter values, 5012921 ns in
	apcconv -q --begin=5012920.5ns --end=5012921.5 "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/y.apc"
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/all.apc"
	diff <(apcdump --begin=5012920.5ns --end=5012921.4 "$TMP/all.apc" | grep ' block_counter ' | sed 's/^ *[0-9]* 0x[0-9a-f]* //') \
	     <(apcdump "$TMP/y.apc" | grep ' block_counter ' | sed 's/^ *[0-9]* 0x[0-9a-f]* //')
}

@test "an unknown message code is a warning, as apcverify says it: the rest listed as opaque, exit 0" {
	need_python
	mkdir "$TMP/n.apc" "$TMP/p.apc"
	python3 - "$TMP" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
t = sys.argv[1]
# a Name frame: a thread name, then code 63; a gatord 6.8 Proc frame: a Comm, then code 63
name = p(3) + p(0) + p(2) + p(10) + p(42) + p(2) + b"ab" + p(63) + b"junk"
proc = p(11) + p(0) + p(5) + p(42) + p(43) + b"/bin/img\0" + b"img\0" + p(63) + b"junk"
write_cap(t + "/n.apc", frames([summary(), name, block_counter()]))
write_cap(t + "/p.apc", frames([summary(), proc, block_counter()]))
EOF2
	for c in n:name:0x2c p:proc:0x36; do
		IFS=: read -r cap type off <<<"$c"
		verify 0 "$TMP/$cap.apc"
		grep -q "frame 1 @$off: warning: unknown message code 63 in a $type frame (rest of the frame skipped) \[unknown-msg\]\$" <<<"$output"
		run apcdump "$TMP/$cap.apc"
		[ "$status" -eq 0 ]
		grep -qx "apcdump: $TMP/$cap.apc/0000000000: offset $off: frame 1: warning: unknown message code 63 in a $type frame (rest of the frame skipped)" <<<"$output"
		[ "$(grep -c warning <<<"$output")" -eq 1 ]
		# what comes before the code is decoded, the rest is one opaque message, then the next frame
		grep -Eq "^     1 $(printf 0x%08x $off) $type +0 opaque +data=<5 bytes 3f6a756e6b>\$" <<<"$output"
		grep -q " block_counter .* key=0x11 value=5" <<<"$output"
		apcdump --json "$TMP/$cap.apc" 2>/dev/null | grep -qF '"msg":"opaque","code":63,"data":"3f6a756e6b"}'
		# not a problem: counted apart in the summary
		run apcdump --summary "$TMP/$cap.apc"
		[ "$status" -eq 0 ]
		grep -q '^Problems: *0$' <<<"$output"
		grep -q '^Warnings: *1$' <<<"$output"
		apcdump --summary --json "$TMP/$cap.apc" 2>/dev/null | grep -q '"errors":0,"warnings":1[,}]'
		# -q: neither the warning nor a changed status
		exits 0 apcdump -q "$TMP/$cap.apc"
		! grep -q warning <<<"$output"
	done
}

@test "no capture given: one line, as apcverify says it" {
	exits 2 apcdump
	[ "$output" = "apcdump: no capture given (try --help)" ]
	exits 2 apcverify
	[ "$output" = "apcverify: no capture given (try --help)" ]
}

@test "a string overrun counts the bytes after its length field, as apcverify does" {
	need_python
	mkdir "$TMP/x.apc"
	python3 - "$TMP/x.apc" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
# a thread name of length 128 (a 2-byte packed length) with 2 bytes after it
body = p(3) + p(0) + p(2) + p(10) + p(42) + p(128) + b"ab"
write_cap(sys.argv[1], frames([summary(), block_counter(), body]))
EOF2
	run apcdump "$TMP/x.apc"
	[ "$status" -eq 1 ]
	grep -q 'string length 128 for .* runs past the end of the frame (2 bytes follow the length field)$' <<<"$output"
}

@test "bytes after an External disconnect are a warning, as apcverify says it: listed as opaque, exit 0" {
	# fd 7 opens, then its disconnect [10][-1][7] is followed by "xyz"
	# (3 bytes) in one capture, by "x" in the other
	for tail in xyz x; do
		cap_py "$TMP/$tail.apc" <<EOF2
setup = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\x00"
F = [summary(), block_counter(), p(10) + p(7) + setup, p(10) + p(-1) + p(7) + b"$tail",
     block_counter(ts=30)]
EOF2
		# the External disconnect frame is the fourth: its length word,
		# 4 bytes, then [10][-1][7], 3 bytes, then the extra ones
		off=$(python3 -c 'import sys, struct; d=open(sys.argv[1],"rb").read()
o=0
for _ in range(3): o += 4 + struct.unpack_from("<i", d, o)[0]
print("0x%x" % (o + 7))' "$TMP/$tail.apc/0000000000")
		n=${#tail}
		bytes="$n bytes"
		[ "$n" -gt 1 ] || bytes="1 byte"
		hex=$(printf %s "$tail" | od -An -tx1 | tr -d ' \n')
		verify 0 "$TMP/$tail.apc"
		grep -qx "$TMP/$tail.apc: frame 3 @$off: warning: $bytes after a disconnect message \[unknown-msg\]" <<<"$output"
		run apcdump "$TMP/$tail.apc"
		echo "$output"
		[ "$status" -eq 0 ]
		# one warning line, in apcverify's words
		grep -qx "apcdump: $TMP/$tail.apc/0000000000: offset $off: frame 3: warning: $bytes after a disconnect message" <<<"$output"
		[ "$(grep -c warning <<<"$output")" -eq 1 ]
		# the disconnect, then the bytes as one opaque message, then the next frame
		grep -Eq "^     3 0x[0-9a-f]+ external +- external_disconnect fd=7\$" <<<"$output"
		grep -Eq "^     3 $(printf 0x%08x "$off") external +- opaque +data=<$n bytes $hex>\$" <<<"$output"
		grep -q "^     4 .* block_counter .* ts=30 " <<<"$output"
		apcdump --json "$TMP/$tail.apc" 2>/dev/null |
			grep -qF "{\"frame\":3,\"offset\":$((off)),\"frame_offset\":$((off - 7)),\"type\":\"external\",\"msg\":\"opaque\",\"data\":\"$hex\"}"
		# counted under Warnings, not Problems
		run apcdump --summary "$TMP/$tail.apc"
		[ "$status" -eq 0 ]
		grep -q '^Problems: *0$' <<<"$output"
		grep -q '^Warnings: *1$' <<<"$output"
		apcdump --summary --json "$TMP/$tail.apc" 2>/dev/null | grep -q '"errors":0,"warnings":1[,}]'
		exits 0 apcdump -q "$TMP/$tail.apc"
		! grep -q warning <<<"$output"
	done
	# a disconnect with nothing after it: no warning
	cap_py "$TMP/d.apc" <<'EOF2'
setup = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\x00"
F = [summary(), block_counter(), p(10) + p(7) + setup, p(10) + p(-1) + p(7)]
EOF2
	exits 0 apcdump "$TMP/d.apc"
	! grep -q -e warning -e opaque <<<"$output"
}

@test "an External fd out of range is a problem in both tools, disconnect or data" {
	# a disconnect of fd 70000 (past the 65536 External ids tracked),
	# then data on it
	cap_py "$TMP/o.apc" <<'EOF2'
F = [summary(), block_counter(), p(10) + p(-1) + p(70000), p(10) + p(70000) + b"ANNOTATE 4\n",
     block_counter(ts=30)]
EOF2
	verify 1 "$TMP/o.apc"
	grep -q 'frame 2 @0x[0-9a-f]*: error: disconnect for fd 70000, which is out of range \[ext-fd\]$' <<<"$output"
	grep -q 'frame 3 @0x[0-9a-f]*: error: external fd 70000 is out of range \[ext-fd\]$' <<<"$output"
	run apcdump "$TMP/o.apc"
	[ "$status" -eq 1 ]
	grep -q "apcdump: $TMP/o.apc/0000000000: offset 0x[0-9a-f]*: frame 2: disconnect for fd 70000, which is out of range$" <<<"$output"
	grep -q "apcdump: $TMP/o.apc/0000000000: offset 0x[0-9a-f]*: frame 3: external fd 70000 is out of range$" <<<"$output"
	run apcdump --summary "$TMP/o.apc"
	grep -q '^Problems: *2$' <<<"$output"
}

@test "an input whose name starts a message is still named: empty, emp, zero.dat" {
	cd "$TMP"
	for f in empty emp em zero.dat; do
		: >"$f"
		exits 1 apcdump "$f"
		[ "$output" = "apcdump: $f: empty capture: the data file has no frames" ]
	done
}

@test "standard input is <stdin> in every message and header; --json keeps the argument, -" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	run apcdump -c1 - "$TMP/d.apc" <"$TMP/d.apc/0000000000"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "==> <stdin> <==" ]
	[ "${lines[2]}" = "==> $TMP/d.apc <==" ]
	run apcdump --summary - <"$TMP/d.apc/0000000000"
	[ "${lines[0]}" = "File:                <stdin>" ]
	tar -cf "$TMP/d.tar" -C "$TMP" d.apc
	run apcdump --xml - <"$TMP/d.tar"
	[ "${lines[0]}" = "<stdin>: captured.xml" ]
	exits 1 apcdump - </dev/null
	[ "$output" = "apcdump: <stdin>: empty capture: the data file has no frames" ]
	exits 2 apcdump --xml - <"$TMP/d.apc/0000000000"
	[ "$output" = "apcdump: <stdin>: no captured.xml beside the bare data file" ]
	# JSON's "file" is the argument as given, for a script to match
	run apcdump --json -c1 - "$TMP/d.apc" <"$TMP/d.apc/0000000000"
	[[ "${lines[0]}" == '{"file":"-",'* ]]
	run apcdump --summary --json - <"$TMP/d.apc/0000000000"
	[[ "$output" == '{"file":"-",'* ]]
}

@test "a broken captured.xml is named as the file, with libxml2's words once" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/bx.apc"
	sed -i '3s/<target /<target/' "$TMP/bx.apc/captured.xml"
	cd "$TMP"
	exits 1 apcdump --xml bx.apc
	[ "$output" = "apcdump: bx.apc/captured.xml: line 3: not well-formed XML: couldn't find end of Start Tag targetname" ]
	exits 1 apcdump bx.apc
	[ "${lines[0]}" = "apcdump: bx.apc/captured.xml: line 3: not well-formed XML: couldn't find end of Start Tag targetname" ]
	# in an archive, named as the input layer names its members
	tar -cf bx.tar bx.apc
	exits 1 apcdump --xml bx.tar
	[ "$output" = "apcdump: bx.tar:captured.xml: line 3: not well-formed XML: couldn't find end of Start Tag targetname" ]
	# beside a bare data file: that file
	exits 1 apcdump --xml bx.apc/0000000000
	[ "$output" = "apcdump: bx.apc/captured.xml: line 3: not well-formed XML: couldn't find end of Start Tag targetname" ]
	# an empty one: libxml2's line, once
	: >bx.apc/captured.xml
	exits 1 apcdump --xml bx.apc
	[ "$output" = "apcdump: bx.apc/captured.xml: line 1: not well-formed XML: document is empty" ]
}

@test "bad numbers: the option named, the value quoted, and the --help hint" {
	exits 2 apcdump -c -1 x
	[ "$output" = "apcdump: --count: '-1' is not a count (a whole number, 1 or more)
Try 'apcdump --help' for more information." ]
	exits 2 apcdump --count=0 x
	[ "${lines[0]}" = "apcdump: --count: '0' is not a count (a whole number, 1 or more)" ]
	exits 2 apcdump --core=x x
	[ "$output" = "apcdump: --core: 'x' is not a core number (a whole number, 0 or more)
Try 'apcdump --help' for more information." ]
}

@test "--frame names are taken in any case" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	want=$(apcdump --frame=summary,name "$TMP/d.apc")
	[ -n "$want" ]
	for f in SUMMARY,Name Summary,NAME sUmMaRy,name; do
		exits 0 apcdump --frame="$f" "$TMP/d.apc"
		[ "$output" = "$want" ]
	done
	[ "$(apcdump --frame=PERF_ATTRS "$TMP/d.apc")" = "$(apcdump --frame=perf_attrs "$TMP/d.apc")" ]
	exits 2 apcdump --frame=Summery "$TMP/d.apc"
	[[ "$output" == "apcdump: unknown frame type 'Summery' "* ]]
}

@test "--summary counts zero-length frames as empty, apart from unknown types" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/z.apc"
	head -c 4000 /dev/zero >>"$TMP/z.apc/0000000000"
	exits 0 apcdump --summary "$TMP/z.apc"
	grep -E '^    - empty +1000 frames +1000 messages$' <<<"$output"
	! grep -q '? other' <<<"$output" || false
	apcdump --summary --json "$TMP/z.apc" | grep -q '"empty":{"frames":1000,"messages":1000}'
}

# json_keys_once FILE...: every line of each JSON Lines FILE parses, and
# no object in it (nested ones too) has a key twice: jq and Python's json
# keep only the last of a repeated key, so the others would be lost.
json_keys_once() {
	python3 - "$@" <<'PY'
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    assert not dup, "keys %s more than once in one object: %r" % (dup, dict(pairs))
    return dict(pairs)
for path in sys.argv[1:]:
    n = 0
    for line in open(path):
        json.loads(line, object_pairs_hook=once)
        n += 1
    assert n > 0, path + ": no JSON"
PY
}

# attrs_as_text TEXT JSON [WANT]: the Summary's attributes in the JSON
# listing (the "attrs" of its summary and summary_attrs messages, in
# order, each {"key","value"}) are the attr_key/attr_value pairs of the
# text listing, one for one; and, given WANT (a JSON array of [key,
# value]), the ones the capture was written with.
attrs_as_text() {
	python3 - "$@" <<'PY'
import json, re, sys
def text(s):  # a string as the text listing escapes it (dump.c text_wstr)
    out = ""
    for c in s:
        o = ord(c)
        if c in '"\\':
            out += "\\" + c
        elif c in "\n\r\t":
            out += {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[c]
        elif o < 0x20 or o == 0x7f:
            out += "\\x%02x" % o
        else:
            out += c
    return out
q = r'"((?:[^"\\]|\\.)*)"'
want_text = [m for line in open(sys.argv[1]) if re.search(" summary(_attrs)? ", line)
             for m in re.findall(r" attr_key=%s attr_value=%s" % (q, q), line)]
got = []
for line in open(sys.argv[2]):
    o = json.loads(line)
    if o["msg"] in ("summary", "summary_attrs"):
        assert isinstance(o["attrs"], list), line
        assert not any(k.startswith("attr_") for k in o), line
        got += [(a["key"], a["value"]) for a in o["attrs"]]
    else:
        assert "attrs" not in o, line
assert [(text(k), text(v)) for k, v in got] == want_text, (got, want_text)
if len(sys.argv) > 3:
    assert got == [tuple(a) for a in json.loads(sys.argv[3])], got
PY
}

# every_frame_cap DIR: a protocol-680 capture with every frame type and
# message apcdump knows, through apcpack.py: a Summary of 41 attributes
# (more than one message holds; "dup" twice, one with a quote and a
# newline), a captured.xml naming <target> twice and an attribute in two
# namespaces, frame 11 as gatord 6.8's perf messages, an External
# annotate stream, unknown frame types and message code, empty frames.
# Prints the attributes written, a JSON array of [key, value].
every_frame_cap() {
	mkdir -p "$1"
	python3 - "$1" <<'PY'
import json, os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, CANARY, frames
d = sys.argv[1]
cs = lambda t: t + b"\0"
attrs = [(b"k%d" % i, b"v%d" % i) for i in range(38)]
attrs += [(b"dup", b"1"), (b'q"k', b"a\nb"), (b"dup", b"2")]
ann = lambda code, body: bytes([code]) + struct.pack("<I", len(body)) + body
chunk = lambda words: struct.pack("<I", len(words)) + words  # a perf data chunk
stream = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\0" + ann(1, p(100) + p(0) + b"hi")
open(d + "/0000000000", "wb").write(frames([
    p(1) + p(1) + s(CANARY) + p(1700000000000000000) + p(500) + p(100)
    + b"".join(s(k) + s(v) for k, v in attrs) + s(b"") + p(3) + p(0) + p(0x41fd0) + s(b"cpu0"),
    p(2) + p(0) + p(10) + p(7) + p(100) + p(101) + p(7) + p(0x1000) + p(1),
    p(3) + p(0) + p(1) + p(7) + s(b"libc.so") + p(2) + p(11) + p(101) + s(b"main"),
    p(4) + p(12) + p(1) + p(0x11) + p(99),
    p(5) + p(1) + p(0) + p(20) + p(1) + p(100) + p(0x11) + p(5),
    p(6) + p(0) + p(101) + p(30) + p(3) + b"abc",
    p(7) + p(0) + p(1) + p(40) + p(101) + p(0) + p(2) + p(41) + p(101),
    p(9) + p(1) + p(50) + p(0),
    p(10) + p(3) + stream,
    p(10) + p(-1) + p(3),
    p(11) + p(0) + p(1) + b"\x04\0\0\0\x10\0\0\0\x05" + b"\0" * 7 + p(0x21)
    + p(2) + p(1) + p(1000) + p(0x21) + p(3) + cs(b"fmt")
    + p(4) + p(100) + p(101) + cs(b"00400000-00401000 r-xp /bin/x\n")
    + p(5) + p(100) + p(101) + cs(b"/bin/x") + cs(b"x") + p(7) + p(60) + p(1) + p(8) + p(61) + p(1)
    + p(9) + cs(b"ffff t sym\n") + p(10) + p(70) + p(1) + p(0x21) + p(5) + p(-1)
    + p(11) + cs(b"page") + p(12) + cs(b"event") + p(6) + p(1) + p(0x21) + b"raw",
    p(12) + p(0) + chunk(p(9 | 1 << 32 | 16 << 48) + p(0x1000) + p(11 | 32 << 48)
                         + p(1) + p(2) + p(3) + p(77 | 8 << 48)),
    p(13) + p(1) + p(80) + p(7) + p(100) + p(101)
    + p(2) + p(81) + p(0) + p(0x31) + p(2) + p(101) + p(0) + p(3) + p(82) + p(101),
    p(14) + p(0) + p(4096) + s(b"aux"),
    p(15) + p(0) + p(100) + p(101) + p(25000000) + p(123456789) + p(987654),
    p(8) + b"eight",
    p(3) + p(0) + p(9) + b"junk",
    p(5) + p(0),
    b"",
]))
open(d + "/captured.xml", "w").write(
    '<?xml version="1.0"?>\n<captured version="1" protocol="680" type="Gator" '
    'xmlns:a="urn:a" xmlns:b="urn:b" a:z="1" b:z="2"><target name="t" cores="2"/>'
    '<target name="u" cores="2"/><counters><counter key="0x11" type="T_cnt0"/></counters>'
    '</captured>\n')
print(json.dumps([[k.decode(), v.decode()] for k, v in attrs]))
PY
}

@test "--json: no object has a key twice, every frame type; the Summary's attributes are one \"attrs\" member, in order" {
	need_python
	want=$(every_frame_cap "$TMP/e.apc")
	# every frame type and message the listing knows is in it
	exits 0 apcdump "$TMP/e.apc"
	for m in summary summary_attrs core_name backtrace cookie_name thread_name counter \
		block_counter annotate sched_switch thread_exit idle external annotate_setup \
		annotate_str external_disconnect perf_attr perf_keys perf_format perf_maps proc \
		online_cpu offline_cpu kallsyms perf_counter header_page header_event perf_keys_old \
		link activity_switch task_exit perf_sample perf_aux_record perf_record perf_aux \
		perf_sync opaque empty; do
		grep -q "^ *[0-9]* 0x[0-9a-f]* [a-z_0-9]* *[-0-9]* $m " <<<"$output"
	done
	apcdump "$TMP/e.apc" >"$TMP/text" 2>/dev/null
	apcdump --json "$TMP/e.apc" >"$TMP/j" 2>/dev/null
	apcdump --json -x "$TMP/e.apc" >"$TMP/jx" 2>/dev/null
	apcdump --json --summary "$TMP/e.apc" >"$TMP/js" 2>/dev/null
	apcdump --json --xml "$TMP/e.apc" >"$TMP/jxml" 2>/dev/null
	# and with a second input, every object has "file" too
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	apcdump --json "$TMP/e.apc" "$TMP/d.apc" >"$TMP/j2" 2>/dev/null || true
	json_keys_once "$TMP/j" "$TMP/jx" "$TMP/js" "$TMP/jxml" "$TMP/j2"
	[ "$(wc -l <"$TMP/j")" -eq "$(wc -l <"$TMP/text")" ]
	attrs_as_text "$TMP/text" "$TMP/j" "$want"
	# one member after the clocks, of {"key","value"} objects (jq's entries)
	grep -q '^{"frame":0,"offset":5,.*"monotonic_delta":100,"attrs":\[{"key":"k0","value":"v0"},{"key":"k1",' "$TMP/j"
	# A Summary without attributes (apcconv writes none for Barman) has
	# "attrs" too, empty; one apcconv writes from LTT's system.xml has
	# them as the text listing does.
	exits 0 apcdump --json --frame=summary -c 1 "$TMP/d.apc"
	[[ "$output" == *',"monotonic_delta":0,"attrs":[]}' ]]
	if [ -x "$APC_TOOLS/lttgen" ]; then
		"$APC_TOOLS/lttgen" --seed 3 --events 300 -o "$TMP/ltt" >/dev/null
		apcconv -q "$TMP/ltt" -o "$TMP/l.apc"
		apcdump "$TMP/l.apc" >"$TMP/ltext"
		apcdump --json "$TMP/l.apc" >"$TMP/lj"
		json_keys_once "$TMP/lj"
		attrs_as_text "$TMP/ltext" "$TMP/lj"
		grep -q '"attrs":\[{"key":"uname","value":"Linux lttgen ' "$TMP/lj"
	else
		echo "# lttgen is not built: apcconv's attributes not tested" >&3
	fi
}

@test "--xml --json: an element or attribute name given twice keeps both, the later ones as KEY#2" {
	need_python
	every_frame_cap "$TMP/e.apc" >/dev/null
	exits 0 apcdump --xml "$TMP/e.apc"
	# the text names attributes by their qualified names
	grep -qE '^  captured\.a:z: +1$' <<<"$output"
	grep -qE '^  captured\.b:z: +2$' <<<"$output"
	[ "$(grep -c '^  target\.name:' <<<"$output")" -eq 2 ]
	exits 0 apcdump --xml --json "$TMP/e.apc"
	[ "$output" = '{"file":"'"$TMP"'/e.apc","captured.version":"1","captured.protocol":"680","captured.type":"Gator","captured.a:z":"1","captured.b:z":"2","target.name":"t","target.cores":"2","target.name#2":"u","target.cores#2":"2","counters":[{"key":17,"name":"T_cnt0"}]}' ]
}

@test "--json on the real captures: no object has a key twice; the Summary's attributes all there, in order" {
	need_shared
	need_python
	for c in $CAPS; do
		apcdump "$SHARED/apc/$c" >"$TMP/text"
		apcdump --json "$SHARED/apc/$c" >"$TMP/j"
		apcdump --json --summary "$SHARED/apc/$c" >"$TMP/js"
		apcdump --json --xml "$SHARED/apc/$c" >"$TMP/jxml"
		json_keys_once "$TMP/j" "$TMP/js" "$TMP/jxml"
		attrs_as_text "$TMP/text" "$TMP/j"
	done
	# what gatord 6.8 and 9.7 wrote, first to last
	apcdump --json --frame=summary "$SHARED/apc/v68_nonroot.apc" >"$TMP/j"
	apcdump --frame=summary "$SHARED/apc/v68_nonroot.apc" >"$TMP/text"
	attrs_as_text "$TMP/text" "$TMP/j" \
		'[["uname", "Linux vm 6.18.44-fc-v769 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux"], ["PAGESIZE", "4096"], ["nosync", ""]]'
	apcdump --json --frame=summary "$SHARED/apc/sleep_counters.apc" | python3 -c '
import json, sys
keys = [a["key"] for l in sys.stdin for a in json.loads(l).get("attrs", [])]
assert len(keys) == 12 and keys[:3] == ["uname", "PAGESIZE", "nosync"], keys
assert keys[-1] == "perf.is_system_wide", keys'
}

@test "a CAM job's start is on the capture's clock, as its annotation times are (text and JSON)" {
	# v4 CAM job: view, job, track, start, duration, colour (4 bytes),
	# primary dependency, dependency count, text; the Summary's delta is 100
	cap_py "$TMP/j.apc" <<'EOF2'
ann = lambda code, body: bytes([code]) + struct.pack("<I", len(body)) + body
setup = b"ANNOTATE 4\n" + struct.pack("<II", 40, 40) + b"\x00"
job = p(1) + p(7) + p(2) + p(1000) + p(50) + b"\xff\0\0\x1b" + p(-1) + p(0) + b"j"
F = [summary(), p(10) + p(5) + setup + ann(1, p(1000) + p(0) + b"s") + ann(12, job)]
EOF2
	exits 0 apcdump "$TMP/j.apc"
	grep -q ' annotate_str *ts=900 fd=5 channel=0 text="s"$' <<<"$output"
	grep -q ' annotate_cam_job fd=5 view=1 job=7 track=2 start=900 duration=50 ' <<<"$output"
	exits 0 apcdump --json "$TMP/j.apc"
	grep -q '"msg":"annotate_cam_job",.*"start":900,"duration":50,' <<<"$output"
	# the listing places the job where the summary's span does
	exits 0 apcdump --summary "$TMP/j.apc"
	grep -qx 'Last timestamp: *950 ns' <<<"$output"
}

@test "CAM jobs of real captures start inside the summary's span (gatord 6.8, TPTP)" {
	need_shared
	need_python
	apcconv -q "$SHARED/tptp/basic.trcxml" -o "$TMP/t.apc"
	for c in "$SHARED/apc/v68_nonroot_annotate.apc" "$TMP/t.apc"; do
		apcdump --summary --json "$c" >"$TMP/s"
		apcdump --json --frame=external "$c" | python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
jobs = [o for o in map(json.loads, sys.stdin) if o["msg"] == "annotate_cam_job"]
assert jobs
for o in jobs:
    assert s["first_ts"] <= o["start"] <= o["start"] + o["duration"] <= s["last_ts"], (o, s["first_ts"], s["last_ts"])' "$TMP/s"
	done
	# gatord 6.8: job10 was sent at 2990734160949 on the client clock,
	# whose delta is 2987975228574; the streamed job20 starts 16.7 us later
	exits 0 apcdump --frame=external "$SHARED/apc/v68_nonroot_annotate.apc"
	grep -q ' annotate_cam_job *fd=17 view=1 job=10 track=1 start=2758932375 ' <<<"$output"
	grep -q ' annotate_job_start *ts=2758949056 fd=17 view=1 job=20 ' <<<"$output"
}

# offsets_in_frames DATA JSON: every message's offset in the JSON listing
# lies inside its frame (length word to last byte) as DATA's length words
# place it.
offsets_in_frames() {
	python3 - "$@" <<'PY'
import json, struct, sys
d = open(sys.argv[1], "rb").read()
ends, o = {}, 0
while o + 4 <= len(d):
    n = struct.unpack_from("<i", d, o)[0]
    ends[o] = o + 4 + n
    o += 4 + n
n = 0
for line in open(sys.argv[2]):
    j = json.loads(line)
    f = j["frame_offset"]
    assert f <= j["offset"] < ends[f], (j["offset"], f, ends[f], line)
    n += 1
assert n
PY
}

@test "a stretch of zeros in the data file: one warning after its lines, in apcverify's words; exit 0" {
	# 4000 zero bytes between two Block Counter frames: 1000 zero-length frames
	cap_py "$TMP/z.apc" <<'EOF2'
F = [summary(), block_counter()] + [b""] * 1000 + [block_counter(ts=30)]
EOF2
	apcdump "$TMP/z.apc" >"$TMP/out" 2>"$TMP/err"
	[ "$(grep -c ' empty *- empty *$' "$TMP/out")" -eq 1000 ]
	[ "$(wc -l <"$TMP/err")" -eq 1 ]
	w=$(sed 's/^apcdump: //' "$TMP/err")
	[[ "$w" == *": offset 0x2a: frame 2: warning: 1000 zero-length frames (the protocol's end of sequence) one after another inside the file, to offset 0xfca: 4000 bytes of zeros (space never written?)" ]]
	# apcverify's line, less its tag, and the same offset
	exits 0 apcverify "$TMP/z.apc"
	grep -qF "frame 2 @0x2a: warning: 1000 zero-length frames (the protocol's end of sequence) one after another inside the file, to offset 0xfca: 4000 bytes of zeros (space never written?) [frame-empty]" <<<"$output"
	# after the run's last line, before the next frame's
	exits 0 apcdump "$TMP/z.apc"
	[[ "${lines[1001]}" == *" empty "* && "${lines[1002]}" == *"warning: 1000 zero-length"* ]]
	[[ "${lines[1003]}" == *" block_counter "* ]]
	exits 0 apcdump --summary "$TMP/z.apc"
	grep -q '^Warnings: *1$' <<<"$output"
	# a listing cut short in the run does not count it
	exits 0 apcdump -c 10 "$TMP/z.apc"
	! grep -q warning <<<"$output" || false
}

@test "a frame with no message: its line's offset is in the frame, not the next one's" {
	need_python
	# a Block Counter frame of its header only, a bare External frame,
	# a zero-length frame, each followed by another frame; and a Block
	# Counter frame that only sets the time (key 0)
	cap_py "$TMP/e.apc" <<'EOF2'
F = [summary(), p(5) + p(0), p(10), b"", p(5) + p(1) + p(0) + p(20), block_counter()]
EOF2
	apcdump --json "$TMP/e.apc" >"$TMP/j" 2>"$TMP/err"
	# the zero-length frame is warned of on its own, as apcverify does
	[ "$(cat "$TMP/err")" = "apcdump: $TMP/e.apc/0000000000: offset 0x2b: frame 3: warning: zero-length frame (the protocol's end of sequence) inside the file" ]
	offsets_in_frames "$TMP/e.apc/0000000000" "$TMP/j"
	# at the body (its code), the length word of the zero-length frame,
	# after the header when the frame has more
	# (the Summary's frame is 4 + 28 bytes)
	exits 0 apcdump "$TMP/e.apc"
	grep -qx ' *1 0x00000024 block_counter *0 empty *' <<<"$output"
	grep -qx ' *2 0x0000002a external *- empty *' <<<"$output"
	grep -qx ' *3 0x0000002b [a-z_0-9-]* *- empty *' <<<"$output"
	grep -qx ' *4 0x00000035 block_counter *1 empty *' <<<"$output"
}

@test "the real captures: every message's offset is in its frame (empty frames too)" {
	need_shared
	need_python
	for c in $CAPS; do
		apcdump --json "$SHARED/apc/$c" >"$TMP/j"
		offsets_in_frames "$SHARED/apc/$c/0000000000" "$TMP/j"
	done
	# frame 217's length word is at 0x1287, 218's at 0x128d: 217 is its
	# header only, listed at its body (its frame code), as is the bare
	# External frame 214 (length word at 0x1251)
	exits 0 apcdump -x --frame=block_counter -c 300 "$SHARED/apc/v68_nonroot.apc"
	grep -qx ' *217 0x0000128b block_counter *0 empty *' <<<"$output"
	grep -qx ' *218 0x00001291 block_counter *0 empty *' <<<"$output"
	exits 0 apcdump --frame=external -c 5 "$SHARED/apc/v68_nonroot.apc"
	grep -qx ' *214 0x00001255 external *- empty *' <<<"$output"
}

@test "a frame shown opaque that is its header alone holds no message: one line, empty" {
	need_python
	# perf_data and type 14 with their core, an unknown type, then one
	# with a body
	cap_py "$TMP/o.apc" <<'EOF2'
F = [summary(), p(12) + p(0), p(14) + p(1), p(40), p(41) + b"x"]
EOF2
	exits 0 apcdump "$TMP/o.apc"
	grep -qx ' *1 0x00000024 perf_data *0 empty *' <<<"$output"
	grep -qx ' *2 0x0000002a perf_aux *1 empty *' <<<"$output"
	grep -qx ' *3 0x00000030 type_40 *- empty *' <<<"$output"
	grep -qx ' *4 0x00000036 type_41 *- opaque *data=<1 bytes 78>' <<<"$output"
	! grep -q '<0 bytes>' <<<"$output" || false
	exits 0 apcdump --summary "$TMP/o.apc"
	grep -qE '^  empty +3$' <<<"$output"
	grep -qE '^  opaque +1$' <<<"$output"
}

@test "gatord 9.x Proc frames decode as 6.8's, with metric_event_key and kernel_build_id; an unknown code is a warning" {
	mkdir "$TMP/n.apc"
	apcpack_py "$TMP/n.apc" <<'EOF'
d = sys.argv[1]
cs = lambda t: t + b"\0"
summary4 = p(1) + p(1) + s(CANARY) + p(1700000000000000000) + p(500) + p(100) + p(90) + s(b"")
open(d + "/0000000000", "wb").write(frames([
    p(11) + p(0) + p(14) + p(4) + bytes.fromhex("abcdef01"),   # before the Summary, as 9.x writes
    summary4,
    p(11) + p(0) + p(13) + p(5) + p(0x11) + p(7) + p(1),
    p(11) + p(0) + p(5) + p(100) + p(101) + cs(b"/bin/x") + cs(b"x"),
    p(11) + p(0) + p(15) + b"zz",
    block_counter(),
]))
open(d + "/captured.xml", "w").write('<?xml version="1.0"?>\n<captured version="1" protocol="950">'
    '<counters><counter key="0x11" type="T_cnt0"/></counters></captured>\n')
EOF
	apcdump "$TMP/n.apc" >"$TMP/out" 2>"$TMP/err"
	grep -Eq '^ +0 0x[0-9a-f]+ proc +0 kernel_build_id +build_id=<4 bytes abcdef01>$' "$TMP/out"
	grep -Eq '^ +2 0x[0-9a-f]+ proc +0 metric_event_key +metric_key=0x5 event_code=0x11 event_key=0x7 event_type=1$' "$TMP/out"
	grep -Eq '^ +3 0x[0-9a-f]+ proc +0 proc +pid=100 tid=101 image="/bin/x" comm="x"$' "$TMP/out"
	grep -Eq '^ +4 0x[0-9a-f]+ proc +0 opaque +data=<3 bytes 0f7a7a>$' "$TMP/out"
	[ "$(cat "$TMP/err")" = "apcdump: $TMP/n.apc/0000000000: offset 0x53: frame 4: warning: unknown message code 15 in a proc frame (rest of the frame skipped)" ]
	apcdump --json "$TMP/n.apc" 2>/dev/null | grep -qF '"msg":"kernel_build_id","code":14,"build_id":"abcdef01"}'
	# apcverify reads them as the listing does: no decode error
	exits 0 apcverify "$TMP/n.apc"
	grep -q 'frame 4 @0x53: warning: unknown message code 15 in a proc frame' <<<"$output"
	! grep -q '\[decode\]' <<<"$output" || false
}

@test "gatord 9.7.2's Proc frames (sleep_counters) decode whole: attributes, comms, its kernel's build id" {
	need_shared
	exits 0 apcdump --frame=proc "$SHARED/apc/sleep_counters.apc"
	[ "$(grep -c ' perf_attr .* attr=<144 bytes ' <<<"$output")" -eq 6 ]
	[ "$(grep -c ' proc  *0 proc  *pid=' <<<"$output")" -eq 93 ]
	grep -qx ' *3 0x00000dee proc *0 kernel_build_id *build_id=<20 bytes abf9ec0ec5946600c90641cf5db99847...>' <<<"$output"
	grep -q ' online_cpu *ts=140619878 cpu=1$' <<<"$output"
	! grep -q ' opaque ' <<<"$output" || false
	# no warning: every code in it is one gatord's source names
	apcdump "$SHARED/apc/sleep_counters.apc" 2>&1 >/dev/null | { ! grep -q .; }
	exits 0 apcverify "$SHARED/apc/sleep_counters.apc"
	[[ "$output" == *": ok (41 frames, 1 warning)" ]]
	# thread names from its comms
	exits 0 apcdump --summary "$SHARED/apc/sleep_counters.apc"
	grep -qx 'Threads: *95 (95 named)' <<<"$output"
}

@test "gatord 9.x: frame 11 of its header alone is listed as empty (sleep_counters frames 2 and 4)" {
	need_shared
	# (frames 0 and 1 hold 6 and 93 messages)
	exits 0 apcdump --frame=proc -c 102 "$SHARED/apc/sleep_counters.apc"
	grep -qx ' *2 0x00000de6 proc *0 empty *' <<<"$output"
	grep -qx ' *4 0x00000e08 proc *0 empty *' <<<"$output"
	! grep -q 'data=<0 bytes>' <<<"$output" || false
	exits 0 apcdump --json --frame=proc -c 102 "$SHARED/apc/sleep_counters.apc"
	grep -qF '{"frame":2,"offset":3558,"frame_offset":3554,"type":"proc","core":0,"msg":"empty"}' <<<"$output"
}

@test "unknown frame types: the listing, --summary and --frame name each alike (type_N, empty, bad_code)" {
	# codes -40, 40, 8, -1 (0x7f), 200; a zero-length frame; a code that
	# does not read (0x80 alone)
	cap_py "$TMP/u.apc" <<'EOF2'
F = [summary(), block_counter(), p(-40) + b"\0\1\2", p(40) + b"ab", p(8) + b"x",
     p(-1) + b"m", b"", p(200) + b"z", p(40) + b"cd", b"\x80"]
EOF2
	exits 1 apcdump "$TMP/u.apc"
	grep -qx ' *5 0x00000044 type_-1 *- opaque *data=<1 bytes 6d>' <<<"$output"
	# a zero-length frame has no code: not type_-1, which is code 0x7f
	grep -qx ' *6 0x00000045 empty *- empty *' <<<"$output"
	# one row per type, named as the listing names it, by code; then
	# the frames without a code
	exits 1 apcdump --summary "$TMP/u.apc"
	[ "$(sed -n '/^Frame types:/,/^Message kinds:/p' <<<"$output")" = "Frame types:
  -40 type_-40                  1 frame           1 message
   -1 type_-1                   1 frame           1 message
    1 summary                   1 frame           1 message
    5 block_counter             1 frame           1 message
    8 type_8                    1 frame           1 message
   40 type_40                   2 frames          2 messages
  200 type_200                  1 frame           1 message
    ? bad_code                  1 frame           0 messages
    - empty                     1 frame           1 message
Message kinds:" ]
	apcdump --summary --json "$TMP/u.apc" | python3 -c '
import json, sys
t = json.load(sys.stdin)["frame_types"]
assert list(t) == ["type_-40", "type_-1", "summary", "block_counter", "type_8", "type_40",
                   "type_200", "bad_code", "empty"], t
assert t["type_40"] == {"frames": 2, "messages": 2} and t["bad_code"]["messages"] == 0, t'
	# --frame takes every name the listing gives a type, and its number
	for sel in -40 type_-40 TYPE_-40; do
		exits 1 apcdump --frame=$sel "$TMP/u.apc"
		grep -qx ' *2 0x0000002f type_-40 *- opaque *data=<3 bytes 000102>' <<<"$output"
		[ "$(grep -c '^ ' <<<"$output")" -eq 1 ]
	done
	exits 1 apcdump --frame=type_40,200 "$TMP/u.apc"
	[ "$(grep -cE '^ +[0-9]+ 0x[0-9a-f]+ type_(40|200) ' <<<"$output")" -eq 3 ]
	exits 1 apcdump --frame=empty "$TMP/u.apc"
	[ "$(grep -c '^ ' <<<"$output")" -eq 1 ]
	grep -qx ' *6 0x00000045 empty *- empty *' <<<"$output"
	exits 1 apcdump --frame=-1 "$TMP/u.apc"
	! grep -q ' empty ' <<<"$output" || false
	grep -q ' type_-1 ' <<<"$output"
	# numbers past 32 bits are no frame code; neither is type_
	for bad in 2147483648 -2147483649 type_ type_x; do
		exits 2 apcdump --frame=$bad "$TMP/u.apc"
		grep -q "unknown frame type '$bad'" <<<"$output"
	done
	exits 1 apcdump --frame=-2147483648,00000000000000000040 "$TMP/u.apc"
	[ "$(grep -c '^ ' <<<"$output")" -eq 2 ]
}

@test "--summary: for a TPTP trace apcconv's span is the whole span, the data's starts at the first thread (as the man page says)" {
	need_shared
	need_python
	rm -rf "$TMP/t.apc"
	run apcconv "$SHARED/tptp/basic.trcxml" -o "$TMP/t.apc"
	[[ "$output" == *", span 0.000061000 s, "* ]]
	exits 0 apcdump --summary "$TMP/t.apc"
	grep -qx 'Time span: *0.000061000 s (0.000058000 s from 3000 ns, without thread names and links at 0)' <<<"$output"
	# time 0 names the process; the first thread starts at 3000 ns
	exits 0 apcdump --frame=name "$TMP/t.apc"
	grep -q ' thread_name *ts=0 tid=3812 name="java"$' <<<"$output"
	grep -q ' thread_name *ts=3000 tid=11 name="AsyncTask #1"$' <<<"$output"
}

# info_cap DIR: a capture whose Summary (timestamp 1700000000123456789,
# 2023-11-14T22:13:20.123456789Z) gives a uname, and whose captured.xml
# names its creation and target; data times 20 and 1000000020 ns (a
# span of 1 s exactly).
info_cap() {
	cap_py "$1" <<'EOF2'
F = [p(1) + p(1) + s(b"1\n2\r\n3\r4\n\r5") + p(1700000000123456789) + p(500) + p(100)
     + s(b"uname") + s(b"Linux t 6.1 \"x\"") + s(b"PAGESIZE") + s(b"4096") + s(b""),
     block_counter(ts=20), block_counter(ts=1000000020)]
EOF2
	cat >"$1/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680" type="Gator" created="1700000007"><target name="board" cores="4"/><counters><counter key="0x11" type="T_cnt0"/></counters></captured>
EOF2
}

@test "--summary: the capture's wall-clock start, target, file size and rates, where capinfos puts them" {
	need_python
	info_cap "$TMP/i.apc"
	echo extra >"$TMP/i.apc/notes.txt"
	fsize=$(cat "$TMP/i.apc"/* | wc -c)
	bytes=$(wc -c <"$TMP/i.apc/0000000000")
	exits 0 apcdump --summary "$TMP/i.apc"
	grep -qx "File size: *$fsize bytes (folder, 3 files)" <<<"$output"
	grep -qx "Bytes: *$bytes" <<<"$output"
	grep -qx 'Capture start: *2023-11-14T22:13:20.123456789Z (the Summary.s timestamp)' <<<"$output"
	grep -qx 'Created: *2023-11-14T22:13:27Z (captured.xml)' <<<"$output"
	grep -qx 'Time span: *1.000000000 s' <<<"$output"
	# over a span of 1 s a rate is the count itself
	grep -qx "Data byte rate: *$bytes.000 bytes/s" <<<"$output"
	grep -qx "Average frame size: *$(python3 -c "print('%.3f' % ($bytes / 3))") bytes" <<<"$output"
	grep -qx 'Message rate: *3.000 messages/s' <<<"$output"
	grep -qx 'Target: *"board", 4 cores (captured.xml)' <<<"$output"
	grep -qx 'Target uname: *"Linux t 6.1 \\"x\\"" (the Summary.s uname)' <<<"$output"
	# the lines that were there keep their order; the new ones sit
	# where capinfos has them: sizes after the counts, the start before
	# the times, the rates after the span, the target after the order
	order=$(grep -oE '^(File|Protocol|Summary clocks|Frames|Messages|File size|Bytes|Frame types|Message kinds|Counters|Threads|Capture start|Created|First timestamp|Last timestamp|Time span|Data byte rate|Average frame size|Message rate|Timestamps in order|Annotation times|Across frame types|Target|Target uname|Problems|Warnings):' <<<"$output" | tr '\n' '|')
	[ "$order" = "File:|Protocol:|Summary clocks:|Frames:|Messages:|File size:|Bytes:|Frame types:|Message kinds:|Counters:|Threads:|Capture start:|Created:|First timestamp:|Last timestamp:|Time span:|Data byte rate:|Average frame size:|Message rate:|Timestamps in order:|Annotation times:|Across frame types:|Target:|Target uname:|Problems:|Warnings:|" ]
	# JSON says the same
	apcdump --summary --json "$TMP/i.apc" >"$TMP/j"
	json_keys_once "$TMP/j"
	python3 - "$TMP/j" "$fsize" "$bytes" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
fsize, b = int(sys.argv[2]), int(sys.argv[3])
want = {"file_size": fsize, "file_kind": "directory", "folder_files": 3,
        "capture_start_ns": 1700000000123456789, "capture_start": "2023-11-14T22:13:20.123456789Z",
        "created": "1700000007", "created_utc": "2023-11-14T22:13:27Z",
        "data_byte_rate": b, "average_frame_size": round(b / 3, 3), "message_rate": 3,
        "target_name": "board", "target_cores": 4, "uname": 'Linux t 6.1 "x"'}
got = {k: o[k] for k in want}
assert got == want, (got, want)
PY
	# an archive's size is the archive's; a data file's its own; a pipe's unknown
	(cd "$TMP" && tar czf i.tgz i.apc)
	exits 0 apcdump --summary "$TMP/i.tgz"
	grep -qx "File size: *$(wc -c <"$TMP/i.tgz") bytes (tar.gz)" <<<"$output"
	exits 0 apcdump --summary "$TMP/i.apc/0000000000"
	grep -qx "File size: *$bytes bytes (file)" <<<"$output"
	run apcdump --summary - <"$TMP/i.apc/0000000000"
	grep -qx "File size: *$bytes bytes (stdin)" <<<"$output"
	run bash -c 'cat "$1" | "$2" --summary -' _ "$TMP/i.apc/0000000000" "$APC_BIN/apcdump"
	grep -qx 'File size: *unknown (standard input is not a file)' <<<"$output"
	# no captured.xml beside it: no creation, no target
	grep -qx 'Target: *unknown (no captured.xml)' <<<"$output"
	! grep -q '^Created:' <<<"$output" || false
	apcdump --summary --json - <"$TMP/i.apc/0000000000" | grep -q '"created":null,"created_utc":null,'
}

@test "--summary without a time span or a Summary timestamp: the rates and the start are said unknown" {
	need_python
	cap_py "$TMP/n.apc" <<'EOF2'
F = [summary(), block_counter(ts=20)]
EOF2
	exits 0 apcdump --summary "$TMP/n.apc"
	grep -qx 'Data byte rate: *unknown (no time span)' <<<"$output"
	grep -qx 'Message rate: *unknown (no time span)' <<<"$output"
	grep -qx 'Target: *unknown (captured.xml does not name it)' <<<"$output"
	! grep -q '^Target uname:' <<<"$output" || false
	apcdump --summary --json "$TMP/n.apc" | grep -q '"data_byte_rate":null,"average_frame_size":[0-9.]*,"message_rate":null,'
	cap_py "$TMP/z.apc" <<'EOF2'
F = [p(1) + p(1) + s(b"1\n2\r\n3\r4\n\r5") + p(0) + p(0) + p(0) + s(b""), block_counter(ts=20)]
EOF2
	exits 0 apcdump --summary "$TMP/z.apc"
	grep -qx 'Capture start: *unknown (no Summary timestamp)' <<<"$output"
	apcdump --summary --json "$TMP/z.apc" | grep -q '"capture_start_ns":null,"capture_start":null,'
}

@test "--summary --json carries the offsets and the quirk breakdown the text gives" {
	need_shared
	need_python
	for c in $CAPS; do
		apcdump --summary "$SHARED/apc/$c" >"$TMP/t"
		apcdump --summary --json "$SHARED/apc/$c" >"$TMP/j"
		json_keys_once "$TMP/j"
		python3 - "$TMP/t" "$TMP/j" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read()
o = json.load(open(sys.argv[2]))
def off(pat):
    m = re.search(pat, t, re.M)
    return int(m.group(1), 16) if m else None
assert o["first_regression_offset"] == off(r"^Timestamps in order: no \(.*?first at offset 0x([0-9a-f]+)"), o
assert o["first_other_regression_offset"] == off(r"the first other at offset 0x([0-9a-f]+)"), o
assert o["first_annotation_regression_offset"] == off(r"^Annotation times: .*first at offset 0x([0-9a-f]+)"), o
assert o["first_cross_type_regression_offset"] == off(r"^Across frame types: .*first at offset 0x([0-9a-f]+)"), o
q = o["gatord_quirks"]
assert q["first_thread_name"] + q["switch_after_exit"] == o["gatord_quirk_regressions"], o
m = re.search(r"(\d+) first thread names?, (\d+) switch(?:es)? after an exit", t)
assert (q["first_thread_name"], q["switch_after_exit"]) == ((int(m.group(1)), int(m.group(2))) if m else (0, 0)), (q, m)
u = re.search(r'^Target uname: *"(.*)" \(', t, re.M)
assert o["uname"] == (u.group(1) if u else None), o["uname"]
PY
	done
	apcdump --summary --json "$SHARED/apc/v68_nonroot_annotate.apc" |
		grep -q '"gatord_quirks":{"first_thread_name":1,"switch_after_exit":1},"first_regression_offset":84615,"first_other_regression_offset":null,'
	# the wall clock gatord wrote: the Summary's start, then captured.xml's
	# created when the capture was saved
	exits 0 apcdump --summary "$SHARED/apc/v68_nonroot_annotate.apc"
	grep -qx 'Capture start: *2026-11-22T04:18:25.105057563Z (the Summary.s timestamp)' <<<"$output"
	grep -qx 'Created: *2026-11-22T04:18:32Z (captured.xml)' <<<"$output"
	grep -qx 'Target: *"unknown", 2 cores (captured.xml)' <<<"$output"
}

@test "--summary: perf counters' values are read from perf samples and read records, by their events' ids" {
	need_shared
	need_python
	# sleep_counters (checked by hand in the listing): each of the 45
	# samples reads its group, ids 0x18 and 0x19 (or 0x1e and 0x1f on
	# CPU 1), keys 0x7fffffff and 0x7ffffffd; its 20 read records give
	# the three software counters' ids 4 values each, the group 4 values
	# each and 0x7fffffff 4 more of its own.  Nothing else has an id.
	run apcdump --summary "$SHARED/apc/sleep_counters.apc"
	[ "$status" -eq 0 ]
	grep -qx "Counters:            11 (8 with values; 114 values read from the records of 4 perf data frames)" <<<"$output"
	grep -Eqx '  key 0x1e +PERF_COUNT_SW_CPU_CLOCK +4 values' <<<"$output"
	grep -Eqx '  key 0x22 +PERF_COUNT_SW_CONTEXT_SWITCHES +4 values' <<<"$output"
	grep -Eqx '  key 0x26 +PERF_COUNT_SW_PAGE_FAULTS +4 values' <<<"$output"
	grep -Eqx '  key 0x7ffffffd \(unnamed\) +49 values  \(not in captured.xml\)' <<<"$output"
	grep -Eqx '  key 0x7fffffff \(unnamed\) +53 values  \(not in captured.xml\)' <<<"$output"
	[ "$(apcdump --summary --json "$SHARED/apc/sleep_counters.apc" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["perf_values"], sum(c["values"] for c in d["counters"]))')" = "114 183" ]
	# v68_sleep's samples read nothing (no READ in their sample_type):
	# its 8 read records give keys 0x4 and 0x7fffffff 4 values each
	run apcdump --summary "$SHARED/apc/v68_sleep.apc"
	grep -qx "Counters:            8 (6 with values; 8 values read from the records of 7 perf data frames)" <<<"$output"
	grep -Eqx '  key 0x4 +\(unnamed\) +4 values  \(not in captured.xml\)' <<<"$output"
	# a capture without perf frames says nothing of them
	run apcdump --summary "$SHARED/apc/v68_nonroot.apc"
	grep -qx "Counters:            6 (4 with values)" <<<"$output"
}

@test "perf data frames list their records, counted as an independent reader counts them (6.8 and 9.x)" {
	need_shared
	need_python
	# the records by type and CPU, read here from the layout (apc(5)):
	# chunks of a 4-byte length and packed64 words, a CPU before each
	# chunk after the first; v68_sleep's frame 17 has a chunk of CPU 1
	for c in v68_sleep.apc sleep_counters.apc; do
		python3 - "$SHARED/apc/$c/0000000000" >"$TMP/want-$c" <<'PY'
import collections, struct, sys
def unpack(b, i):
    v = shift = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7f) << shift; shift += 7
        if not x & 0x80:
            if x & 0x40:
                v -= 1 << shift
            return v, i
names = ("- mmap lost comm exit throttle unthrottle fork read sample mmap2 aux_record "
         "itrace_start lost_samples switch switch_cpu_wide").split()
data = open(sys.argv[1], "rb").read()
n, pos = collections.Counter(), 0
while pos < len(data):
    ln = struct.unpack_from("<I", data, pos)[0]
    body, pos = data[pos + 4:pos + 4 + ln], pos + 4 + ln
    if not body:
        continue
    t, i = unpack(body, 0)
    if t != 12:
        continue
    cpu, i = unpack(body, i)
    first = True
    while i < len(body):
        if not first:
            cpu, i = unpack(body, i)
        first = False
        size = struct.unpack_from("<I", body, i)[0]
        i += 4
        end = i + size
        while i < end:
            h, i = unpack(body, i)
            h &= (1 << 64) - 1
            for _ in range(max(1, ((h >> 48) + 7) // 8) - 1):
                _, i = unpack(body, i)
            n["perf_" + names[h & 0xffffffff], cpu] += 1
        assert i == end
for (m, cpu), k in sorted(n.items()):
    print(m, cpu, k)
PY
		apcdump --json --frame=perf_data "$SHARED/apc/$c" | python3 -c '
import collections, json, sys
n = collections.Counter((m["msg"], m["core"]) for m in map(json.loads, sys.stdin))
for (m, cpu), k in sorted(n.items()):
    print(m, cpu, k)' >"$TMP/got"
		diff -u "$TMP/want-$c" "$TMP/got"
		[ "$(wc -l <"$TMP/got")" -ge 6 ]
	done
	grep -qx 'perf_read 1 4' "$TMP/want-v68_sleep.apc"
	grep -qx 'perf_sample 1 39' "$TMP/want-sleep_counters.apc"
	# the text lists the words after the header in hex, the first
	# record of sleep_counters being a context switch (its sample id
	# fields named before them)
	apcdump --frame=perf_data -c 1 "$SHARED/apc/sleep_counters.apc" >"$TMP/text"
	grep -qx ' *14 0x0052c80d perf_data *0 perf_switch *ts=173515621 misc=0x0 size=40 id=0x18 pid=19089 tid=19089 stream_id=0x18 words=\[0x4a9100004a91,0x24601581afa,0x18,0x18\]' "$TMP/text"
	exits 0 apcverify "$SHARED/apc/v68_sleep.apc"
}

# perf_cap DIR: a protocol-680 capture in perf mode, through apcpack.py:
# event 0x21 samples IDENTIFIER, IP, TID, TIME, CPU and PERIOD with
# sample_id_all and reads its time enabled, running and id (ids 100 on
# CPU 0, 101 on CPU 1), event 0x22 IDENTIFIER and TIME without
# sample_id_all (id 200), event 0x23 IDENTIFIER, TIME and READ of a group
# with ids (id 300); the Summary's monotonic_delta is 100, so a record's
# time T lists as ts=T-100.
perf_cap() {
	cap_py "$1" <<'EOF2'
def attr(sample_type, flags, read_format=0):
    # struct perf_event_attr (64 bytes): type, size, config, period,
    # sample_type @24, read_format @32, flags @40
    return struct.pack("<IIQQQQQ", 4, 64, 0, 1000, sample_type, read_format, flags) + b"\0" * 16
w = lambda v: p(v - (1 << 64) if v >= 1 << 63 else v)
def rec(t, misc, *words):
    return w(t | misc << 32 | 8 * (1 + len(words)) << 48) + b"".join(w(x) for x in words)
chunk = lambda b: struct.pack("<I", len(b)) + b
tid = lambda pid, tid: pid | tid << 32
word = lambda b: int.from_bytes(b.ljust(8, b"\0"), "little")
A, B, C = 0x10187, 0x10004, 0x10014
F = [summary(),
     p(11) + p(0) + p(1) + attr(A, 1 << 18, 7) + p(0x21) + p(1) + attr(B, 0) + p(0x22)
     + p(1) + attr(C, 0, 0xc) + p(0x23)
     + p(2) + p(4) + p(100) + p(0x21) + p(101) + p(0x21) + p(200) + p(0x22) + p(300) + p(0x23),
     p(12) + p(0) + chunk(
         rec(9, 1, 100, 0xffffffff81000010, tid(7, 8), 1100, 0, 5000)
         + rec(3, 0x2000, tid(7, 8), word(b"worker"), tid(7, 8), 1200, 0, 100)
         + rec(7, 0, 9 | 7 << 32, 9 | 8 << 32, 1300, tid(7, 8), 1300, 0, 100)
         + rec(10, 2, tid(9, 9), 0x400000, 0x1000, 0, 0, 0, 0, 5, word(b"/bin/x"),
               tid(9, 9), 1400, 0, 100)
         + rec(9, 2, 200, 1150)
         + rec(8, 0, tid(7, 8), 5, 200)
         + rec(8, 0, tid(7, 8), 42, 10, 5, 100, tid(7, 8), 1250, 0, 100)
         + rec(9, 1, 300, 1160, 2, 11, 300, 22, 100)
         + rec(9, 1, 999, 1, 2, 3, 4, 5)),
     p(12) + p(1) + chunk(rec(9, 1, 101, 0x1234, tid(7, 7), 1050, 1, 5000)
         + rec(2, 0, 101, 7, tid(7, 7), 1310, 1, 101)
         + rec(15, 0x2000, tid(11, 12), tid(7, 7), 1320, 1, 101)
         + rec(11, 0, 0x1000, 512, 1, tid(7, 7), 1330, 1, 101)
         + rec(13, 0, 3, tid(7, 7), 1340, 1, 101)
         + rec(12, 0, tid(7, 7), tid(7, 7), 1350, 1, 101))]
EOF2
}

@test "perf records' words are named from their events' attributes, and their times are timestamps" {
	perf_cap "$TMP/p.apc"
	exits 0 apcdump --frame=perf_data "$TMP/p.apc"
	[ "${#lines[@]}" -eq 15 ]
	# a sample: its fields before the read values, the time on the
	# Summary's clock
	grep -q ' perf_sample *ts=1000 misc=0x1 size=56 id=0x64 pid=7 tid=8 ip=0xffffffff81000010 cpu=0 period=5000 words=\[0x64,0xffffffff81000010,' <<<"$output"
	# other records: their own fields, then the sample id ones at their
	# end (sample_id_all); a fork's task is the child, its parent apart
	grep -q ' perf_comm *ts=1100 misc=0x2000 size=56 id=0x64 pid=7 tid=8 comm="worker" cpu=0 words=\[' <<<"$output"
	grep -q ' perf_fork *ts=1200 misc=0x0 size=64 id=0x64 pid=9 tid=9 ppid=7 ptid=8 cpu=0 words=\[' <<<"$output"
	grep -q ' perf_mmap2 *ts=1300 misc=0x2 size=112 id=0x64 pid=9 tid=9 addr=0x400000 len=0x1000 pgoff=0x0 filename="/bin/x" cpu=0 words=\[' <<<"$output"
	# event 0x22 has only its id and time in a sample, and nothing at
	# the end of other records (no sample_id_all): its read record has
	# its own pid and tid, not its values or time, and a sample of an id
	# no perf_keys gave keeps its words alone
	grep -q ' perf_sample *ts=1050 misc=0x2 size=24 id=0xc8 words=\[0xc8,0x47e\]$' <<<"$output"
	grep -q ' perf_read *misc=0x0 size=32 pid=7 tid=8 words=\[0x800000007,0x5,0xc8\]$' <<<"$output"
	grep -q ' perf_sample *misc=0x1 size=56 words=\[0x3e7,0x1,0x2,0x3,0x4,0x5\]$' <<<"$output"
	# the values read: a read record's (its time enabled and running,
	# its value with its id), a sample's group (each value with its id)
	grep -q ' perf_read *ts=1150 misc=0x0 size=80 id=0x64 pid=7 tid=8 cpu=0 enabled=10 running=5 values=\[0x64:42\] words=\[' <<<"$output"
	grep -q ' perf_sample *ts=1060 misc=0x1 size=64 id=0x12c values=\[0x12c:11,0x64:22\] words=\[' <<<"$output"
	grep -q ' perf_data *1 perf_sample *ts=950 misc=0x1 size=56 id=0x65 pid=7 tid=7 ip=0x1234 cpu=1 period=5000 ' <<<"$output"
	# what was lost, AUX data's place, a CPU-wide switch's other task
	grep -q ' perf_lost *ts=1210 misc=0x0 size=56 id=0x65 pid=7 tid=7 lost=7 cpu=1 words=' <<<"$output"
	grep -q ' perf_switch_cpu_wide *ts=1220 misc=0x2000 size=48 id=0x65 pid=7 tid=7 next_prev_pid=11 next_prev_tid=12 cpu=1 words=' <<<"$output"
	grep -q ' perf_aux_record *ts=1230 misc=0x0 size=64 id=0x65 pid=7 tid=7 aux_offset=0x1000 aux_size=512 flags=0x1 cpu=1 words=' <<<"$output"
	grep -q ' perf_lost_samples *ts=1240 misc=0x0 size=48 id=0x65 pid=7 tid=7 lost=3 cpu=1 words=' <<<"$output"
	grep -q ' perf_itrace_start *ts=1250 misc=0x0 size=48 id=0x65 pid=7 tid=7 cpu=1 words=' <<<"$output"
	# JSON: addresses and ids unsigned
	apcdump --json --frame=perf_data -c 1 "$TMP/p.apc" | grep -q '"ts":1000,"misc":1,"size":56,"id":100,"pid":7,"tid":8,"ip":18446744071578845200,"cpu":0,"period":5000,"words":\[100,18446744071578845200,'
	apcdump --json --frame=perf_data "$TMP/p.apc" | grep -q '"ts":1060,"misc":1,"size":64,"id":300,"values":\[\[300,11\],\[100,22\]\],"words":'
	# the window takes perf records by their times; untimed ones are out
	exits 0 apcdump --frame=perf_data --begin=1000 --end=1100 "$TMP/p.apc"
	[ "${#lines[@]}" -eq 4 ]
	grep -q 'perf_sample *ts=1060 ' <<<"$output"
	grep -q 'perf_sample *ts=1000 ' <<<"$output"
	grep -q 'perf_comm *ts=1100 ' <<<"$output"
	grep -q 'perf_sample *ts=1050 ' <<<"$output"
	# the summary: the comm names thread 8, records count for their
	# threads, the span takes their times, and their order (1050 after
	# 1300 on CPU 0) is not checked, as apcverify does not
	exits 0 apcdump --summary "$TMP/p.apc"
	grep -Eqx '  tid 8 +4 messages  "worker"' <<<"$output"
	grep -Eqx '  tid 9 +2 messages  \(no name\)' <<<"$output"
	grep -qx 'Last timestamp:      1300 ns' <<<"$output"
	grep -qx 'Timestamps in order: yes (per frame type and core)' <<<"$output"
	# the values it lists are those the summary counts, by their ids
	grep -qx 'Counters:            4 (3 with values; 4 values read from the records of 2 perf data frames)' <<<"$output"
	grep -Eqx '  key 0x21 +\(unnamed\) +2 values  \(not in captured.xml\)' <<<"$output"
	grep -Eqx '  key 0x23 +\(unnamed\) +1 value  \(not in captured.xml\)' <<<"$output"
	grep -qx 'Perf records lost:   10 (as 2 lost records say)' <<<"$output"
	apcdump --summary --json "$TMP/p.apc" | grep -q '"perf_values":4,"perf_lost":10,"perf_lost_records":2,'
	exits 0 apcverify "$TMP/p.apc"
}

@test "apcconv --begin/--end cuts perf records by their times and keeps mmaps, comms, forks and exits" {
	perf_cap "$TMP/p.apc"
	# listed times (the window's): CPU 0 sample 1000, comm 1100, fork
	# 1200, mmap2 1300, sample 1050, read (no time), read 1150, sample
	# 1060, sample of an unknown id (no time); CPU 1 sample 950, lost
	# 1210, switch 1220, aux 1230, lost_samples 1240, itrace_start 1250
	exits 0 apcconv --begin 1100 --end 1240 "$TMP/p.apc" -o "$TMP/w.apc"
	grep -q '; outside --begin/--end: 0 and 6 perf records' <<<"$output"
	exits 0 apcdump --frame=perf_data "$TMP/w.apc"
	[ "$(awk '{print $3 "/" $5 "/" $6}' <<<"$output" | tr '\n' ' ')" = \
	  "perf_data/perf_comm/ts=1100 perf_data/perf_fork/ts=1200 perf_data/perf_mmap2/ts=1300 perf_data/perf_read/misc=0x0 perf_data/perf_read/ts=1150 perf_data/perf_sample/misc=0x1 perf_data/perf_lost/ts=1210 perf_data/perf_switch_cpu_wide/ts=1220 perf_data/perf_aux_record/ts=1230 " ]
	# the records kept are the bytes they were (words and all)
	diff <(apcdump --frame=perf_data "$TMP/p.apc" | awk '{$1=$2=""; print}' | grep -E 'perf_(comm|fork|mmap2|lost|switch_cpu_wide|aux_record) |perf_read |size=56 words=\[0x3e7' ) \
	     <(apcdump --frame=perf_data "$TMP/w.apc" | awk '{$1=$2=""; print}')
	exits 0 apcverify "$TMP/w.apc"
	apcconv --stats=json --begin 1100 --end 1240 "$TMP/p.apc" -o "$TMP/w2.apc" | grep -q '"outside_window":0,"perf_records_outside_window":6,'
	# a window with no timed record in it keeps nothing: nothing written
	exits 1 apcconv --begin 2000 "$TMP/p.apc" -o "$TMP/none.apc"
	[ ! -e "$TMP/none.apc" ]
	# without a window every record stays, and the span is theirs
	exits 0 apcconv "$TMP/p.apc" -o "$TMP/all.apc"
	grep -q ' span 0.000000300 s, ' <<<"$output"
	diff <(apcdump --frame=perf_data "$TMP/p.apc" | awk '{$1=$2=""; print}') \
	     <(apcdump --frame=perf_data "$TMP/all.apc" | awk '{$1=$2=""; print}')
}

@test "apcconv --begin/--end on a real perf-mode capture keeps the timed records in the window, and says how many it cut" {
	need_shared
	# (sleep_counters is of gatord 9.x: apcconv drops its perf frames)
	for c in v68_sleep; do
		apcdump --frame=perf_data "$SHARED/apc/$c.apc" >"$TMP/in"
		# the window: the middle third of the timed records' times
		read -r lo hi <<<"$(grep -E ' perf_(sample|switch|read) ' "$TMP/in" | grep -o ' ts=[0-9]*' | cut -d= -f2 |
			sort -n | awk '{t[NR]=$1} END {print t[int(NR/3)], t[int(2*NR/3)]}')"
		timed_out=$(grep -E ' perf_(sample|switch|read) ' "$TMP/in" | grep -o ' ts=[0-9]*' | cut -d= -f2 |
			awk -v lo="$lo" -v hi="$hi" '$1 < lo || $1 >= hi' | wc -l)
		[ "$timed_out" -gt 0 ]
		exits 0 apcconv --begin "$lo" --end "$hi" "$SHARED/apc/$c.apc" -o "$TMP/$c.apc"
		grep -q " and $timed_out perf records" <<<"$output"
		apcdump --frame=perf_data "$TMP/$c.apc" >"$TMP/out"
		# every timed record kept is in the window ...
		! grep -E ' perf_(sample|switch|read) ' "$TMP/out" | grep -o ' ts=[0-9]*' | cut -d= -f2 |
			awk -v lo="$lo" -v hi="$hi" '$1 < lo || $1 >= hi' | grep -q . || false
		# ... and every one in it is kept, with the same fields, and so
		# is one without a time (v68_sleep's reads: no sample_id_all)
		diff <(grep -E ' perf_(sample|switch|read) ' "$TMP/in" | awk -v lo="$lo" -v hi="$hi" \
			'{ t = -1; if (match($0, / ts=[0-9]+/)) t = substr($0, RSTART + 4, RLENGTH - 4) + 0
			   if (t < 0 || (t >= lo && t < hi)) { $1 = $2 = ""; print } }') \
		     <(grep -E ' perf_(sample|switch|read) ' "$TMP/out" | awk '{$1 = $2 = ""; print}')
		# the rest whatever its time
		diff <(grep -vE ' perf_(sample|switch|read) ' "$TMP/in" | awk '{$1 = $2 = ""; print}') \
		     <(grep -vE ' perf_(sample|switch|read) ' "$TMP/out" | awk '{$1 = $2 = ""; print}')
		exits 0 apcverify -q "$TMP/$c.apc"
	done
}

@test "apcconv's span of a perf-mode capture takes its perf records' times, as apcdump's summary does" {
	need_shared
	for c in v68_sleep sleep_counters; do
		span=$(apcdump --summary "$SHARED/apc/$c.apc" | sed -n 's/^Time span: *\([0-9.]*\) s.*/\1/p')
		[ -n "$span" ]
		exits 0 apcconv "$SHARED/apc/$c.apc" -o "$TMP/$c.apc"
		grep -q " span $span s, " <<<"$output"
	done
}

@test "real perf records are named as an independent reader of the kernel's layout names them" {
	need_shared
	need_python
	# linux/perf_event.h: a sample's fields in sample_type order, other
	# records' own fields and, with sample_id_all, the sample id fields
	# at their end; the event from the id a sample starts with or
	# another record ends with (IDENTIFIER), perf_attr and perf_keys
	for c in v68_sleep.apc sleep_counters.apc; do
		apcdump --json "$SHARED/apc/$c" >"$TMP/j"
		python3 - "$TMP/j" >"$TMP/out" <<'PY'
import json, struct, sys
def unpack(b, i):
    v = shift = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7f) << shift; shift += 7
        if not x & 0x80:
            return (v - (1 << shift) if x & 0x40 else v), i
attrs, key_of, delta, n, named, nvals = {}, {}, 0, 0, 0, 0
SAMPLE = [(1 << 16, "id"), (1, "ip"), (2, "tid"), (4, "time"), (8, "addr"), (64, "id"),
          (512, "stream_id"), (128, "cpu"), (256, "period")]
TAIL = [(2, "tid"), (4, "time"), (64, "id"), (512, "stream_id"), (128, "cpu"), (1 << 16, "id")]
def read(it, fmt, own, want):
    # read_format: ENABLED 1, RUNNING 2, ID 4, GROUP 8, LOST 16
    nr, v = (next(it), None) if fmt & 8 else (1, next(it))
    for bit, name in ((1, "enabled"), (2, "running")):
        if fmt & bit:
            want[name] = next(it)
    want["values"] = []
    for _ in range(nr):
        v = next(it) if fmt & 8 else v
        ident = next(it) if fmt & 4 else own
        if fmt & 16:
            next(it)
        want["values"].append([ident, v])
for m in map(json.loads, open(sys.argv[1])):
    if m["msg"] == "summary":
        delta = m["monotonic_delta"]
    elif m["msg"] == "perf_attr":
        a = bytes.fromhex(m["attr"])
        attrs[m["key"]] = struct.unpack_from("<QQQ", a, 24)
    elif m["msg"] == "perf_keys":
        b, i = bytes.fromhex(m["ids"]), 0
        for _ in range(m["count"]):
            ident, i = unpack(b, i)
            key, i = unpack(b, i)
            key_of[ident & (1 << 64) - 1] = key
    if m["type"] != "perf_data" or "words" not in m:
        continue
    n += 1
    w, sample = m["words"], m["msg"] == "perf_sample"
    ident = w[0] if sample else (w[-1] if w else None)
    st, fmt, flags = attrs.get(key_of.get(ident), (0, 0, 0))
    want = {}
    if st & 1 << 16 and sample:
        it = iter(w)
        for bit, name in SAMPLE:
            if st & bit:
                want[name] = next(it, None)
        if st & 16:
            read(it, fmt, want["id"], want)
    elif not sample:
        # sample id fields, with the event; a record's own, without
        if st & 1 << 16 and flags & 1 << 18:
            tail = [(b, nm) for b, nm in TAIL if st & b]
            for (bit, name), v in zip(tail, w[len(w) - len(tail):]):
                want[name] = v
        if m["code"] in (1, 10):
            want.update(tid=w[0], addr=w[1], len=w[2], pgoff=w[3])
            s = b"".join(struct.pack("<Q", x) for x in w[4 if m["code"] == 1 else 8:])
            want["filename"] = s[:s.index(b"\0")].decode()
        elif m["code"] == 3:
            want["tid"] = w[0]
            s = b"".join(struct.pack("<Q", x) for x in w[1:])
            want["comm"] = s[:s.index(b"\0")].decode()
        elif m["code"] in (4, 7):
            want.update(tid=(w[0] & 0xffffffff) | (w[1] & 0xffffffff) << 32,
                        ppid=w[0] >> 32, ptid=w[1] >> 32)
        elif m["code"] == 8:
            want["tid"] = w[0]
            if "id" in want:
                read(iter(w[1:]), fmt, want["id"], want)
        elif m["code"] in (2, 13):
            want["lost"] = w[1 if m["code"] == 2 else 0]
    if "tid" in want:
        pt = want.pop("tid")
        want["pid"], want["tid"] = pt & 0xffffffff, pt >> 32
    if "time" in want:
        want["ts"] = want.pop("time") - delta
    got = {k: v for k, v in m.items() if k not in
           ("frame", "offset", "frame_offset", "type", "core", "msg", "code", "misc", "size", "words")}
    named += bool(got)
    if got != want:
        print("differ at", m["offset"], got, want)
    nvals += len(got.get("values", []))
print(n, named, nvals)
PY
		cat "$TMP/out"
		! grep -q differ "$TMP/out" || false
		read -r n named nvals <"$TMP/out"
		[ "$named" -gt 50 ]
		[ "$nvals" -gt 0 ]
	done
	# sleep_counters' records list every value its summary counts;
	# every record of both has some field named (v68_sleep's read
	# records of an event without sample_id_all only their pid and tid)
	[ "$nvals" -eq 114 ]
	[ "$n" -eq "$named" ]
	# the first records of sleep_counters' first perf frame, as text
	apcdump --frame=perf_data -c 3 "$SHARED/apc/sleep_counters.apc" >"$TMP/text"
	grep -q ' perf_sample *ts=174847607 misc=0x1 size=104 id=0x19 pid=19089 tid=19089 ip=0xffffffff8225f2d9 stream_id=0x19 enabled=4128862 running=1343118 values=\[0x18:0,0x19:1333549\] words=' "$TMP/text"
	grep -q ' perf_fork *ts=175482391 misc=0x0 size=64 id=0x18 pid=19095 tid=19095 ppid=19089 ptid=19089 stream_id=0x18 words=' "$TMP/text"
	apcdump --frame=perf_data "$SHARED/apc/v68_sleep.apc" | grep -q ' perf_mmap *ts=11221423 misc=0x2 size=104 id=0x34 pid=19733 tid=19733 addr=0x7fa18e840000 len=0x156000 pgoff=0x26000 filename="/usr/lib/x86_64-linux-gnu/libc.so.6" words='
}

#!/usr/bin/env bats
# apcread.bats - captures as apcconv input (APC -> APC), on captures
# written by hand (tests/apcpack.py).

load helpers
NEED_PYTHON=1

# pack FILE: the Python on stdin writes the data file FILE (bodies in B),
# with apcpack imported.
pack() {
	python3 - "$1" "$APC_ROOT/tests" <<<"import struct, sys
sys.path.insert(0, sys.argv[2])
from apcpack import *
OUT = sys.argv[1]
$(cat)
open(OUT, 'wb').write(frames(B))"
}

# reads_back [--counts-ok] MEMBER... : convert $TMP/out.apc again; each
# MEMBER comes out byte for byte the same and, without --counts-ok,
# nothing more is counted (what the first pass kept reads back whole).
reads_back() {
	local counts_ok=0
	if [ "${1:-}" = --counts-ok ]; then
		counts_ok=1
		shift
	fi
	run apcconv -v "$TMP/out.apc" -o "$TMP/again.apc"
	echo "$output"
	[ "$counts_ok" -eq 1 ] || [ "$(grep -c 'not mapped' <<<"$output")" -eq 0 ]
	for m in "$@"; do
		cmp "$TMP/out.apc/$m" "$TMP/again.apc/$m"
	done
}

@test "APC: a bare gatord 9.x data file loses its perf frames as a folder does" {
	pack "$TMP/0000000000" <<'EOF'
clocks4 = p(1) + p(1) + s(CANARY) + p(1700000000000000000) + p(500) + p(100) + p(7) + s(b"")
B = [
    p(11) + p(0) + p(14) + b"\x01\x02\x03",   # a 9.x perf-attribute frame before the Summary
    clocks4,
    block_counter(),
]
EOF
	conv 0 -v "$TMP/0000000000" -o "$TMP/out.apc"
	grep -q 'not mapped: .*gatord 9.x perf frames (not expressible at protocol 680): 1' <<<"$output"
	apcverify "$TMP/out.apc"
	[ "$(apcdump --summary "$TMP/out.apc" | awk '/^Frames:/ {print $2}')" -eq 2 ]
}

@test "APC: a captured.xml of 22 MB reads in apcconv, apcdump and apcverify alike" {
	# one limit (64 MiB) for the three; libxml2 refuses one chunk over
	# 10 MB without XML_PARSE_HUGE ("Huge input lookup"), and apcdump
	# stopped at 16 MiB
	cap "$TMP/in.apc"
	python3 - "$TMP/in.apc/captured.xml" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write('<?xml version="1.0"?>\n<captured version="1" protocol="680"><target name="t" cores="1"/>\n')
    f.write('<!-- padding -->\n' * 1300000)
    f.write('<counters><counter key="0x11" type="T_cnt0"/></counters></captured>\n')
EOF
	[ "$(stat -c %s "$TMP/in.apc/captured.xml")" -gt 22000000 ]
	conv_in
	grep -q 'type="T_cnt0"' "$TMP/out.apc/captured.xml"
	apcdump --summary "$TMP/in.apc" | grep -q 'key 0x11 *T_cnt0'
	apcverify -q "$TMP/in.apc"
	# past the limit: the three say so alike, and nothing else
	truncate -s 70M "$TMP/in.apc/captured.xml"
	for tool in apcconv apcdump apcverify; do
		args=("$TMP/in.apc")
		[ "$tool" != apcconv ] || args+=(-o "$TMP/big.apc")
		exits 2 "$tool" "${args[@]}"
		[ "${lines[0]}" = "$tool: $TMP/in.apc/captured.xml: 73400320 bytes is more than the 67108864 bytes allowed" ]
		! grep -q 'out of memory' <<<"$output" || false
	done
	# the data file was read all the same: --summary sums it up, text
	# as JSON, and says what was not read
	exits 2 apcdump --summary "$TMP/in.apc"
	grep -q '^Protocol: *unknown (captured.xml could not be read)$' <<<"$output"
	grep -q '^Not read: *'"$TMP"'/in.apc/captured.xml: 73400320 bytes is more than the 67108864 bytes allowed$' <<<"$output"
	n=$(awk '$1 == "Frames:" {print $2}' <<<"$output")
	[ "$n" -ge 2 ]
	[ "$n" = "$(apcdump --summary --json "$TMP/in.apc" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames"])')" ]
}

@test "APC: frames before the Summary are kept up to 4096 frames and 64 MiB, then refused by offset" {
	# Kept whole until the Summary comes: past either limit the capture
	# is refused where the limit is passed, and nothing is written.
	pack "$TMP/in.bin" <<'EOF'
big = p(5) + p(0) + bytes(15 << 20)
B = [big] * 5 + [summary(), block_counter()]
EOF
	conv 1 -f apc "$TMP/in.bin" -o "$TMP/out.apc"
	at=$((4 * (4 + 15 * 1048576 + 2)))   # the fifth frame's header
	grep -qF "in.bin: offset $(printf 0x%x $at): no summary frame in the first 64 MiB of frames" <<<"$output"
	[ ! -e "$TMP/out.apc" ]
	pack "$TMP/in.bin" <<'EOF'
B = [p(5) + p(0) + p(1)] * 4097 + [summary(), block_counter()]
EOF
	conv 1 -f apc "$TMP/in.bin" -o "$TMP/out.apc"
	grep -qF "no summary frame in the first 4096 frames" <<<"$output"
	[ ! -e "$TMP/out.apc" ]
	# within both: kept, and written after the Summary
	pack "$TMP/in.bin" <<'EOF'
B = [p(5) + p(0) + bytes(1 << 20)] * 3 + [summary(), block_counter()]
EOF
	conv 0 -f apc "$TMP/in.bin" -o "$TMP/out.apc"
	apcverify -q "$TMP/out.apc"
}

@test "APC: an annotate message cut by its fd's disconnect or the end is reported" {
	pack "$TMP/0000000000" <<'EOF'
body = p(300) + p(0) + b"hi"
ann = b"\x01" + struct.pack("<I", len(body)) + body             # a whole string annotation
cut = b"\x01" + struct.pack("<I", 20) + p(400)                 # 20 bytes promised, 2 sent
setup = b"ANNOTATE 4\n" + struct.pack("<II", 9, 9) + b"\x00"
B = [
    summary(),
    block_counter(),
    p(10) + p(1) + setup + ann + cut,
    p(10) + p(-1) + p(1),                    # fd 1 disconnects
    p(10) + p(2) + setup + ann + cut,         # fd 2 never does
]
EOF
	mkdir "$TMP/in.apc"
	mv "$TMP/0000000000" "$TMP/in.apc/"
	finish_cap "$TMP/in.apc"
	run apcconv -v "$TMP/in.apc" -o "$TMP/out.apc"
	echo "$output"
	grep -q 'not mapped: .*annotate messages cut short (fd disconnected or capture ended mid-message): 2' <<<"$output"
	[ "$(apcdump "$TMP/out.apc" | grep -c 'annotate_str .* text="hi"')" -eq 2 ]
	# apcverify: the disconnect is an error, the end a warning
	verify 1 "$TMP/in.apc"
	grep -q 'error: fd 1 disconnects inside a message (7 bytes pending) \[annotate-decode\]' <<<"$output"
	grep -q 'warning: fd 2 ends inside a message at the end of the capture (7 bytes pending) \[annotate-cut\]' <<<"$output"
}

@test "APC: gatord 9.x counters described in captured.xml keep their names" {
	mkdir "$TMP/in.apc"
	pack "$TMP/in.apc/0000000000" <<'EOF2'
B = [summary(), block_counter((0x4, 64), (0x11, 5))]
EOF2
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680" type="Gator"><counters>
<counter key="0x11" type="T_cnt0"/>
<counter key="0x4" counter="ARM_Mali-CONST_BUS_WIDTH_BITS" title="Mali Constants" name="Bus Width Bits" class="constant" mode="per-core"/>
</counters></captured>
EOF2
	conv_in
	grep -q 'not mapped: gatord 9.x constant counters (written as absolute): 1' <<<"$output"
	grep -q '<event counter="ARM_Mali-CONST_BUS_WIDTH_BITS" title="Mali Constants" name="Bus Width Bits" class="absolute"' "$TMP/out.apc/events.xml"
	apcverify -q "$TMP/out.apc"
}

@test "apcverify: a bare data file with a four-clock Summary (fourth 0) passes" {
	pack "$TMP/0000000000" <<'EOF2'
B = [
    p(1) + p(1) + s(CANARY) + p(1700000000000000000) + p(500) + p(100) + p(0)
    + s(b"uname") + s(b"Linux x") + s(b""),
    p(4) + p(10) + p(0) + p(0x11) + p(1),   # a Counter frame: time, core, key, value
]
EOF2
	verify 0 "$TMP/0000000000"
	grep -q 'ok (2 frames, 1 warning)' <<<"$output"
	# the shared decoder (apcdump, apcconv) reads it the same way
	dump "$TMP/0000000000"
	[ "$status" -eq 0 ]
	grep -q ' summary .* monotonic_delta=100 clock4=0 attr_key="uname" attr_value="Linux x"$' <<<"$output"
}

# cap DIR: DIR/0000000000 with a Summary and one Block Counter frame
# (key 0x11 on core 0); the test writes DIR's XML files.
cap() {
	mkdir -p "$1"
	pack "$1/0000000000" <<<'B = [summary(), block_counter()]'
}

# finish_cap DIR: DIR/0000000000 made a capture folder (apcpack's
# write_cap: a captured.xml declaring key 0x11).
finish_cap() {
	python3 - "$1" "$APC_ROOT/tests" <<'EOF2'
import sys
sys.path.insert(0, sys.argv[2])
from apcpack import write_cap
write_cap(sys.argv[1], open(sys.argv[1] + "/0000000000", "rb").read())
EOF2
}

# counters_xml: $TMP/in.apc/captured.xml for protocol 680 and one core,
# its <counters> the lines on stdin.
counters_xml() {
	{
		echo '<?xml version="1.0"?>'
		echo '<captured version="1" protocol="680"><target name="t" cores="1"/><counters>'
		cat
		echo '</counters></captured>'
	} >"$TMP/in.apc/captured.xml"
}

# conv_in [FILE...]: $TMP/in.apc converts to $TMP/out.apc (exit 0),
# verbosely; the output's FILEs are shown too.
conv_in() {
	conv 0 -v "$TMP/in.apc" -o "$TMP/out.apc"
	for f in "$@"; do
		cat "$TMP/out.apc/$f"
	done
}

@test "APC: the captured.xml target cpuid names no core" {
	# gatord writes its highest core's cpuid there; the Summary names
	# cores, and this one names none
	cap "$TMP/in.apc"
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680"><target name="t" cores="2" cpuid="0xfffff"/>
<counters><counter key="0x11" type="T_cnt0"/></counters></captured>
EOF2
	apcconv -q "$TMP/in.apc" -o "$TMP/out.apc"
	dump --frame=summary "$TMP/out.apc"
	[ "$(grep -c core_name <<<"$output")" -eq 0 ]
	grep -q 'cores="2" cpuid="0xfffff"' "$TMP/out.apc/captured.xml"
}

@test "APC: the real gatord captures read back keep their XML" {
	need_shared
	for c in v68_nonroot v68_sleep sleep_counters; do
		apcconv -q "$SHARED/apc/$c.apc" -o "$TMP/$c.apc"
	done
	# 9.x: the target cpuid 0xfffff names no core (no core names were sent)
	grep -q 'cpuid="0xfffff"' "$TMP/sleep_counters.apc/captured.xml"
	[ "$(apcdump --frame=summary "$TMP/sleep_counters.apc" | grep -c core_name)" -eq 0 ]
	# perf mode stays perf mode (6.8: its perf frames 11 and 12 are
	# carried), and the target keeps what gatord said of it
	grep -q ' type="Perf"' "$TMP/v68_sleep.apc/captured.xml"
	grep -q ' type="Gator"' "$TMP/v68_nonroot.apc/captured.xml"
	grep -q 'supports_live="yes" local_capture="yes"/>' "$TMP/v68_nonroot.apc/captured.xml"
	grep -q 'gatord_build_id="oss" supports_live="yes" local_capture="yes" os="linux"/>' \
		"$TMP/sleep_counters.apc/captured.xml"
	# events.xml: gatord's derived= and proc= stay with their counters
	[ "$(grep -c 'counter="Perf_Hardware_[a-z]*" .* derived="yes"' "$TMP/v68_nonroot.apc/events.xml")" -eq 2 ]
	grep -q 'counter="PERF_COUNT_SW_CPU_CLOCK" .* proc="no"' "$TMP/sleep_counters.apc/events.xml"
	# 9.x's fourth Summary clock cannot be written, and is counted
	run apcconv "$SHARED/apc/sleep_counters.apc" -o "$TMP/s2.apc"
	grep -qF 'gatord 9.x Summary fourth clock (no place in a protocol 680 Summary): 1' <<<"$output"
	# gatord's counters.xml beside the capture is not carried, and said so
	grep -qF 'counters.xml (the counters the target offered; not carried): 1' <<<"$output"
}

@test "APC: captured.xml keeps what the model holds and counts the rest" {
	cap "$TMP/in.apc"
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" backtrace_processing="gator" type="Perf" protocol="680" product="972" created="1700000000">
<process process_name="app"/>
<target name="board" sample_rate="100" cores="2" cpuid="0x41d03" supports_live="yes" local_capture="yes" os="linux"/>
<gpus><gpu id="0x6221"/></gpus>
<counters>
<counter key="0x11" type="T_cnt0" event="0x8" count="1000" cores="2"/>
<counter key="0x4" counter="C" title="t" name="n" class="constant" mode="per-core"/>
<spe key="0x5" id="spe0"/>
</counters></captured>
EOF2
	conv_in captured.xml
	grep -q '<captured version="1" created="1700000000" protocol="680" backtrace_processing="gator" type="Perf">' "$TMP/out.apc/captured.xml"
	grep -q '<target name="board" sample_rate="100" cores="2" cpuid="0x41d03" supports_live="yes" local_capture="yes" os="linux"/>' "$TMP/out.apc/captured.xml"
	grep -q '<counter key="0x11" type="T_cnt0" event="0x8" count="1000" cores="2"/>' "$TMP/out.apc/captured.xml"
	for what in '/captured/@product' /captured/process /captured/gpus /captured/counters/spe \
		'/captured/counters/counter/@mode'; do
		grep -qF "captured.xml $what: 1" <<<"$output"
	done
	apcverify -q "$TMP/out.apc"
	# what was kept reads back the same, with nothing more to count
	reads_back captured.xml
}

@test "APC: events.xml attributes without a field of their own are carried, the rest counted" {
	# A and B are described by name: the writer writes their
	# declarations in place of their events, and counts what those
	# lose; T_cnt0 and U_cnt0 are described through their counter sets,
	# by events kept as they are (values not understood included)
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="T_cnt0" event="0x8"/>
<counter key="0x12" type="A"/>
<counter key="0x13" type="B"/>
<counter key="0x14" type="U_cnt0" event="0x1"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events>
<category name="T" counter_set="T_cnt" per_cpu="yes" supports_event_based_sampling="yes" advanced="yes">
<event event="0x8" title="Cache" name="Refill" description="d" derived="yes" proc="no" class="weird"/>
</category>
<category name="L">
<event counter="A" title="CPU" name="Act" class="activity" activity1="Run" activity3="Gap" cores="2" derived="yes" option_set="Slave"><option name="o"/></event>
<event counter="B" title="x" name="y" cores="4" event="0x5" proc="yes" color="0x1ffffffff"/>
</category>
<category name="U"><counter_set name="U_cnt" title="U0" count="1"/>
<event event="0x1" title="t" name="n"/>
</category>
</events>
EOF2
	conv_in events.xml
	grep -q '<category name="T" counter_set="T_cnt" per_cpu="yes" supports_event_based_sampling="yes" advanced="yes">' "$TMP/out.apc/events.xml"
	grep -q '<event event="0x8" title="Cache" name="Refill" description="d" derived="yes" proc="no" class="weird"/>' "$TMP/out.apc/events.xml"
	grep -q '<event counter="A" title="CPU" name="Act" class="activity" activity1="Run" cores="2" activity3="Gap" derived="yes"/>' "$TMP/out.apc/events.xml"
	grep -q '<event counter="B" title="x" name="y" class="delta" cores="4" event="0x5" proc="yes"/>' "$TMP/out.apc/events.xml"
	grep -q '<counter_set name="U_cnt" title="U0" count="1"/>' "$TMP/out.apc/events.xml"
	! grep -q 'counter="[TU]_cnt0"' "$TMP/out.apc/events.xml" || false
	for what in '/events/category/event/@class (value not understood)' \
		'/events/category/event/@option_set' /events/category/event/option \
		'/events/category/event/@color (out of range)'; do
		grep -qF "events.xml $what: 1" <<<"$output"
	done
	# kept as they were: the category's own attributes, the counter
	# set's title
	! grep -q '@advanced\|counter_set/@title' <<<"$output" || false
	apcverify -q "$TMP/out.apc"
	# read again, the kept class="weird" is not understood again; the
	# rest was written in a way that reads back whole
	reads_back --counts-ok events.xml
	[ "$(grep -o 'not mapped: .*' <<<"$output")" = 'not mapped: events.xml /events/category/event/@class (value not understood): 1' ]
}

@test "APC: a gatord 9.x Summary's fourth clock is counted" {
	mkdir "$TMP/in.apc"
	pack "$TMP/in.apc/0000000000" <<'EOF2'
B = [
    p(1) + p(1) + s(CANARY) + p(1700000000000000000) + p(500) + p(100) + p(480)
    + s(b"uname") + s(b"Linux x") + s(b""),
    block_counter(),
]
EOF2
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="950"><target name="t" cores="1"/>
<counters><counter key="0x11" type="T_cnt0"/></counters></captured>
EOF2
	conv_in
	grep -qF 'gatord 9.x Summary fourth clock (no place in a protocol 680 Summary): 1' <<<"$output"
	# the three the output has room for are kept, and the attributes
	apcdump --frame=summary "$TMP/out.apc" |
		grep -q ' timestamp=1700000000000000000 uptime=500 monotonic_delta=100 attr_key="uname" attr_value="Linux x"$'
}

@test "APC: every Summary attribute is kept, past the ones a message holds" {
	# the frame decoder hands attributes past its per-message field limit
	# on as summary_attrs messages
	mkdir "$TMP/in.apc"
	pack "$TMP/in.apc/0000000000" <<'EOF2'
attrs = b"".join(s(b"k%d" % i) + s(b"v%d" % i) for i in range(40))
B = [p(1) + p(1) + s(CANARY) + p(1700000000000000000) + p(500) + p(100) + attrs + s(b""),
     block_counter()]
EOF2
	finish_cap "$TMP/in.apc"
	apcdump --frame=summary "$TMP/in.apc" | grep -q ' summary_attrs '
	apcconv -q "$TMP/in.apc" -o "$TMP/out.apc"
	apcdump --frame=summary "$TMP/out.apc" | grep -o 'attr_key="k[0-9]*" attr_value="v[0-9]*"' > "$TMP/got"
	cat "$TMP/got"
	[ "$(wc -l < "$TMP/got")" -eq 40 ]
	grep -qx 'attr_key="k39" attr_value="v39"' "$TMP/got"
}

@test "APC: session.xml settings are kept, its images and energy probe counted" {
	cap "$TMP/in.apc"
	finish_cap "$TMP/in.apc"
	cat >"$TMP/in.apc/session.xml" <<'EOF2'
<?xml version="1.0" encoding="US-ASCII"?>
<session version="1" call_stack_unwinding="yes" parse_debug_info="yes" high_resolution="no" buffer_mode="large" sample_rate="low" duration="3" target_host="10.99.3.109" target_port="8080" live_rate="100" stop_on_exit="yes">
  <image path="H:\ls"/>
  <image path="H:\libc.so.6"/>
  <energy_capture version="1" type="none"><channel id="0" resistance="20"/></energy_capture>
</session>
EOF2
	conv_in session.xml
	grep -q '<session version="1" call_stack_unwinding="yes" parse_debug_info="yes" high_resolution="no" buffer_mode="large" sample_rate="low" duration="3" target_host="10.99.3.109" target_port="8080" live_rate="100" stop_on_exit="yes"/>' "$TMP/out.apc/session.xml"
	grep -qF 'session.xml /session/image: 2' <<<"$output"
	grep -qF 'session.xml /session/energy_capture: 1' <<<"$output"
	apcverify -q "$TMP/out.apc"
	reads_back session.xml
}

@test "APC: the capture folder's other files are counted" {
	cap "$TMP/in.apc"
	finish_cap "$TMP/in.apc"
	echo '<counters><counter name="T_cnt0"/></counters>' > "$TMP/in.apc/counters.xml"
	cp "$TMP/in.apc/0000000000" "$TMP/in.apc/0000000001"
	mkdir "$TMP/in.apc/db"
	touch "$TMP/in.apc/db/a" "$TMP/in.apc/db/b"
	conv_in
	grep -qF 'counters.xml (the counters the target offered; not carried): 1' <<<"$output"
	grep -qF 'data files after 0000000000 (not read): 1' <<<"$output"
	grep -qF 'other files in the capture folder (not carried): 2' <<<"$output"
	# the same from an archive of the folder
	tar -C "$TMP" -czf "$TMP/in.tar.gz" in.apc
	run apcconv -v "$TMP/in.tar.gz" -o "$TMP/out2.apc"
	echo "$output"
	grep -qF 'other files in the capture folder (not carried): 2' <<<"$output"
}

@test "APC: an annotate connection that sent only its setup is counted" {
	pack "$TMP/0000000000" <<'EOF2'
setup = b"ANNOTATE 4\n" + struct.pack("<II", 9, 9) + b"\x00"
body = p(300) + p(0) + b"hi"
ann = b"\x01" + struct.pack("<I", len(body)) + body
B = [
    summary(),
    block_counter(),
    p(10) + p(1) + setup, p(10) + p(-1) + p(1),  # fd 1: setup, then gone
    p(10) + p(2) + setup + ann,                   # fd 2 says something
    p(10) + p(3) + setup,                         # fd 3 never does
]
EOF2
	conv 0 -v "$TMP/0000000000" -o "$TMP/out.apc"
	grep -qF 'annotate connections that sent nothing after their setup: 2' <<<"$output"
	[ "$(apcdump "$TMP/out.apc" | grep -c 'annotate_str .* text="hi"')" -eq 1 ]
}

@test "APC: an element's attributes are kept verbatim up to 256, the rest counted" {
	cap "$TMP/in.apc"
	python3 - "$TMP/in.apc/captured.xml" <<'EOF2'
import sys
attrs = " ".join('x%d="%d"' % (i, i) for i in range(300))
open(sys.argv[1], "w").write('<?xml version="1.0"?>\n<captured version="1" protocol="680">'
    '<target name="t" cores="1" %s/><counters><counter key="0x11" type="T"/></counters></captured>\n' % attrs)
EOF2
	conv_in
	grep -qF 'captured.xml /captured/target/@* (too many to keep): 44' <<<"$output"
	grep -q ' x255="255"/>' "$TMP/out.apc/captured.xml"
}

@test "APC: a captured.xml counter events.xml does not describe is counted" {
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="T_cnt0" event="0x8"/>
<counter key="0x12" type="A"/>
<counter key="0x13" type="B"/>
<counter key="0x4" counter="C" title="t" name="n" class="absolute"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="L" counter_set="T_cnt">
<event counter="A" title="x" name="y"/>
<event event="0x9" title="Cache" name="Refill"/>
</category></events>
EOF2
	conv_in
	# T_cnt0 (event 0x8, not 0x9) and B; A by events.xml, C by captured.xml
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 2' <<<"$output"
	# with no events.xml at all, none but C is described
	rm "$TMP/in.apc/events.xml"
	run apcconv -v "$TMP/in.apc" -o "$TMP/out2.apc"
	echo "$output"
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 3' <<<"$output"
	# what the writer wrote describes every counter: nothing to count again
	reads_back
}

@test "APC: a counter configured as an option_set event is described by it, option text and all" {
	# gatord's CCI-400: the configured event is the base event plus the
	# option's event_delta; Streamline appends the option's name and
	# description to the event's, in a way the spec does not give: the
	# event and its option set are kept as they were, so Streamline
	# describes the counter as it did in the capture read
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="C_cnt0" event="0xb4"/>
<counter key="0x12" type="C_cnt1" event="0xd5"/>
<counter key="0x13" type="C_cnt2" event="0x0"/>
<counter key="0x14" type="C_cnt3" event="0x14"/>
<counter key="0x15" type="C_cnt4" event="0x30"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events>
<counter_set name="C_cnt" count="8"/>
<category name="CCI-400" counter_set="C_cnt">
<option_set name="Slave">
<option event_delta="0x00" name="S0" description="Slave interface 0"/>
<option event_delta="0x20" name="S1" description="Slave interface 1"/>
</option_set>
<event event="0x00" option_set="Slave" title="CCI-400" name="Read: any" description="Read request handshake: any"/>
<option_set name="Master">
<option event_delta="0xa0" name="M0" description="Master interface 0"/>
<option event_delta="0xc0" name="M1" description="Master interface 1"/>
<option event_delta="junk" name="M2" description="Master interface 2"/>
</option_set>
<event event="0x14" option_set="Master" title="CCI-400" name="Retry fetch" description="RETRY of speculative fetch transaction"/>
<event event="0x15" option_set="Master" title="CCI-400" name="Read stall" description="Read request stall cycle"/>
<event event="0x10" option_set="Nowhere" title="CCI-400" name="Lost" description="names no option_set"/>
</category>
</events>
EOF2
	conv_in events.xml
	# C_cnt0 (0x14 + M0's 0xa0), C_cnt1 (0x15 + M1's 0xc0) and C_cnt2
	# (0x0 + S0's 0) are described by the kept events: none of their own
	! grep -q 'counter="C_cnt[012]"' "$TMP/out.apc/events.xml" || false
	grep -q '<option event_delta="0xa0" name="M0" description="Master interface 0"/>' "$TMP/out.apc/events.xml"
	grep -q '<option event_delta="0xc0" name="M1" description="Master interface 1"/>' "$TMP/out.apc/events.xml"
	grep -q '<event event="0x14" option_set="Master" title="CCI-400" name="Retry fetch" description="RETRY of speculative fetch transaction"/>' "$TMP/out.apc/events.xml"
	grep -q '<event event="0x15" option_set="Master" title="CCI-400" name="Read stall" description="Read request stall cycle"/>' "$TMP/out.apc/events.xml"
	grep -q '<option event_delta="0x00" name="S0" description="Slave interface 0"/>' "$TMP/out.apc/events.xml"
	# 0x14 is the Master base event itself, which no option (no delta 0)
	# configures; 0x30 = 0x10 + 0x20 belongs to an option_set not there
	grep -q '<event counter="C_cnt3" event="0x14" title="apctools" name="C_cnt3"' "$TMP/out.apc/events.xml"
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 2' <<<"$output"
	! grep -q 'appended by Streamline' <<<"$output" || false
	grep -qF 'events.xml /events/category/option_set/option/@event_delta (not a number): 1' <<<"$output"
	grep -qF 'events.xml /events/category/event/@option_set (no such option_set in its category): 1' <<<"$output"
	[ "$(grep -c 'not captured.xml' <<<"$output")" -eq 0 ]
	apcverify -q "$TMP/out.apc"
	# read again: the same (the kept option with no number and the
	# option_set that is not there are counted again; C_cnt3 and C_cnt4
	# have the events written for them now)
	reads_back --counts-ok events.xml
	grep -qF 'events.xml /events/category/option_set/option/@event_delta (not a number): 1' <<<"$output"
	! grep -q 'does not describe' <<<"$output" || false
}

@test "APC: counter sets whose names end in digits, and a type under several keys, are matched as declared" {
	# The reader indexes the counters by the sets a type can be in (the
	# type less one or more trailing digits) and by type: S120 is in
	# set S12 (and S1, whose event is another), S15 in S1 only, S121 in
	# S12 through an option; S1 itself is in no set (nothing after the
	# set name); N under two keys is described by its one <event counter="N">.
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="S120" event="0x20"/>
<counter key="0x12" type="S15" event="0x22"/>
<counter key="0x13" type="S1" event="0x22"/>
<counter key="0x14" type="N"/>
<counter key="0x15" type="N"/>
<counter key="0x16" type="S121" event="0x21"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events>
<counter_set name="S12" count="2"/>
<counter_set name="S1" count="8"/>
<category name="Twelve" counter_set="S12">
<event event="0x20" title="T12" name="Twelve 0x20"/>
<option_set name="o"><option event_delta="0x1" name="plus one"/></option_set>
<event event="0x20" option_set="o" title="T12" name="Twelve 0x20+1"/>
</category>
<category name="One" counter_set="S1">
<event event="0x22" title="T1" name="One 0x22"/>
</category>
<category name="Named"><event counter="N" title="TN" name="Enn"/></category>
</events>
EOF2
	conv_in events.xml
	# all but S1 described by the kept events: none of their own written
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 1' <<<"$output"
	grep -q '<event counter="S1" event="0x22" title="apctools" name="S1"' "$TMP/out.apc/events.xml"
	! grep -q 'counter="S1[25]' "$TMP/out.apc/events.xml" || false
	[ "$(grep -c '<event counter="N" title="TN" name="Enn"' "$TMP/out.apc/events.xml")" -eq 1 ]
	grep -q '<event event="0x20" option_set="o" title="T12" name="Twelve 0x20+1"/>' "$TMP/out.apc/events.xml"
	! grep -q 'described differently' <<<"$output" || false
	apcverify -q "$TMP/out.apc"
}

@test "APC: gatord 6.8's own events.xml describes its CCI and CCN option_set counters" {
	need_shared
	cap "$TMP/in.apc"
	cp "$SHARED/apc/v68_nonroot.apc/events.xml" "$TMP/in.apc/"
	counters_xml <<'EOF2'
<counter key="0x11" type="CCI_400_cnt0" event="0xb4"/>
<counter key="0x12" type="CCN-504_cnt0" event="0x410801"/>
EOF2
	conv_in
	# both described (none of their own written), by gatord's events
	# and option sets, kept
	[ "$(grep -c 'does not describe' <<<"$output")" -eq 0 ]
	! grep -q 'counter="CCI_400_cnt0"\|counter="CCN-504_cnt0"' "$TMP/out.apc/events.xml" || false
	grep -q '<event event="0x14" option_set="Master" title="CCI-400" name="Retry fetch" ' "$TMP/out.apc/events.xml"
	grep -q '<event event="0x0801" option_set="XP_Region" title="CCN-504" name="Bus 0: REQ: H-bit" ' "$TMP/out.apc/events.xml"
	! grep -q 'appended by Streamline' <<<"$output" || false
}

@test "APC: one counter type under two keys keeps each key's values apart" {
	mkdir "$TMP/in.apc"
	pack "$TMP/in.apc/0000000000" <<'EOF2'
B = [summary(), block_counter((0x12, 7), (0x13, 9), (0x14, 3), (0x15, 4), (0x16, 1), (0x17, 2))]
EOF2
	counters_xml <<'EOF2'
<counter key="0x12" type="L"/>
<counter key="0x13" type="L"/>
<counter key="0x13" type="L"/>
<counter key="0x14" type="T_cnt0" event="0x8"/>
<counter key="0x15" type="T_cnt0" event="0x9"/>
<counter key="0x17" type="apc_key_0x16"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="Lin" counter_set="T_cnt">
<event counter="L" title="Disk" name="Write"/>
<event event="0x8" title="Cache" name="Refill"/>
<event event="0x9" title="Cache" name="Access"/>
</category></events>
EOF2
	conv_in
	said="$output"
	cat "$TMP/out.apc/captured.xml" "$TMP/out.apc/events.xml"
	dump "$TMP/out.apc"
	grep -q 'key=0x12 value=7$' <<<"$output"
	grep -q 'key=0x13 value=9$' <<<"$output"
	grep -q 'key=0x14 value=3$' <<<"$output"
	grep -q 'key=0x15 value=4$' <<<"$output"
	# an undeclared key's values keep their own counter, named after the
	# key, even where captured.xml used that name for another key
	grep -q 'key=0x16 value=1$' <<<"$output"
	grep -q 'key=0x17 value=2$' <<<"$output"
	grep -qF 'counter keys not declared in captured.xml: 1' <<<"$said"
	for k in 0x12 0x13; do grep -q "<counter key=\"$k\" type=\"L\"/>" "$TMP/out.apc/captured.xml"; done
	grep -q '<counter key="0x14" type="T_cnt0" event="0x8"/>' "$TMP/out.apc/captured.xml"
	grep -q '<counter key="0x15" type="T_cnt0" event="0x9"/>' "$TMP/out.apc/captured.xml"
	# a type's own event is written once, by the first key; each key of
	# T_cnt0 keeps its own description, the kept event of its set
	[ "$(grep -c '<event counter="L" title="Disk" name="Write"' "$TMP/out.apc/events.xml")" -eq 1 ]
	[ "$(grep -c 'counter="T_cnt0"' "$TMP/out.apc/events.xml")" -eq 0 ]
	grep -q '<event event="0x8" title="Cache" name="Refill"/>' "$TMP/out.apc/events.xml"
	grep -q '<event event="0x9" title="Cache" name="Access"/>' "$TMP/out.apc/events.xml"
	! grep -qF 'described differently' <<<"$said" || false
	grep -qF 'captured.xml counters declared twice with the same type and key (the second ignored): 1' <<<"$said"
	apcverify -q "$TMP/out.apc"
	reads_back --counts-ok captured.xml events.xml
}

@test "APC: a key captured.xml gives two counter types stays with the first, and is counted" {
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="A"/>
<counter key="0x11" type="B"/>
EOF2
	conv_in
	grep -qF 'captured.xml counters with a key an earlier counter has (its values kept with the first): 1' <<<"$output"
	cat "$TMP/out.apc/captured.xml"
	grep -q '<counter key="0x11" type="A"/>' "$TMP/out.apc/captured.xml"
	grep -q '<counter key="0x3" type="B"/>' "$TMP/out.apc/captured.xml"
	apcdump "$TMP/out.apc" | grep -q 'key=0x11 value=5$'
}

@test "APC: an activity colour that does not parse is left out and counted, not made black" {
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="A"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="L">
<event counter="A" title="CPU" name="Act" class="activity" activity1="Run" activity_color1="green" activity2="Wait" activity_color2="0x1ff00ff00" activity3="Idle" activity_color3="0x0000ff00" activity4="Gone" activity_color4="12z"/>
</category></events>
EOF2
	conv_in events.xml
	grep -q '<event counter="A" title="CPU" name="Act" class="activity" activity1="Run" activity2="Wait" activity3="Idle" activity_color3="0x0000ff00" activity4="Gone"/>' "$TMP/out.apc/events.xml"
	grep -qF 'events.xml /events/category/event/@activity_colorN (not a number): 2' <<<"$output"
	grep -qF 'events.xml /events/category/event/@activity_colorN (out of range): 1' <<<"$output"
}

@test "APC: XML values that do not parse or fit are counted, not taken as a default" {
	cap "$TMP/in.apc"
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680" created="-5"><target name="t" cores="0" cpuid="-2"/><counters>
<counter key="0x11zz" type="K"/>
<counter key="0x12" type="T_cnt0" event="-3"/>
<counter key="0x15" type="T_cnt1" event="0x8"/>
<counter key="0x13" type="A"/>
</counters></captured>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events>
<category name="T" counter_set="T_cnt"><event event="0x8q" title="x" name="y"/></category>
<category name="L"><event counter="A" title="CPU" name="Act" class="activity" activity1="R" cores="x"/></category>
</events>
EOF2
	conv_in
	for what in '/captured/@created (out of range)' '/captured/target/@cores (out of range)' \
		'/captured/target/@cpuid (out of range)' '/captured/counters/counter/@key (not a number)' \
		'/captured/counters/counter/@event (out of range)'; do
		grep -qF "captured.xml $what: 1" <<<"$output"
	done
	for what in '/events/category/event/@event (not a number)' '/events/category/event/@cores (not a number)'; do
		grep -qF "events.xml $what: 1" <<<"$output"
	done
	# the key that did not parse declares nothing: its values are kept as
	# an undeclared key's
	grep -qF 'counter keys not declared in captured.xml: 1' <<<"$output"
	[ "$(grep -c 'captured.xml counters without type or key' <<<"$output")" -eq 0 ]
	grep -q '<counter key="0x12" type="T_cnt0"/>' "$TMP/out.apc/captured.xml"
}

@test "APC: a category's counter sets past 16 still describe their counters" {
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="S20_cnt0" event="0x1"/>
EOF2
	python3 - "$TMP/in.apc/events.xml" <<'EOF2'
import sys
sets = "".join('<counter_set name="S%d_cnt"/>' % i for i in range(1, 21))
open(sys.argv[1], "w").write('<?xml version="1.0"?>\n<events><category name="M">%s'
    '<event event="0x1" title="M" name="m"/></category></events>\n' % sets)
EOF2
	conv_in
	# described by the kept event of its set: no event of its own
	! grep -q 'counter="S20_cnt0"' "$TMP/out.apc/events.xml" || false
	grep -q '<event event="0x1" title="M" name="m"/>' "$TMP/out.apc/events.xml"
	[ "$(grep -c 'does not describe' <<<"$output")" -eq 0 ]
}

@test "APC: bytes in counts the data file, not the XML beside it (as the man page says)" {
	cap "$TMP/in.apc"
	finish_cap "$TMP/in.apc"
	{ printf '<?xml version="1.0"?>\n<events/>\n'; printf '%5000s' ''; } >"$TMP/in.apc/events.xml"
	printf '<?xml version="1.0"?>\n<session version="1"/>\n' >"$TMP/in.apc/session.xml"
	size=$(stat -c %s "$TMP/in.apc/0000000000")
	apcconv -q --stats=json "$TMP/in.apc" -o "$TMP/out.apc" > "$TMP/s.json"
	cat "$TMP/s.json"
	grep -q "\"bytes_in\":$size," "$TMP/s.json"
	tar -C "$TMP" -czf "$TMP/in.tar.gz" in.apc
	apcconv -q --stats=json "$TMP/in.tar.gz" -o "$TMP/out2.apc" > "$TMP/z.json"
	grep -q "\"bytes_in\":$size," "$TMP/z.json"
}

@test "APC: XML numbers past 64 bits are counted as not numbers, not clamped" {
	# strtoll and strtod clamp what does not fit (to 2^63-1, or inf):
	# taken as such, two different out-of-range events matched each other
	cap "$TMP/in.apc"
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680" created="99999999999999999999"><target name="t" cores="1"/><counters>
<counter key="0x11" type="T_cnt0" event="0x10000000000000000"/>
<counter key="0x12" type="T_cnt1" event="0x8"/>
</counters></captured>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="T" counter_set="T_cnt">
<event event="0x20000000000000000" title="Wrong" name="w"/>
<event event="0x8" title="Cache" name="Refill" multiplier="1e999" color="0x10000000000000000"/>
</category></events>
EOF2
	conv_in captured.xml events.xml
	for what in 'captured.xml /captured/@created' 'captured.xml /captured/counters/counter/@event' \
		'events.xml /events/category/event/@event' 'events.xml /events/category/event/@multiplier' \
		'events.xml /events/category/event/@color'; do
		grep -qF "$what (not a number): 1" <<<"$output"
	done
	! grep -q '7fffffffffffffff\|9223372036854775807' "$TMP/out.apc/captured.xml" || false
	grep -q '<counter key="0x11" type="T_cnt0"/>' "$TMP/out.apc/captured.xml"
	# T_cnt0 has no event now: not described by "Wrong"
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 1' <<<"$output"
	! grep -q 'multiplier="inf"\|counter="T_cnt0" .*Wrong' "$TMP/out.apc/events.xml" || false
}

@test "APC: a multiplier with characters after its number keeps the number, and says so" {
	# as TPTP times do: "0.001x" is read up to the x, and the summary
	# says it was read that way (not "not a number", which is left out)
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="A"/><counter key="0x12" type="B"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="L">
<event counter="A" title="a" name="a" multiplier="0.001x"/>
<event counter="B" title="b" name="b" multiplier="x0.001"/>
</category></events>
EOF2
	conv_in events.xml
	grep -q '<event counter="A" .* multiplier="0.001"/>' "$TMP/out.apc/events.xml"
	! grep -q '<event counter="B" .*multiplier' "$TMP/out.apc/events.xml" || false
	grep -qF 'events.xml /events/category/event/@multiplier (characters after the number; read up to them): 1' <<<"$output"
	grep -qF 'events.xml /events/category/event/@multiplier (not a number): 1' <<<"$output"
}

# events_kept IN.apc OUT.apc: OUT's events.xml holds IN's elements in
# their order, attributes as they were (comments and layout aside),
# but for the events of IN's captured.xml counter types, which the
# writer writes from their declarations in the same places; after
# them OUT may have one more category of such events (those IN's
# events.xml did not describe by name).
events_kept() {
	python3 - "$1" "$2" <<'PY'
import sys, xml.etree.ElementTree as ET
src, out = sys.argv[1], sys.argv[2]
types = {c.get("type") or c.get("counter")
         for c in ET.parse(src + "/captured.xml").getroot().iter("counter")}
def flat(e, path=""):
    p = path + "/" + e.tag
    yield p, dict(e.attrib)
    for c in e:
        yield from flat(c, p)
a = list(flat(ET.parse(src + "/events.xml").getroot()))
b = list(flat(ET.parse(out + "/events.xml").getroot()))
bad = 0
for i, (pa, aa) in enumerate(a):
    pb, ab = b[i] if i < len(b) else (None, {})
    own = pa.endswith("/event") and aa.get("counter") in types
    if pa != pb or (ab != aa and not (own and ab.get("counter") == aa["counter"])):
        print("element %d: %s %s -> %s %s" % (i, pa, aa, pb, ab))
        bad += 1
for pb, ab in b[len(a):]:
    if not (pb == "/events/category" or (pb == "/events/category/event" and ab.get("counter") in types)):
        print("added: %s %s" % (pb, ab))
        bad += 1
print("%d elements in, %d out, %d differences" % (len(a), len(b), bad))
sys.exit(bad != 0)
PY
}

@test "APC: events.xml keeps what it says of counters the capture does not use" {
	# gatord writes the target's whole events.xml; a capture uses a few
	# of its counters.  The rest (counter sets, option sets, other
	# counters' events, gatord 9.x's spe) is written back as it was;
	# each counter's own event is written from its declaration, in its
	# place.  A described twice keeps its first event as it was.
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="A"/>
<counter key="0x12" type="P_cnt0" event="0x2"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<!-- layout: not kept -->
<events>
<counter_set name="P_cnt" count="2"/>
<category name="P" counter_set="P_cnt" per_cpu="yes">
<event counter="P_ccnt" event="0xff" title="Clock" name="Cycles" display="hertz" units="Hz"/>
<event event="0x1" title="Cache" name="Miss"/>
<event event="0x2" title="Cache" name="Hit"/>
</category>
<category name="L">
<event counter="A" title="Old" name="first"/>
<event counter="Z" title="Other" name="not captured"/>
<event counter="A" title="Disk" name="Write" units="B"/>
</category>
<spe name="S" id="s0"><event id="1" name="x"><valid-op-type class="load"/></event></spe>
</events>
EOF2
	conv_in events.xml
	[ "$(grep -c 'not mapped' <<<"$output")" -eq 0 ]
	events_kept "$TMP/in.apc" "$TMP/out.apc"
	grep -q '<event counter="A" title="Old" name="first"/>' "$TMP/out.apc/events.xml"
	grep -q '<event counter="A" title="Disk" name="Write" units="B" class="delta"/>' "$TMP/out.apc/events.xml"
	grep -q '<event counter="Z" title="Other" name="not captured"/>' "$TMP/out.apc/events.xml"
	grep -q '<valid-op-type class="load"/>' "$TMP/out.apc/events.xml"
	! grep -q 'counter="P_cnt0"' "$TMP/out.apc/events.xml" || false
	apcverify -q "$TMP/out.apc"
	reads_back events.xml
	# --events overrides a kept event by its counter name, as it does
	# the capture's own
	cat >"$TMP/ev.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="L"><event counter="Z" title="New" name="z"/></category></events>
EOF2
	apcconv -q --events="$TMP/ev.xml" "$TMP/in.apc" -o "$TMP/ov.apc"
	[ "$(grep -c 'counter="Z"' "$TMP/ov.apc/events.xml")" -eq 1 ]
	grep -q '<event counter="Z" title="New" name="z"/>' "$TMP/ov.apc/events.xml"
}

@test "APC: the real gatord captures' events.xml comes out whole" {
	need_shared
	for c in v68_nonroot v68_sleep sleep_counters; do
		apcconv -q "$SHARED/apc/$c.apc" -o "$TMP/$c.apc"
		events_kept "$SHARED/apc/$c.apc" "$TMP/$c.apc"
	done
	# gatord 6.8's CCI-400 option text is there for its counters
	grep -q '<event event="0x14" option_set="Master" title="CCI-400" name="Retry fetch" description="RETRY of speculative fetch transaction"/>' "$TMP/v68_nonroot.apc/events.xml"
}

@test "APC: a core named twice or a second summary message in the Summary frame is counted" {
	# the first summary message is the capture's (as the first Summary
	# frame is); a core's last name is kept, the one it replaced counted
	mkdir "$TMP/in.apc"
	pack "$TMP/in.apc/0000000000" <<'EOF2'
core = lambda n, cpuid, name: p(3) + p(n) + p(cpuid) + s(name)
again = p(1) + s(CANARY) + p(1800000000000000000) + p(900) + p(300) + s(b"late") + s(b"x") + s(b"")
B = [summary() + core(0, 0x41d03, b"Cortex-A53") + again + core(0, 0x41d07, b"Cortex-A57") + core(1, 0x41d03, b"Cortex-A53"),
     block_counter()]
EOF2
	finish_cap "$TMP/in.apc"
	conv_in
	grep -qF 'summary messages after the first (ignored): 1' <<<"$output"
	grep -qF 'core names given again for a core (the last kept): 1' <<<"$output"
	dump --frame=summary "$TMP/out.apc"
	grep -q 'timestamp=1700000000000000000 uptime=500 monotonic_delta=100$' <<<"$output"
	grep -q 'core_name .*core=0 cpuid=0x41d07 name="Cortex-A57"' <<<"$output"
	grep -q 'core_name .*core=1 cpuid=0x41d03 name="Cortex-A53"' <<<"$output"
	[ "$(grep -c core_name <<<"$output")" -eq 2 ]
}

@test "APC: what captured.xml says of a counter that nothing carries is counted" {
	# counter= beside type= (type names the counter), attributes of
	# <counters>, and a description captured.xml gives (as gatord 9.x
	# does for its constants) that events.xml's replaces
	cap "$TMP/in.apc"
	cat >"$TMP/in.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680"><target name="t" cores="1"/><counters count="3">
<counter key="0x11" type="A" counter="B"/>
<counter key="0x4" counter="C" title="t" name="n" class="absolute" units="u"/>
<counter key="0x5" counter="D" title="Same" name="d" class="absolute"/>
</counters></captured>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events><category name="L">
<event counter="C" title="T2" name="n"/>
<event counter="D" title="Same" name="d" class="absolute"/>
</category></events>
EOF2
	conv_in events.xml
	grep -qF 'captured.xml /captured/counters/@count: 1' <<<"$output"
	grep -qF 'captured.xml /captured/counters/counter/@counter (beside type=): 1' <<<"$output"
	# C: its title, class and units were captured.xml's, events.xml's
	# replace them; its name is the same in both, as all of D is
	for a in title class units; do
		grep -qF "captured.xml /captured/counters/counter/@$a (events.xml describes the counter otherwise): 1" <<<"$output"
	done
	[ "$(grep -o 'describes the counter otherwise' <<<"$output" | wc -l)" -eq 3 ]
	grep -q '<event counter="C" title="T2" name="n" class="delta"/>' "$TMP/out.apc/events.xml"
}

@test "APC: what a kept events.xml element holds besides elements and attributes is counted" {
	# text, processing instructions and XML namespaces have no place in
	# the kept elements (gatord writes none of them); comments and the
	# white space between elements are layout, left out uncounted
	cap "$TMP/in.apc"
	finish_cap "$TMP/in.apc"
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events xmlns:x="urn:x">
  <!-- a comment -->
  <category name="T" x:note="n">text<?pi data?>
    <event counter="Z" title="z" name="z"/>
    <x:extra/>
  </category>
</events>
EOF2
	conv_in events.xml
	grep -qF 'events.xml /events/category/text(): 1' <<<"$output"
	grep -qF 'events.xml /events/category/node(): 1' <<<"$output"
	grep -qF 'events.xml /events/@xmlns:x (namespaces not kept): 1' <<<"$output"
	grep -qF 'events.xml /events/category/@note (in a namespace; not kept): 1' <<<"$output"
	grep -qF 'events.xml /events/category/extra (in a namespace; not kept): 1' <<<"$output"
	[ "$(grep -o 'events\.xml /' <<<"$output" | wc -l)" -eq 5 ]
	grep -q '<event counter="Z" title="z" name="z"/>' "$TMP/out.apc/events.xml"
	! grep -q 'note\|extra' "$TMP/out.apc/events.xml" || false
}

# two_counters: $TMP/in.apc with counters A (key 0x11, its value 5) and
# B (key 0x12, no values), each described by events.xml, B's event
# after A's.
two_counters() {
	cap "$TMP/in.apc"
	counters_xml <<'EOF2'
<counter key="0x11" type="A"/>
<counter key="0x12" type="B"/>
EOF2
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events>
<category name="Disk">
<event counter="A" title="Disk" name="Reads"/>
<event counter="B" title="Disk" name="Writes"/>
</category>
</events>
EOF2
}

# cut_inside FILE STRING: FILE cut 10 bytes into the first STRING; the
# size it has then is in $cut.
cut_inside() {
	cut=$(($(grep -bo "$2" "$1" | head -n 1 | cut -d: -f1) + 10))
	truncate -s "$cut" "$1"
}

@test "APC: an events.xml not well-formed is read up to the damage; the capture is written, exit 1" {
	two_counters
	# without events.xml the capture converts (the counters named by
	# their types): a damaged one must not lose more
	mv "$TMP/in.apc/events.xml" "$TMP/events.xml"
	conv 0 -q "$TMP/in.apc" -o "$TMP/none.apc"
	mv "$TMP/events.xml" "$TMP/in.apc/"
	cut_inside "$TMP/in.apc/events.xml" '<event counter="B"'
	conv 1 -v "$TMP/in.apc" -o "$TMP/out.apc"
	[ "${lines[0]}" = "apcconv: $TMP/in.apc/events.xml: offset 0x$(printf %x "$cut"): line 5: not well-formed XML: couldn't find end of Start Tag event; kept everything before it" ]
	grep -q "^apcconv: $TMP/in.apc (apc) -> $TMP/out.apc: " <<<"$output"
	# A's event came before the damage, B's did not
	grep -q '<event counter="A" title="Disk" name="Reads"' "$TMP/out.apc/events.xml"
	! grep -q 'Writes' "$TMP/out.apc/events.xml" || false
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 1' <<<"$output"
	apcverify -q "$TMP/out.apc"
	apcdump "$TMP/out.apc" | grep -q ' block_counter .* key=0x11 value=5$'
	# apcverify calls it an error; apcdump, which does not read it,
	# lists the frames
	verify 1 "$TMP/in.apc"
	grep -qF "$TMP/in.apc/events.xml: error: line 5: not well-formed XML: " <<<"$output"
	dump "$TMP/in.apc"
	[ "$status" -eq 0 ]
	grep -q ' block_counter .* key=0x11 value=5$' <<<"$output"
	# cut after B's counter=: its start tag was not read whole, and its
	# event is not kept with the attributes it had up to there
	two_counters
	cut=$(($(grep -bo '<event counter="B"' "$TMP/in.apc/events.xml" | cut -d: -f1) + 19))
	truncate -s "$cut" "$TMP/in.apc/events.xml"
	conv 1 -v "$TMP/in.apc" -o "$TMP/out2.apc"
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 1' <<<"$output"
	cmp "$TMP/out.apc/events.xml" "$TMP/out2.apc/events.xml"
	# nothing before the root: read as if absent
	printf 'junk' >"$TMP/in.apc/events.xml"
	conv 1 -q "$TMP/in.apc" -o "$TMP/junk.apc"
	grep -q "line 1: not well-formed XML: .*; nothing before it to keep: read as if absent$" <<<"$output"
	cmp "$TMP/none.apc/events.xml" "$TMP/junk.apc/events.xml"
}

@test "APC: an events.xml error libxml2 recovers from (an attribute :name) ends what is kept there" {
	two_counters
	cat >"$TMP/in.apc/events.xml" <<'EOF2'
<?xml version="1.0"?>
<events>
<category name="Disk">
<event counter="A" title="Disk" name="Reads"/>
</category>
<category :name="Net">
<event counter="B" title="Net" name="Writes"/>
</category>
</events>
EOF2
	at=$(grep -bo ':name=' "$TMP/in.apc/events.xml" | cut -d: -f1)
	conv 1 "$TMP/in.apc" -o "$TMP/out.apc"
	[[ "${lines[0]}" == "apcconv: $TMP/in.apc/events.xml: offset 0x"*": line 6: not well-formed XML: failed to parse QName ':name'"*"; kept everything before it" ]]
	# the offset is inside that start tag
	off=$((16#$(sed -n 's/.*offset 0x\([0-9a-f]*\):.*/\1/p' <<<"${lines[0]}")))
	[ "$off" -ge $((at - 10)) ]
	[ "$off" -le $((at + 10)) ]
	grep -q '<event counter="A" title="Disk" name="Reads"' "$TMP/out.apc/events.xml"
	# nothing of the broken element or after it: B has the default names
	[ "$(grep -c -e 'Net' -e ':name' "$TMP/out.apc/events.xml")" -eq 0 ]
	apcverify -q "$TMP/out.apc"
}

@test "APC: a damaged session.xml too; with the data file's damage all are reported" {
	two_counters
	cut_inside "$TMP/in.apc/events.xml" '<event counter="B"'
	printf '<?xml version="1.0"?>\n<session version="1" duration="3"><image path="a"/><image' \
		>"$TMP/in.apc/session.xml"
	conv 1 -v "$TMP/in.apc" -o "$TMP/out.apc"
	grep -q "^apcconv: $TMP/in.apc/events.xml: offset 0x[0-9a-f]*: line 5: not well-formed XML: .*; kept everything before it; $TMP/in.apc/session.xml: offset 0x[0-9a-f]*: line 2: not well-formed XML: .*; kept everything before it$" <<<"$output"
	# its attributes are kept; of its images, the one whose start tag
	# was read whole is counted, the one cut inside it is not there
	grep -q '<session version="1" .* duration="3" ' "$TMP/out.apc/session.xml"
	grep -qF 'session.xml /session/image: 1' <<<"$output"
	# the data file cut short: its damage leads, the XML's follows
	size=$(stat -c %s "$TMP/in.apc/0000000000")
	truncate -s $((size - 2)) "$TMP/in.apc/0000000000"
	rm "$TMP/in.apc/session.xml"
	conv 1 -q "$TMP/in.apc" -o "$TMP/cut.apc"
	grep -q "^apcconv: $TMP/in.apc/0000000000: offset 0x[0-9a-f]*: .*; $TMP/in.apc/events.xml: offset 0x[0-9a-f]*: line 5: not well-formed XML: " <<<"$output"
}

# member_at TAR MEMBER: the offset of MEMBER's data in TAR.
member_at() {
	python3 -c 'import sys, tarfile; print(tarfile.open(sys.argv[1]).getmember(sys.argv[2]).offset_data)' "$1" "$2"
}

@test "APC: an archive cut inside events.xml converts what it holds before the cut" {
	two_counters
	# gatord's order: the data file first
	tar -C "$TMP" -cf "$TMP/in.tar" in.apc/0000000000 in.apc/captured.xml in.apc/events.xml
	at=$(member_at "$TMP/in.tar" in.apc/events.xml)
	within=$(($(grep -bo '<event counter="B"' "$TMP/in.apc/events.xml" | cut -d: -f1) + 10))
	head -c $((at + within)) "$TMP/in.tar" >"$TMP/cut.tar"
	conv 1 -v "$TMP/cut.tar" -o "$TMP/out.apc"
	[ "${lines[0]}" = "apcconv: $TMP/cut.tar: offset 0x$(printf %x $((at + within))): truncated tar archive: it ends inside the data of in.apc/events.xml ($within of its $(stat -c %s "$TMP/in.apc/events.xml") bytes)" ]
	grep -q '<event counter="A" title="Disk" name="Reads"' "$TMP/out.apc/events.xml"
	grep -qF 'captured.xml counters events.xml does not describe (default title and name): 1' <<<"$output"
	apcverify -q "$TMP/out.apc"
}

@test "APC: an archive cut inside captured.xml writes nothing and names the cut member" {
	# captured.xml declares the keys: cut, it is an error, not a partial
	# read (and the bytes read before the cut are freed: SANITIZE=1)
	two_counters
	tar -C "$TMP" -cf "$TMP/in.tar" in.apc/0000000000 in.apc/events.xml in.apc/captured.xml
	at=$(member_at "$TMP/in.tar" in.apc/captured.xml)
	head -c $((at + 40)) "$TMP/in.tar" >"$TMP/cut.tar"
	conv 1 "$TMP/cut.tar" -o "$TMP/out.apc"
	[ "${lines[0]}" = "apcconv: $TMP/cut.tar: offset 0x$(printf %x $((at + 40))): truncated tar archive: it ends inside the data of in.apc/captured.xml (40 of its $(stat -c %s "$TMP/in.apc/captured.xml") bytes)" ]
	[[ "${lines[1]}" == *" -> nothing written: "* ]]
	# and nothing else (under SANITIZE=1, no leak report)
	[ "${#lines[@]}" -eq 2 ]
	[ ! -e "$TMP/out.apc" ]
}

@test "APC: the real capture with its events.xml cut short, and an archive of it cut there, convert" {
	need_shared
	cp -r "$SHARED/apc/v68_nonroot_annotate.apc" "$TMP/ev.apc"
	chmod -R u+w "$TMP/ev.apc"
	tar -C "$TMP" -cf "$TMP/ev.tar" ev.apc/captured.xml ev.apc/0000000000 ev.apc/events.xml
	# cut 3232 bytes into events.xml, as the folder's is
	head -c $(($(member_at "$TMP/ev.tar" ev.apc/events.xml) + 3232)) "$TMP/ev.tar" >"$TMP/cut.tar"
	truncate -s 3232 "$TMP/ev.apc/events.xml"
	conv 1 "$TMP/ev.apc" -o "$TMP/out.apc"
	grep -q "^apcconv: $TMP/ev.apc/events.xml: offset 0xca0: line 28: not well-formed XML: .*; kept everything before it$" <<<"$output"
	conv 1 "$TMP/cut.tar" -o "$TMP/tar.apc"
	grep -q "truncated tar archive: it ends inside the data of ev.apc/events.xml" <<<"$output"
	# the same capture either way, with all of the data file's frames
	for f in 0000000000 captured.xml events.xml; do
		cmp "$TMP/out.apc/$f" "$TMP/tar.apc/$f"
	done
	apcverify -q "$TMP/out.apc"
	[ "$(apcdump --summary "$TMP/out.apc" | awk '/^Frames:/ {print $2}')" -eq 390 ]
	# apcverify: an error of events.xml each; apcdump lists the frames
	verify 1 "$TMP/ev.apc"
	grep -q 'events.xml: error: line 28: .* \[events-xml\]$' <<<"$output"
	verify 1 "$TMP/cut.tar"
	grep -q 'events.xml: error: .* \[events-xml\]$' <<<"$output"
	[ "$(apcdump "$TMP/ev.apc" | wc -l)" -eq "$(apcdump "$SHARED/apc/v68_nonroot_annotate.apc" | wc -l)" ]
}

@test "APC: a bare 0000000000 is read with the XML beside it, as apcverify reads it" {
	two_counters
	printf '<?xml version="1.0"?>\n<session version="1" duration="3"/>\n' >"$TMP/in.apc/session.xml"
	conv 0 -v "$TMP/in.apc" -o "$TMP/dir.apc"
	conv 0 -v "$TMP/in.apc/0000000000" -o "$TMP/bare.apc"
	! grep -q 'not declared' <<<"$output" || false
	for f in 0000000000 captured.xml events.xml session.xml; do
		cmp "$TMP/dir.apc/$f" "$TMP/bare.apc/$f"
	done
	# apcdump: the protocol and the counters' names, and --xml
	dump --summary "$TMP/in.apc/0000000000"
	grep -q '^Protocol: *680$' <<<"$output"
	grep -q '^  key 0x11 *A  *1 value$' <<<"$output"
	grep -q '^  key 0x12 *B  *0 values$' <<<"$output"
	diff <(apcdump --xml "$TMP/in.apc") <(apcdump --xml "$TMP/in.apc/0000000000" | sed 's|/0000000000: captured.xml$|: captured.xml|')
	verify 0 "$TMP/in.apc/0000000000"
	# a data file under another name is a stream of frames, nothing more,
	# for all three
	cp "$TMP/in.apc/0000000000" "$TMP/in.apc/data.bin"
	conv 0 -v "$TMP/in.apc/data.bin" -o "$TMP/other.apc"
	grep -qF 'counter keys not declared in captured.xml: 1' <<<"$output"
	dump --summary "$TMP/in.apc/data.bin"
	grep -q '^Protocol: *unknown (no captured.xml)$' <<<"$output"
	verify 0 "$TMP/in.apc/data.bin"
	grep -q 'warning: no captured.xml beside a bare data file' <<<"$output"
}

@test "APC: a damaged captured.xml beside a bare 0000000000 is read as far as it goes" {
	two_counters
	rm "$TMP/in.apc/events.xml"
	cut_inside "$TMP/in.apc/captured.xml" '<counter key="0x12"'
	conv 1 -v "$TMP/in.apc/0000000000" -o "$TMP/out.apc"
	grep -q "^apcconv: $TMP/in.apc/captured.xml: offset 0x$(printf %x "$cut"): line 4: not well-formed XML: .*; kept everything before it$" <<<"$output"
	# A (key 0x11) was declared before the damage
	grep -q '<counter key="0x11" type="A"/>' "$TMP/out.apc/captured.xml"
	! grep -q 'not declared' <<<"$output" || false
	# one that is not a <captured> is not used
	echo '<other/>' >"$TMP/in.apc/captured.xml"
	conv 1 -v "$TMP/in.apc/0000000000" -o "$TMP/other.apc"
	grep -q "^apcconv: $TMP/in.apc/captured.xml: captured.xml has no <captured> root: read as if absent$" <<<"$output"
	grep -qF 'counter keys not declared in captured.xml: 1' <<<"$output"
	# a folder's captured.xml must be whole: nothing written
	conv 1 "$TMP/in.apc" -o "$TMP/dir.apc"
	[ ! -e "$TMP/dir.apc" ]
}

# ann_cap DIR: DIR/0000000000 and its captured.xml, whose External
# frames carry annotate counters: pid 7 declares keys 1 (an activity) and
# 2, pid 8 declares key 1 again (another process's counter) and sends a
# value for key 9, which nobody declares.
ann_cap() {
	mkdir -p "$1"
	pack "$1/0000000000" <<'EOF2'
def msg(code, body):
    return bytes([code]) + struct.pack("<I", len(body)) + body
def setup(tid, pid):
    return b"ANNOTATE 4\n" + struct.pack("<II", tid, pid) + b"\0"
def decl(key, cls, title, name):
    # key, per_cpu, class, display, modifier, series, rendering, average
    # selection, average cores, percentage, activities, cores; colour;
    # title, name, units; the description to the end
    return msg(0x08, b"".join(p(v) for v in (key, 0, cls, 0, 1, 0, 0, 0, 0, 0, 0, 0))
               + b"\0\0\0\0" + title + b"\0" + name + b"\0\0")
def value(ts, key, v):
    return msg(0x09, p(ts) + p(0) + p(key) + p(v))
def switch(ts, key, act):
    return msg(0x0a, p(ts) + p(0) + p(key) + p(act) + p(7))
T = 1700000000000000000 + 1000
B = [
    summary(),
    block_counter(),
    p(10) + p(1) + setup(7, 7) + decl(1, 3, b"App", b"state") + decl(2, 1, b"App", "t\u00e4sks".encode()),
    p(10) + p(1) + value(T, 2, 5) + value(T + 1, 2, 6) + switch(T + 2, 1, 1),
    p(10) + p(2) + setup(8, 8) + decl(1, 2, b"Other", b"level") + value(T + 3, 1, 9) + value(T + 4, 9, 1),
]
EOF2
	finish_cap "$1"
}

@test "apcdump --summary lists the counters annotate clients declare, apart from captured.xml's" {
	ann_cap "$TMP/in.apc"
	dump --summary "$TMP/in.apc"
	[ "$status" -eq 0 ]
	# captured.xml's as they were
	grep -q '^Counters: *1 (1 with values)$' <<<"$output"
	grep -q '^  key 0x11 *T_cnt0  *1 value$' <<<"$output"
	[ "$(sed -n '/^Annotate counters:/,/^Annotation channels:/p' <<<"$output")" = 'Annotate counters:   4 (4 with values or activity switches)
  annotate pid 7       key 1      "App" "state" 0 values, 1 activity switch
  annotate pid 7       key 2      "App" "t'$'\xc3\xa4''sks" 2 values
  annotate pid 8       key 1      "Other" "level" 1 value
  annotate pid 8       key 9      (not declared) 1 value
Annotation channels: 0' ]
	apcdump --summary --json "$TMP/in.apc" | python3 -c '
import json, sys
o = json.load(sys.stdin)
assert [c["name"] for c in o["counters"]] == ["T_cnt0"], o["counters"]
got = [(c["pid"], c["key"], c["title"], c["name"], c["declared"], c["values"], c["activity_switches"])
       for c in o["annotate_counters"]]
assert got == [(7, 1, "App", "state", True, 0, 1), (7, 2, "App", "t\u00e4sks", True, 2, 0),
               (8, 1, "Other", "level", True, 1, 0), (8, 9, None, None, False, 1, 0)], got'
}

@test "apcdump --summary: the real capture's annotate counters, as its client declared them" {
	need_shared
	local truth="$SHARED/apc/v68_nonroot_annotate.truth.jsonl"
	apcdump --summary --json "$SHARED/apc/v68_nonroot_annotate.apc" >"$TMP/s.json"
	# the truth: each counter's title and name, and how many values
	# and activity switches the client sent of it
	python3 - "$truth" "$TMP/s.json" <<'EOF2'
import json, sys
want = {}
for line in open(sys.argv[1]):
    c = json.loads(line)
    a = c.get("args", {})
    if c.get("func") == "gator_annotate_counter":
        want[a["id"]] = [a["title"], a["name"], 0, 0]
    elif c.get("func") == "gator_annotate_counter_value":
        want[a["id"]][2] += 1
    elif c.get("func") == "gator_annotate_activity_switch":
        want[a["id"]][3] += 1
o = json.load(open(sys.argv[2]))
got = {c["key"]: [c["title"], c["name"], c["values"], c["activity_switches"]]
       for c in o["annotate_counters"]}
print(got)
assert len(want) == 7 and sum(w[2] for w in want.values()) == 11
assert got == want, (got, want)
assert len(o["counters"]) == 6
EOF2
	apcdump --summary "$SHARED/apc/v68_nonroot_annotate.apc" >"$TMP/s.txt"
	grep -q '^Counters: *6 ' "$TMP/s.txt"
	grep -q '^Annotate counters: *7 ' "$TMP/s.txt"
	grep -q '^  annotate pid 26828 *key 1 *"Driver" "delta_counter" 3 values$' "$TMP/s.txt"
	grep -q '^  annotate pid 26828 *key 5 *"Driver" "activity_counter" 0 values, 3 activity switches$' "$TMP/s.txt"
}

@test "APC: a TPTP capture read back spans its method calls, as converted and as apcdump --summary says" {
	need_python
	# its CAM jobs have no time of their own but their start and
	# duration; read back, the span was that of the thread names alone:
	# here the thread starts at 3 us, and its one call runs 10-50 us
	cat >"$TMP/t.trcxml" <<'EOF'
<?xml version="1.0" encoding="utf-8"?>
<TRACE>
<processCreate processId="p" pid="100" time="1000.000000000"/>
<traceStart traceId="t" time="1000.000000000"/>
<threadStart threadId="11" time="1000.000003000" threadName="worker"/>
<classDef name="C" classId="1" time="1000.000003000"/>
<methodDef name="m" signature="()V" methodId="1" classIdRef="1"/>
<methodEntry threadIdRef="11" time="1000.000010000" methodIdRef="1" classIdRef="1" ticket="0" stackDepth="1"/>
<methodExit threadIdRef="11" methodIdRef="1" classIdRef="1" ticket="0" time="1000.000050000"/>
<traceEnd time="1000.000050000"/>
</TRACE>
EOF
	span() { # last_ts - first_ts of the conversion's --stats=json
		apcconv -q --stats=json --overwrite "$1" -o "$2" |
			python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["last_ts"] - d["first_ts"])'
	}
	[ "$(span "$TMP/t.trcxml" "$TMP/a.apc")" = 50000 ]
	[ "$(span "$TMP/a.apc" "$TMP/b.apc")" = 50000 ]
	[ "$(span "$TMP/b.apc" "$TMP/c.apc")" = 50000 ]
	apcdump "$TMP/b.apc" | grep -q ' annotate_cam_job .* start=10000 duration=40000 '
	[ "$(apcdump --summary --json "$TMP/b.apc" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["last_ts"] - d["first_ts"])')" = 50000 ]
}

@test "APC: --begin/--end cut a capture's CAM jobs by their end, as they cut TPTP's" {
	need_python
	# three calls, 10-50, 100-150 and 300-320 us; the window 60-200 us
	# holds the second.  Read back from a capture a job has no time of
	# its own: all three were kept, none counted as data, and the run
	# ended "nothing to convert in the --begin/--end window"
	{
		echo '<?xml version="1.0" encoding="utf-8"?>'
		echo '<TRACE>'
		echo '<processCreate processId="p" pid="100" time="1000.000000000"/>'
		echo '<traceStart traceId="t" time="1000.000000000"/>'
		echo '<threadStart threadId="11" time="1000.000003000" threadName="worker"/>'
		echo '<classDef name="C" classId="1" time="1000.000003000"/>'
		echo '<methodDef name="m" signature="()V" methodId="1" classIdRef="1"/>'
		for c in 0:010:050 1:100:150 2:300:320; do
			IFS=: read -r t a b <<<"$c"
			echo "<methodEntry threadIdRef=\"11\" time=\"1000.000${a}000\" methodIdRef=\"1\" classIdRef=\"1\" ticket=\"$t\" stackDepth=\"1\"/>"
			echo "<methodExit threadIdRef=\"11\" methodIdRef=\"1\" classIdRef=\"1\" ticket=\"$t\" time=\"1000.000${b}000\"/>"
		done
		echo '<traceEnd time="1000.000320000"/>'
		echo '</TRACE>'
	} >"$TMP/t.trcxml"
	apcconv -q "$TMP/t.trcxml" -o "$TMP/all.apc"
	[ "$(apcdump "$TMP/all.apc" | grep -c ' annotate_cam_job ')" = 3 ]
	win() { # span and cut of --begin=60us --end=200us, then the jobs kept
		apcconv -q --stats=json --begin=60us --end=200us "$1" -o "$2" |
			python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["first_ts"], d["last_ts"], d["outside_window"])'
		apcdump "$2" | grep ' annotate_cam_job ' | sed 's/.* start=/start=/; s/ color=.*//'
	}
	win "$TMP/t.trcxml" "$TMP/w1.apc" >"$TMP/from-tptp"
	win "$TMP/all.apc" "$TMP/w2.apc" >"$TMP/from-apc"
	cat "$TMP/from-apc"
	[ "$(sed -n 2,\$p "$TMP/from-tptp")" = "start=100000 duration=50000" ]
	diff -u "$TMP/from-tptp" "$TMP/from-apc"
	# the span is the kept call's, 100-150 us after the capture's start
	read -r first last cut <"$TMP/from-apc"
	[ $((last - first)) = 50000 ]
	[ "$cut" = 2 ]
	# apcdump's window lists what apcconv's keeps (it listed no job:
	# they have no time of their own), in text and in JSON
	[ "$(apcdump --begin=60us --end=199.999999us "$TMP/all.apc" | sed 's/.* start=/start=/; s/ color=.*//')" = \
		"start=100000 duration=50000" ]
	[ "$(apcdump --json --begin=60us --end=199.999999us "$TMP/all.apc" | python3 -c '
import json, sys
print([m["start"] for m in map(json.loads, sys.stdin) if m["msg"] == "annotate_cam_job"])')" = "[100000]" ]
}

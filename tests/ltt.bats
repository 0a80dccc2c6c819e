#!/usr/bin/env bats
# ltt.bats - the LTT reader on hand-made traces (tests/lttpack.py): what
# it maps, what it counts as not mapped, and damage.

load helpers

setup() {
	TMP="$(mktemp -d)"
	need_python
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	# lttgen's core.xml gives the core ids tests/lttpack.py names
	"$APC_TOOLS/lttgen" --seed 1 --events 10 -o "$TMP/gen" >/dev/null
}

# trace DIR: run the Python on stdin with lttpack imported, D the folder
# to write and CORE lttgen's core.xml.
trace() {
	python3 - "$1" "$TMP/gen/eventdefs/core.xml" "$APC_ROOT/tests" <<<"import struct, sys
sys.path.insert(0, sys.argv[3])
from lttpack import *
D, CORE = sys.argv[1], open(sys.argv[2]).read()
$(cat)"
}

# core_lines CAPTURE CORE: CAPTURE's messages on CORE, without the
# message number and file offset (which other cores' messages move).
core_lines() {
	apcdump --core="$2" "$1" | awk '{ $1 = $2 = ""; print }'
}

# cut_cpu0 DIR CUT BLOCK END DROPPED: DIR, its cpu/0 cut at byte CUT of
# a BLOCK-byte block whose block_end ends at byte END, converts to
# $TMP/cCUT.apc with exit 1, the cut told where it is.  Its core 0 is
# then the whole trace's ($TMP/whole.0) if the cut spares block_end,
# else empty, with DROPPED (an ERE) events of the cut block counted.
cut_cpu0() {
	local dir=$1 cut=$2 block=$3 end=$4 dropped=$5
	conv 1 "$dir" -o "$TMP/c$cut.apc"
	grep -q "$(basename "$dir")/cpu/0: offset $(printf 0x%x "$cut"): truncated block: $cut of $block bytes" <<<"$output"
	core_lines "$TMP/c$cut.apc" 0 >"$TMP/c$cut.0"
	if [ "$cut" -ge "$end" ]; then
		cmp "$TMP/whole.0" "$TMP/c$cut.0"
		! grep -q 'not mapped' <<<"$output" || false
	else
		[ ! -s "$TMP/c$cut.0" ]
		grep -Eq "block_end \(no time: dropped\): $dropped(,|\$)" <<<"$output"
	fi
}

@test "LTT: a process_exit before its CPU's first schedchange is counted, not lost" {
	trace "$TMP/t" <<'EOF'
b = Block()
b.ev(PROCESS_EXIT, 2000, struct.pack("<II", 0, 0))        # no current pid yet
b.ev(SCHEDCHANGE, 3000, struct.pack("<III", 0, 42, 0))    # 42 runs
b.ev(PROCESS_EXIT, 4000, struct.pack("<II", 0, 0))        # 42 exits
write_trace(D, CORE, {0: [b.finish()]})
EOF
	conv 0 -v "$TMP/t" -o "$TMP/t.apc"
	grep -q "not mapped: ltt process_exit before its CPU's first schedchange: 1" <<<"$output"
	run apcdump "$TMP/t.apc"
	[ "$(grep -c ' task_exit .* tid=42$' <<<"$output")" -eq 1 ]
	[ "$(grep -c ' task_exit ' <<<"$output")" -eq 1 ]
}

@test "LTT: blocks cut at an undefined id are still reported when later damage stops the read" {
	trace "$TMP/t" <<'EOF'
b1 = Block()
b1.ev(IRQ_ENTRY, 2000, b"\x01\x00")
b1.ev(300, 3000)                                          # no such id: rest of block skipped
b2 = bytearray(Block(bid=1).finish())
struct.pack_into("<I", b2, len(b2) - 4, 17)              # a trailer that fits no block_end
write_trace(D, CORE, {0: [b1.finish(), bytes(b2)]})
EOF
	conv 1 -v "$TMP/t" -o "$TMP/t.apc"
	grep -q 'cpu/0: offset 0x1ffc: block trailer 17' <<<"$output"
	grep -q 'not mapped: ltt undefined event id (rest of its block skipped): 1' <<<"$output"
	grep -q ': 4096 bytes in, ' <<<"$output"
}

@test "LTT: float sizes medium and long are 4 and 8 bytes on any architecture" {
	for kw in medium long; do
		KW=$kw trace "$TMP/$kw" <<'EOF'
import os
kw = os.environ["KW"]
fac = ('<facility name=test><event name=flt><struct><field name=v><float size=%s/></field>'
       '</struct></event></facility>\n' % kw)
b = Block()
for k in range(3):
    b.ev(22, 2000 + k * 1000, struct.pack("<d" if kw == "long" else "<f", 1.5))
    b.ev(IRQ_ENTRY, 2500 + k * 1000, b"\x01\x00")
write_trace(D, CORE, {0: [b.finish()]}, extra_defs={"test.xml": fac})
EOF
		conv 0 -v "$TMP/$kw" -o "$TMP/$kw.apc"
		grep -Eq 'test\.flt +3 +-> counter' <<<"$output"
		grep -Eq 'core\.irq_entry +3 +-> counter' <<<"$output"
	done
}

@test "LTT: an empty array of strings takes no bytes in a sequence" {
	trace "$TMP/t" <<'EOF'
fac = ('<facility name=test><event name=s><sequence lengthsize=1><array size=0><string/></array>'
       '</sequence></event></facility>\n')
b = Block()
b.ev(IRQ_ENTRY, 1500, b"\x01\x00")
b.ev(22, 2000, b"\x05")          # five elements of no bytes: the payload is the count
write_trace(D, CORE, {0: [b.finish()]}, extra_defs={"test.xml": fac})
EOF
	conv 0 -v "$TMP/t" -o "$TMP/t.apc"
	grep -Eq 'test\.s +1 +-> counter' <<<"$output"
}

@test "LTT: same-named facility versions take the loads in order; a reload adds a base" {
	trace "$TMP/t" <<'EOF2'
net = ('<facility name=net><event name=pkt><uint size=4/></event></facility>\n'
       '<facility name=net><event name=pkt><uint size=2/></event><event name=drop><uint size=1/></event>'
       '</facility>\n<facility name=disk><event name=io><uint size=1/></event></facility>\n')
loads = Block()
for name, base in (("net", 30), ("net", 40), ("disk", 50), ("disk", 60), ("disk", 60)):
    loads.ev(0, 1100, name.encode() + b"\0" + struct.pack("<II", 0, base))
b = Block()
b.ev(30, 2000, struct.pack("<I", 7))      # net, first version
b.ev(40, 3000, struct.pack("<H", 7))      # net, second version
b.ev(41, 3500, b"\x01")                   # its drop
b.ev(50, 3600, b"\x02")                   # disk
b.ev(60, 3700, b"\x03")                   # disk again, reloaded
b.ev(IRQ_ENTRY, 4000, b"\x01\x00")
write_trace(D, CORE, {0: [b.finish()]}, facilities=loads.finish(), extra_defs={"net.xml": net})
EOF2
	conv 0 -v "$TMP/t" -o "$TMP/t.apc"
	! grep -q 'not mapped' <<<"$output" || false
	grep -Eq 'net\.pkt +2 +-> counter' <<<"$output"
	grep -Eq 'net\.drop +1 +-> counter' <<<"$output"
	grep -Eq 'disk\.io +2 +-> counter' <<<"$output"
	grep -Eq 'core\.irq_entry +1 +-> counter' <<<"$output"
}

@test "LTT: control/facilities entries it cannot apply are counted" {
	trace "$TMP/t" <<'EOF2'
net = '<facility name=net><event name=pkt><uint size=2/></event></facility>\n'
loads = Block()
def load(name, base):
    loads.ev(0, 1100, name + b"\0" + struct.pack("<II", 0, base))
load(b"net", 30)                      # applied: net.pkt at 30
load(b"gpu", 40)                      # no eventdefs file describes gpu
load(b"net", 70000)                   # base over the 16-bit ids
loads.ev(IRQ_ENTRY, 1200, b"\x01\x00")  # not a facility_load
loads.ev(99, 1300)                    # undefined: the rest is lost
load(b"net", 80)
b = Block()
b.ev(30, 2000, struct.pack("<H", 7))
b.ev(IRQ_ENTRY, 4000, b"\x01\x00")
write_trace(D, CORE, {0: [b.finish()]}, facilities=loads.finish(), extra_defs={"net.xml": net})
EOF2
	conv 0 -v "$TMP/t" -o "$TMP/t.apc"
	grep -Eq 'net\.pkt +1 +-> counter' <<<"$output"
	grep -q 'ltt facility_load of a facility no eventdefs file describes (its events stay undefined): 1' <<<"$output"
	grep -q 'ltt facility_load with base_code over 65535 (ignored): 1' <<<"$output"
	grep -q 'ltt control/facilities event other than facility_load (ignored): 1' <<<"$output"
	grep -q 'ltt undefined event id in a control file (rest of its block skipped): 1' <<<"$output"
}

@test "LTT: an id no eventdefs file describes is damage at its offset, unless a facility_load explains it" {
	trace "$TMP/t" <<'EOF2'
b = Block()
b.ev(IRQ_ENTRY, 2000, b"\x01\x00")     # block_start (26 bytes), then this at 0x1a
b.ev(300, 3000)                        # at 0x22: no facility describes 300
b.ev(IRQ_ENTRY, 4000, b"\x01\x00")     # lost with the rest of the block
write_trace(D, CORE, {0: [b.finish()]})
EOF2
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	[ "${lines[0]}" = "apcconv: $TMP/t/cpu/0: offset 0x22: event id 300 is described by no eventdefs file (a damaged event header, or eventdefs that lack it?): the rest of its block is skipped, and of 1 block in all in this file" ]
	grep -q 'not mapped: ltt undefined event id (rest of its block skipped): 1$' <<<"$output"
	# what came before it is converted
	[ "$(apcdump "$TMP/t.apc" | grep -c ' block_counter .* key=0x[0-9a-f]* value=1$')" -eq 1 ]
	# a facility the trace loads without its eventdefs file explains it:
	# counted, as that load is, and no damage
	trace "$TMP/f" <<'EOF2'
loads = Block()
loads.ev(0, 1100, b"gpu\0" + struct.pack("<II", 0, 300))
b = Block()
b.ev(IRQ_ENTRY, 2000, b"\x01\x00")
b.ev(300, 3000)
write_trace(D, CORE, {0: [b.finish()]}, facilities=loads.finish())
EOF2
	conv 0 "$TMP/f" -o "$TMP/f.apc"
	grep -q 'ltt facility_load of a facility no eventdefs file describes (its events stay undefined): 1' <<<"$output"
	grep -q 'ltt undefined event id (rest of its block skipped): 1' <<<"$output"
}

@test "LTT: a damaged control file keeps what came before it and the CPU files" {
	trace "$TMP/t" <<'EOF2'
procs = processes((b"init", 1), (b"bash", 5))
write_trace(D, CORE, {0: [bash_block()]}, processes=procs + b"\x11\x00junk")
EOF2
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	grep -q "t/control/processes: offset 0x1006: truncated block" <<<"$output"
	dump "$TMP/t.apc"
	grep -q 'thread_name .* tid=5 name="bash"' <<<"$output"
	grep -q 'activity_switch .* tid=5 ' <<<"$output"
	grep -q 'block_counter .* value=1$' <<<"$output"
}

@test "LTT: damage in one CPU file ends that CPU only; the others are converted whole" {
	trace "$TMP/t" <<'EOF2'
blocks = {}
for cpu in (0, 1):
    b = Block()
    for k in range(10):
        b.ev(IRQ_ENTRY, 2000 + k * 1000 + cpu * 10, b"\x01\x00")
        if cpu == 1 and k == 4:
            b.ev(17, 2000 + k * 1000 + 500)   # a block_start inside the block
    blocks[cpu] = [b.finish()]
write_trace(D, CORE, blocks)
EOF2
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	grep -q 't/cpu/1: offset 0x42: block_start inside a block' <<<"$output"
	dump --summary "$TMP/t.apc"
	grep -Eq '^  core 0 +10 messages' <<<"$output"
	grep -Eq '^  core 1 +5 messages' <<<"$output"
}

@test "LTT: a bookmark before the first block moves to the start, counted" {
	trace "$TMP/t" <<'EOF2'
b = Block()
b.ev(IRQ_ENTRY, 2000, b"\x01\x00")
marks = ('<bookmarks>\n<location name="early" time="999.5">before</location>\n'
         '<location name="in" time="1000.000001">inside</location>\n</bookmarks>\n')
write_trace(D, CORE, {0: [b.finish()]}, bookmarks=marks)
EOF2
	conv 0 -v "$TMP/t" -o "$TMP/t.apc"
	grep -q "not mapped: ltt bookmarks before the trace's first block (moved to its start): 1" <<<"$output"
	dump "$TMP/t.apc"
	grep -q 'annotate_marker  ts=0 .* text="early: before"' <<<"$output"
	grep -q 'annotate_marker  ts=1000 .* text="in: inside"' <<<"$output"
}

@test "LTT: -f ltt on a plain file is a usage error (exit 2)" {
	printf 'not a trace' > "$TMP/plain"
	conv 2 -f ltt "$TMP/plain" -o "$TMP/p.apc"
	grep -q 'an LTT trace is a directory (or an archive of one)' <<<"$output"
	[ ! -e "$TMP/p.apc" ]
}

@test "LTT: a CPU file cut inside its first block ends that CPU only; its untimed events are counted" {
	trace "$TMP/t" <<'EOF2'
blocks = irq_blocks()
write_trace(D, CORE, blocks)
# block_start (26 bytes), four whole irq_entry (8 bytes each), 3 bytes of a fifth
with open(D + "/cpu/0", "r+b") as f:
    f.truncate(26 + 4 * 8 + 3)
EOF2
	tar -C "$TMP" -cf "$TMP/t.tar" t
	tar -C "$TMP" -czf "$TMP/t.tar.gz" t
	for in in t t.tar t.tar.gz; do
		conv 1 "$TMP/$in" -o "$TMP/$in.apc"
		grep -q "/$in[:/]cpu/0: offset 0x3d: truncated block: 61 of 4096 bytes (trace cut short?)" <<<"$output"
		grep -Eq "not mapped: .*ltt events of a block cut before its block_end \(no time: dropped\): 4(,|$)" <<<"$output"
		dump --summary "$TMP/$in.apc"
		grep -Eq '^  core 1 +10 messages' <<<"$output"
		! grep -Eq '^  core 0 ' <<<"$output" || false
	done
}

@test "LTT: every damaged CPU file is a line of its own, and --stats=json lists them all" {
	trace "$TMP/t" <<'EOF2'
blocks = irq_blocks()
write_trace(D, CORE, blocks)
# both CPU files cut inside their first block, 3 bytes into an event
for cpu in (0, 1):
    with open(D + "/cpu/%d" % cpu, "r+b") as f:
        f.truncate(26 + 4 * 8 + 3)
EOF2
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	# CLI.md: one line per problem, a summary at the end
	[ "$(grep -c "^apcconv: $TMP/t/cpu/[01]: offset 0x3d: truncated block: 61 of 4096 bytes" <<<"$output")" -eq 2 ]
	grep -q "/t/cpu/0: offset" <<<"$output"
	grep -q "/t/cpu/1: offset" <<<"$output"
	grep -Eq '; problems: 2$' <<<"$output"
	local rc=0
	apcconv -q --stats=json "$TMP/t" -o "$TMP/j.apc" >"$TMP/j.json" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["problems"] == 2, o
assert len(o["more_damage"]) == 1, o
both = sorted([o["damage"]] + o["more_damage"])
assert both[0].endswith("t/cpu/0: offset 0x3d: truncated block: 61 of 4096 bytes (trace cut short?)"), both
assert both[1].endswith("t/cpu/1: offset 0x3d: truncated block: 61 of 4096 bytes (trace cut short?)"), both
' "$TMP/j.json"
	# one damaged file: no count line, and an empty list
	trace "$TMP/u" <<'EOF2'
blocks = irq_blocks()
write_trace(D, CORE, blocks)
with open(D + "/cpu/1", "r+b") as f:
    f.truncate(26 + 4 * 8 + 3)
EOF2
	conv 1 "$TMP/u" -o "$TMP/u.apc"
	[ "$(grep -c 'truncated block' <<<"$output")" -eq 1 ]
	! grep -q 'problems:' <<<"$output" || false
	rc=0
	apcconv -q --stats=json "$TMP/u" -o "$TMP/k.apc" >"$TMP/k.json" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["problems"] == 1 and o["more_damage"] == [], o
' "$TMP/k.json"
}

@test "LTT: damage in a CPU file's first block ends that CPU only" {
	trace "$TMP/t" <<'EOF2'
blocks = irq_blocks()
b1 = bytearray(blocks[1][0])
struct.pack_into("<I", b1, len(b1) - 4, 17)              # a trailer that fits no block_end
blocks[1] = [bytes(b1)]
write_trace(D, CORE, blocks)
EOF2
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	grep -q 't/cpu/1: offset 0xffc: block trailer 17 points at no block_end' <<<"$output"
	dump --summary "$TMP/t.apc"
	grep -Eq '^  core 0 +10 messages' <<<"$output"
	! grep -Eq '^  core 1 ' <<<"$output" || false
}

@test "LTT: a block cut after its block_end loses only padding: its events keep their times" {
	trace "$TMP/t" <<'EOF2'
blocks = irq_blocks()
write_trace(D, CORE, blocks)
EOF2
	cp "$TMP/t/cpu/0" "$TMP/whole"
	conv 0 "$TMP/t" -o "$TMP/whole.apc"
	core_lines "$TMP/whole.apc" 0 >"$TMP/whole.0"
	[ "$(wc -l <"$TMP/whole.0")" -eq 10 ]
	# block_end is at 26 + 10 * 8 = 106 and ends at 132
	for cut in 4000 132 131; do
		head -c $cut "$TMP/whole" >"$TMP/t/cpu/0"
		cut_cpu0 "$TMP/t" $cut 4096 132 10
	done
}

@test "LTT: a later block cut before its block_end: its events are counted, an undefined id too" {
	trace "$TMP/t" <<'EOF2'
b0 = Block()
b0.ev(IRQ_ENTRY, 2000, b"\x01\x00")
b = Block(t0=(1001, 0), c0=1000 + 10**9, t1=(1002, 0), c1=1000 + 2 * 10**9, bid=1)
for k in range(3):
    b.ev(IRQ_ENTRY, 10**9 + 2000 + k * 1000, b"\x01\x00")
b.ev(300, 10**9 + 6000)                                  # no such id
b.ev(IRQ_ENTRY, 10**9 + 7000, b"\x01\x00")
write_trace(D, CORE, {0: [b0.finish(), b.finish()]})
with open(D + "/cpu/0", "r+b") as f:
    f.truncate(4096 + 26 + 3 * 8 + 6 + 8 + 10)           # into block_end
EOF2
	conv 1 -v "$TMP/t" -o "$TMP/t.apc"
	grep -q 't/cpu/0: offset 0x104a: truncated block: 74 of 4096 bytes' <<<"$output"
	grep -q 'not mapped: .*ltt undefined event id (rest of its block skipped): 1' <<<"$output"
	grep -Eq 'block_end \(no time: dropped\): 3(,|;|$)' <<<"$output"
	# nothing explains id 300: damage where it is, after the cut's
	grep -q 't/cpu/0: offset 0x1032: event id 300 is described by no eventdefs file ' <<<"$output"
	grep -Eq 'core\.irq_entry +1 +-> counter' <<<"$output"
	grep -q ': 4170 bytes in, ' <<<"$output"
}

@test "LTT: lttgen's trace with cpu/0 cut in its first block converts cpu/1 as when whole" {
	"$APC_TOOLS/lttgen" --events 3000 --cpus 2 -o "$TMP/g" >/dev/null
	conv 0 "$TMP/g" -o "$TMP/whole.apc"
	core_lines "$TMP/whole.apc" 1 >"$TMP/whole.1"
	grep -q 'ltt_block_size="4096"' "$TMP/g/info/system.xml"
	truncate -s 2000 "$TMP/g/cpu/0"
	conv 1 "$TMP/g" -o "$TMP/cut.apc"
	grep -q 'g/cpu/0: offset 0x7d0: truncated block: 2000 of 4096 bytes (trace cut short?)' <<<"$output"
	grep -Eq 'block_end \(no time: dropped\): [1-9][0-9]*(,|$)' <<<"$output"
	core_lines "$TMP/cut.apc" 1 | cmp - "$TMP/whole.1"
	# core 0 keeps control/processes' names, and nothing of cpu/0
	run apcdump --core=0 "$TMP/cut.apc"
	[ -n "$output" ]
	! grep -v ' thread_name ' <<<"$output" || false
	verify 0 "$TMP/cut.apc"
}

@test "LTT: the real trace with cpu/0 cut in its one block: cpu/1 whole, cpu/0 kept if block_end is" {
	need_shared
	local ref="$SHARED/ltt/smp_example.reference.txt" total
	apcconv -q "$SHARED/ltt/smp_example" -o "$TMP/whole.apc"
	for core in 0 1; do
		core_lines "$TMP/whole.apc" $core >"$TMP/whole.$core"
	done
	# cpu/0's events by the reference, block_start and block_end included
	total=$(grep -A200 '^cpu/0:' "$ref" | grep -m1 -o '^  total events=[0-9]*' | cut -d= -f2)
	[ "$total" -gt 80000 ]
	# block_end is at 774284 and ends at 774310; the file is 1000000 bytes
	for cut in 500000 774309 774310 900000; do
		rm -rf "$TMP/c"
		cp -r "$SHARED/ltt/smp_example" "$TMP/c"
		chmod -R u+w "$TMP/c"
		truncate -s $cut "$TMP/c/cpu/0"
		cut_cpu0 "$TMP/c" $cut 1000000 774310 '[1-9][0-9]*'
		core_lines "$TMP/c$cut.apc" 1 | cmp - "$TMP/whole.1"
		if [ $cut -eq 774309 ]; then
			grep -Eq "block_end \(no time: dropped\): $((total - 2))(,|$)" <<<"$output"
		fi
	done
}

@test "LTT: a control file cut inside its first block keeps its whole entries" {
	trace "$TMP/t" <<'EOF2'
procs = processes((b"init", 1), (b"bash", 5), (b"sshd", 7))
# block_start 26 bytes, two whole entries of 59, 6 bytes of the third
write_trace(D, CORE, {0: [bash_block()]}, processes=procs[:26 + 2 * 59 + 6])
EOF2
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	grep -q "t/control/processes: offset 0x96: truncated block: 150 of 4096 bytes" <<<"$output"
	dump "$TMP/t.apc"
	grep -q 'thread_name .* tid=1 name="init"' <<<"$output"
	grep -q 'thread_name .* tid=5 name="bash"' <<<"$output"
	! grep -q 'name="sshd"' <<<"$output" || false
	grep -q 'activity_switch .* tid=5 ' <<<"$output"
}

@test "LTT: a bookmark by cycle on a CPU whose first block has no block_end is counted, not placed" {
	trace "$TMP/t" <<'EOF2'
b = Block()
b.ev(IRQ_ENTRY, 2000, b"\x01\x00")
marks = ('<bookmarks>\n<location name="c0" cpu="0" cycle="5000">cut</location>\n'
         '<location name="c1" cpu="1" cycle="5000">whole</location>\n</bookmarks>\n')
write_trace(D, CORE, {0: [b.finish()[:40]], 1: [b.finish()]}, bookmarks=marks)
EOF2
	conv 1 -v "$TMP/t" -o "$TMP/t.apc"
	grep -q 'not mapped: .*ltt bookmark without a usable time: 1' <<<"$output"
	! grep -q 'moved to its start' <<<"$output" || false
	dump "$TMP/t.apc"
	grep -q 'annotate_marker  ts=4000 .* text="c1: whole"' <<<"$output"
	! grep -q 'text="c0' <<<"$output" || false
}

@test "LTT: links say kernel (cookie 0) only for the idle task and kernel threads" {
	# Cookie 0 is the kernel or idle, -1 an image not known.  A kernel
	# thread (process event 1) runs the kernel; a forked child (process
	# event 2, process_fork) or a process of control/processes is a
	# task whose image LTT does not name.
	trace "$TMP/t" <<'EOF2'
b = Block()
b.ev(SCHEDCHANGE, 2000, struct.pack("<III", 0, 5, 0))
b.ev(10, 3000, struct.pack("<BII", 1, 55, 0))             # kthread 55
b.ev(10, 4000, struct.pack("<BII", 2, 56, 0))             # fork 56
b.ev(PROCESS_FORK, 5000, struct.pack("<II", 57, 0))      # fork 57
procs = processes((b"swapper", 0), (b"bash", 5))
write_trace(D, CORE, {0: [b.finish()]}, processes=procs)
EOF2
	conv 0 "$TMP/t" -o "$TMP/t.apc"
	dump "$TMP/t.apc"
	[ "$(grep -c ' link ' <<<"$output")" -eq 5 ]
	grep -Eq ' link +ts=[0-9]+ cookie=0 pid=0 tid=0$' <<<"$output"
	grep -Eq ' link +ts=[0-9]+ cookie=-1 pid=5 tid=5$' <<<"$output"
	grep -Eq ' link +ts=[0-9]+ cookie=0 pid=55 tid=55$' <<<"$output"
	grep -Eq ' link +ts=[0-9]+ cookie=-1 pid=56 tid=56$' <<<"$output"
	grep -Eq ' link +ts=[0-9]+ cookie=-1 pid=57 tid=57$' <<<"$output"
	apcverify -q "$TMP/t.apc"
}

@test "LTT: every task the real trace switches in has a Link before its first activity" {
	# Its control/processes is empty and it forks none of them: every
	# task ran before the trace began, and gets its Link (pid = tid,
	# cookie 0 for the idle task only) where it is first switched in.
	need_shared
	apcconv -q "$SHARED/ltt/smp_example" -o "$TMP/s.apc"
	run awk '/ link /      { nl++; for (i = 1; i <= NF; i++) if ($i ~ /^tid=/) linked[$i] = 1
	                         if ($0 ~ /cookie=0 / && $0 !~ /pid=0 tid=0$/) kern++ }
	         / activity_switch / { for (i = 1; i <= NF; i++) if ($i ~ /^tid=/) {
	                                   if (!($i in linked)) bad++; seen[$i] = 1 } }
	         END { for (k in seen) n++; print nl, n, bad + 0, kern + 0 }' <(apcdump "$TMP/s.apc")
	[ "$output" = "28 28 0 0" ]
	apcverify -q "$TMP/s.apc"
}

# member_at TAR MEMBER: where MEMBER's data starts in TAR.
member_at() {
	python3 -c 'import sys, tarfile; print(tarfile.open(sys.argv[1]).getmember(sys.argv[2]).offset_data)' "$1" "$2"
}

# folder_cut DIR MEMBER N: a copy of the trace folder DIR with MEMBER cut
# to N bytes, converted to $TMP/fN.apc: its listing in $TMP/fN.txt, what
# its summary says is not mapped in $TMP/fN.nm.
folder_cut() {
	rm -rf "$TMP/f"
	cp -r "$1" "$TMP/f"
	chmod -R u+w "$TMP/f"
	truncate -s "$3" "$TMP/f/$2"
	run apcconv "$TMP/f" -o "$TMP/f$3.apc"
	echo "$output"
	sed -n 's/.*; not mapped: //p' <<<"$output" >"$TMP/f$3.nm"
	apcdump "$TMP/f$3.apc" >"$TMP/f$3.txt"
}

# same_as_folder APC N: the capture APC (of an archive just converted,
# its output in $output) has the listing of $TMP/fN.apc, and its summary
# counts as not mapped what the folder's does.
same_as_folder() {
	sed -n 's/.*; not mapped: //p' <<<"$output" | cmp - "$TMP/f$2.nm"
	apcdump "$1" | cmp - "$TMP/f$2.txt"
}

@test "LTT: a tar cut inside a CPU file keeps what the same cut of the folder keeps" {
	"$APC_TOOLS/lttgen" --seed 1 --events 20000 --cpus 2 -o "$TMP/g" >/dev/null
	grep -q 'ltt_block_size="4096"' "$TMP/g/info/system.xml"
	tar -C "$TMP/g" -cf "$TMP/g.tar" info eventdefs control cpu/1 cpu/0
	local at size n
	at=$(member_at "$TMP/g.tar" cpu/0)
	size=$(stat -c %s "$TMP/g/cpu/0")
	# in the first block; at the end of one (a folder cannot tell: a tar
	# can); in a later block; one byte short
	for n in 100 8192 $((size / 2 + 1000)) $((size - 1)); do
		folder_cut "$TMP/g" cpu/0 $n
		head -c $((at + n)) "$TMP/g.tar" >"$TMP/c.tar"
		conv 1 "$TMP/c.tar" -o "$TMP/c$n.apc"
		grep -q "c.tar: offset $(printf 0x%x $((at + n))): truncated tar archive: it ends inside the data of cpu/0 ($n of its $size bytes)" <<<"$output"
		same_as_folder "$TMP/c$n.apc" $n
	done
	# the block cut before its block_end is counted, not lost
	grep -Eq 'block_end \(no time: dropped\): [1-9][0-9]*(,|$)' "$TMP/f$((size / 2 + 1000)).nm"
}

@test "LTT: a tar cut inside an eventdefs file or info/bookmarks.xml keeps what the same cut of the folder keeps" {
	"$APC_TOOLS/lttgen" --seed 3 --events 3000 --cpus 2 --block-size 8192 -o "$TMP/g" >/dev/null
	local at size n m
	for m in eventdefs/core.xml info/bookmarks.xml; do
		# the member last, so that the cut goes through it
		rm -rf "$TMP"/f[0-9]*.apc "$TMP"/c[0-9]*.apc
		(cd "$TMP/g" && find . -type f ! -path "./$m" | sort && echo "./$m") >"$TMP/list"
		tar -C "$TMP/g" -cf "$TMP/g.tar" -T "$TMP/list"
		at=$(member_at "$TMP/g.tar" "./$m")
		size=$(stat -c %s "$TMP/g/$m")
		for n in 40 $((size / 2)) $((size - 1)); do
			folder_cut "$TMP/g" "$m" $n
			head -c $((at + n)) "$TMP/g.tar" >"$TMP/c.tar"
			conv 1 "$TMP/c.tar" -o "$TMP/c$n.apc"
			# the archive's damage, which says it was cut, not the XML's
			[ "${lines[0]}" = "apcconv: $TMP/c.tar: offset $(printf 0x%x $((at + n))): truncated tar archive: it ends inside the data of ./$m ($n of its $size bytes)" ]
			same_as_folder "$TMP/c$n.apc" $n
		done
	done
}

@test "LTT: an eventdefs file describing no facility (empty, or cut after a comment) is damage at its end; the others still convert" {
	"$APC_TOOLS/lttgen" --seed 3 --events 3000 --cpus 2 --block-size 8192 -o "$TMP/g" >/dev/null
	[ -f "$TMP/g/eventdefs/extra.xml" ]
	cp -r "$TMP/g" "$TMP/e"
	: >"$TMP/e/eventdefs/extra.xml"
	conv 1 "$TMP/e" -o "$TMP/e.apc"
	[ "${lines[0]}" = "apcconv: $TMP/e/eventdefs/extra.xml: offset 0x0: empty eventdefs file: no <facility> element (cut short?)" ]
	[[ "${lines[1]}" == "apcconv: $TMP/e (ltt) -> $TMP/e.apc: "* ]]
	# core.xml cut right after its leading comment: nothing of it, but
	# extra.xml's events and the built-in block events still convert
	local c
	c=$(($(head -n 1 "$TMP/g/eventdefs/core.xml" | wc -c)))
	[[ "$(head -c 4 "$TMP/g/eventdefs/core.xml")" == "<!--" ]]
	cp -r "$TMP/g" "$TMP/c"
	truncate -s "$c" "$TMP/c/eventdefs/core.xml"
	conv 1 "$TMP/c" -o "$TMP/c.apc"
	[ "${lines[0]}" = "apcconv: $TMP/c/eventdefs/core.xml: offset $(printf 0x%x "$c"): no <facility> element: the file ends before any (cut short?)" ]
	[ -d "$TMP/c.apc" ]
	apcverify -q "$TMP/c.apc"
	# with no other eventdefs file, nothing can be sized: nothing written
	rm "$TMP/c/eventdefs/extra.xml"
	rm -rf "$TMP/c.apc"
	conv 1 "$TMP/c" -o "$TMP/c.apc"
	[ "${lines[0]}" = "apcconv: $TMP/c/eventdefs/core.xml: offset $(printf 0x%x "$c"): no <facility> element: the file ends before any (cut short?)" ]
	[[ "${lines[1]}" == "apcconv: $TMP/c (ltt) -> nothing written: "* ]]
	[ ! -e "$TMP/c.apc" ]
}

# cut_compressed PROG EXT NAME: $TMP/g.tar compressed by PROG and cut in
# cpu/0 (the last member) converts as the folder cut where its data stops.
cut_compressed() {
	local n
	$1 -c "$TMP/g.tar" >"$TMP/g.tar.$2"
	head -c $(($(stat -c %s "$TMP/g.tar.$2") * 5 / 6)) "$TMP/g.tar.$2" >"$TMP/c.tar.$2"
	conv 1 "$TMP/c.tar.$2" -o "$TMP/c.$2.apc"
	grep -q "c.tar.$2: offset 0x[0-9a-f]*: truncated $3 stream (the compressed data ends at byte [0-9]*); truncated tar archive: it ends inside the data of cpu/0 ([0-9]* of its" <<<"$output"
	n=$(sed -n 's/.*inside the data of cpu\/0 (\([0-9]*\) of its.*/\1/p' <<<"$output" | head -n 1)
	local out=$output
	folder_cut "$TMP/g" cpu/0 "$n"
	output=$out
	same_as_folder "$TMP/c.$2.apc" "$n"
}

@test "LTT: a .tar.gz, .tar.bz2 or .tar.xz cut inside a CPU file keeps what the folder cut there keeps" {
	"$APC_TOOLS/lttgen" --seed 1 --events 20000 --cpus 2 -o "$TMP/g" >/dev/null
	tar -C "$TMP/g" -cf "$TMP/g.tar" info eventdefs control cpu/1 cpu/0
	each_compressor cut_compressed "gzip:gz:gzip" "bzip2 -1:bz2:bzip2" "xz:xz:xz"
}

@test "LTT: the real trace as a tar cut inside a CPU file keeps what the folder cut there keeps" {
	need_shared
	local at
	tar -C "$SHARED/ltt" -cf "$TMP/s.tar" smp_example/info smp_example/eventdefs \
		smp_example/control smp_example/cpu/0 smp_example/cpu/1
	# cpu/1 cut past its block_end (798135): its one block is kept whole
	at=$(member_at "$TMP/s.tar" smp_example/cpu/1)
	head -c $((at + 983680)) "$TMP/s.tar" >"$TMP/c.tar"
	conv 1 "$TMP/c.tar" -o "$TMP/c.apc"
	grep -q "c.tar: offset $(printf 0x%x $((at + 983680))): truncated tar archive: it ends inside the data of smp_example/cpu/1 (983680 of its 1000000 bytes)" <<<"$output"
	grep -q ' 173179 events, ' <<<"$output"
	folder_cut "$SHARED/ltt/smp_example" cpu/1 983680
	same_as_folder "$TMP/c.apc" 983680
	# cpu/0 cut past its block_end (774284), cpu/1 not in what is left
	at=$(member_at "$TMP/s.tar" smp_example/cpu/0)
	head -c $((at + 984640)) "$TMP/s.tar" >"$TMP/d.tar"
	conv 1 "$TMP/d.tar" -o "$TMP/d.apc"
	grep -q "d.tar: offset $(printf 0x%x $((at + 984640))): truncated tar archive: it ends inside the data of smp_example/cpu/0 (984640 of its 1000000 bytes)" <<<"$output"
	# its 85914 records and a Link for each of the 15 tasks it switches in
	grep -q ' 85929 events, ' <<<"$output"
	grep -q 'not mapped: ltt CPU tracefiles info/system.xml declares that are missing (no events of their CPU): 1$' <<<"$output"
	run apcdump --summary "$TMP/d.apc"
	grep -Eq '^  core 0 +85914 messages' <<<"$output"
}

@test "LTT: a CPU the trace declares with an empty or no tracefile is damage; the others are converted" {
	"$APC_TOOLS/lttgen" --seed 2 --events 3000 --cpus 2 -o "$TMP/g" >/dev/null
	grep -q ' cpu="2" ' "$TMP/g/info/system.xml"
	conv 0 "$TMP/g" -o "$TMP/whole.apc"
	# core 0 as when whole (its times count from its own start now)
	apcdump --summary "$TMP/whole.apc" | grep -E '^  core 0 ' >"$TMP/whole.0"
	: >"$TMP/g/cpu/1"
	conv 1 "$TMP/g" -o "$TMP/e.apc"
	grep -q "g/cpu/1: empty tracefile: the capture has no events of CPU 1$" <<<"$output"
	grep -Eq 'not mapped: ltt CPU tracefiles that are empty \(no events of their CPU\): 1(,|$)' <<<"$output"
	apcdump --summary "$TMP/e.apc" | grep -E '^  core ' | cmp - "$TMP/whole.0"
	rm "$TMP/g/cpu/1"
	conv 1 "$TMP/g" -o "$TMP/m.apc"
	grep -q "g: no cpu/1 tracefile, though info/system.xml declares 2 CPUs: the capture has no events of CPU 1$" <<<"$output"
	grep -Eq 'not mapped: ltt CPU tracefiles info/system.xml declares that are missing \(no events of their CPU\): 1(,|$)' <<<"$output"
	apcdump --summary "$TMP/m.apc" | grep -E '^  core ' | cmp - "$TMP/whole.0"
	# --stats=json counts it and names it
	local rc=0
	apcconv -q --stats=json "$TMP/g" -o "$TMP/j.apc" >"$TMP/j.json" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["status"] == 1 and not o["ok"], o
assert o["not_mapped"]["ltt CPU tracefiles info/system.xml declares that are missing (no events of their CPU)"] == 1, o
assert o["damage"].endswith("g: no cpu/1 tracefile, though info/system.xml declares 2 CPUs: the capture has no events of CPU 1"), o
' "$TMP/j.json"
	# the same of a whole tar without it
	tar -C "$TMP/g" -cf "$TMP/g.tar" info eventdefs control cpu
	conv 1 "$TMP/g.tar" -o "$TMP/t.apc"
	grep -q "g.tar: no cpu/1 tracefile, though info/system.xml declares 2 CPUs" <<<"$output"
	apcdump --summary "$TMP/t.apc" | grep -E '^  core ' | cmp - "$TMP/whole.0"
}

@test "LTT: system.xml's block size and CPU count are told as the file has them" {
	"$APC_TOOLS/lttgen" --seed 2 --events 500 --cpus 2 -o "$TMP/g" >/dev/null
	sys="$TMP/g/info/system.xml"
	# more CPUs than apctools takes: the number declared, and how many looked for
	sed -i 's/ cpu="2" / cpu="1000000000" /' "$sys"
	conv 1 "$TMP/g" -o "$TMP/c.apc"
	grep -q "g: no cpu/2 tracefile, though info/system.xml declares 1000000000 CPUs (the first 4096 looked for): the capture has no events of CPU 2 (4094 CPU tracefiles missing or empty in all)$" <<<"$output"
	# a bad block size is named at its <system> element, after a comment
	sed -i 's/ cpu="1000000000" / cpu="2" /; s/ltt_block_size="4096"/ltt_block_size="12"/' "$sys"
	{ printf '<?xml version="1.0"?>\n<!-- moved on -->\n'; cat "$sys"; } >"$TMP/s" && mv "$TMP/s" "$sys"
	at=$(grep -bo '<system' "$sys" | cut -d: -f1)
	[ "$at" -gt 0 ]
	conv 1 "$TMP/g" -o "$TMP/b.apc"
	[ "${lines[0]}" = "apcconv: $sys: offset $(printf 0x%x "$at"): <system> ltt_block_size '12' is missing or not in 64..67108864" ]
	[ ! -e "$TMP/b.apc" ]
}

@test "LTT: several CPUs with no events: the lowest named, all counted" {
	"$APC_TOOLS/lttgen" --seed 2 --events 500 --cpus 4 -o "$TMP/g" >/dev/null
	: >"$TMP/g/cpu/3"
	rm "$TMP/g/cpu/1" "$TMP/g/cpu/2"
	conv 1 "$TMP/g" -o "$TMP/g.apc"
	grep -q "g: no cpu/1 tracefile, though info/system.xml declares 4 CPUs: the capture has no events of CPU 1 (3 CPU tracefiles missing or empty in all)$" <<<"$output"
	grep -q 'not mapped: ltt CPU tracefiles info/system.xml declares that are missing (no events of their CPU): 2, ltt CPU tracefiles that are empty (no events of their CPU): 1, ' <<<"$output"
	dump --summary "$TMP/g.apc"
	grep -Eq '^  core 0 +[0-9]+ messages' <<<"$output"
	# a tracefile of a CPU past the declared ones, empty, is counted too
	sed -i 's/ cpu="4" / cpu="1" /' "$TMP/g/info/system.xml"
	conv 1 "$TMP/g" -o "$TMP/h.apc"
	grep -q "g/cpu/3: empty tracefile: the capture has no events of CPU 3$" <<<"$output"
}

@test "LTT: the real trace with cpu/1 empty or missing: cpu/0 converted, exit 1" {
	need_shared
	cp -r "$SHARED/ltt/smp_example" "$TMP/s"
	chmod -R u+w "$TMP/s"
	: >"$TMP/s/cpu/1"
	conv 1 "$TMP/s" -o "$TMP/e.apc"
	grep -q "s/cpu/1: empty tracefile: the capture has no events of CPU 1$" <<<"$output"
	grep -q ' 85929 events, .*; not mapped: ltt CPU tracefiles that are empty (no events of their CPU): 1$' <<<"$output"
	rm "$TMP/s/cpu/1"
	conv 1 "$TMP/s" -o "$TMP/m.apc"
	grep -q "s: no cpu/1 tracefile, though info/system.xml declares 2 CPUs: the capture has no events of CPU 1$" <<<"$output"
	grep -q ' 85929 events, .*; not mapped: ltt CPU tracefiles info/system.xml declares that are missing (no events of their CPU): 1$' <<<"$output"
}

# zip_left ZIP CUT MEMBER: the bytes of MEMBER that the first CUT bytes
# of ZIP hold (its data inflated as far as they go, or stored).
zip_left() {
	python3 -c '
import sys, zipfile, zlib, struct
z, cut, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
i = zipfile.ZipFile(z).getinfo(name)
d = open(z, "rb").read()
n, x = struct.unpack("<HH", d[i.header_offset + 26:i.header_offset + 30])
data = d[i.header_offset + 30 + n + x:cut]
print(len(zlib.decompressobj(-15).decompress(data)) if i.compress_type == 8 else len(data))
' "$@"
}

@test "LTT: a zip cut inside a CPU file keeps what the folder cut there keeps, deflated or stored" {
	command -v zip >/dev/null || skip "zip is not installed"
	"$APC_TOOLS/lttgen" --seed 1 --events 20000 --cpus 2 -o "$TMP/g" >/dev/null
	local opt n cut
	for opt in -6 -0; do
		rm -f "$TMP/g.zip"
		(cd "$TMP/g" && zip -q $opt -r "$TMP/g.zip" info eventdefs control cpu/1 cpu/0)
		cut=$(($(stat -c %s "$TMP/g.zip") * 5 / 6))
		head -c $cut "$TMP/g.zip" >"$TMP/c.zip"
		n=$(zip_left "$TMP/g.zip" $cut cpu/0)
		[ "$n" -gt 0 ]
		[ "$n" -lt "$(stat -c %s "$TMP/g/cpu/0")" ]
		conv 1 "$TMP/c.zip" -o "$TMP/c$opt.apc"
		grep -q "c.zip: offset $(printf 0x%x $cut): truncated zip archive: it ends inside cpu/0 or the header after it" <<<"$output"
		local out=$output
		folder_cut "$TMP/g" cpu/0 "$n"
		output=$out
		same_as_folder "$TMP/c$opt.apc" "$n"
	done
}

# gen_cut NAME: a copy of $TMP/g (lttgen, 2 CPUs, 8 KiB blocks) as
# $TMP/NAME, for a test to cut one of its files.
gen_cut() {
	[ -d "$TMP/g" ] || "$APC_TOOLS/lttgen" --seed 3 --events 3000 --cpus 2 --block-size 8192 -o "$TMP/g" >/dev/null
	rm -rf "${TMP:?}/$1"
	cp -r "$TMP/g" "$TMP/$1"
}

# at FILE TEXT: the byte offset of the first TEXT in FILE.
at() {
	local n
	n=$(grep -bo -- "$2" "$1" | head -n 1 | cut -d: -f1)
	[ -n "$n" ]
	echo "$n"
}

@test "LTT: an eventdefs file cut short is damage named at its file and offset; the events described before it are read" {
	gen_cut a
	local core="$TMP/g/eventdefs/core.xml" pe n
	pe=$(at "$core" '<event name=process_exit>')
	n=$((pe + 15)) # "<event name=pro", in the last event's start tag
	head -c "$n" "$core" >"$TMP/a/eventdefs/core.xml"
	conv 1 "$TMP/a" -o "$TMP/a.apc"
	[ "${lines[0]}" = "apcconv: $TMP/a/eventdefs/core.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <event>, in its attribute name=\"pro\" (the file ends before </facility>)" ]
	# the CPU files are not blamed for the ids it leaves undefined
	! grep -q 'cpu/\|malformed' <<<"$output" || false
	sed -n 's/.*; not mapped: //p' <<<"$output" >"$TMP/a.nm"
	grep -q '^ltt undefined event id (rest of its block skipped): [1-9]' "$TMP/a.nm"
	apcverify -q "$TMP/a.apc"
	# it keeps what a whole core.xml without process_exit gives
	gen_cut w
	{ head -c "$pe" "$core"; echo '</facility>'; } >"$TMP/w/eventdefs/core.xml"
	# whole, that file leaves process_exit (id 21) undescribed: nothing
	# explains its events, so each CPU file says where it met the first
	conv 1 "$TMP/w" -o "$TMP/w.apc"
	[[ "${lines[0]}" == "apcconv: $TMP/w/cpu/0: offset 0x"*": event id 21 is described by no eventdefs file (a damaged event header, or eventdefs that lack it?): the rest of its block is skipped, and of "*" blocks in all in this file" ]]
	[[ "${lines[1]}" == "apcconv: $TMP/w/cpu/1: offset 0x"*": event id 21 is described by no eventdefs file "* ]]
	sed -n 's/.*; not mapped: \(.*\); problems: 2$/\1/p' <<<"$output" | cmp - "$TMP/a.nm"
	diff <(apcdump "$TMP/w.apc") <(apcdump "$TMP/a.apc")
	# as a tar: the same message, the member named as the CPU files' are
	tar -C "$TMP" -cf "$TMP/a.tar" a
	conv 1 "$TMP/a.tar" -o "$TMP/at.apc"
	[ "${lines[0]}" = "apcconv: $TMP/a.tar:eventdefs/core.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <event>, in its attribute name=\"pro\" (the file ends before </facility>)" ]
	diff <(apcdump "$TMP/w.apc") <(apcdump "$TMP/at.apc")
}

@test "LTT: an eventdefs file cut inside an event's type drops that event (undefined), not a misread CPU file" {
	gen_cut c
	local core="$TMP/g/eventdefs/core.xml" sc n
	sc=$(at "$core" '<event name=schedchange>')
	n=$(($(at "$core" '<field name=out><uint size=4/>') + 25)) # "<field name=out><uint siz"
	head -c "$n" "$core" >"$TMP/c/eventdefs/core.xml"
	conv 1 "$TMP/c" -o "$TMP/c.apc"
	[ "${lines[0]}" = "apcconv: $TMP/c/eventdefs/core.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <uint>, in an attribute name (\"siz\"), in <field name=\"out\"> of <event name=\"schedchange\"> (the file ends before </facility>)" ]
	[ "${#lines[@]}" -eq 2 ]
	! grep -q 'cpu/\|malformed' <<<"$output" || false
	apcverify -q "$TMP/c.apc"
	# schedchange (id 7) and every core event after it are undefined:
	# what is read is the events before it, the builtins (ids kept as
	# in the whole file, though block_start's description is cut) and
	# the extra facility's
	run apcconv -q --stats=json "$TMP/c" -o "$TMP/c2.apc"
	python3 -c '
import json, sys
o = json.loads(sys.argv[1])
k = {r["kind"]: r["count"] for r in o["records_by_kind"]}
before = {"core." + e for e in "facility_load syscall_entry syscall_exit trap_entry trap_exit irq_entry irq_exit".split()}
assert set(k) <= before | {"builtin.block_start", "builtin.block_end", "builtin.time_heartbeat", "extra.vec", "extra.choice", "extra.blob", "extra.message"}, k
assert k["builtin.block_start"] == k["builtin.block_end"] > 0 and k["core.syscall_entry"] > 0, k
assert o["damage"].endswith("<event name=\"schedchange\"> (the file ends before </facility>)"), o
' "$(tail -n 1 <<<"$output")"
	[ "$sc" -lt "$n" ]
}

@test "LTT: an eventdefs file cut in its named types: events that need them are undefined, the builtins still frame blocks" {
	gen_cut t
	local core="$TMP/g/eventdefs/core.xml" n
	n=$(($(at "$core" '<field name=nanoseconds><uint size=4/>') + 30)) # "... <uint "
	head -c "$n" "$core" >"$TMP/t/eventdefs/core.xml"
	conv 1 "$TMP/t" -o "$TMP/t.apc"
	[ "${lines[0]}" = "apcconv: $TMP/t/eventdefs/core.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <uint>, in <field name=\"nanoseconds\"> of <type name=\"timespec\"> (the file ends before </facility>)" ]
	! grep -q 'cpu/\|malformed\|typeref' <<<"$output" || false
	# block_start/end and time_heartbeat lost their typeref chain: read
	# as the builtins they are; process_fork and process_exit are gone
	gen_cut w
	{ head -c "$(at "$core" '<event name=process_fork>')" "$core"; echo '</facility>'; } >"$TMP/w/eventdefs/core.xml"
	# (whole, such a file is no damage of its own: the CPU files say
	# where they meet the ids it does not describe)
	conv 1 "$TMP/w" -o "$TMP/w.apc"
	grep -q "^apcconv: $TMP/w/cpu/0: offset 0x[0-9a-f]*: event id 2[01] is described by no eventdefs file " <<<"$output"
	diff <(apcdump "$TMP/w.apc") <(apcdump "$TMP/t.apc")
}

@test "LTT: a meaningless element of a whole eventdefs file is named at its file and offset" {
	gen_cut d
	sed -i 's|<typeref name=timespec/>|<typeref name=nosuch/>|' "$TMP/d/eventdefs/core.xml"
	conv 1 "$TMP/d" -o "$TMP/d.apc"
	[ "${lines[0]}" = "apcconv: $TMP/d/eventdefs/core.xml: offset $(printf 0x%x "$(at "$TMP/d/eventdefs/core.xml" '<typeref name=nosuch/>')"): facility 'core': typeref to undefined type 'nosuch'" ]
	[ ! -e "$TMP/d.apc" ]
	gen_cut s
	sed -i '0,/<uint size=1\/>/s|<uint size=1/>|<uint size=3/>|' "$TMP/s/eventdefs/core.xml"
	conv 1 "$TMP/s" -o "$TMP/s.apc"
	[ "${lines[0]}" = "apcconv: $TMP/s/eventdefs/core.xml: offset $(printf 0x%x "$(at "$TMP/s/eventdefs/core.xml" '<uint size=3/>')"): facility 'core': bad size '3'" ]
	[ ! -e "$TMP/s.apc" ]
}

@test "LTT: the real trace with core.xml cut after the events it uses converts as whole, exit 1" {
	need_shared
	local core="$SHARED/ltt/smp_example/eventdefs/core.xml" n
	cp -r "$SHARED/ltt/smp_example" "$TMP/s"
	chmod -R u+w "$TMP/s"
	apcconv -q "$SHARED/ltt/smp_example" -o "$TMP/whole.apc"
	# inside process_fork's start tag: the trace has no id past 19
	n=$(($(at "$core" '<event name=process_fork') + 18))
	head -c "$n" "$core" >"$TMP/s/eventdefs/core.xml"
	conv 1 "$TMP/s" -o "$TMP/s.apc"
	[ "${lines[0]}" = "apcconv: $TMP/s/eventdefs/core.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <event>, in its attribute name=\"proces\" (the file ends before </facility>)" ]
	grep -q ' 173179 events, .* s$' <<<"$output"
	diff <(apcdump "$TMP/whole.apc") <(apcdump "$TMP/s.apc")
	# inside schedchange: its id and those after it are undefined, and
	# no CPU file is blamed
	n=$(($(at "$core" '<event name=schedchange') + 40))
	head -c "$n" "$core" >"$TMP/s/eventdefs/core.xml"
	conv 1 "$TMP/s" -o "$TMP/s2.apc"
	grep -q "^apcconv: $TMP/s/eventdefs/core.xml: offset $(printf 0x%x "$n"): cut short inside .* <event name=\"schedchange\"> (the file ends before </facility>)$" <<<"$output"
	grep -q 'not mapped: ltt undefined event id (rest of its block skipped): [1-9]' <<<"$output"
	! grep -q 'cpu/\|malformed' <<<"$output" || false
}

@test "LTT: info/system.xml cut inside its start tag is damage there: nothing converted with a partial value" {
	gen_cut e
	local sys="$TMP/g/info/system.xml" n gt
	n=$(($(at "$sys" 'ltt_block_size="8192"') + 19)) # ltt_block_size="819
	head -c "$n" "$sys" >"$TMP/e/info/system.xml"
	conv 1 "$TMP/e" -o "$TMP/e.apc"
	[ "${lines[0]}" = "apcconv: $TMP/e/info/system.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <system>, in its attribute ltt_block_size=\"819\" (the file ends before </system>)" ]
	[ "${#lines[@]}" -eq 2 ]
	grep -q "^apcconv: $TMP/e (ltt) -> nothing written: 0 bytes in, 0 events," <<<"${lines[1]}"
	[ ! -e "$TMP/e.apc" ]
	tar -C "$TMP" -cf "$TMP/e.tar" e
	conv 1 "$TMP/e.tar" -o "$TMP/et.apc"
	[ "${lines[0]}" = "apcconv: $TMP/e.tar:info/system.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <system>, in its attribute ltt_block_size=\"819\" (the file ends before </system>)" ]
	[ ! -e "$TMP/et.apc" ]
	# its last attribute whole, but no '>': still cut (more may follow)
	head -c $((n + 2)) "$sys" >"$TMP/e/info/system.xml"
	conv 1 "$TMP/e" -o "$TMP/e.apc"
	[ "${lines[0]}" = "apcconv: $TMP/e/info/system.xml: offset $(printf 0x%x $((n + 2))): cut short inside the start tag of <system> (the file ends before </system>)" ]
	# cut after the start tag: nothing read is lost, taken as whole
	apcconv -q "$TMP/g" -o "$TMP/whole.apc"
	gt=$(($(at "$sys" '>generated') + 1))
	for n in "$gt" $(($(stat -c %s "$sys") - 1)); do
		head -c "$n" "$sys" >"$TMP/e/info/system.xml"
		conv 0 "$TMP/e" -o "$TMP/e$n.apc"
		diff <(apcdump "$TMP/whole.apc") <(apcdump "$TMP/e$n.apc")
	done
}

@test "LTT: info/bookmarks.xml cut short keeps the bookmarks before the cut, none at a time cut in two" {
	gen_cut b
	local bm="$TMP/g/info/bookmarks.xml" n
	n=$(($(at "$bm" 'start_time="1100000012.218746805"') + 22)) # start_time="1100000012
	head -c "$n" "$bm" >"$TMP/b/info/bookmarks.xml"
	conv 1 "$TMP/b" -o "$TMP/b.apc"
	[ "${lines[0]}" = "apcconv: $TMP/b/info/bookmarks.xml: offset $(printf 0x%x "$n"): cut short inside the start tag of <location>, in its attribute start_time=\"1100000012\" (the file ends before </bookmarks>)" ]
	run apcdump "$TMP/b.apc"
	[ "$(grep -c ' annotate_marker ' <<<"$output")" -eq 1 ]
	grep -q ' annotate_marker .* text="first: Start"$' <<<"$output"
	# cut to nothing, or to a prolog alone: none, and said so
	: >"$TMP/b/info/bookmarks.xml"
	conv 1 --overwrite "$TMP/b" -o "$TMP/b.apc"
	[ "${lines[0]}" = "apcconv: $TMP/b/info/bookmarks.xml: offset 0x0: empty file: no <bookmarks> element (cut short?)" ]
	! apcdump "$TMP/b.apc" | grep -q ' annotate_marker ' || false
	printf '<?xml version="1.0"?>\n<!-- bookmarks of the trace -->\n' >"$TMP/b/info/bookmarks.xml"
	conv 1 --overwrite "$TMP/b" -o "$TMP/b.apc"
	[ "${lines[0]}" = "apcconv: $TMP/b/info/bookmarks.xml: offset $(printf 0x%x "$(stat -c %s "$TMP/b/info/bookmarks.xml")"): no <bookmarks> element: the file ends before it (cut short?)" ]
}

@test "LTT: the summary's uname is built from system.xml as gatord builds it from uname(2)" {
	# lttgen's system.xml names the kernel, host and release only: the
	# fields it lacks are left out, not left empty.
	apcconv -q "$TMP/gen" -o "$TMP/g.apc"
	run apcdump --frame summary -c 1 "$TMP/g.apc"
	grep -q ' attr_key="uname" attr_value="Linux lttgen 2.6.0-gen" attr_key="kernel_name"' <<<"$output"
	# With none of uname's fields there is no attribute at all.
	sed -i 's/ node_name="[^"]*"//; s/ kernel_name="[^"]*"//; s/ kernel_release="[^"]*"//' \
		"$TMP/gen/info/system.xml"
	apcconv -q "$TMP/gen" -o "$TMP/n.apc"
	run apcdump --frame summary -c 1 "$TMP/n.apc"
	grep -q ' summary ' <<<"$output"
	! grep -q 'uname' <<<"$output" || false
}

@test "LTT: the real trace's uname reads as uname -a printed it on the traced machine" {
	need_shared
	apcconv -q "$SHARED/ltt/smp_example" -o "$TMP/s.apc"
	run apcdump --frame summary -c 1 "$TMP/s.apc"
	grep -qF 'attr_key="uname" attr_value="Linux thales.casi.polymtl.ca 2.5.44-ltt2 #2 SMP Tue Jul 22 09:46:56 EDT 2003 i686 GNU/Linux"' <<<"$output"
	apcverify -q "$TMP/s.apc"
}

@test "LTT: a type reached through many typerefs is compiled once (8^14 paths, no hang)" {
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	need_python
	"$APC_TOOLS/lttgen" --seed 2 --events 200 --cpus 2 -o "$TMP/t" >/dev/null
	# t0 is a struct of 8 typerefs to t1, ... t13 of 8 to t14, a uint: 8^14
	# paths to t14, each compiled on its own before (hours; SIGTERM unheard)
	python3 - "$TMP/t/eventdefs/bomb.xml" <<'PY'
import sys
out = ['<facility name=bomb>', '<description>x</description>']
for k in range(14):
    f = ''.join('<field name=f%d><typeref name=t%d/></field>' % (i, k + 1) for i in range(8))
    out.append('<type name=t%d><struct>%s</struct></type>' % (k, f))
out += ['<type name=t14><uint size=4/></type>', '<event name=boom><typeref name=t0/></event>', '</facility>']
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
PY
	# a guard against a hang coming back, not a timing: it takes milliseconds
	run timeout -s KILL 120 "$APC_BIN/apcconv" -q "$TMP/t" -o "$TMP/t.apc"
	[ "$status" -eq 0 ]
	apcverify -q "$TMP/t.apc"
}

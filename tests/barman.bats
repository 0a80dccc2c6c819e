#!/usr/bin/env bats
# barman.bats - the Barman reader against header and record damage that
# leaves every block well formed: a linear data store whose write offset
# and total_written disagree, and a block longer than its record.  The
# dumps come from tools/barmangen and are patched in place by Python.

load helpers
NEED_PYTHON=1

# gen FILE: a 64-bit little-endian linear dump of 200 records, with its
# truth file FILE.txt.
gen() {
	[ -x "$APC_TOOLS/barmangen" ] || skip "barmangen not built"
	"$APC_TOOLS/barmangen" -o "$1" --truth "$1.txt" --seed 1 --records 200 >/dev/null
}

# patch FILE: run the Python on stdin with B the bytes of FILE (written
# back after), T its truth lines, DS the file offset of the data store
# parameters (buffer_length, write_offset, read_offset, total_written:
# found by their values in the truth), REC the records present (dicts
# of the truth's fields, off made a file offset) and u64/put64 helpers.
patch() {
	python3 - "$1" <<<"import re, struct, sys
F = sys.argv[1]
B = bytearray(open(F, 'rb').read())
T = open(F + '.txt').read().splitlines()
u64 = lambda o: struct.unpack_from('<Q', B, o)[0]
def put64(o, v): struct.pack_into('<Q', B, o, v)
fields = lambda l: dict(re.findall(r'(\w+)=(\S+)', l))
ds = fields(next(l for l in T if l.startswith('H datastore')))
base = int(fields(next(l for l in T if l.startswith('FILE')))['data_area_file_offset'])
want = struct.pack('<QQQ', int(ds['buffer_length']), int(ds['write_offset']), int(ds['read_offset']))
DS = B.index(want)
assert B.find(want, DS + 1) < 0
REC = [fields(l) for l in T if l.startswith('R ') and 'st=present' in l]
for r in REC:
    r['off'] = base + int(r['off'])
    r['blen'] = int(r['blen'])
$(cat)
open(F, 'wb').write(B)"
}

# events: the event count in apcconv's summary line ($output).
events() {
	sed -n 's/.* -> .*: [0-9]* bytes in, \([0-9]*\) events,.*/\1/p' <<<"$output"
}

@test "barman: a linear write offset short of total_written keeps the records before it, and is damage at the write offset" {
	gen "$TMP/w.bin"
	cp "$TMP/w.bin" "$TMP/c.bin"
	cp "$TMP/w.bin.txt" "$TMP/c.bin.txt"
	# w.bin: the write offset moved back to record 100's start, total_written
	# left as it was; c.bin: the same cut with both fields agreeing.
	patch "$TMP/w.bin" <<<"put64(DS + 8, REC[100]['off'] - base)
open('$TMP/at', 'w').write('%x %d %d\n' % (DS + 8, REC[100]['off'] - base, u64(DS + 24)))"
	patch "$TMP/c.bin" <<<"put64(DS + 8, REC[100]['off'] - base); put64(DS + 24, REC[100]['off'] - base)"
	read -r at wr total <"$TMP/at"
	[ "$wr" -lt "$total" ]
	conv 0 "$TMP/c.bin" -o "$TMP/c.apc"
	kept=$(events)
	[ "$kept" -gt 0 ]
	conv 1 "$TMP/w.bin" -o "$TMP/w.apc"
	[ "${lines[0]}" = "apcconv: $TMP/w.bin: offset 0x$at: linear data store write offset $wr, but total_written says $total bytes were written: records past the write offset are not read" ]
	# the records before the write offset, all of them, as the agreeing cut
	[ "$(events)" = "$kept" ]
	verify 0 "$TMP/w.apc"
	run apcconv "$TMP/w.bin" -o - --stats=json
	[[ "$output" == *'"status":1'* ]]
}

@test "barman: total_written below the write offset is damage too, with every record read; 0 is a writer that keeps none" {
	gen "$TMP/w.bin"
	conv 0 "$TMP/w.bin" -o "$TMP/whole.apc"
	whole=$(events)
	cp "$TMP/w.bin" "$TMP/z.bin"
	cp "$TMP/w.bin.txt" "$TMP/z.bin.txt"
	patch "$TMP/w.bin" <<<"put64(DS + 24, u64(DS + 8) - 64)
open('$TMP/at', 'w').write('%x %d %d\n' % (DS + 8, u64(DS + 8), u64(DS + 24)))"
	read -r at wr total <"$TMP/at"
	conv 1 "$TMP/w.bin" -o "$TMP/w.apc"
	[ "${lines[0]}" = "apcconv: $TMP/w.bin: offset 0x$at: linear data store write offset $wr, but total_written says $total bytes were written: the header disagrees with itself (the records up to the write offset are read)" ]
	[ "$(events)" = "$whole" ]
	patch "$TMP/z.bin" <<<"put64(DS + 24, 0)"
	conv 0 "$TMP/z.bin" -o "$TMP/z.apc"
	[ "$(events)" = "$whole" ]
	[[ "$output" != *total_written* ]]
}

@test "barman: a block longer than its record counts the bytes it covers, and the record it swallows is gone" {
	gen "$TMP/w.bin"
	conv 0 "$TMP/w.bin" -o "$TMP/whole.apc"
	whole=$(events)
	[[ "$output" != *"past the record's content"* ]]
	# A halt record (type 6) takes 17 bytes after its 8-byte length
	# word, in a 32-byte block: 7 bytes of padding.  Its length word made
	# to cover the next record too leaves 7 + that record's block unread.
	patch "$TMP/w.bin" <<<"i = next(i for i, r in enumerate(REC[:-1]) if r['type'] == '6' and r['blen'] == 32 and REC[i + 1]['type'] == '6')
put64(REC[i]['off'], 24 + REC[i + 1]['blen'])
open('$TMP/n', 'w').write(str(7 + REC[i + 1]['blen']))"
	conv 0 "$TMP/w.bin" -o "$TMP/w.apc"
	[[ "$output" == *"not mapped: barman record bytes past the record's content (not read): $(cat "$TMP/n")"* ]]
	# the swallowed halt was one event
	[ "$(events)" -eq $((whole - 1)) ]
	run apcconv "$TMP/w.bin" -o - --stats=json
	[[ "$output" == *"\"barman record bytes past the record's content (not read)\":$(cat "$TMP/n")"* ]]
}

@test "barman: the real dumps have no block longer than its record, and their headers agree" {
	need_shared
	for f in "$SHARED"/barman/*.bin; do
		conv 0 "$f" -o "$TMP/$(basename "$f").apc"
		[[ "$output" != *"past the record's content"* ]]
		[[ "$output" != *total_written* ]]
	done
}

@test "PMU counter names: each event's slots shared across cores, a core's repeats take new ones (many cores)" {
	need_python
	for seed in 1 2 3; do
		"$APC_TOOLS/barmangen" -o "$TMP/b.bin" --truth "$TMP/b.truth" --cores 40 --seed $seed --records 100 >/dev/null
		rm -rf "$TMP/b.apc"
		apcconv -q "$TMP/b.bin" -o "$TMP/b.apc"
		python3 - "$TMP/b.truth" "$TMP/b.apc/captured.xml" <<'PY'
import re, sys
# the rule, as a scan: a core's k-th counter takes the lowest slot of its
# part with its event that the core has not taken, else a new slot
want = {}
for l in open(sys.argv[1]):
    m = re.match(r'H pmu core=\d+ midr=(0x[0-9a-f]+) num_counters=\d+ counter_types=(\S*)', l)
    if not m:
        continue
    slots = want.setdefault(m.group(1), [])
    taken = set()
    for t in m.group(2).split(','):
        ev = int(t, 16)
        if ev == 0xffffffff:
            continue
        for n, e in enumerate(slots):
            if e == ev and n not in taken:
                break
        else:
            n = len(slots)
            slots.append(ev)
        taken.add(n)
got = {}
for m in re.finditer(r'type="([^"]*)_cnt(\d+)" event="(0x[0-9a-f]+)"', open(sys.argv[2]).read()):
    got.setdefault(m.group(1), {})[int(m.group(2))] = int(m.group(3), 16)
got = sorted([s[n] for n in range(len(s))] for s in got.values())
want = sorted(want.values())
assert got == want, (got, want)
assert sum(len(s) for s in want) > 10, want
PY
	done
}

#!/usr/bin/env bats
# apcverify.bats - apcverify as a CI gate: the real gatord captures pass
# (skipped when ../shared/testdata is absent), damaged copies fail with
# the frame and offset named, output formats, options and exit statuses.
# Small captures are also generated here (python3) so the options are
# tested without the real files.

load helpers

CAPS="v68_nonroot.apc v68_sleep.apc sleep_counters.apc v68_nonroot_annotate.apc"

setup() {
	TMP="$(mktemp -d)"
}

teardown() {
	rm -rf "$TMP"
}

need_python() {
	command -v python3 >/dev/null || skip "python3 is not installed"
}

# make_cap DIR [FAULT]: a small gatord-6.8-like capture: Summary, a Name,
# a Block Counter frame with key 0x11.  FAULT: canary | undeclared |
# nonminimal (a warning only) | extreme-ts (a frame from INT64_MAX back to -51)
# | name-back-SECONDS (a new thread's first Name that far before the Name
# ahead of it) | exit-back-SECONDS (a sched switch that far before the
# thread exit ahead of it).
make_cap() {
	need_python
	mkdir -p "$1"
	python3 - "$1" "${2:-}" <<'EOF'
import os, struct, sys
d, fault = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, summary, frames, write_cap
canary = b"1\n2\r\n3\r4\n\r5" if fault != "canary" else b"1\n2\n3\n4\n\n5"
key = 0x11 if fault != "undeclared" else 0x77
val = p(5) if fault != "nonminimal" else b"\x85\x00"
bodies = [
    summary(canary),
    p(3) + p(0) + p(2) + p(10) + p(42) + s(b"main"),
    p(5) + p(0) + p(0) + p(20) + p(key) + val + p(0) + p(30) + p(key) + p(6),
]
if fault == "extreme-ts":  # times at both ends of int64, going back
    bodies.append(p(5) + p(0) + p(0) + p(2**63 - 1) + p(key) + p(1) + p(0) + p(-51) + p(key) + p(2))
t = 200 * 10**9
if fault.startswith("name-back-"):  # tid 42 renamed, then tid 43's first Name
    back = int(float(fault[10:]) * 10**9)
    bodies.append(p(3) + p(0) + p(2) + p(t) + p(42) + s(b"main2"))
    bodies.append(p(3) + p(0) + p(2) + p(t - back) + p(43) + s(b"worker"))
if fault.startswith("exit-back-"):  # an exit, then a switch before it
    back = int(float(fault[10:]) * 10**9)
    bodies.append(p(7) + p(0) + p(2) + p(t) + p(42) + p(1) + p(t - back) + p(43) + p(0))
write_cap(d, frames(bodies))
EOF
}

@test "times at both ends of int64: the gap is reported, not overflowed" {
	make_cap "$TMP/x.apc" extreme-ts
	run apcverify "$TMP/x.apc"
	echo "$output"
	[ "$status" -eq 1 ]
	# INT64_MAX - (-51) does not fit in int64: capped, never negative
	grep -q 'timestamp -51 is 9223372036854775807 ns before the previous one' <<<"$output"
	run apcdump --summary "$TMP/x.apc"
	echo "$output"
	grep -q '^Time span: *9223372036.854775858 s$' <<<"$output"
	# the listing prints each end as it is (apcdump keeps the last
	# formatted time: it must change with the time, sign included)
	run apcdump "$TMP/x.apc"
	echo "$output"
	grep -q '^     3 0x0000004d block_counter    0 block_counter    ts=9223372036854775807 core=0 pid=0 key=0x11 value=1$' <<<"$output"
	grep -q '^     3 0x00000051 block_counter    0 block_counter    ts=-51 core=0 pid=0 key=0x11 value=2$' <<<"$output"
	run apcdump --json "$TMP/x.apc"
	grep -q '^{"frame":3,"offset":81,"frame_offset":60,.*"ts":-51,' <<<"$output"
}

# gatord 6.8's first-Name and exit-switch quirks step back a few ms in
# the real captures; accepted up to about 1 s, minutes back are disorder.
@test "gatord's first-Name and exit-switch quirks: ms back warn, minutes back fail" {
	for q in name exit; do
		make_cap "$TMP/$q-near.apc" $q-back-0.5
		run apcverify "$TMP/$q-near.apc"
		echo "$output"
		[ "$status" -eq 0 ]
		grep -q "warning: .*gatord 6.8 .* \[ts-gatord-$q\]\$" <<<"$output"
		make_cap "$TMP/$q-far.apc" $q-back-120
		run apcverify "$TMP/$q-far.apc"
		echo "$output"
		[ "$status" -eq 1 ]
		grep -q ": error: .* 120000000000 ns before .* (too far back for gatord's .*) \[ts-\(frame\|core\)\]\$" <<<"$output"
		! grep -q "ts-gatord-$q" <<<"$output" || false
	done
}

@test "real gatord captures pass with no errors" {
	need_shared
	for c in $CAPS; do
		run apcverify "$SHARED/apc/$c"
		echo "$output"
		[ "$status" -eq 0 ]
		[[ "$output" == *"$c: ok ("* ]]
		! grep -q ': error: ' <<<"$output" || false
	done
}

@test "each warning on a real capture says why and names its check" {
	need_shared
	run apcverify "$SHARED/apc/sleep_counters.apc" "$SHARED/apc/v68_nonroot_annotate.apc"
	[ "$status" -eq 0 ]
	grep -q 'warning: .*gatord 9.x .* \[summary-first\]$' <<<"$output"
	grep -q 'warning: .*gatord 6.8 .* \[ts-gatord-name\]$' <<<"$output"
	grep -q 'warning: .*gatord 6.8 .* \[ts-gatord-exit\]$' <<<"$output"
}

@test "gatord 6.8's empty External frames are told once each capture, not failed" {
	need_shared
	run apcverify "$SHARED/apc/v68_sleep.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qxF "$SHARED/apc/v68_sleep.apc: frame 18 @0x534759: warning: an External frame with no fd (a bare [10]): gatord 6.8 writes both kinds (the bare one last in a capture); nothing to decode, accepted [ext-empty]" <<<"$output"
	run apcverify "$SHARED/apc/v68_nonroot_annotate.apc"
	[ "$status" -eq 0 ]
	[ "$(grep -c '\[ext-empty\]$' <<<"$output")" -eq 1 ]
	grep -q ': warning: an External frame for fd [0-9]* with no bytes (first of 4): ' <<<"$output"
}

@test "a truncated copy of a real capture exits 1 naming frame and offset" {
	need_shared
	cp -r "$SHARED/apc/v68_nonroot.apc" "$TMP/cut.apc"
	chmod -R u+w "$TMP/cut.apc"
	truncate -s -3 "$TMP/cut.apc/0000000000"
	run apcverify "$TMP/cut.apc"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -Eq "^$TMP/cut.apc: frame 221 @0x[0-9a-f]+: error: .*\[frame-truncated\]$" <<<"$output"
	grep -q "^$TMP/cut.apc: 1 error, " <<<"$output"
}

@test "a real capture with its canary damaged exits 1 at frame 0" {
	need_shared
	cp -r "$SHARED/apc/v68_nonroot.apc" "$TMP/canary.apc"
	chmod -R u+w "$TMP/canary.apc"
	# byte 7: length word (4), frame type, message code (@0x5), string length, "1\n2..."
	printf 'X' | dd of="$TMP/canary.apc/0000000000" bs=1 seek=7 conv=notrunc 2>/dev/null
	run apcverify "$TMP/canary.apc"
	[ "$status" -eq 1 ]
	grep -q "frame 0 @0x5: error: newline canary is wrong.*\[canary\]" <<<"$output"
}

@test "a generated capture passes; faults in it fail with their check id" {
	make_cap "$TMP/ok.apc"
	run apcverify "$TMP/ok.apc"
	[ "$status" -eq 0 ]
	[ "$output" = "$TMP/ok.apc: ok (3 frames)" ]

	make_cap "$TMP/bad.apc" undeclared
	run apcverify "$TMP/bad.apc"
	[ "$status" -eq 1 ]
	grep -Eq "frame 2 @0x[0-9a-f]+: error: block counter key 0x77 is not declared in captured.xml \[key-undeclared\]" <<<"$output"
}

# make_big DIR: a capture of about 3 MiB (more than one 1 MiB read of the
# data file) with an undeclared key in the frame that straddles the first
# MiB, cut short inside a frame past the second.  Writes the expected
# problem lines (frame, offset) to DIR.expect.
make_big() {
	need_python
	mkdir -p "$1"
	python3 - "$1" <<'EOF2'
import os, struct, sys
d = sys.argv[1]
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, write_cap
frames = [summary()]
data, offs, expect, ts = bytearray(), [], [], 0
bad_frame = None
for i in range(1, 21000):
    body = bytearray(p(5) + p(i % 4))
    for j in range(20):
        ts += 1000 + j
        body += p(0) + p(ts) + p(0x11) + p(i * j)
    frames.append(bytes(body))
for i, fr in enumerate(frames):
    offs.append(len(data))
    if bad_frame is None and len(data) + 4 + len(fr) > (1 << 20) and i > 0:
        # key 0x77 as the last value of this frame: it straddles the first MiB
        key_at = len(data) + 4 + len(fr)
        fr = fr + p(0x77) + p(1)
        frames[i] = fr
        bad_frame = i
        expect.append("frame %d @0x%x: error: block counter key 0x77 is not declared in captured.xml [key-undeclared]"
                      % (i, key_at))
    data += struct.pack("<i", len(fr)) + fr
cut_frame = next(i for i, o in enumerate(offs) if o > (5 << 19))
cut = offs[cut_frame] + 4 + 10
expect.append("frame %d @0x%x: error: frame length %d runs past the end of the file, 10 bytes left (truncated capture?) [frame-truncated]"
              % (cut_frame, offs[cut_frame], len(frames[cut_frame])))
assert len(data) > 3 << 20
write_cap(d, bytes(data[:cut]))
with open(d + ".expect", "w") as f:
    f.write("\n".join(expect) + "\n")
EOF2
}

@test "damage past the first MiB of the data file is found at its exact offset" {
	make_big "$TMP/big.apc"
	run apcverify "$TMP/big.apc"
	echo "$output"
	cat "$TMP/big.apc.expect"
	[ "$status" -eq 1 ]
	while read -r line; do
		grep -qxF "$TMP/big.apc: $line" <<<"$output"
	done <"$TMP/big.apc.expect"
	grep -q "^$TMP/big.apc: 2 errors, 0 warnings$" <<<"$output"
	# the same through stdin, where the data file is read frame by frame
	run apcverify - <"$TMP/big.apc/0000000000"
	[ "$status" -eq 1 ]
	grep -q "frame-truncated" <<<"$output"
}

@test "--json gives one parseable object per capture" {
	make_cap "$TMP/a.apc"
	make_cap "$TMP/b.apc" canary
	run apcverify --json "$TMP/a.apc" "$TMP/b.apc"
	[ "$status" -eq 1 ]
	[ "$(wc -l <<<"$output")" -eq 2 ]
	python3 -c '
import json, sys
objs = [json.loads(l) for l in sys.stdin]
a, b = objs
assert a["ok"] is True and a["frames"] == 3 and a["errors"] == 0 and a["problems"] == []
assert b["ok"] is False and b["errors"] == 1
p = b["problems"][0]
assert p["check"] == "canary" and p["severity"] == "error" and p["frame"] == 0 and p["offset"] == 5
' <<<"$output"
}

@test "--json on the real captures parses" {
	need_shared
	need_python
	run apcverify --json $(for c in $CAPS; do echo "$SHARED/apc/$c"; done)
	[ "$status" -eq 0 ]
	python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    assert o["ok"] and o["errors"] == 0 and o["frames"] > 0
    for p in o["problems"]:
        assert p["severity"] == "warning" and p["check"] and p["message"]
' <<<"$output"
}

@test "--strict turns a warning into exit 1" {
	make_cap "$TMP/w.apc" nonminimal
	run apcverify "$TMP/w.apc"
	[ "$status" -eq 0 ]
	grep -q "warning: .*\[packed-nonminimal\]" <<<"$output"
	grep -q "ok (3 frames, 1 warning)" <<<"$output"
	run apcverify --strict "$TMP/w.apc"
	[ "$status" -eq 1 ]
}

@test "cookies: 1 is reserved, a used cookie must be named somewhere" {
	need_python
	mkdir -p "$TMP/c.apc"
	python3 - "$TMP/c.apc" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, summary, frames, write_cap
link = lambda ts, cookie, tid: p(1) + p(ts) + p(cookie) + p(tid) + p(tid)
write_cap(sys.argv[1], frames([
    summary(),
    p(3) + p(0) + p(1) + p(1) + s(b"java"),            # Cookie Name 1: reserved
    p(5) + p(0) + p(0) + p(20) + p(0x11) + p(6),
    p(13) + link(30, 2, 40) + link(31, 7, 41) + link(32, -1, 42) + link(33, 0, 43),
    # Backtrace: exec cookie 7 (named below), entries 9 (never named) and -1
    p(2) + p(0) + p(40) + p(7) + p(41) + p(41) + p(9) + p(0x100) + p(-1) + p(0x200) + p(1),
    p(3) + p(0) + p(1) + p(7) + s(b"libz.so"),          # named after its use
]))
EOF2
	run apcverify "$TMP/c.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'frame 1 @0x[0-9a-f]*: warning: Cookie Name cookie 1 is reserved (the End of Message value) \[cookie-reserved\]' <<<"$output"
	grep -q 'frame 3 @0x[0-9a-f]*: warning: cookie 2 is used but no Cookie Name names it (Streamline shows no image) \[cookie-unnamed\]' <<<"$output"
	grep -q 'frame 4 @0x[0-9a-f]*: warning: cookie 9 is used but no Cookie Name names it .*\[cookie-unnamed\]' <<<"$output"
	# 7 is named (later), -1 and 0 are the spec's own: nothing said of them
	! grep -Eq 'cookie (7|-1|0) ' <<<"$output" || false
	[ "$(grep -c '\[cookie-' <<<"$output")" -eq 3 ]
	run apcverify --strict "$TMP/c.apc"
	[ "$status" -eq 1 ]
}

@test "--strict fails the gatord 9.x capture (Summary after perf frames)" {
	need_shared
	run apcverify --strict "$SHARED/apc/sleep_counters.apc"
	[ "$status" -eq 1 ]
	run apcverify "$SHARED/apc/sleep_counters.apc"
	[ "$status" -eq 0 ]
}

@test "a missing capture exits 2 with the reason on stderr, others still checked" {
	make_cap "$TMP/ok.apc"
	run apcverify "$TMP/nope.apc" "$TMP/ok.apc"
	[ "$status" -eq 2 ]
	grep -q "^apcverify: .*nope.apc" <<<"$output"
	grep -q "ok.apc: ok (3 frames)" <<<"$output"
	apcverify "$TMP/nope.apc" 2>/dev/null >"$TMP/out" || true
	[ ! -s "$TMP/out" ]
}

@test "a result that stdout cannot take is an I/O error: exit 2, the reason on stderr" {
	[ -w /dev/full ] || skip "/dev/full is not writable here"
	make_cap "$TMP/ok.apc"
	for opts in "$TMP/ok.apc" "--json $TMP/ok.apc" --help --version --list-checks; do
		exits 2 sh -c 'exec "$0" $1 > /dev/full' "$APC_BIN/apcverify" "$opts"
		[ "$output" = "apcverify: stdout: cannot write: no space left on device" ]
	done
	# -q writes nothing to stdout: nothing can fail
	exits 0 sh -c 'exec "$0" -q "$1" > /dev/full' "$APC_BIN/apcverify" "$TMP/ok.apc"
}

@test "-q prints nothing and keeps the exit status" {
	make_cap "$TMP/bad.apc" canary
	make_cap "$TMP/ok.apc"
	run apcverify -q "$TMP/bad.apc"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	run apcverify --quiet "$TMP/ok.apc"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a bad capture among good ones: every one reported, exit 1" {
	make_cap "$TMP/a.apc"
	make_cap "$TMP/b.apc" undeclared
	make_cap "$TMP/c.apc"
	run apcverify "$TMP/a.apc" "$TMP/b.apc" "$TMP/c.apc"
	[ "$status" -eq 1 ]
	grep -q "a.apc: ok" <<<"$output"
	grep -q "b.apc: 1 error, 0 warnings" <<<"$output"
	grep -q "c.apc: ok" <<<"$output"
}

@test "--max-errors limits the listing, not the count" {
	make_cap "$TMP/bad.apc" canary
	rm "$TMP/bad.apc/captured.xml"
	run apcverify --max-errors=1 "$TMP/bad.apc"
	[ "$status" -eq 1 ]
	[ "$(grep -c ': error: ' <<<"$output")" -eq 1 ]
	grep -q "bad.apc: 2 errors" <<<"$output"
	run apcverify --max-errors=x "$TMP/bad.apc"
	[ "$status" -eq 2 ]
	# the limit is on errors: a warning after it is still listed
	make_cap "$TMP/warn.apc" nonminimal
	rm "$TMP/warn.apc/captured.xml"
	run apcverify --max-errors=0 "$TMP/warn.apc"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(grep -c ': error: ' <<<"$output")" -eq 0 ]
	grep -q ': warning: .*\[packed-nonminimal\]' <<<"$output"
}

@test "-q prints nothing, not even for a capture that cannot be opened" {
	run apcverify -q "$TMP/nosuch.apc"
	[ "$status" -eq 1 ] || [ "$status" -eq 2 ]
	[ -z "$output" ]
}

@test "a bare data file finds captured.xml beside it; stdin works" {
	make_cap "$TMP/ok.apc"
	run apcverify "$TMP/ok.apc/0000000000"
	[ "$status" -eq 0 ]
	[ "$output" = "$TMP/ok.apc/0000000000: ok (3 frames)" ]
	run apcverify - <"$TMP/ok.apc/0000000000"
	[ "$status" -eq 0 ]
	grep -q "warning: no captured.xml beside a bare data file" <<<"$output"
}

@test "an archived capture verifies like its folder" {
	make_cap "$TMP/ok.apc"
	tar -C "$TMP" -czf "$TMP/ok.apc.tar.gz" ok.apc
	run apcverify "$TMP/ok.apc.tar.gz"
	[ "$status" -eq 0 ]
	grep -q "ok (3 frames)" <<<"$output"
}

@test "usage: no capture, unknown option exit 2; -h, -V, --list-checks exit 0" {
	run apcverify
	[ "$status" -eq 2 ]
	[ "$output" = "apcverify: no capture given (try --help)" ]
	run apcverify --bogus x
	[ "$status" -eq 2 ]
	[ "$output" = "apcverify: unrecognized option '--bogus'
Try 'apcverify --help' for more information." ]
	run apcverify -h
	[ "$status" -eq 0 ]
	[[ "$output" == usage:* ]]
	run apcverify -V
	[ "$status" -eq 0 ]
	[[ "$output" == "apcverify "* ]]
	run apcverify --list-checks
	[ "$status" -eq 0 ]
	grep -q "^ts-cross-type  *warning" <<<"$output"
}

@test "standard input named twice is a usage error for apcverify and apcdump, as for apcconv" {
	make_cap "$TMP/c.apc"
	for p in apcverify apcdump; do
		run "$p" - - < "$TMP/c.apc/0000000000"
		[ "$status" -eq 2 ]
		[ "$output" = "$p: standard input (-) given as two inputs: it can be read once" ]
		run "$p" "$TMP/c.apc" - "$TMP/c.apc" - < "$TMP/c.apc/0000000000"
		[ "$status" -eq 2 ]
	done
	# once is fine
	run apcverify - < "$TMP/c.apc/0000000000"
	[ "$status" -eq 0 ]
}

@test "every check id the checker reports is one --list-checks lists" {
	# the ids in lib/verify.c's source (each hyphenated string there is
	# one): "perf-chunk" was reported but missing from the list
	run apcverify --list-checks
	[ "$status" -eq 0 ]
	ids=$(grep -oE '"[a-z0-9]+(-[a-z0-9]+)+"' "$APC_ROOT/lib/verify.c" | tr -d '"' | sort -u)
	[ "$(wc -l <<<"$ids")" -ge 30 ]
	for id in $ids; do
		grep -q "^$id " <<<"$output" || { echo "not listed: $id"; false; }
	done
}

@test "every check id is documented in the man page" {
	run apcverify --list-checks
	[ "$status" -eq 0 ]
	for id in $(awk '{print $1}' <<<"$output"); do
		grep -q "^\.It Sy $id\$" "$APC_ROOT/man/apcverify.1" || { echo "undocumented: $id"; false; }
	done
}

@test "a cut archive is an [archive] error: exit 1, not 2, and what is left is checked" {
	for ext in tar.gz tar zip; do
		apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/c.apc.$ext"
	done
	# cut in the gzip header: only that
	head -c 5 "$TMP/c.apc.tar.gz" > "$TMP/h.apc.tar.gz"
	run apcverify "$TMP/h.apc.tar.gz"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$TMP/h.apc.tar.gz: error: offset 0x0: truncated gzip stream (the compressed data ends at byte 5) [archive]" ]
	[ "${lines[1]}" = "$TMP/h.apc.tar.gz: 1 error, 0 warnings" ]
	# cut in the data file (captured.xml comes after it): the cut, the
	# missing captured.xml, and the frame the cut went through
	head -c 5000 "$TMP/c.apc.tar" > "$TMP/cut.apc.tar"
	run apcverify "$TMP/cut.apc.tar"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "$TMP/cut.apc.tar: error: offset 0x1388: truncated tar archive: it ends inside the data of c.apc/0000000000 (3976 of its "*" bytes) [archive]" ]]
	grep -q "captured.xml is missing .*\[captured-xml\]$" <<<"$output"
	grep -Eq "^$TMP/cut.apc.tar: frame [0-9]+ @0x[0-9a-f]+: error: truncated archive: the member ends after 3976 of its [0-9]+ bytes \[frame-truncated\]$" <<<"$output"
	# cut in captured.xml: checked no further, a problem all the same
	at=$(python3 -c 'import sys, tarfile
print(tarfile.open(sys.argv[1]).getmember("c.apc/captured.xml").offset_data + 75)' "$TMP/c.apc.tar")
	head -c "$at" "$TMP/c.apc.tar" > "$TMP/x.apc.tar"
	run apcverify "$TMP/x.apc.tar"
	[ "$status" -eq 1 ]
	grep -q "^$TMP/x.apc.tar:captured.xml: error: offset 0x4b: truncated archive: the member ends after 75 of its [0-9]* bytes (not checked; key-undeclared, captured-key-dup and captured-type cannot run; frame-core and msg-core allow 4096 cores, not the target's) \[captured-xml\]$" <<<"$output"
	# and events.xml and session.xml, after it, are told lost
	[ "${lines[-1]}" = "$TMP/x.apc.tar: 4 errors, 0 warnings" ]
	# a zip without its end record: every member whole, one error
	head -c $(($(stat -c %s "$TMP/c.apc.zip") - 22)) "$TMP/c.apc.zip" > "$TMP/cut.apc.zip"
	run apcverify "$TMP/cut.apc.zip"
	[ "$status" -eq 1 ]
	grep -q "^$TMP/cut.apc.zip: error: offset 0x[0-9a-f]*: truncated zip archive: it has no end of central directory record \[archive\]$" <<<"$output"
	[ "${lines[-1]}" = "$TMP/cut.apc.zip: 1 error, 0 warnings" ]
	run apcverify --json "$TMP/cut.apc.zip"
	[ "$status" -eq 1 ]
	python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["ok"] is False and o["io_error"] is None, o
assert [p["check"] for p in o["problems"]] == ["archive"], o
' <<<"$output"
}

@test "a cut archive names each XML file it cut short or took, and the checks left undone" {
	# An archive cut in or before events.xml said nothing of events.xml
	# (nor of session.xml): the captured-type check silently did not run.
	need_python
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/x.apc"
	# the data first, the XML files after it
	tar -cf "$TMP/x.tar" -C "$TMP" x.apc/0000000000 x.apc/captured.xml x.apc/events.xml x.apc/session.xml
	at() { # MEMBER DELTA: the byte DELTA after MEMBER's header begins
		python3 -c 'import sys, tarfile
print(tarfile.open(sys.argv[1]).getmember("x.apc/" + sys.argv[2]).offset + int(sys.argv[3]))' "$TMP/x.tar" "$1" "$2"
	}
	local cap="key-undeclared, captured-key-dup and captured-type cannot run; frame-core and msg-core allow 4096 cores, not the target's"
	local left="is missing from what the damage left of the archive"
	# in events.xml's data
	head -c "$(at events.xml 600)" "$TMP/x.tar" > "$TMP/ev.tar"
	run apcverify "$TMP/ev.tar"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "$TMP/ev.tar: error: offset 0x"*": truncated tar archive: it ends inside the data of x.apc/events.xml (88 of its "*" bytes) [archive]" ]]
	[[ "${lines[1]}" == "$TMP/ev.tar:events.xml: error: offset 0x58: truncated archive: the member ends after 88 of its "*" bytes (not checked; captured-type cannot run) [events-xml]" ]]
	[ "${lines[2]}" = "$TMP/ev.tar: session.xml: error: session.xml $left: no check needs it [archive]" ]
	[ "${lines[3]}" = "$TMP/ev.tar: 3 errors, 0 warnings" ]
	# in events.xml's header, and in the padding before it: events.xml is lost
	for cut in "$(at events.xml 100)" "$(at events.xml -100)"; do
		head -c "$cut" "$TMP/x.tar" > "$TMP/hd.tar"
		run apcverify "$TMP/hd.tar"
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "$TMP/hd.tar: error: offset 0x"*": truncated tar archive: it ends in"*" after x.apc/captured.xml"*" [archive]" ]]
		[ "${lines[1]}" = "$TMP/hd.tar: events.xml: error: events.xml $left: captured-type cannot run [events-xml]" ]
		[ "${lines[2]}" = "$TMP/hd.tar: session.xml: error: session.xml $left: no check needs it [archive]" ]
		[ "${lines[3]}" = "$TMP/hd.tar: 3 errors, 0 warnings" ]
	done
	# in session.xml's data: that one alone
	head -c "$(at session.xml 540)" "$TMP/x.tar" > "$TMP/se.tar"
	run apcverify "$TMP/se.tar"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "$TMP/se.tar:session.xml: error: offset 0x1c: truncated archive: the member ends after 28 of its $(stat -c %s "$TMP/x.apc/session.xml") bytes (not checked; no check needs it) [archive]" ]
	[ "${lines[2]}" = "$TMP/se.tar: 2 errors, 0 warnings" ]
	# in the data file: all three, in the order a capture has them
	head -c "$(at 0000000000 5000)" "$TMP/x.tar" > "$TMP/d.tar"
	run apcverify --json "$TMP/d.tar"
	[ "$status" -eq 1 ]
	python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
got = [(p["member"], p["check"], p["message"]) for p in o["problems"] if p["member"]]
left = "is missing from what the damage left of the archive: "
want = [("captured.xml", "captured-xml", "captured.xml " + left + sys.argv[1]),
        ("events.xml", "events-xml", "events.xml " + left + "captured-type cannot run"),
        ("session.xml", "archive", "neither session.xml nor counters.xml (gatord\x27s) is in what the damage left of the archive: no check needs them")]
assert got == want, got
assert [p["check"] for p in o["problems"]] == ["archive", "captured-xml", "events-xml", "archive", "frame-truncated"], o
' "$cap" <<<"$output"
	# the same capture whole, as a tar in that order: nothing to say
	run apcverify "$TMP/x.apc"
	whole="${output#"$TMP/x.apc: "}"
	[[ "$whole" == "ok ("*" frames)" ]]
	run apcverify "$TMP/x.tar"
	[ "$status" -eq 0 ]
	[ "$output" = "$TMP/x.tar: $whole" ]
}

@test "a cut gatord capture (local_capture, counters.xml): counters.xml told lost, not session.xml" {
	need_shared
	need_python
	cp -r "$SHARED/apc/v68_sleep.apc" "$TMP/g.apc"
	grep -q 'local_capture="yes"' "$TMP/g.apc/captured.xml"
	tar -cf "$TMP/g.tar" -C "$TMP" g.apc/0000000000 g.apc/captured.xml g.apc/events.xml g.apc/counters.xml
	n=$(python3 -c 'import sys, tarfile
print(tarfile.open(sys.argv[1]).getmember("g.apc/events.xml").offset + 100)' "$TMP/g.tar")
	head -c "$n" "$TMP/g.tar" > "$TMP/gc.tar"
	run apcverify "$TMP/gc.tar"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "$TMP/gc.tar: events.xml: error: events.xml is missing from what the damage left of the archive: captured-type cannot run [events-xml]" ]
	[ "${lines[2]}" = "$TMP/gc.tar: counters.xml: error: counters.xml is missing from what the damage left of the archive: no check needs it [archive]" ]
	[[ "${lines[3]}" == "$TMP/gc.tar: frame 18 @0x534759: warning: "*"[ext-empty]" ]]
	[ "${lines[4]}" = "$TMP/gc.tar: 3 errors, 1 warning" ]
	# whole, it has no session.xml to lose
	run apcverify "$TMP/g.tar"
	[ "${lines[1]}" = "$TMP/g.tar: ok (20 frames, 1 warning)" ]
}

@test "a cut or damaged .apc.tar.bz2, .xz, .zst or .lz4, or a .tar.gz with a bad CRC, is an [archive] error" {
	local found=0 n sz
	"$APC_TOOLS/barmangen" -o "$TMP/b.bin" --seed 5 --records 10000 --buffer 1000000
	apcconv -q "$TMP/b.bin" -o "$TMP/c.apc.tar"
	for c in "bzip2 -1:bz2:bzip2" "xz:xz:xz" "zstd -q:zst:zstd" "lz4 -q -B4:lz4:lz4"; do
		IFS=: read -r prog ext name <<<"$c"
		if ! command -v "${prog%% *}" >/dev/null; then
			echo "# ${prog%% *} is not installed: .tar.$ext not tested" >&3
			continue
		fi
		found=1
		$prog -c "$TMP/c.apc.tar" > "$TMP/c.apc.tar.$ext"
		apcverify -q "$TMP/c.apc.tar.$ext"
		sz=$(stat -c %s "$TMP/c.apc.tar.$ext")
		n=$((sz * 2 / 3))
		head -c $n "$TMP/c.apc.tar.$ext" > "$TMP/cut.apc.tar.$ext"
		run apcverify "$TMP/cut.apc.tar.$ext"
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "$TMP/cut.apc.tar.$ext: error: offset 0x"*": truncated $name stream (the compressed data ends at byte $n); truncated tar archive: it ends inside the data of c.apc/0000000000 ("*" bytes) [archive]" ]]
		# cut in its first kilobyte: in the first block, or just after
		head -c 1000 "$TMP/c.apc.tar.$ext" > "$TMP/h.apc.tar.$ext"
		run apcverify "$TMP/h.apc.tar.$ext"
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "$TMP/h.apc.tar.$ext: error: offset 0x"*": truncated $name stream (the compressed data ends at byte 1000)"*" [archive]" ]]
		# bytes flipped half way
		cp "$TMP/c.apc.tar.$ext" "$TMP/bad.apc.tar.$ext"
		printf '\125\252\125\252\125\252\125\252' | dd of="$TMP/bad.apc.tar.$ext" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
		run timeout 60 "$APC_BIN/apcverify" "$TMP/bad.apc.tar.$ext"
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "$TMP/bad.apc.tar.$ext: error: offset 0x"*": $name data corrupt before compressed byte "*" [archive]" ]]
	done
	[ "$found" -eq 1 ] || skip "none of bzip2, xz, zstd, lz4 is installed"
	# gzip's CRC (the 4 bytes before its last 4) is checked: libarchive,
	# which reads the members, does not
	gzip -c "$TMP/c.apc.tar" > "$TMP/crc.apc.tar.gz"
	sz=$(stat -c %s "$TMP/crc.apc.tar.gz")
	printf '\377' | dd of="$TMP/crc.apc.tar.gz" bs=1 seek=$((sz - 8)) conv=notrunc 2>/dev/null
	run apcverify "$TMP/crc.apc.tar.gz"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "$TMP/crc.apc.tar.gz: error: offset 0x"*": gzip data corrupt at compressed byte "*" (incorrect data check) [archive]" ]]
}

@test "a trace apcconv converts is named as such, not checked as frames: exit 2" {
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/barmangen" -o "$TMP/b.bin" --seed 2 --records 50 >/dev/null
	"$APC_TOOLS/lttgen" --seed 3 --events 30 -o "$TMP/ltt" >/dev/null
	"$APC_TOOLS/tptpgen" --seed 4 --calls 5 -o "$TMP/t.trcxml" >/dev/null
	for f in b.bin:barman ltt:ltt t.trcxml:tptp-xml; do
		verify 2 "$TMP/${f%%:*}"
		[ "$output" = "apcverify: $TMP/${f%%:*}: not an APC capture but ${f#*:} input: convert it with apcconv first" ]
	done
	verify 2 - <"$TMP/b.bin"
	[ "$output" = "apcverify: <stdin>: not an APC capture but barman input: convert it with apcconv first" ]
	# an archive on stdin is named so too, not "-"
	tar -C "$TMP" -czf "$TMP/ltt.tgz" ltt
	verify 2 - <"$TMP/ltt.tgz"
	[ "$output" = "apcverify: <stdin>: not an APC capture but ltt input: convert it with apcconv first" ]
	run apcverify --json "$TMP/b.bin"
	[ "$status" -eq 2 ]
	grep -qF '"ok":false,' <<<"$output"
	grep -qF '"io_error":"not an APC capture but barman input: convert it with apcconv first"}' <<<"$output"
	# only when the first frame is bad: a Barman magic in a good first
	# frame (a thread's name) is checked as the capture it is
	printf '\x12\x00\x00\x00\x03\x00\x02\x00\x05\x0cBARMAN64\x00\x00\x00\x03' >"$TMP/name"
	verify 1 "$TMP/name"
	[[ "$output" == *"[summary-missing]"* ]]
	[[ "$output" != *"not an APC capture"* ]]
}

@test "a negative key is shown signed; counts of one are singular" {
	need_python
	mkdir "$TMP/neg.apc" "$TMP/one.apc"
	python3 - "$TMP/neg.apc" "$TMP/one.apc" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
# a Counter message (time 30, core 0) of key -1
write_cap(sys.argv[1], frames([summary(), block_counter(), p(4) + p(30) + p(0) + p(-1) + p(7)]))
# one frame: a perf-mode capture with only its Summary
write_cap(sys.argv[2], frames([summary()]))
with open(sys.argv[2] + "/captured.xml", "w") as f:
    f.write('<?xml version="1.0"?>\n<captured version="1" protocol="680" type="Perf"><counters/></captured>\n')
EOF2
	verify 1 "$TMP/neg.apc"
	grep -Eq '^[^ ]*neg.apc: frame 2 @0x[0-9a-f]+: error: counter key -1 is not declared in captured.xml \[key-undeclared\]$' <<<"$output"
	verify 0 "$TMP/one.apc"
	[ "${lines[-1]}" = "$TMP/one.apc: ok (1 frame, 1 warning)" ]
	rm "$TMP/one.apc/captured.xml"
	verify 1 --max-errors=1 "$TMP/one.apc"
	[ "${lines[-2]}" = "$TMP/one.apc: listing stopped after 1 error" ]
	# apcdump --summary: the same key, and counts of one
	exits 0 apcdump --summary "$TMP/neg.apc"
	grep -q '^    1 summary  *1 frame  *1 message$' <<<"$output"
	grep -q '^  key -1  *(unnamed)  *1 value  (not in captured.xml)$' <<<"$output"
	grep -q '^  key 0x11  *T_cnt0  *1 value$' <<<"$output"
	grep -q '^  core 0  *2 messages$' <<<"$output"
}

@test "a timestamp before the capture's start is a warning [ts-before-start]" {
	need_python
	mkdir "$TMP/early.apc" "$TMP/ann.apc"
	python3 - "$TMP/early.apc" "$TMP/ann.apc" <<'EOF2'
import os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
# a Counter message (core 0, key 0x11) at time -5: before the start
write_cap(sys.argv[1], frames([summary(), p(4) + p(-5) + p(0) + p(0x11) + p(7),
                               p(4) + p(20) + p(0) + p(0x11) + p(8)]))
# an annotate v5 string at absolute time 50 and one at 150: the Summary's
# monotonic delta is 100, so the first is 50 ns before the start
def msg(code, body):
    return bytes([code]) + struct.pack("<I", len(body)) + body
ann = b"ANNOTATE 5\n" + struct.pack("<II", 7, 7) + b"\0"
ann += msg(0x01, p(50) + p(0) + b"early") + msg(0x01, p(150) + p(0) + b"late")
write_cap(sys.argv[2], frames([summary(), block_counter(), p(10) + p(1) + ann]))
EOF2
	verify 0 "$TMP/early.apc"
	grep -Eq '^[^ ]*early.apc: frame 1 @0x[0-9a-f]+: warning: counter timestamp -5 is before the capture.s start \[ts-before-start\]$' <<<"$output"
	verify 0 "$TMP/ann.apc"
	grep -Eq 'warning: annotate str on fd 1, stream offset 0x[0-9a-f]+: time 50 is 50 ns before the capture.s start \[ts-before-start\]$' <<<"$output"
	[ "$(grep -c 'ts-before-start' <<<"$output")" -eq 1 ]
	verify 1 --strict "$TMP/ann.apc"
	apcverify --list-checks | grep -q '^ts-before-start  *warning'
}

@test "a string overrun counts the bytes after its length field" {
	need_python
	mkdir "$TMP/x.apc"
	python3 - "$TMP/x.apc" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
# a thread name of length 128 (a 2-byte packed length) with 2 bytes after it
body = p(3) + p(0) + p(2) + p(10) + p(42) + p(128) + b"ab"
assert len(p(128)) == 2
write_cap(sys.argv[1], frames([summary(), block_counter(), body]))
EOF2
	verify 1 "$TMP/x.apc"
	grep -Eq '^[^ ]*x.apc: frame 2 @0x[0-9a-f]+: error: thread name length 128 runs past the end of the frame \(2 bytes follow the length field\) \[string-overrun\]$' <<<"$output"
}

@test "gatord 6.8 Proc frames: their messages are walked, faults get their own check, not [decode]" {
	need_python
	mkdir "$TMP/ok.apc" "$TMP/unk.apc" "$TMP/nul.apc" "$TMP/cut.apc" "$TMP/neg.apc" "$TMP/attr.apc"
	python3 - "$TMP" <<'EOF2'
import os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
t = sys.argv[1]
def proc(*msgs):  # a Proc frame on core 0 (protocol 680: gatord 6.8's messages)
    return p(11) + p(0) + b"".join(msgs)
good = [p(5) + p(42) + p(43) + b"/bin/img\0" + b"img\0",  # Comm
        p(9) + b"ffff0000 T _stext\n\0",                   # kallsyms
        p(10) + p(25) + p(0) + p(0x11) + p(7) + p(-1),    # counters at time 25
        p(1) + struct.pack("<II", 4, 8) + p(0x11),        # a perf_event_attr of 8 bytes
        p(2) + p(1) + p(123) + p(0x11)]                   # one (id, key)
cases = {"ok": proc(*good),
         "unk": proc(good[0], p(63) + b"junk"),
         "nul": proc(good[0], p(9) + b"no terminator"),
         "cut": proc(good[0], p(10) + b"\x80"),
         "neg": proc(p(2) + p(-3)),
         "attr": proc(p(1) + struct.pack("<II", 4, 64) + b"short")}
for name, body in cases.items():
    write_cap(t + "/" + name + ".apc", frames([summary(), body, block_counter()]))
EOF2
	verify 0 "$TMP/ok.apc"
	[ "$output" = "$TMP/ok.apc: ok (3 frames)" ]
	# an unknown code: as in any other frame, a warning and the rest skipped
	verify 0 "$TMP/unk.apc"
	grep -Eq '^[^ ]*unk.apc: frame 1 @0x[0-9a-f]+: warning: unknown message code 63 in a proc frame \(rest of the frame skipped\) \[unknown-msg\]$' <<<"$output"
	verify 1 "$TMP/nul.apc"
	grep -Eq 'frame 1 @0x[0-9a-f]+: error: kallsyms has no terminating NUL before the end of the frame \(13 bytes left\) \[string-overrun\]$' <<<"$output"
	verify 1 "$TMP/cut.apc"
	grep -Eq 'frame 1 @0x[0-9a-f]+: error: frame ends inside timestamp \(1 byte left\) \[packed-truncated\]$' <<<"$output"
	verify 1 "$TMP/neg.apc"
	grep -Eq 'frame 1 @0x[0-9a-f]+: error: perf id count -3 is negative \[string-overrun\]$' <<<"$output"
	verify 1 "$TMP/attr.apc"
	grep -Eq 'frame 1 @0x[0-9a-f]+: error: perf_event_attr size 64 runs past the end of the frame \(13 bytes left\) \[string-overrun\]$' <<<"$output"
	run apcverify "$TMP/unk.apc" "$TMP/nul.apc" "$TMP/cut.apc" "$TMP/neg.apc" "$TMP/attr.apc"
	! grep -q '\[decode\]' <<<"$output"
}

@test "perf data frames are read chunk by chunk: [perf-chunk], a record past its chunk, a chunk's CPU; frames 14 and 15" {
	need_python
	python3 - "$TMP" <<'EOF2'
import os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, summary, block_counter, frames, write_cap
t = sys.argv[1]
# a context switch (40 bytes: four words after its header), then a sample
recs = p(14 | 40 << 48) + p(0x4a91) + p(100) + p(0x18) + p(0x18) + p(9 | 1 << 32 | 16 << 48) + p(7)
chunk = lambda words, extra=0: struct.pack("<I", len(words) + extra) + words
cases = {"ok": p(12) + p(0) + chunk(recs) + p(1) + chunk(recs),   # 6.8: a second CPU's chunk
         "over": p(12) + p(0) + chunk(recs, 1),
         "short": p(12) + p(0) + chunk(recs, -1) + b"\x07",
         "len": p(12) + p(0) + b"\x01\x00",
         "cpu": p(12) + p(0) + chunk(recs) + p(5000) + chunk(recs),
         "aux": p(14) + p(1) + p(4096) + s(b"spe"),
         "sync": p(15) + p(0) + p(100) + p(101) + p(25000000) + p(123456789) + p(987654),
         "auxcut": p(14) + p(1) + p(4096) + p(9) + b"spe"}
for name, body in cases.items():
    os.mkdir(t + "/" + name + ".apc")
    write_cap(t + "/" + name + ".apc", frames([summary(), body, block_counter()]))
EOF2
	for c in ok aux sync; do
		verify 0 "$TMP/$c.apc"
		[ "$output" = "$TMP/$c.apc: ok (3 frames)" ]
	done
	verify 1 "$TMP/over.apc"
	grep -Eq 'over.apc: frame 1 @0x[0-9a-f]+: error: perf data chunk of 25 bytes runs past the end of the frame \(24 bytes follow its length\) \[perf-chunk\]$' <<<"$output"
	verify 1 "$TMP/short.apc"
	grep -Eq 'short.apc: frame 1 @0x[0-9a-f]+: error: perf data chunk ends inside a perf record word \(0 bytes left\) \[packed-truncated\]$' <<<"$output"
	verify 1 "$TMP/len.apc"
	grep -Eq "len.apc: frame 1 @0x[0-9a-f]+: error: frame ends inside a perf data chunk's 4-byte length \(2 bytes left\) \[perf-chunk\]$" <<<"$output"
	verify 1 "$TMP/cpu.apc"
	grep -Eq 'cpu.apc: frame 1 @0x[0-9a-f]+: error: perf data chunk has core 5000, beyond the 4096 cores any capture is read with \[msg-core\]$' <<<"$output"
	verify 1 "$TMP/auxcut.apc"
	grep -q 'aux data length 9 runs past the end of the frame (3 bytes follow the length field) \[string-overrun\]$' <<<"$output"
	# the listing's decoder and the checks agree (no [decode] finding)
	run apcverify "$TMP/over.apc" "$TMP/short.apc" "$TMP/len.apc" "$TMP/cpu.apc" "$TMP/auxcut.apc"
	! grep -q '\[decode\]' <<<"$output" || false
	# apcdump lists the good chunks' records, each on its CPU
	exits 0 apcdump --frame=perf_data "$TMP/ok.apc"
	[ "$(grep -c ' perf_data *0 perf_switch .*words=\[0x4a91,0x64,0x18,0x18\]$' <<<"$output")" = 1 ]
	[ "$(grep -c ' perf_data *1 perf_sample *misc=0x1 size=16 words=\[0x7\]$' <<<"$output")" = 1 ]
}

@test "a frame header's core that is negative or beyond the core count is [frame-core]; its messages are not read" {
	need_python
	mkdir "$TMP/neg.apc" "$TMP/big.apc" "$TMP/decl.apc"
	python3 - "$TMP" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
t = sys.argv[1]
# the Block Counter frame of the audit: core -1015595, then what would
# read as undeclared keys
write_cap(t + "/neg.apc", frames([summary(), block_counter(),
                                  p(5) + p(-1015595) + p(0) + p(30) + p(-8145) + p(1) + p(0x9fd8) + p(2)]))
write_cap(t + "/big.apc", frames([summary(), block_counter(), block_counter(core=5000, ts=30)]))
# captured.xml's target has 2 cores: core 1 is fine, core 2 is not
write_cap(t + "/decl.apc", frames([summary(), block_counter(core=1), block_counter(core=2, ts=30)]))
with open(t + "/decl.apc/captured.xml", "w") as f:
    f.write('<?xml version="1.0"?>\n<captured version="1" protocol="680" type="Gator">'
            '<target cores="2"/><counters><counter key="0x11" type="T_cnt0"/></counters></captured>\n')
EOF2
	verify 1 "$TMP/neg.apc"
	grep -Eq '^[^ ]*neg.apc: frame 2 @0x[0-9a-f]+: error: block_counter frame header has core -1015595, which is negative \(the frame.s messages are not read\) \[frame-core\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/neg.apc: 1 error, 0 warnings" ]
	verify 1 "$TMP/big.apc"
	grep -Eq 'frame 2 @0x[0-9a-f]+: error: block_counter frame header has core 5000, beyond the 4096 cores any capture is read with \(the frame.s messages are not read\) \[frame-core\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/big.apc: 1 error, 0 warnings" ]
	verify 1 "$TMP/decl.apc"
	grep -Eq 'frame 2 @0x[0-9a-f]+: error: block_counter frame header has core 2, but captured.xml.s target has 2 cores \(the frame.s messages are not read\) \[frame-core\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/decl.apc: 1 error, 0 warnings" ]
	apcverify --list-checks | grep -q '^frame-core  *error'
}

@test "captured.xml declaring a reserved (0-2) or negative key is a [captured-xml] error" {
	make_cap "$TMP/x.apc"
	cat >"$TMP/x.apc/captured.xml" <<'EOF2'
<?xml version="1.0"?>
<captured version="1" protocol="680" type="Gator"><counters>
<counter key="0x11" type="T_cnt0"/>
<counter key="0x2" type="T_cnt1"/>
<counter key="-7" type="T_cnt2"/>
</counters></captured>
EOF2
	verify 1 "$TMP/x.apc"
	grep -q '^[^ ]*x.apc/captured.xml: error: line 4: counter key 0x2 is reserved (keys are above 2; 0-2 are the block counter timestamp, pid and core) \[captured-xml\]$' <<<"$output"
	grep -q '^[^ ]*x.apc/captured.xml: error: line 5: counter key -7 is negative (keys are above 2; 0-2 are the block counter timestamp, pid and core) \[captured-xml\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/x.apc: 2 errors, 0 warnings" ]
}

@test "an annotate setup of an unknown version says so, as apcdump does" {
	need_python
	mkdir "$TMP/a9.apc" "$TMP/junk.apc"
	python3 - "$TMP" <<'EOF2'
import os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
t = sys.argv[1]
setup = struct.pack("<II", 7, 7) + b"\0"
write_cap(t + "/a9.apc", frames([summary(), block_counter(), p(10) + p(1) + b"ANNOTATE 9\n" + setup]))
write_cap(t + "/junk.apc", frames([summary(), block_counter(), p(10) + p(1) + b"ANNOTATX 5\n" + setup]))
EOF2
	verify 1 "$TMP/a9.apc"
	grep -Eq '^[^ ]*a9.apc: frame 2 @0x[0-9a-f]+: error: annotate stream on fd 1: unsupported annotate protocol version .9. \[annotate-setup\]$' <<<"$output"
	verify 1 "$TMP/junk.apc"
	grep -q 'error: annotate stream on fd 1 does not begin with "ANNOTATE N\\n" \[annotate-setup\]$' <<<"$output"
}

@test "Links and task exits out of order are told without a core (they have none)" {
	need_python
	mkdir "$TMP/x.apc"
	python3 - "$TMP/x.apc" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
# a Link (code 1: ts, cookie, pid, tid) at 50, then a task exit (code 3: ts, tid) at 40
write_cap(sys.argv[1], frames([summary(), block_counter(),
                               p(13) + p(1) + p(50) + p(0) + p(42) + p(42),
                               p(13) + p(3) + p(40) + p(42)]))
EOF2
	verify 1 "$TMP/x.apc"
	grep -Eq '^[^ ]*x.apc: frame 3 @0x[0-9a-f]+: error: activity_trace link or task exit timestamp 40 is 10 ns before the one in frame 2 \[ts-core\]$' <<<"$output"
	! grep -q 'core -1' <<<"$output"
}

@test "--max-errors out of range is a usage error, not a silent limit" {
	make_cap "$TMP/x.apc"
	run apcverify --max-errors=99999999999999999999 "$TMP/x.apc"
	echo "$output"
	[ "$status" -eq 2 ]
	[ "$output" = "apcverify: --max-errors: '99999999999999999999' is out of range (at most 9223372036854775807)
Try 'apcverify --help' for more information." ]
	verify 0 --max-errors=9223372036854775807 "$TMP/x.apc"
}

@test "gatord 6.8 Proc frame times (online/offline CPU, perf counters) are ordered in the frame and per core" {
	need_python
	mkdir "$TMP/ok.apc" "$TMP/late.apc" "$TMP/frame.apc" "$TMP/core.apc" "$TMP/neg.apc"
	python3 - "$TMP" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
t = sys.argv[1]
def proc(*msgs):  # a Proc frame on core 0 (protocol 680: gatord 6.8's messages)
    return p(11) + p(0) + b"".join(msgs)
def online(ts, cpu): return p(7) + p(ts) + p(cpu)
def offline(ts, cpu): return p(8) + p(ts) + p(cpu)
def counters(ts, *cv): return p(10) + p(ts) + b"".join(p(c) + p(0x11) + p(v) for c, v in cv) + p(-1)
# as gatord writes them: the run at the start, then a CPU going
# offline, then online with its counters read at the same time
ok = [proc(counters(25, (0, 1), (1, 2))), proc(offline(60, 1)),
      proc(online(70, 1), counters(70, (1, 3)))]
cases = {"ok": ok,
         "frame": [proc(online(50, 1), counters(40, (1, 3)))],
         "core": [proc(online(50, 1)), proc(offline(40, 1))],
         "neg": [proc(counters(-5, (0, 1)))]}
for name, bodies in cases.items():
    write_cap(t + "/" + name + ".apc", frames([summary(), block_counter()] + bodies))
# a block counter at 20 after them: the Proc frame's core (always 0 in
# gatord) names no CPU, so this is no cross-type regression on core 0
write_cap(t + "/late.apc", frames([summary()] + ok + [block_counter()]))
EOF2
	verify 0 "$TMP/ok.apc"
	[ "$output" = "$TMP/ok.apc: ok (5 frames)" ]
	verify 0 "$TMP/late.apc"
	[ "$output" = "$TMP/late.apc: ok (5 frames)" ]
	verify 1 "$TMP/frame.apc"
	grep -Eq '^[^ ]*frame.apc: frame 2 @0x[0-9a-f]+: error: timestamp 40 is 10 ns before the previous one in the same frame \[ts-frame\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/frame.apc: 1 error, 0 warnings" ]
	verify 1 "$TMP/core.apc"
	grep -Eq '^[^ ]*core.apc: frame 3 @0x[0-9a-f]+: error: proc timestamp 40 on core 0 is 10 ns before the one in frame 2 \[ts-core\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/core.apc: 1 error, 0 warnings" ]
	verify 0 "$TMP/neg.apc"
	grep -Eq '^[^ ]*neg.apc: frame 2 @0x[0-9a-f]+: warning: proc timestamp -5 is before the capture.s start \[ts-before-start\]$' <<<"$output"
}

@test "a core inside a message that is negative or beyond the core count is [msg-core]; the message is still read" {
	need_python
	mkdir "$TMP/decl.apc" "$TMP/neg.apc" "$TMP/any.apc" "$TMP/ok.apc"
	python3 - "$TMP" <<'EOF2'
import os, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, summary, block_counter, frames, write_cap
t = sys.argv[1]
def counter(ts, core): return p(4) + p(ts) + p(core) + p(0x14) + p(7)
def idle(ts, core): return p(9) + p(1) + p(ts) + p(core)
def switch(ts, core): return p(13) + p(2) + p(ts) + p(core) + p(0x11) + p(1) + p(42) + p(0)
def proc(*msgs): return p(11) + p(0) + b"".join(msgs)
def bad(core):  # one of each message with a core, all on `core`
    return [p(5) + p(0) + p(0) + p(30) + p(2) + p(core) + p(0x12) + p(5),  # block counter key 2
            counter(40, core), idle(50, core), switch(60, core),
            proc(p(7) + p(70) + p(core)),                                  # online cpu
            # perf counters: core -1 ends the run, so -2 stands for it
            proc(p(10) + p(80) + p(0) + p(0x13) + p(1) + p(core if core != -1 else -2) + p(0x13) + p(2) + p(-1))]
# captured.xml's target has 2 cores: 1 is the last one
xml = ('<?xml version="1.0"?>\n<captured version="1" protocol="680" type="Gator">'
       '<target cores="2"/><counters><counter key="0x11" type="T_cnt0"/>'
       '<counter key="0x12" type="T_cnt1"/><counter key="0x13" type="T_cnt2"/><counter key="0x14" type="T_cnt3"/></counters></captured>\n')
for name, core in (("decl", 2), ("neg", -1), ("any", 5000), ("ok", 1)):
    write_cap(t + "/" + name + ".apc", frames([summary(), block_counter()] + bad(core)))
    if name != "any":
        with open(t + "/" + name + ".apc/captured.xml", "w") as f:
            f.write(xml)
    else:
        with open(t + "/any.apc/captured.xml", "w") as f:
            f.write(xml.replace('<target cores="2"/>', ''))
EOF2
	verify 0 "$TMP/ok.apc"
	[ "$output" = "$TMP/ok.apc: ok (8 frames)" ]
	verify 1 "$TMP/decl.apc"
	for m in "2 @0x[0-9a-f]+: error: block counter key 2" "3 @0x[0-9a-f]+: error: counter message" \
	         "4 @0x[0-9a-f]+: error: idle message" "5 @0x[0-9a-f]+: error: activity switch" \
	         "6 @0x[0-9a-f]+: error: online cpu message" "7 @0x[0-9a-f]+: error: perf counter"; do
		grep -Eq "^[^ ]*decl.apc: frame $m has core 2, but captured.xml.s target has 2 cores \[msg-core\]$" <<<"$output"
	done
	# only those: the messages are read on (no other check fires)
	[ "${lines[-1]}" = "$TMP/decl.apc: 6 errors, 0 warnings" ]
	verify 1 "$TMP/neg.apc"
	grep -Eq '^[^ ]*neg.apc: frame 3 @0x[0-9a-f]+: error: counter message has core -1, which is negative \[msg-core\]$' <<<"$output"
	grep -Eq '^[^ ]*neg.apc: frame 5 @0x[0-9a-f]+: error: activity switch has core -1, which is negative \[msg-core\]$' <<<"$output"
	grep -Eq '^[^ ]*neg.apc: frame 7 @0x[0-9a-f]+: error: perf counter has core -2, which is negative \[msg-core\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/neg.apc: 6 errors, 0 warnings" ]
	# no <target cores>: the most any capture is read with
	verify 1 "$TMP/any.apc"
	grep -Eq '^[^ ]*any.apc: frame 7 @0x[0-9a-f]+: error: perf counter has core 5000, beyond the 4096 cores any capture is read with \[msg-core\]$' <<<"$output"
	[ "${lines[-1]}" = "$TMP/any.apc: 6 errors, 0 warnings" ]
	apcverify --list-checks | grep -q '^msg-core  *error'
}

# demo_cap DIR: the bundled Barman sample converted, a small whole capture
demo_cap() {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$1"
}

@test "standard input is <stdin> in every text line; --json keeps the argument, -" {
	demo_cap "$TMP/d.apc"
	exits 0 apcverify - <"$TMP/d.apc/0000000000"
	[ "${lines[0]}" = "<stdin>: captured.xml: warning: no captured.xml beside a bare data file: key declarations not checked [captured-xml]" ]
	[[ "${lines[1]}" == "<stdin>: ok ("*" frames, 1 warning)" ]]
	sed -i '3s/<target /<target/' "$TMP/d.apc/captured.xml"
	tar -cf "$TMP/d.tar" -C "$TMP" d.apc
	exits 1 apcverify - <"$TMP/d.tar"
	[ "${lines[0]}" = "<stdin>:captured.xml: error: line 3: not well-formed XML: couldn't find end of Start Tag targetname [captured-xml]" ]
	[ "${lines[1]}" = "<stdin>: 1 error, 0 warnings" ]
	exits 1 apcverify --json - <"$TMP/d.tar"
	[[ "$output" == '{"file":"-",'* ]]
}

@test "a broken captured.xml or events.xml: FILE is the file, libxml2's words once" {
	demo_cap "$TMP/bx.apc"
	sed -i '3s/<target /<target/' "$TMP/bx.apc/captured.xml"
	cd "$TMP"
	exits 1 apcverify bx.apc
	[ "${lines[0]}" = "bx.apc/captured.xml: error: line 3: not well-formed XML: couldn't find end of Start Tag targetname [captured-xml]" ]
	[ "${lines[1]}" = "bx.apc: 1 error, 0 warnings" ]
	# the JSON message is the same words; member and file as before
	exits 1 apcverify --json bx.apc
	[[ "$output" == *'"member":"captured.xml","severity":"error","check":"captured-xml","message":"line 3: not well-formed XML: couldn'"'"'t find end of Start Tag targetname"}'* ]]
	# apcdump says the same of it
	run apcdump --xml bx.apc
	[ "$output" = "apcdump: bx.apc/captured.xml: line 3: not well-formed XML: couldn't find end of Start Tag targetname" ]
	demo_cap "$TMP/be.apc"
	sed -i '0,/<event /s/<event /<event/' "$TMP/be.apc/events.xml"
	exits 1 apcverify be.apc
	[[ "${lines[0]}" == "be.apc/events.xml: error: line "*": not well-formed XML: couldn't find end of Start Tag event"*" [events-xml]" ]]
	[[ "${lines[0]}" != *" line "*" line "* ]]
	# cut short: the line of the tag left open is kept (another line)
	demo_cap "$TMP/c.apc"
	head -c 300 "$TMP/be.apc/captured.xml" >"$TMP/c.apc/captured.xml"
	exits 1 apcverify c.apc
	[[ "${lines[0]}" == "c.apc/captured.xml: error: line 5: not well-formed XML: premature end of data in tag counters line 4 [captured-xml]" ]]
}

@test "a folder that is no capture is the wrong input (exit 2); one that lost its data is damage (exit 1): all tools" {
	mkdir "$TMP/none" "$TMP/nodata.apc" "$TMP/dirdata.apc"
	touch "$TMP/none/other.txt"
	demo_cap "$TMP/d.apc"
	cp "$TMP/d.apc/captured.xml" "$TMP/nodata.apc/"
	cp "$TMP/d.apc/captured.xml" "$TMP/dirdata.apc/"
	mkdir "$TMP/dirdata.apc/0000000000"
	cd "$TMP"
	for p in apcverify apcdump; do
		exits 2 "$p" none
		[ "$output" = "$p: none: not an .apc capture (no captured.xml, no 0000000000 data file)" ]
	done
	# apcconv told to read it as a capture says the same, and writes nothing
	exits 2 apcconv -f apc none -o out
	[ "$output" = "apcconv: none: not an .apc capture (no captured.xml, no 0000000000 data file)" ]
	[ ! -e out.apc ]
	exits 1 apcverify nodata.apc
	[ "${lines[0]}" = "nodata.apc: error: no 0000000000 data file in the capture [data-file]" ]
	exits 1 apcdump nodata.apc
	[ "$output" = "apcdump: nodata.apc: no 0000000000 data file in the capture" ]
	exits 1 apcverify dirdata.apc
	[ "${lines[0]}" = "dirdata.apc: error: 0000000000 is a directory, not a data file [data-file]" ]
	exits 1 apcdump dirdata.apc
	[ "$output" = "apcdump: dirdata.apc: 0000000000 is a directory, not a data file" ]
	# a directory with files under it, and in an archive
	touch dirdata.apc/0000000000/x
	tar -cf dirdata.tar dirdata.apc
	exits 1 apcverify dirdata.tar
	[ "${lines[0]}" = "dirdata.tar: error: 0000000000 is a directory, not a data file [data-file]" ]
	# with --json, the wrong input is an io_error, as any unreadable one
	exits 2 apcverify --json none
	[[ "${lines[-1]}" == '{"file":"none","problems":[],"ok":false,'*'"io_error":"not an .apc capture (no captured.xml, no 0000000000 data file)"}' ]]
}

@test "bad counts: the option named, the value quoted, and the --help hint, as apcdump" {
	for v in -1 x 1.5 ''; do
		exits 2 apcverify --max-errors="$v" x
		[ "$output" = "apcverify: --max-errors: '$v' is not a count (a whole number, 0 or more)
Try 'apcverify --help' for more information." ]
	done
}

@test "-j is --json" {
	demo_cap "$TMP/d.apc"
	want=$(apcverify --json "$TMP/d.apc")
	exits 0 apcverify -j "$TMP/d.apc"
	[ "$output" = "$want" ]
	apcverify --help | grep -q -- '-j, --json'
}

@test "many captures end with one total line (not with -q, not in --json)" {
	demo_cap "$TMP/a.apc"
	demo_cap "$TMP/b.apc"
	mkdir "$TMP/none"
	cd "$TMP"
	exits 2 apcverify a.apc b.apc none
	[ "${lines[-1]}" = "3 captures: 2 ok, 1 failed" ]
	exits 0 apcverify a.apc b.apc
	[ "${lines[-1]}" = "2 captures: 2 ok, 0 failed" ]
	# one capture: its own line says it
	exits 0 apcverify a.apc
	[ "${#lines[@]}" -eq 1 ]
	exits 2 apcverify -q a.apc b.apc none
	[ -z "$output" ]
	run apcverify --json a.apc b.apc
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == '{"file":"b.apc",'* ]]
}

@test "each man page's SYNOPSIS lists every option its --help lists" {
	need_python
	for p in apcverify apcdump apcrecord; do
		"$APC_BIN/$p" --help | python3 -c '
import re, sys
man = open(sys.argv[1]).read()
syn = man[man.index(".Sh SYNOPSIS"):man.index(".Sh DESCRIPTION")]
shorts = set("".join(re.findall(r"Fl ([A-Za-z]+)\b", syn)))
longs = set(re.findall(r"Fl -([a-z][a-z-]*)", syn))
missing = []
for line in sys.stdin:
    if not re.match(r"\s+-", line):
        continue
    opts = re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", re.split(r"\s{2,}", line.strip())[0])
    short = [o[1] for o in opts if not o.startswith("--")]
    for o in opts:
        if o.startswith("--") and o[2:] not in longs and not (short and short[0] in shorts):
            missing.append(o)
        elif not o.startswith("--") and o[1] not in shorts and not any(
                l.startswith("--") and l[2:] in longs for l in opts):
            missing.append(o)
assert not missing, (sys.argv[1], missing)
' "$APC_ROOT/man/$p.1"
	done
}

@test "every man page formats with no groff warning" {
	command -v groff >/dev/null 2>&1 || skip "no groff on this machine (apt-get install groff-base)"
	for m in "$APC_ROOT"/man/*.[15]; do
		run sh -c 'groff -man -ww -z "$1" 2>&1' sh "$m"
		[ "$status" -eq 0 ]
		[ -z "$output" ] || { echo "$m: $output"; false; }
	done
}

@test "a stretch of zero bytes in the data file is one frame-empty warning, not one per 4 bytes" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/z.apc"
	frames=$(apcdump --summary "$TMP/z.apc" | sed -n 's/^Frames: *//p')
	end=$(stat -c %s "$TMP/z.apc/0000000000")
	head -c 100000 /dev/zero >>"$TMP/z.apc/0000000000"
	verify 0 "$TMP/z.apc"
	[ "$(grep -c 'frame-empty' <<<"$output")" -eq 1 ]
	grep -qxF "$TMP/z.apc: frame $frames @$(printf 0x%x "$end"): warning: 25000 zero-length frames (the protocol's end of sequence) one after another inside the file, to offset $(printf 0x%x $((end + 100000))): 100000 bytes of zeros (space never written?) [frame-empty]" <<<"$output"
	grep -qxF "$TMP/z.apc: ok ($((frames + 25000)) frames, 1 warning)" <<<"$output"
	# --strict fails it on that one warning
	verify 1 --strict "$TMP/z.apc"
	# one zero-length frame alone keeps its own words
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/one.apc"
	python3 -c '
import sys
p = sys.argv[1] + "/0000000000"
d = open(p, "rb").read()
# after the first frame (its length word and body), an empty frame
n = int.from_bytes(d[0:4], "little")
open(p, "wb").write(d[:4 + n] + bytes(4) + d[4 + n:])' "$TMP/one.apc"
	verify 0 "$TMP/one.apc"
	grep -qxF "$TMP/one.apc: frame 1 @$(printf 0x%x $((4 + $(od -An -tu4 -N4 "$TMP/one.apc/0000000000" | tr -d ' ')))): warning: zero-length frame (the protocol's end of sequence) inside the file [frame-empty]" <<<"$output"
}

@test "a captured.xml libxml2 only warns about (an odd namespace URI) is read by all three tools" {
	demo_cap "$TMP/d.apc"
	sed -i 's|<captured |<captured xmlns:a="not a uri" |' "$TMP/d.apc/captured.xml"
	grep -q 'xmlns:a="not a uri"' "$TMP/d.apc/captured.xml"
	verify 0 "$TMP/d.apc"
	[ "$output" = "$TMP/d.apc: ok ($(apcdump --summary "$TMP/d.apc" | awk '/^Frames:/ {print $2}') frames)" ]
	run apcdump --summary "$TMP/d.apc"
	[ "$status" -eq 0 ]
	grep -q '^Protocol: *[0-9]' <<<"$output"
	conv 0 -q "$TMP/d.apc" -o "$TMP/again.apc"
	# an undefined prefix is an error: refused, with where
	sed -i 's|<captured |<captured c:b="1" |' "$TMP/d.apc/captured.xml"
	verify 1 "$TMP/d.apc"
	grep -q 'captured.xml: error: line 2: not well-formed XML: namespace prefix c for b on captured is not defined \[captured-xml\]' <<<"$output"
}

#!/usr/bin/env bats
# annotate.bats - raw annotate streams (the gator annotate protocol) as
# apcconv input, written by hand here, and what the capture keeps.

load helpers
NEED_PYTHON=1

# stream FILE VERSION DONT_MANGLE: a client stream (tid 77) declaring
# counter key 3, then values 5 and -5 of it, then a string annotation.
stream() {
	python3 - "$1" "$2" "$3" "$APC_ROOT/tests" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[4])
from apcpack import p
out, version, dm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def msg(code, body):
    return bytes([code]) + struct.pack("<I", len(body)) + body
# key, per_cpu, class, display, modifier, series, render, average
# selection, average cores, percentage, activities, cores; a colour;
# title, name, units; the description runs to the end
decl = b"".join(p(v) for v in (3, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0)) + b"\0\0\0\0"
decl += b"Client\0level\0\0a level"
t0 = 5_000_000_000
data = b"ANNOTATE %d\n" % version + struct.pack("<II", 77, 77) + bytes([dm])
data += msg(0x08, decl)
for i, v in enumerate((5, -5)):
    data += msg(0x09, p(t0 + i * 1000) + p(0) + p(3) + p(v))
data += msg(0x01, p(t0 + 5000) + p(0) + b"hello")
open(out, "wb").write(data)
EOF
}

# stream_capture VERSION: a stream of that version (tid 77, not mangled)
# converts to $TMP/sVERSION.apc with nothing counted as not mapped;
# $output is then the capture's listing.
stream_capture() {
	stream "$TMP/s$1.bin" "$1" 0
	conv 0 -v "$TMP/s$1.bin" -o "$TMP/s$1.apc"
	! grep -q 'not mapped' <<<"$output" || false
	dump "$TMP/s$1.apc"
}

# conv_lists IN OUT PATTERN: IN converts to OUT, whose listing has a line
# matching PATTERN.
conv_lists() {
	apcconv -q "$1" -o "$2"
	apcdump "$2" | grep -q "$3"
}

@test "annotate: a version 5 stream stays version 5, negative counter values intact" {
	stream_capture 5
	grep -q 'annotate_setup .* version=5 tid=77 ' <<<"$output"
	grep -q 'annotate_counter_value .* key=3 value=5$' <<<"$output"
	grep -q 'annotate_counter_value .* key=3 value=-5$' <<<"$output"
	# and again through APC -> APC
	conv_lists "$TMP/s5.apc" "$TMP/again.apc" 'annotate_counter_value .* key=3 value=-5$'
}

@test "annotate: a version 4 stream stays version 4, its values read as uint32" {
	# in v4 -5 reads back as the uint32 4294967291: the writer keeps v4
	stream_capture 4
	grep -q 'annotate_setup .* version=4 ' <<<"$output"
	grep -q 'annotate_counter_value .* key=3 value=4294967291$' <<<"$output"
}

# v3 has every message a v3 stream holds, with the same bytes as v4: the
# source's version is kept so the capture says which client wrote it.
@test "annotate: a version 3 stream stays version 3, also through APC -> APC" {
	stream_capture 3
	grep -q 'annotate_setup .* version=3 tid=77 ' <<<"$output"
	grep -q 'annotate_counter_value .* key=3 value=4294967291$' <<<"$output"
	conv_lists "$TMP/s3.apc" "$TMP/again.apc" 'annotate_setup .* version=3 tid=77 '
	apcverify "$TMP/again.apc"
}

@test "annotate: real v3, v4, v5 client streams keep their version and messages" {
	need_shared
	for v in 3 4 5; do
		for k in 1 2 3; do
			apcconv -q "$SHARED/annotate/v$v/stream$k.annotate.bin" -o "$TMP/r$v$k.apc"
			apcconv -q "$TMP/r$v$k.apc" -o "$TMP/rr$v$k.apc"
			# sorted: APC -> APC restores time order, and v5's
			# counter_time_value is stamped before the calls around it
			apcdump --frame=external "$TMP/r$v$k.apc" | grep -o 'annotate_.*' | sort > "$TMP/a"
			apcdump --frame=external "$TMP/rr$v$k.apc" | grep -o 'annotate_.*' | sort > "$TMP/b"
			grep -q "^annotate_setup   fd=1 version=$v " "$TMP/a"
			cmp "$TMP/a" "$TMP/b"
		done
	done
}

@test "annotate: the setup's don't-mangle byte is kept" {
	stream "$TMP/dm.bin" 4 1
	conv_lists "$TMP/dm.bin" "$TMP/dm.apc" 'annotate_setup .* dont_mangle=1$'
	conv_lists "$TMP/dm.apc" "$TMP/dm2.apc" 'annotate_setup .* dont_mangle=1$'
}

@test "annotate: the capture starts at the first time even after untimed declarations" {
	# the stream opens with a counter declaration, which has no time
	stream_capture 4
	grep -q ' summary .* monotonic_delta=5000000000$' <<<"$output"
	grep -q 'annotate_counter_value ts=0 .* value=5$' <<<"$output"
	grep -q 'annotate_str     ts=5000 ' <<<"$output"
}

@test "annotate: a client's Link gives its image as unknown (-1), not the kernel (0)" {
	# Cookie 0 is the kernel or idle; an annotate client is a user
	# process whose image the stream does not name: -1, as gatord links
	# a thread whose image it does not know
	stream_capture 4
	[ "$(grep -c ' link ' <<<"$output")" -eq 1 ]
	grep -Eq ' link +ts=0 cookie=-1 pid=77 tid=77$' <<<"$output"
	apcverify -q "$TMP/s4.apc"
}

@test "annotate: Barman annotation connections take no task's tid, and are named after their core" {
	apcconv -q "$APC_ROOT/testdata/barman/be32_circular.bin" -o "$TMP/b.apc"
	apcdump "$TMP/b.apc" > "$TMP/dump"
	# the tasks' names: the untimed ones, before any record
	tasks=$(grep -o ' thread_name      ts=0 tid=[0-9]*' "$TMP/dump" | sed 's/.*tid=//' | sort -u)
	conns=$(grep -o ' annotate_setup   fd=[0-9]* version=[0-9] tid=[0-9]*' "$TMP/dump" | sed 's/.*tid=//' | sort -u)
	echo "tasks: $tasks; connections: $conns"
	[ -n "$tasks" ]
	[ -n "$conns" ]
	[ -z "$(comm -12 <(echo "$tasks") <(echo "$conns"))" ]
	# each connection: named "Annotations (core N)" and linked as its own
	# process at its first annotation, so Streamline shows no unnamed thread
	apcdump --summary "$TMP/b.apc" | grep -A 9 '^Annotate connections' | grep -E '^  tid .* v[0-9] ' >"$TMP/conns"
	cat "$TMP/conns"
	[ "$(wc -l <"$TMP/conns")" -eq "$(wc -w <<<"$conns")" ]
	! grep -q '(no name)' "$TMP/conns" || false
	for t in $conns; do
		grep -Eq "^  tid $t +pid $t .*\"Annotations \(core [0-9]+\)\"$" "$TMP/conns"
		grep -Eq " link +ts=[1-9][0-9]* cookie=-1 pid=$t tid=$t$" "$TMP/dump"
	done
	apcverify -q "$TMP/b.apc"
}

# names_per_connection CAPTURE: a channel named on any connection is
# named on each connection that writes a string on it after that time,
# before (or with) the first such string (annotate channels and groups
# belong to a connection's thread).
names_per_connection() {
	apcdump --frame=external "$1" | awk '
		{ fd = ""; ch = ""; ts = ""
		  for (i = 1; i <= NF; i++) {
			if ($i ~ /^fd=/) fd = substr($i, 4)
			if ($i ~ /^channel=/) ch = substr($i, 9)
			if ($i ~ /^ts=/) ts = substr($i, 4) + 0
		  }
		  k = fd "/" ch }
		$5 == "annotate_channel" {
			if (!(ch in named) || ts < named[ch]) named[ch] = ts
			if (!(k in decl) || ts < decl[k]) decl[k] = ts
		}
		($5 == "annotate_str" || $5 == "annotate_color_str") && ch != "" {
			n++; use_k[n] = k; use_ch[n] = ch; use_ts[n] = ts
		}
		END {
			bad = 0; checked = 0
			for (i = 1; i <= n; i++) {
				k = use_k[i]; ch = use_ch[i]
				if (!(ch in named) || use_ts[i] < named[ch])
					continue
				checked++
				if (!(k in decl) || decl[k] > use_ts[i]) {
					print "connection/channel " k " written at " use_ts[i] " unnamed"; bad = 1
				}
			}
			if (!checked) { print "no named channel used"; bad = 1 }
			exit bad
		}'
}

@test "annotate: Barman channel names reach every core's connection that writes on them" {
	# Barman names a channel once for the target; each core has its own
	# connection, whose thread needs the name (and its group's)
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc"
	names_per_connection "$TMP/d.apc"
	apcdump --frame=external "$TMP/d.apc" | grep -c 'annotate_setup' | grep -qv '^1$'
}

@test "annotate: the real Barman capture's channel 3 is named on both cores' connections" {
	need_shared
	apcconv -q "$SHARED/barman/capture1_linear64.bin" -o "$TMP/c.apc"
	names_per_connection "$TMP/c.apc"
	run apcdump --frame=external "$TMP/c.apc"
	[ "$(grep -Ec 'annotate_channel .* channel=3 group=1 text="Channel Three"$' <<<"$output")" -eq 2 ]
	[ "$(grep -Ec 'annotate_group .* group=1 text="Group One"$' <<<"$output")" -eq 2 ]
}

@test "annotate: -v and --stats=json report the messages read per code" {
	stream "$TMP/s.bin" 5 0
	apcconv -q --stats=json "$TMP/s.bin" -o "$TMP/s.apc" | python3 -c '
import json, sys
o = json.load(sys.stdin)
kinds = {k["kind"]: (k["became"], k["count"]) for k in o["records_by_kind"]}
assert kinds["annotate setup"][1] == 1, kinds
assert kinds["annotate counter"][1] == 1, kinds
assert kinds["annotate counter_value"][1] == 2, kinds
assert kinds["annotate str"] == ("annotation (External frame)", 1), kinds
assert sum(c for _, c in kinds.values()) == o["records_read"], (kinds, o["records_read"])'
	run apcconv -v "$TMP/s.bin" -o "$TMP/v.apc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"annotate counter_value "*" 2  -> annotation (External frame)"* ]]
}

@test "annotate: a counter value timed before the first message starts the capture, not a negative time" {
	# v5: declare key 3, a value at t0, then one with its own time 1 s
	# before t0 (gator_annotate_counter_time_value()), then a string
	python3 - "$TMP/e.bin" "$APC_ROOT/tests" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[2])
from apcpack import p
def msg(code, body):
    return bytes([code]) + struct.pack("<I", len(body)) + body
decl = b"".join(p(v) for v in (3, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0)) + b"\0\0\0\0"
decl += b"Client\0level\0\0a level"
t0 = 5_000_000_000
data = b"ANNOTATE 5\n" + struct.pack("<II", 77, 77) + b"\0"
data += msg(0x08, decl)
data += msg(0x09, p(t0) + p(0) + p(3) + p(5))
data += msg(0x09, p(t0 - 1_000_000_000) + p(0) + p(3) + p(6))
data += msg(0x01, p(t0 + 5000) + p(0) + b"hello")
open(sys.argv[1], "wb").write(data)
EOF
	apcconv -q "$TMP/e.bin" -o "$TMP/e.apc"
	run apcdump --summary "$TMP/e.apc"
	[ "$status" -eq 0 ]
	grep -q '^First timestamp: *0 ns$' <<<"$output"
	grep -q '^Last timestamp: *1000005000 ns$' <<<"$output"
	run apcverify --strict "$TMP/e.apc"
	[ "$status" -eq 0 ]
}

@test "annotate: a first stream cut in its setup is damage in that stream, in any argument order" {
	stream "$TMP/a.bin" 5 0
	stream "$TMP/b.bin" 5 0
	head -c 5 "$TMP/a.bin" >"$TMP/cut.bin"
	run apcconv "$TMP/cut.bin" "$TMP/b.bin" -o "$TMP/first.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cut.bin: offset 0x0: annotate stream ends inside a message"* ]]
	[ -e "$TMP/first.apc" ]
	run apcconv "$TMP/b.bin" "$TMP/cut.bin" -o "$TMP/second.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cut.bin: offset 0x0: annotate stream ends inside a message"* ]]
	cmp "$TMP/first.apc/0000000000" "$TMP/second.apc/0000000000"
}

@test "annotate: each cut stream is a line of its own, the others converted" {
	stream "$TMP/a.bin" 5 0
	for n in 1 2 3; do
		stream "$TMP/s$n.bin" 5 0
	done
	sz=$(stat -c %s "$TMP/a.bin")
	head -c $((sz - 2)) "$TMP/s1.bin" >"$TMP/c1.bin"
	head -c $((sz - 3)) "$TMP/s2.bin" >"$TMP/c2.bin"
	conv 1 "$TMP/c1.bin" "$TMP/a.bin" "$TMP/c2.bin" -o "$TMP/o.apc"
	[ "$(grep -c 'annotate stream ends inside a message' <<<"$output")" -eq 2 ]
	grep -q "c1.bin: offset 0x.*: annotate stream ends inside a message" <<<"$output"
	grep -q "c2.bin: offset 0x.*: annotate stream ends inside a message" <<<"$output"
	grep -Eq '; problems: 2$' <<<"$output"
	# the whole stream's messages are all there
	dump "$TMP/o.apc"
	grep -q 'hello' <<<"$output"
}

@test "annotate: apcdump --summary keeps two processes' connections with one tid apart" {
	# tid 77 in pid 77, then tid 77 again in pid 78 (a tid reused)
	python3 - "$TMP" "$APC_ROOT/tests" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[2])
from apcpack import p
def msg(code, body):
    return bytes([code]) + struct.pack("<I", len(body)) + body
for name, pid, n in (("a", 77, 1), ("b", 78, 2)):
    data = b"ANNOTATE 5\n" + struct.pack("<II", 77, pid) + bytes([0])
    for i in range(n):
        data += msg(0x01, p(5_000_000_000 + i) + p(0) + b"hello")
    open("%s/%s.bin" % (sys.argv[1], name), "wb").write(data)
EOF
	apcconv -q "$TMP/a.bin" "$TMP/b.bin" -o "$TMP/o.apc"
	dump --summary "$TMP/o.apc"
	grep -q '^Annotate connections: 2$' <<<"$output"
	grep -Eq '^  tid 77 +pid 77 +v5 +1 message +1 annotation ' <<<"$output"
	grep -Eq '^  tid 77 +pid 78 +v5 +2 messages +2 annotations ' <<<"$output"
	grep -q '^Annotation channels: 2$' <<<"$output"
	grep -Eq '^  tid 77 +pid 78 +channel 0 +group 0 +\(unnamed\) 2 annotations$' <<<"$output"
}

@test "annotate: an input that is not an annotate stream is refused in any position (exit 2)" {
	stream "$TMP/a.bin" 5 0
	demo="$APC_ROOT/testdata/barman/demo.bin"
	run apcconv "$TMP/a.bin" "$demo" -o "$TMP/o.apc"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: $demo: not an annotate stream (it does not begin with \"ANNOTATE N\\n\"): convert it on its own" ]
	[ ! -e "$TMP/o.apc" ]
	echo hello >"$TMP/t.txt"
	run apcconv "$TMP/t.txt" "$TMP/a.bin" -o "$TMP/o.apc"
	[ "$status" -eq 2 ]
	[[ "$output" == *"t.txt: not an annotate stream"* ]]
	[ ! -e "$TMP/o.apc" ]
	run apcconv "$demo" "$TMP/a.bin" -o "$TMP/o.apc"
	[ "$status" -eq 2 ]
}

@test "annotate: a stream of only its setup is counted" {
	stream "$TMP/a.bin" 5 0
	head -c 20 "$TMP/a.bin" >"$TMP/setup.bin"
	run apcconv "$TMP/a.bin" "$TMP/setup.bin" -o "$TMP/o.apc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"not mapped: annotate connections that sent nothing after their setup: 1"* ]]
}

@test "annotate: 1100 streams convert under a soft open-file limit of 256 (raised to the hard one)" {
	[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 1200 ] || skip "hard open-file limit $(ulimit -Hn) is under 1200"
	stream "$TMP/s.bin" 5 0
	mkdir "$TMP/many"
	for i in $(seq 1 1100); do cp "$TMP/s.bin" "$TMP/many/s$i.bin"; done
	conv 0 "$TMP/s.bin" -o "$TMP/one.apc"
	one=$(sed -n 's/.* bytes in, \([0-9]*\) events,.*/\1/p' <<<"$output")
	run bash -c 'ulimit -Sn 256 && "$1" "${@:2}"' _ "$APC_BIN/apcconv" "$TMP"/many/*.bin -o "$TMP/many.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(sed -n 's/.* bytes in, \([0-9]*\) events,.*/\1/p' <<<"$output")" -eq $((one * 1100)) ]
	verify 0 "$TMP/many.apc"
}

#!/usr/bin/env bats
# apcconv.bats - apcconv as a user runs it: every input format end to
# end (real files when ../shared/testdata is present, generated ones
# always), output forms, naming, atomicity, damage and interruption.

load helpers

TD="$APC_ROOT/testdata"

setup() {
	TMP="$(mktemp -d)"
}

teardown() {
	# a small file system a test mounted to fill
	cd /
	! mountpoint -q "$TMP/small" || umount "$TMP/small"
	rm -rf "$TMP"
}

# Messages of one kind in a capture, from apcdump --json.
count_msgs() {
	apcdump --json "$1" | python3 -c '
import json, sys
want = sys.argv[1]
print(sum(1 for l in sys.stdin if json.loads(l)["msg"].startswith(want)))' "$2"
}

@test "--list-formats names every reader" {
	run apcconv --list-formats
	[ "$status" -eq 0 ]
	for f in apc barman ltt tptp-bin tptp-xml annotate; do
		echo "$output" | grep -qE "^$f "
	done
}

@test "--stats=json, --help, --version and --list-formats that stdout cannot take: exit 2" {
	[ -w /dev/full ] || skip "/dev/full is not writable here"
	for opts in --help --version --list-formats; do
		exits 2 sh -c 'exec "$0" $1 > /dev/full' "$APC_BIN/apcconv" "$opts"
		[ "$output" = "apcconv: stdout: cannot write: no space left on device" ]
	done
	exits 2 sh -c 'exec "$0" -q --stats=json "$1" -o "$2" > /dev/full' "$APC_BIN/apcconv" \
		"$TD/barman/demo.bin" "$TMP/o.apc"
	[ "$output" = "apcconv: stdout: cannot write: no space left on device" ]
	# the capture itself was written whole
	apcverify -q "$TMP/o.apc"
}

@test "usage errors exit 2 with a one-line reason" {
	run apcconv
	[ "$status" -eq 2 ]
	[[ "$output" == *"no input given"* ]]
	run apcconv "" -o "$TMP/e.apc"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: an input name is empty" ]
	# standard input read once: by one input, or by --events=-
	run apcconv - - -o "$TMP/e.apc" < "$TD/barman/demo.bin"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: standard input (-) given as two inputs: it can be read once" ]
	run apcconv --events=- - -o "$TMP/e.apc" < "$TD/barman/demo.bin"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: standard input (-) given as --events=- and as an input: it can be read once" ]
	[ ! -e "$TMP/e.apc" ]
	run apcconv --bogus x
	[ "$status" -eq 2 ]
	# getopt's reason under the command's name, a hint, not the whole help
	[ "$output" = "apcconv: unrecognized option '--bogus'
Try 'apcconv --help' for more information." ]
	run apcconv -o
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "apcconv: option requires an argument -- 'o'" ]
	[ "${#lines[@]}" -eq 2 ]
	run apcconv --begin=soon "$TD/barman/demo.bin"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: bad --begin time 'soon' (e.g. 1500, 1.5s, 20ms, 3us)
Try 'apcconv --help' for more information." ]
	run apcconv --stats=csv "$TD/barman/demo.bin"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: --stats takes 'json'
Try 'apcconv --help' for more information." ]
	run apcconv -f nosuch "$TD/barman/demo.bin" -o "$TMP/x"
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown format 'nosuch'"* ]]
	[ ! -e "$TMP/x.apc" ]
}

@test "a missing input exits 2 and names the file" {
	run apcconv "$TMP/nope.bin" -o "$TMP/out"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$TMP/nope.bin"* ]]
	[ ! -e "$TMP/out.apc" ]
}

@test "an input no reader claims is a usage error: exit 2, a clear message, no output" {
	head -c 4096 /dev/urandom > "$TMP/noise.bin"
	: > "$TMP/empty.bin"
	echo hi > "$TMP/t.txt"
	mkdir "$TMP/emptydir"
	for f in noise.bin empty.bin t.txt emptydir; do
		run apcconv "$TMP/$f" -o "$TMP/out"
		echo "$f: $status: $output"
		[ "$status" -eq 2 ]
		[ "$output" = "apcconv: $TMP/$f: cannot tell the input format (try -f FORMAT; see --list-formats)" ]
		[ ! -e "$TMP/out.apc" ]
	done
	# --stats=json says so too, and names no format
	run apcconv -q --stats=json "$TMP/t.txt" -o "$TMP/out"
	[ "$status" -eq 2 ]
	python3 -c '
import json, sys
o = json.loads(sys.argv[1].splitlines()[-1])
assert o["status"] == 2 and o["format"] is None and "damage" not in o, o' "$output"
}

@test "--stats=json names the damage that stopped the run before any output, and the format" {
	head -c 100 "$TD/barman/demo.bin" > "$TMP/cut.bin"
	cp "$TD/barman/demo.bin" "$TMP/store.bin"
	printf '\377' | dd of="$TMP/store.bin" bs=1 seek=16 conv=notrunc 2>/dev/null
	for f in cut store; do
		run apcconv -q --stats=json "$TMP/$f.bin" -o "$TMP/$f.apc"
		[ "$status" -eq 1 ]
		[ ! -e "$TMP/$f.apc" ]
		# stderr's message first, then the object
		python3 -c '
import json, sys
msg, js = sys.argv[1].splitlines()
o = json.loads(js)
assert o["status"] == 1 and o["format"] == "barman", o
assert "apcconv: " + o["damage"] == msg, (o.get("damage"), msg)' "$(apcconv -q --stats=json "$TMP/$f.bin" -o "$TMP/$f.apc" 2>&1)"
	done
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/lttgen" --seed 3 --events 300 -o "$TMP/ltt" >/dev/null
	rm -r "$TMP/ltt/cpu"
	run apcconv -q --stats=json "$TMP/ltt" -o "$TMP/l.apc"
	[ "$status" -eq 1 ]
	python3 -c '
import json, sys
o = json.loads(sys.argv[1].splitlines()[-1])
assert o["format"] == "ltt" and o["damage"] == sys.argv[2] + ": no cpu/N tracefiles in the trace", o' "$output" "$TMP/ltt"
}

@test "the summary names standard input and output as the error messages do" {
	head -c 20000 "$TD/barman/demo.bin" > "$TMP/cut.bin"
	run sh -c '"$1" - -o - < "$2" 2>&1 >/dev/null' sh "$APC_BIN/apcconv" "$TMP/cut.bin"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: <stdin>: offset 0x"* ]]
	[[ "${lines[1]}" == "apcconv: <stdin> (barman) -> <stdout>: "* ]]
}

@test "default output is the input's base name with .apc, in the current directory" {
	cd "$TMP"
	run apcconv -q "$TD/barman/demo.bin"
	[ "$status" -eq 0 ]
	[ -f "$TMP/demo.apc/0000000000" ]
	[ -f "$TMP/demo.apc/captured.xml" ]
	[ -f "$TMP/demo.apc/session.xml" ]
	[ -f "$TMP/demo.apc/events.xml" ]
	# .apc is added to -o names that lack it
	run apcconv -q "$TD/barman/demo.bin" -o "$TMP/named"
	[ "$status" -eq 0 ]
	[ -d "$TMP/named.apc" ]
}

@test "-o . and -o .. are refused; -o DIR/ writes the default name inside DIR" {
	mkdir -p "$TMP/work/outdir"
	cd "$TMP/work"
	for out in . .. outdir/.. "$TMP/work/.."; do
		run apcconv -q "$TD/barman/demo.bin" -o "$out"
		[ "$status" -eq 2 ]
		[ "$output" = "apcconv: $out: not a usable output name" ]
	done
	[ "$(ls -A)" = outdir ]
	[ "$(ls -A "$TMP")" = work ]
	# a trailing slash on a folder there is: into it, as cp and mv do
	apcconv -q "$TD/barman/demo.bin" -o outdir/
	[ -f outdir/demo.apc/0000000000 ]
	[ "$(ls -A)" = outdir ]
	apcconv -q "$TD/barman/demo.bin" -o ../
	[ -f "$TMP/demo.apc/0000000000" ]
	cat "$TD/barman/demo.bin" | apcconv -q - -o "$TMP/work/outdir//"
	[ -f outdir/stdin.apc/0000000000 ]
	# still refused when there, replaced with --overwrite
	run apcconv -q "$TD/barman/demo.bin" -o outdir/
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: outdir/demo.apc: output exists (use --overwrite to replace it)" ]
	apcconv -q --overwrite "$TD/barman/demo.bin" -o outdir/
	# a folder named as a capture is the capture, slash or not
	run apcconv -q "$TD/barman/demo.bin" -o outdir/demo.apc/
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: outdir/demo.apc: output exists (use --overwrite to replace it)" ]
	# no slash: the name of the capture
	apcconv -q "$TD/barman/demo.bin" -o outdir
	[ -d outdir.apc ]
	# a slash on no folder, or on a file: refused, as cp refuses it
	run apcconv -q "$TD/barman/demo.bin" -o newdir/
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: newdir/: no such folder (a name ending in / is a folder to write into)" ]
	touch afile
	run apcconv -q "$TD/barman/demo.bin" -o afile/
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: afile/: not a folder (a name ending in / is a folder to write into)" ]
	[ ! -e newdir ] && [ ! -e newdir.apc ] && [ ! -e afile.apc ]
}

@test "-o with an extension read but never written is refused, not made a folder NAME.7z.apc" {
	cd "$TMP"
	for out in a.7z a.gz a.apc.gz a.tar.lz a.cpio a.tbz a.Z a.lz4 a.bz2; do
		run apcconv -q "$TD/barman/demo.bin" -o "$out"
		[ "$status" -eq 2 ]
		ext=.${out##*.}
		[ "$output" = "apcconv: $out: cannot write a $ext archive (a capture is written as a folder NAME.apc, or as .zip, .tar, .tar.gz, .tar.bz2, .tar.xz or .tar.zst)" ]
	done
	[ -z "$(ls -A)" ]
	# named as a capture, the same name is a folder
	apcconv -q "$TD/barman/demo.bin" -o a.7z.apc
	[ -f a.7z.apc/0000000000 ]
}

@test "-o /dev/null, /dev/stdout and a FIFO take the tar stream, named in the summary" {
	cd "$TMP"
	run apcconv "$TD/barman/demo.bin" -o /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == "apcconv: $TD/barman/demo.bin (barman) -> /dev/null: "* ]]
	[ -z "$(ls -A)" ]
	[ ! -e /dev/null.apc ]
	# --stats=json still goes to stdout, not into the device
	apcconv -q --stats=json "$TD/barman/demo.bin" -o /dev/null > stats.json
	grep -q '"output":"/dev/null"' stats.json
	mkfifo f
	tar -tf - < f > list &
	apcconv -q "$TD/barman/demo.bin" -o f
	wait
	[ "$(sort list | tr '\n' ' ')" = "demo.apc/ demo.apc/0000000000 demo.apc/captured.xml demo.apc/events.xml demo.apc/session.xml " ]
	apcconv -q "$TD/barman/demo.bin" -o - | cmp - <(cat f & apcconv -q "$TD/barman/demo.bin" -o f)
	# /dev/stdout, a pipe or a file there: the stream, and --stats=json
	# goes to stderr as with -o -, not into the archive
	apcconv -q --stats=json "$TD/barman/demo.bin" -o /dev/stdout 2> stats2.json | tar -tf - > list2
	[ "$(sort list2 | head -1)" = "demo.apc/" ]
	grep -q '"output":"/dev/stdout"' stats2.json
	apcconv -q "$TD/barman/demo.bin" -o /dev/stdout > s.tar
	tar -tf s.tar | grep -qx 'demo.apc/0000000000'
	[ ! -e /dev/stdout.apc ]
	# a full device: the error names it, exit 2
	if [ -c /dev/full ]; then
		run apcconv -q "$TD/barman/demo.bin" -o /dev/full
		[ "$status" -eq 2 ]
		[ "$output" = "apcconv: /dev/full: demo.apc/0000000000: cannot write: no space left on device" ]
	fi
}

@test "an input named . or .. is named after its folder" {
	"$APC_TOOLS/lttgen" --events 100 -o "$TMP/trace1" > /dev/null
	mkdir "$TMP/w"
	cd "$TMP/w"
	apcconv -q ../trace1/.
	[ -f trace1.apc/0000000000 ]
	cd "$TMP/trace1/cpu"
	apcconv -q .. -o -  | tar -tf - | grep -qx 'trace1.apc/0000000000'
	cd "$TMP/trace1"
	apcconv -q .
	[ -f trace1.apc/0000000000 ]
}

@test ".tar.bz2, .tar.xz, .tar.zst and archive names in any case write archives that read back" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/f.apc"
	apcdump "$TMP/f.apc" > "$TMP/want"
	for out in y.apc.tar.bz2 y.tbz2 w.apc.tar.xz w.txz s.apc.tar.zst s.TZST Z.APC.ZIP z.ZIP t.TAR g.Tar.Gz; do
		apcconv -q "$TD/barman/demo.bin" -o "$TMP/$out"
		[ -f "$TMP/$out" ]
		apcverify -q "$TMP/$out"
		name=${out%%.*}
		diff "$TMP/want" <(apcdump "$TMP/$out" | sed "s|$out|f.apc|")
		# the folder inside is NAME.apc, .apc in the case given (tar
		# reads zstd only through the zstd program)
		case $out in
		*.zst|*.TZST) ! command -v zstd >/dev/null ||
			      zstd -dc "$TMP/$out" | tar -tf - | grep -qx "$name.apc/0000000000" ;;
		*.APC.*) tar -tf "$TMP/$out" 2>/dev/null | grep -qx "$name.APC/0000000000" ||
			 python3 -c 'import sys, zipfile; assert sys.argv[2] in zipfile.ZipFile(sys.argv[1]).namelist()' "$TMP/$out" "$name.APC/0000000000" ;;
		*) tar -tf "$TMP/$out" 2>/dev/null | grep -qx "$name.apc/0000000000" ||
		   python3 -c 'import sys, zipfile; assert sys.argv[2] in zipfile.ZipFile(sys.argv[1]).namelist()' "$TMP/$out" "$name.apc/0000000000" ;;
		esac
	done
	# compressed as named: the streams' magic numbers
	[ "$(head -c 3 "$TMP/y.apc.tar.bz2")" = BZh ]
	[ "$(head -c 6 "$TMP/w.apc.tar.xz" | od -An -tx1 | tr -d ' ')" = fd377a585a00 ]
	[ "$(head -c 4 "$TMP/s.apc.tar.zst" | od -An -tx1 | tr -d ' ')" = 28b52ffd ]
	[ "$(head -c 2 "$TMP/z.ZIP")" = PK ]
	# the same bytes every time, as for the other archives
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/again.apc.tar.bz2"
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/again.apc.tar.xz"
	cmp <(tar -xOjf "$TMP/y.apc.tar.bz2") <(tar -xOjf "$TMP/again.apc.tar.bz2")
	# no folder beside them named after the archive
	[ "$(find "$TMP" -mindepth 1 -maxdepth 1 -type d)" = "$TMP/f.apc" ]
}

@test "--stats=json of a run refused before converting: no bytes in, and why" {
	# Refused once the reader had opened the input, the object counted
	# the bytes the input layer had read ahead (the file's size, 50864,
	# against 33608 on a run that converted) and did not say why.
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/o.apc"
	gzip -c "$TD/barman/demo.bin" > "$TMP/demo.bin.gz"
	echo hi > "$TMP/file"
	mkdir "$TMP/ro"
	chmod 555 "$TMP/ro"
	check() { # INPUT FORMAT ARGS...: refused, with 0 bytes in and the message
		local in=$1 fmt=$2
		shift 2
		run apcconv -q --stats=json "$@" "$in"
		echo "$*: $status: $output"
		[ "$status" -eq 2 ]
		[ "${#lines[@]}" -eq 2 ]
		python3 -c '
import json, sys
msg, js, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
o = json.loads(js)
assert o["status"] == 2 and o["ok"] is False and o["output"] is None, o
assert o["format"] == (fmt or None), o
assert o["bytes_in"] == 0 and o["records_read"] == 0 and o["events"] == 0, o
assert o["frames"] == 0 and o["bytes_written"] == 0, o
assert "damage" not in o, o
assert "apcconv: " + o["error"] == msg, (o.get("error"), msg)' "${lines[0]}" "${lines[1]}" "$fmt"
	}
	for in in "$TD/barman/demo.bin" "$TMP/demo.bin.gz"; do
		check "$in" barman -o "$TMP/o.apc"
		[[ "${lines[0]}" == *"output exists (use --overwrite to replace it)" ]]
		check "$in" barman -o ..
		check "$in" barman -o "$TMP/file/x.apc"
		[[ "${lines[0]}" == *"cannot create: not a directory" ]]
		if [ "$(id -u)" -ne 0 ]; then
			check "$in" barman -o "$TMP/ro/x.apc"
		fi
		check "$in" "" -f nope
	done
	[ ! -e "$TMP/file/x.apc" ] && [ ! -e "$TMP/ro/x.apc" ]
	# a run that converts still counts what it read
	rm -r "$TMP/o.apc"
	apcconv -q --stats=json "$TD/barman/demo.bin" -o "$TMP/o.apc" | grep -q '"bytes_in":33608,'
}

@test "an existing output is refused without --overwrite and replaced with it" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/o.apc"
	echo marker > "$TMP/o.apc/marker"
	run apcconv -q "$TD/barman/demo.bin" -o "$TMP/o.apc"
	[ "$status" -eq 2 ]
	[ -f "$TMP/o.apc/marker" ]
	run apcconv -q --overwrite "$TD/barman/demo.bin" -o "$TMP/o.apc"
	[ "$status" -eq 0 ]
	[ ! -e "$TMP/o.apc/marker" ]
	apcverify -q "$TMP/o.apc"
	# no temporary siblings are left behind
	[ "$(ls -A "$TMP" | wc -l)" -eq 1 ]
}

@test "a name of 240-251 bytes, legal itself, converts and is replaced: its temporary siblings fit" {
	# .NAME.tmp-XXXXXX and the like once took the whole NAME: past 255
	n=$(printf 'n%.0s' $(seq 1 240))
	mkdir "$TMP/d"
	cp "$TD/barman/demo.bin" "$TMP/d/$n.bin"
	for o in "$n.apc" "$n.apc.zip" "$n.apc.tar.gz"; do
		conv 0 "$TMP/d/$n.bin" -o "$TMP/d/$o"
		conv 0 "$TMP/d/$n.bin" -o "$TMP/d/$o" --overwrite
		verify 0 "$TMP/d/$o"
	done
	[ "$(ls -A "$TMP/d" | wc -l)" -eq 4 ]
}

@test "--overwrite replaces only a capture: never a folder of other files, nor a file with a folder" {
	mkdir -p "$TMP/notes.apc/deep"
	echo keep > "$TMP/notes.apc/notes.txt"
	run apcconv -q --overwrite "$TD/barman/demo.bin" -o "$TMP/notes.apc"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: $TMP/notes.apc: output exists and is not an .apc capture (no captured.xml, no 0000000000): not replaced (remove it first)" ]
	[ "$(cat "$TMP/notes.apc/notes.txt")" = keep ] && [ -d "$TMP/notes.apc/deep" ] || false
	echo keep > "$TMP/f.apc"
	run apcconv -q --overwrite "$TD/barman/demo.bin" -o "$TMP/f.apc"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: $TMP/f.apc: output exists and is not a folder: not replaced (remove it first)" ]
	[ "$(cat "$TMP/f.apc")" = keep ]
	mkdir "$TMP/d.apc.zip"
	run apcconv -q --overwrite "$TD/barman/demo.bin" -o "$TMP/d.apc.zip"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: $TMP/d.apc.zip: output exists and is not a file: not replaced (remove it first)" ]
	[ -d "$TMP/d.apc.zip" ]
	# a capture is replaced whole, with what Streamline added to it
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/c.apc"
	mkdir "$TMP/c.apc/analysis"
	touch "$TMP/c.apc/analysis/x" "$TMP/c.apc/extra"
	apcconv -q --overwrite "$TD/barman/demo.bin" -o "$TMP/c.apc"
	[ "$(ls -A "$TMP/c.apc" | tr '\n' ' ')" = "0000000000 captured.xml events.xml session.xml " ]
	# as is an archive by an archive
	echo old > "$TMP/a.apc.zip"
	apcconv -q --overwrite "$TD/barman/demo.bin" -o "$TMP/a.apc.zip"
	apcverify -q "$TMP/a.apc.zip"
	# nothing else is left beside them
	[ "$(ls -A "$TMP" | tr '\n' ' ')" = "a.apc.zip c.apc d.apc.zip f.apc notes.apc " ]
}

@test "the same input gives the same bytes" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/a.apc"
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/b.apc"
	diff -r "$TMP/a.apc" "$TMP/b.apc"
	mkdir "$TMP/1" "$TMP/2"
	for ext in tar.gz zip; do
		apcconv -q "$TD/barman/demo.bin" -o "$TMP/1/c.apc.$ext"
		apcconv -q "$TD/barman/demo.bin" -o "$TMP/2/c.apc.$ext"
		cmp "$TMP/1/c.apc.$ext" "$TMP/2/c.apc.$ext"
	done
}

@test "zip, tar, tar.gz and stdout outputs hold the same capture as the folder" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/f.apc"
	for ext in zip tar tar.gz; do
		apcconv -q "$TD/barman/demo.bin" -o "$TMP/f.apc.$ext"
		apcverify -q "$TMP/f.apc.$ext"
		diff <(apcdump "$TMP/f.apc") <(apcdump "$TMP/f.apc.$ext" | sed "s|f.apc.$ext|f.apc|")
	done
	apcconv -q "$TD/barman/demo.bin" -o - > "$TMP/s.tar"
	tar -tf "$TMP/s.tar" | grep -q '0000000000$'
	tar -tf "$TMP/s.tar" | grep -q 'captured.xml$'
	apcverify -q "$TMP/s.tar"
}

@test "apc -> apc keeps every message of a converted capture" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/one.apc"
	apcconv -q "$TMP/one.apc" -o "$TMP/two.apc"
	apcverify -q "$TMP/two.apc"
	for kind in block_counter backtrace activity_switch idle thread_name cookie_name link annotate_; do
		[ "$(count_msgs "$TMP/one.apc" $kind)" -eq "$(count_msgs "$TMP/two.apc" $kind)" ]
	done
}

@test "apc -> apc on the real gatord captures: verify passes, messages kept" {
	need_shared
	for c in v68_nonroot v68_nonroot_annotate v68_sleep; do
		apcconv -q "$SHARED/apc/$c.apc" -o "$TMP/$c.apc"
		run apcverify "$TMP/$c.apc"
		[ "$status" -eq 0 ]
		for kind in block_counter thread_name activity_switch link sched_switch annotate_ opaque; do
			[ "$(count_msgs "$SHARED/apc/$c.apc" $kind)" -eq "$(count_msgs "$TMP/$c.apc" $kind)" ]
		done
	done
	# gatord 9.x: perf frames cannot be written at protocol 680; they are
	# dropped and counted, never silently
	run apcconv "$SHARED/apc/sleep_counters.apc" -o "$TMP/s.apc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"gatord 9.x perf frames"* ]]
	apcverify -q "$TMP/s.apc"
}

@test "real Barman captures convert and verify" {
	need_shared
	for c in capture1_linear64 capture2_circular64 capture4_linear32_armv7; do
		run apcconv "$SHARED/barman/$c.bin" -o "$TMP/$c.apc"
		[ "$status" -eq 0 ]
		apcverify -q "$TMP/$c.apc"
		# records read per type equal the truth file's records_present
		apcconv -q --stats=json "$SHARED/barman/$c.bin" -o "$TMP/$c.j.apc" |
			python3 -c '
import json, re, sys
o = json.load(sys.stdin)
got = {k["kind"]: k["count"] for k in o["records_by_kind"]}
line = next(l for l in open(sys.argv[1]) if l.startswith("SUMMARY records_present="))
want = dict((k, int(v)) for k, v in re.findall(r"([A-Za-z_]+)=(\d+)", line))
names = {"SAMPLE": "barman sample", "SAMPLE_WITH_PC": "barman sample with PC",
         "TASK_SWITCH": "barman task switch", "CUSTOM_COUNTER": "barman custom counter value",
         "ANNOTATION": "barman annotation", "HALT_EVENT": "barman halting event"}
for k, name in names.items():
    assert got.get(name, 0) == want[k], (k, got.get(name, 0), want[k])
assert o["records_read"] == want["records_present"], (o["records_read"], want)' "$SHARED/barman/$c.truth.txt"
	done
	apcdump --summary "$TMP/capture1_linear64.apc" | grep -q 'ARMv8_Cortex_A53_ccnt'
}

@test "generated Barman captures convert; damaged ones keep what came before and exit 1; an empty one writes nothing" {
	for f in "$TD"/barman/*.bin; do
		name=$(basename "$f" .bin)
		run apcconv "$f" -o "$TMP/$name.apc"
		case "$name" in
		*truncated*|*badlen*)
			[ "$status" -eq 1 ]
			[[ "$output" == *"offset 0x"* ]]
			;;
		*empty*)
			# No sample at all: a capture Streamline cannot open, so none.
			[ "$status" -eq 1 ]
			[[ "$output" == *"$name.bin: no counter values, samples or thread activity to convert"* ]]
			[[ "$output" == *"-> nothing written"* ]]
			[ ! -e "$TMP/$name.apc" ]
			continue
			;;
		*)
			[ "$status" -eq 0 ] ;;
		esac
		[ -d "$TMP/$name.apc" ]
		apcverify -q "$TMP/$name.apc"
	done
}

# records_read of --stats=json for a converted input, compared with the
# truth's intact records wholly before byte CUT (all when CUT is 0).
barman_records_match() {
	python3 -c '
import json, re, sys
o = json.load(open(sys.argv[1]))
cut = int(sys.argv[3])
want, off, blen = 0, 0, 1
for l in open(sys.argv[2]):
    if l.startswith("FILE "):
        off = int(re.search(r"data_area_file_offset=(\d+)", l).group(1))
    elif l.startswith("H datastore "):
        blen = int(re.search(r"buffer_length=(\d+)", l).group(1))
    elif l.startswith("R ") and " st=present " in l:
        at = off + int(re.search(r" off=(\d+)", l).group(1)) % blen
        want += not cut or at + int(re.search(r" blen=(\d+)", l).group(1)) <= cut
assert o["records_read"] == want, (o["records_read"], want)' "$1" "$2" "${3:-0}"
}

@test "a Barman circular buffer damaged in its older part keeps its newer records" {
	f="$TD/barman/le64_badlen_circ_older.bin"
	run apcconv "$f" -o "$TMP/c.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 0x2de8: block length"*"the newer ones from offset 1512 kept"* ]]
	apcverify -q "$TMP/c.apc"
	apcconv -q --stats=json "$f" -o "$TMP/c2.apc" >"$TMP/s.json" || true
	barman_records_match "$TMP/s.json" "$TD/barman/le64_badlen_circ_older.truth"
}

@test "a Barman circular buffer damaged in both parts names both damages" {
	f="$TD/barman/le64_badlen_circ_older.bin"
	# a block length past the end, at the sixth record of the newer part
	# (buffer offsets below the write position, 3080)
	python3 - "$f" "$TD/barman/le64_badlen_circ_older.truth" "$TMP/both.bin" <<'EOF2'
import re, struct, sys
t = open(sys.argv[2]).read().splitlines()
base = int(re.search(r"data_area_file_offset=(\d+)", t[1]).group(1))
recs = [int(re.search(r" off=(\d+)", l).group(1)) % 12000 for l in t
        if l.startswith("R ") and " st=present " in l]
newer = sorted(o for o in recs if o < 3080)
d = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<Q", d, base + newer[5], 0x7fff0001)
open(sys.argv[3], "wb").write(d)
EOF2
	run apcconv "$TMP/both.bin" -o "$TMP/c.apc"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TMP/both.bin: offset 0x2de8: block length 24000 runs past the end of the data (1752 bytes left); records lost up to the wrap point at offset 13512, the newer ones from offset 1512 kept" ]
	[ "${lines[1]}" = "apcconv: $TMP/both.bin: offset 0x720: block length 2147418113 runs past the end of the data (2760 bytes left)" ]
	[[ "${lines[2]}" == *"; problems: 2" ]]
	apcverify -q "$TMP/c.apc"
}

@test "a real Barman circular capture cut in either part keeps every whole record" {
	need_shared
	for cut in 10000 4000; do
		head -c $cut "$SHARED/barman/capture2_circular64.bin" >"$TMP/c$cut.bin"
		run apcconv "$TMP/c$cut.bin" -o "$TMP/c$cut.apc"
		[ "$status" -eq 1 ]
		[[ "$output" == *"c$cut.bin: offset 0x"*"kept"* ]]
		apcverify -q "$TMP/c$cut.apc"
		apcconv -q --stats=json "$TMP/c$cut.bin" -o "$TMP/s$cut.apc" >"$TMP/s.json" || true
		barman_records_match "$TMP/s.json" "$SHARED/barman/capture2_circular64.truth.txt" $cut
	done
}

@test "a Barman task switch or custom value on a core the header lacks is counted, not put on core 0" {
	# le64_linear_v3 has 2 cores; the first task switch and the first
	# custom counter record are moved to core 7 (core is the u32 after
	# the record type, which follows the 8-byte length word)
	python3 - "$TD/barman/le64_linear_v3.bin" "$TD/barman/le64_linear_v3.truth" "$TMP/bad.bin" <<'EOF2'
import re, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
base, done = 0, set()
for l in open(sys.argv[2]):
    if l.startswith("FILE "):
        base = int(re.search(r"data_area_file_offset=(\d+)", l).group(1))
    m = re.match(r"R .* st=present off=(\d+) .* type=([34]) core=(\d+) ", l)
    if m and m.group(2) not in done:
        at = base + int(m.group(1))
        assert struct.unpack_from("<I", d, at + 8)[0] == int(m.group(2))
        struct.pack_into("<I", d, at + 12, 7)
        done.add(m.group(2))
assert done == {"3", "4"}
open(sys.argv[3], "wb").write(d)
EOF2
	apcconv -q "$TD/barman/le64_linear_v3.bin" -o "$TMP/ok.apc"
	run apcconv "$TMP/bad.bin" -o "$TMP/bad.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"barman task switches on a core past the header's core count (dropped): 1"* ]]
	[[ "$output" == *"barman custom counter values on a core past the header's core count (dropped): 1"* ]]
	ok=$(apcdump "$TMP/ok.apc" | grep -c ' activity_switch ')
	bad=$(apcdump "$TMP/bad.apc" | grep -c ' activity_switch ')
	[ "$bad" -eq $((ok - 1)) ]
	apcverify -q "$TMP/bad.apc"
}

@test "gzip-compressed input is read transparently" {
	gzip -c "$TD/barman/demo.bin" > "$TMP/demo.bin.gz"
	apcconv -q "$TMP/demo.bin.gz" -o "$TMP/z.apc"
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/p.apc"
	diff -r "$TMP/z.apc" "$TMP/p.apc"
}

@test "LTT: directory, tarball and tar on stdin give the same capture" {
	need_shared
	apcconv -q "$SHARED/ltt/smp_example" -o "$TMP/d.apc"
	apcverify -q "$TMP/d.apc"
	tar -C "$SHARED/ltt" -czf "$TMP/smp.tar.gz" smp_example
	apcconv -q "$TMP/smp.tar.gz" -o "$TMP/t.apc"
	diff -r "$TMP/d.apc" "$TMP/t.apc"
	tar -C "$SHARED/ltt" -cf - smp_example | apcconv -q - -o "$TMP/s.apc"
	diff -r "$TMP/d.apc" "$TMP/s.apc"
	apcdump --summary "$TMP/d.apc" | grep -q 'ltt_cpu_activity'
}

@test "LTT: --stats=json reports the events read per kind" {
	need_shared
	run apcconv -q --stats=json "$SHARED/ltt/smp_example" -o "$TMP/j.apc"
	[ "$status" -eq 0 ]
	echo "$output" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["format"] == "ltt" and o["ok"], o
assert o["records_read"] == 85917 + 87240, o["records_read"]
assert o["events_by_type"]["activity"] > 0 and o["events_by_type"]["counter"] > 0, o
kinds = {k["kind"]: (k["became"], k["count"]) for k in o["records_by_kind"]}
assert kinds["core.schedchange"][0].startswith("activity"), kinds
assert kinds["core.irq_entry"] == ("counter ltt_irq", kinds["core.irq_entry"][1]), kinds
# every event read is accounted for by some kind
assert sum(c for _, c in kinds.values()) == o["records_read"], (sum(c for _, c in kinds.values()), o["records_read"])'
}

@test "TPTP XML: every real trace converts and verifies" {
	need_shared
	for f in "$SHARED"/tptp/*.trcxml; do
		name=$(basename "$f" .trcxml)
		run apcconv "$f" -o "$TMP/$name.apc"
		[ "$status" -eq 0 ]
		apcverify -q "$TMP/$name.apc"
	done
}

@test "TPTP: generated XML, bare XML, binary and a cut XML trace" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 3 -o "$TMP/a.trcxml"
	"$G" --seed 3 --bare -o "$TMP/b.trcxml"
	"$G" --seed 3 --binary -o "$TMP/c.trcbin"
	for f in a.trcxml b.trcxml c.trcbin; do
		run apcconv "$TMP/$f" -o "$TMP/$f.apc"
		[ "$status" -eq 0 ]
		apcverify -q "$TMP/$f.apc"
	done
	size=$(stat -c %s "$TMP/a.trcxml")
	head -c $((size / 2)) "$TMP/a.trcxml" > "$TMP/cut.trcxml"
	run apcconv "$TMP/cut.trcxml" -o "$TMP/cut.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 0x"* ]]
	[[ "$output" == *"(truncated trace?)"* ]]
	apcverify -q "$TMP/cut.apc"
}

@test "TPTP: the process's own tid is named and linked, like its threads" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	# the GC markers and the view are on the connection tid == pid
	# (tptpgen's pid 4242): without a name Streamline shows it unnamed
	"$G" --seed 3 -o "$TMP/a.trcxml"
	"$G" --seed 3 --binary -o "$TMP/c.trcbin"
	for f in a.trcxml c.trcbin; do
		apcconv -q "$TMP/$f" -o "$TMP/$f.apc"
		apcdump "$TMP/$f.apc" > "$TMP/$f.txt"
		grep -Eq 'annotate_setup +fd=1 version=4 tid=4242 pid=4242' "$TMP/$f.txt"
		grep -Eq 'thread_name +ts=0 tid=4242 name="java"$' "$TMP/$f.txt"
		grep -Eq 'link +ts=0 cookie=2 pid=4242 tid=4242$' "$TMP/$f.txt"
		apcdump --summary "$TMP/$f.apc" | grep -Eq '^  tid 4242 .*"java"$'
	done
}

# tptp_cookie_2 TRACE: APC reserves cookie 0 (kernel or idle), -1
# (invalid) and 1 (it would read as a Backtrace's End of Message): the
# JVM's image gets the first free one, named, in every link
tptp_cookie_2() {
	apcconv -q "$1" -o "$TMP/c.apc" --overwrite
	apcdump "$TMP/c.apc" > "$TMP/c.txt"
	grep -Eq 'cookie_name +cookie=2 name="java"$' "$TMP/c.txt"
	! grep -Eq 'cookie=1( |$)' "$TMP/c.txt" || false
	links=$(grep -Ec ' link ' "$TMP/c.txt")
	[ "$links" -gt 1 ]
	[ "$(grep -Ec ' link +ts=[0-9]+ cookie=2 ' "$TMP/c.txt")" -eq "$links" ]
}

@test "TPTP: the process image's cookie is not the reserved cookie 1" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 3 -o "$TMP/a.trcxml"
	"$G" --seed 3 --binary -o "$TMP/c.trcbin"
	tptp_cookie_2 "$TMP/a.trcxml"
	tptp_cookie_2 "$TMP/c.trcbin"
}

@test "TPTP: a real trace's process image is cookie 2, not the reserved 1" {
	need_shared
	tptp_cookie_2 "$SHARED/tptp/basic.trcxml"
}

@test "TPTP: tptpgen without processCreate, with a process name, with monitor stacks" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	# no processCreate: the pid is the first synthetic id, named "java"
	"$G" --seed 3 --no-process -o "$TMP/np.trcxml"
	! grep -q '<processCreate' "$TMP/np.trcxml" || false
	apcconv -q "$TMP/np.trcxml" -o "$TMP/np.apc"
	apcdump "$TMP/np.apc" > "$TMP/np.txt"
	grep -Eq 'thread_name +ts=0 tid=1073741824 name="java"$' "$TMP/np.txt"
	grep -Eq 'link +ts=[0-9]+ cookie=2 pid=1073741824 tid=11$' "$TMP/np.txt"
	# processCreate's name names the process, in both encodings
	for b in "" --binary; do
		"$G" --seed 3 $b --process-name 'My App' -o "$TMP/pn"
		apcconv -q "$TMP/pn" -o "$TMP/pn$b.apc"
		apcdump "$TMP/pn$b.apc" | grep -Eq 'thread_name +ts=0 tid=4242 name="My App"$'
	done
	# monitor records: one string each; the binary stacks are counted
	# (the empty ones, before a thread's first call, are not)
	"$G" --seed 3 --binary --monitor-stacks --truth "$TMP/m.truth" -o "$TMP/m.trcbin"
	"$G" --seed 3 --monitor-stacks --truth "$TMP/mx.truth" -o "$TMP/m.trcxml"
	events=$(sed -n 's/^monitor_events //p' "$TMP/m.truth")
	stacks=$(sed -n 's/^monitor_stacks //p' "$TMP/m.truth")
	[ "$stacks" -gt 0 ]
	[ "$stacks" -lt "$events" ]
	run apcconv "$TMP/m.trcbin" -o "$TMP/mb.apc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tptp monitor stacks: $stacks"* ]]
	[ "$(count_msgs "$TMP/mb.apc" annotate_str)" -eq "$events" ]
	[ "$(sed -n 's/^monitor_events //p' "$TMP/mx.truth")" -eq "$events" ]
	run apcconv "$TMP/m.trcxml" -o "$TMP/mx.apc"
	[ "$status" -eq 0 ]
	[[ "$output" != *"monitor stacks"* ]]
	[ "$(count_msgs "$TMP/mx.apc" annotate_str)" -eq "$events" ]
	for f in np pn pn--binary mb mx; do apcverify -q "$TMP/$f.apc"; done
}

@test "TPTP XML: damage in the middle is not called a cut" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 3 -o "$TMP/a.trcxml"
	nl=$(wc -l < "$TMP/a.trcxml")
	# a comment with "--" in it, halfway
	{ head -n $((nl / 2)) "$TMP/a.trcxml"
	  echo '<!-- a -- b -->'
	  tail -n +$((nl / 2 + 1)) "$TMP/a.trcxml"
	} > "$TMP/bad.trcxml"
	at=$(head -n $((nl / 2)) "$TMP/a.trcxml" | wc -c)
	run apcconv "$TMP/bad.trcxml" -o "$TMP/bad.apc"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.trcxml: offset 0x"* ]]
	[[ "$output" == *"line $((nl / 2 + 1)): not well-formed XML: double hyphen within comment; kept everything before it"* ]]
	[[ "$output" != *"truncated"* ]]
	off=$(echo "$output" | sed -n 's/.*offset 0x\([0-9a-f]*\):.*/\1/p' | head -n 1)
	[ $((16#$off)) -ge "$at" ]
	[ $((16#$off)) -le $((at + 16)) ]
	apcverify -q "$TMP/bad.apc"
}

@test "bytes in: a gzip'd input counts its uncompressed bytes, as plain" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 3 -o "$TMP/a.trcxml"
	"$G" --seed 3 --binary -o "$TMP/c.trcbin"
	for f in a.trcxml c.trcbin; do
		gzip -c "$TMP/$f" > "$TMP/$f.gz"
		size=$(stat -c %s "$TMP/$f")
		apcconv -q --stats=json "$TMP/$f" -o "$TMP/p.apc" > "$TMP/p.json"
		apcconv -q --stats=json "$TMP/$f.gz" -o "$TMP/z.apc" > "$TMP/z.json"
		grep -q "\"bytes_in\":$size," "$TMP/p.json"
		grep -q "\"bytes_in\":$size," "$TMP/z.json"
		rm -rf "$TMP/p.apc" "$TMP/z.apc"
	done
}

@test "bytes in: damaged TPTP XML counts up to the damage, not what was read ahead" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 3 --calls 2000 -o "$TMP/a.trcxml"
	# a '<' inside an attribute value 3000 bytes in; the file goes on
	{ head -c 3000 "$TMP/a.trcxml"; printf '<<<'; tail -c +3001 "$TMP/a.trcxml"; } > "$TMP/d.trcxml"
	[ "$(stat -c %s "$TMP/d.trcxml")" -gt 100000 ]
	for f in d.trcxml d.trcxml.gz; do
		[ "$f" = d.trcxml.gz ] && gzip -k "$TMP/d.trcxml"
		conv 1 --stats=json "$TMP/$f" -o "$TMP/o.apc"
		grep -q "^apcconv: $TMP/$f: offset 0xbb8: line [0-9]*: not well-formed XML: " <<<"$output"
		grep -q '"bytes_in":3000,' <<<"$output"
		grep -q "^apcconv: $TMP/$f (tptp-xml) -> $TMP/o.apc: 3000 bytes in, " <<<"$output"
		rm -rf "$TMP/o.apc"
	done
}

@test "bytes in: a gzip'd annotate stream counts its uncompressed bytes" {
	need_shared
	f="$SHARED/annotate/v4/stream1.annotate.bin"
	size=$(stat -c %s "$f")
	gzip -c "$f" > "$TMP/s1.annotate.bin.gz"
	apcconv -q --stats=json "$f" -o "$TMP/p.apc" > "$TMP/p.json"
	apcconv -q --stats=json "$TMP/s1.annotate.bin.gz" -o "$TMP/z.apc" > "$TMP/z.json"
	grep -q "\"bytes_in\":$size," "$TMP/p.json"
	grep -q "\"bytes_in\":$size," "$TMP/z.json"
}

@test "TPTP XML: a DOCTYPE before the first element is skipped, wrapped or bare" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 4 --calls 50 -o "$TMP/a.trcxml"
	"$G" --seed 4 --calls 50 --bare -o "$TMP/b.trcxml"
	# wrapped: an internal subset whose entity value and comment hold '>'
	# and ']', and an attribute that uses the entity
	{ head -n 1 "$TMP/a.trcxml"
	  printf '<!DOCTYPE TRACE [\n <!ENTITY h "gen-host">\n <!ENTITY x "a>]b">\n <!-- > ] -->\n]>\n'
	  tail -n +2 "$TMP/a.trcxml" | sed 's/hostname="gen-host"/hostname="\&h;"/'
	} > "$TMP/ad.trcxml"
	grep -q 'hostname="&h;"' "$TMP/ad.trcxml"
	# bare: an external DOCTYPE, no root element
	{ printf '<!DOCTYPE TRACE SYSTEM "trace.dtd">\n'; cat "$TMP/b.trcxml"; } > "$TMP/bd.trcxml"
	for f in a ad b bd; do
		SOURCE_DATE_EPOCH=0 apcconv -q "$TMP/$f.trcxml" -o "$TMP/$f.apc"
		apcverify -q "$TMP/$f.apc"
	done
	cmp "$TMP/a.apc/0000000000" "$TMP/ad.apc/0000000000"
	grep -q 'gen-host' "$TMP/ad.apc/captured.xml" # the entity was expanded
	cmp "$TMP/b.apc/0000000000" "$TMP/bd.apc/0000000000"
}

@test "TPTP XML: a prolog longer than the 64 KiB detection looks at, wrapped or bare" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 4 --calls 50 -o "$TMP/a.trcxml"
	"$G" --seed 4 --calls 50 --bare -o "$TMP/b.trcxml"
	# a licence of 80 KiB in comments after the declaration
	for f in a b; do
		{ head -n 1 "$TMP/$f.trcxml"
		  for i in $(seq 2000); do echo "<!-- licence line $i: the quick brown fox -->"; done
		  tail -n +2 "$TMP/$f.trcxml"
		} > "$TMP/${f}l.trcxml"
		[ "$(stat -c %s "$TMP/${f}l.trcxml")" -gt 70000 ]
		SOURCE_DATE_EPOCH=0 apcconv -q "$TMP/$f.trcxml" -o "$TMP/$f.apc"
		SOURCE_DATE_EPOCH=0 apcconv -q "$TMP/${f}l.trcxml" -o "$TMP/${f}l.apc"
		cmp "$TMP/$f.apc/0000000000" "$TMP/${f}l.apc/0000000000"
		# read from a pipe too: no seeking back
		SOURCE_DATE_EPOCH=0 apcconv -q - -o "$TMP/${f}p.apc" < "$TMP/${f}l.trcxml"
		cmp "$TMP/$f.apc/0000000000" "$TMP/${f}p.apc/0000000000"
	done
}

@test "annotate streams: every call in the truth file is in the capture" {
	need_shared
	for v in v3 v4 v5; do
		apcconv -q "$SHARED/annotate/$v"/stream*.annotate.bin -o "$TMP/$v.apc"
		apcverify -q "$TMP/$v.apc"
		want=$(python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("code") not in (None, 0)))' \
			"$SHARED/annotate/$v/truth.jsonl")
		got=$(count_msgs "$TMP/$v.apc" annotate_)
		setups=$(count_msgs "$TMP/$v.apc" annotate_setup)
		[ "$((got - setups))" -eq "$want" ]
	done
}

@test "--begin/--end keep only the window asked for" {
	apcconv -q --stats=json "$TD/barman/demo.bin" -o "$TMP/all.apc" > "$TMP/all.json"
	apcconv -q --stats=json --begin=5ms --end=10ms "$TD/barman/demo.bin" -o "$TMP/cut.apc" > "$TMP/cut.json"
	python3 - "$TMP/all.json" "$TMP/cut.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert c["outside_window"] > 0 and c["events"] + c["outside_window"] == a["events"], (a, c)
assert c["last_ts"] - c["first_ts"] < 5_000_000, c
PY
	apcverify -q "$TMP/cut.apc"
	# the window is in the capture's times: the data apcdump lists in it
	# (whose window holds its end: up to 1 ns before) is what is kept,
	# converting the trace or the capture made of it
	data() {
		apcdump "$@" | grep -E ' (block_counter|activity_switch|counter|backtrace|annotate_str|annotate_counter_value) ' |
			sed 's/^ *[0-9]* 0x[0-9a-f]* //' | sort
	}
	data --begin=5ms --end=9.999999999ms "$TMP/all.apc" > "$TMP/want"
	[ "$(wc -l < "$TMP/want")" -gt 100 ]
	data "$TMP/cut.apc" | diff "$TMP/want" -
	apcconv -q --begin=5ms --end=10ms "$TMP/all.apc" -o "$TMP/again.apc"
	data "$TMP/again.apc" | diff "$TMP/want" -
}

@test "the summary line counts what could not be mapped" {
	run apcconv "$TD/barman/le32_junk_trailing.bin" -o "$TMP/j.apc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"not mapped:"* ]]
	[[ "$output" == *"leading"* ]]
}

@test "TPTP XML: a trace of more threads than External fds reuses fds, closing the oldest" {
	# 70,000 threads each write an annotation (a monitor wait), the
	# process more (the GC marker and job): each is a connection, and
	# readers track fds below 65536, so the 65,536th connection takes
	# fd 1, closed first, and so on round the fds
	python3 - "$TMP/t.trcxml" <<'EOF'
import sys
n = 70000
with open(sys.argv[1], "w") as f:
    f.write('<TRACE>\n<traceStart time="100.0"/>\n')
    for i in range(1, n + 1):
        f.write('<threadStart threadId="%d" time="100.%06d" threadName="t%d"/>\n' % (i, i, i))
        f.write('<monWait threadIdRef="%d" time="100.%06d" objIdRef="5" timeout="0"/>\n' % (i, i))
    f.write('<gcStart time="101.0"/><gcFinish time="101.5"/>\n</TRACE>\n')
EOF
	conv 0 "$TMP/t.trcxml" -o "$TMP/t.apc"
	apcverify "$TMP/t.apc"
	apcdump "$TMP/t.apc" >"$TMP/list"
	[ "$(grep -c 'annotate_str .*monitor wait' "$TMP/list")" -eq 70000 ]
	# a connection per thread, the process's, and the CAM view's; each
	# closed once: those past 65,535 to free their fds, the rest at the end
	setups=$(grep -c 'annotate_setup' "$TMP/list")
	[ "$setups" -ge 70001 ]
	[ "$(grep -c 'external_disconnect' "$TMP/list")" -eq "$setups" ]
	[ "$(grep -o 'external_disconnect fd=[0-9]*' "$TMP/list" | sort -t= -k2 -n | tail -1)" = "external_disconnect fd=65535" ]
	# fd 1's first client is closed before its fd is given again
	first_close=$(grep -n 'external_disconnect fd=1$' "$TMP/list" | head -1 | cut -d: -f1)
	second_setup=$(grep -n 'annotate_setup *fd=1 ' "$TMP/list" | sed -n 2p | cut -d: -f1)
	[ -n "$first_close" ] && [ -n "$second_setup" ] && [ "$first_close" -lt "$second_setup" ]
}

@test "TPTP XML: the summary counts synthetic tids and times with trailing characters" {
	cat > "$TMP/t.trcxml" <<'XML'
<TRACE>
<traceStart time="100.0"/>
<threadStart threadId="0" time="100.0" threadName="zero"/>
<threadStart threadId="1073741824" time="100.0" threadName="big"/>
<gcStart time="100.5 junk"/>
<gcFinish time="100.7"/>
</TRACE>
XML
	run apcconv "$TMP/t.trcxml" -o "$TMP/t.apc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tptp thread ids of 0 or none (given synthetic tids): 1"* ]]
	[[ "$output" == *"tptp thread ids of 2^30 or more (given synthetic tids): 1"* ]]
	[[ "$output" == *"tptp times with characters after the number (read up to them): 1"* ]]
	apcverify -q "$TMP/t.apc"
}

@test "SIGTERM while reading leaves no output behind" {
	# apcconv reads a pipe whose writer stays open: it is blocked in
	# read() when the signal comes.  Only our own processes are signalled.
	mkfifo "$TMP/fifo"
	"$APC_BIN/apcconv" -f barman - -o "$TMP/int.apc" < "$TMP/fifo" 2> "$TMP/err" &
	pid=$!
	exec 7> "$TMP/fifo"
	cat "$TD/barman/demo.bin" >&7
	# wait (at most 20 s) until it has read all we wrote: its handlers
	# are installed and it is blocked in read()
	size=$(stat -c %s "$TD/barman/demo.bin")
	for i in $(seq 200); do
		r=$(awk '/^rchar/ {print $2}' "/proc/$pid/io" 2>/dev/null || echo 0)
		[ "${r:-0}" -ge "$size" ] && break
		sleep 0.1
	done
	sleep 0.2
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	exec 7>&-
	[ "$st" -eq 2 ] || { echo "exit status $st"; cat "$TMP/err"; false; }
	grep -q interrupted "$TMP/err"
	[ ! -e "$TMP/int.apc" ]
	[ -z "$(ls -A "$TMP" | grep -v -e '^err$' -e '^fifo$')" ]
}

@test "a second input to a one-input format is refused, not dropped" {
	run apcconv "$TD/barman/demo.bin" "$TD/barman/le64_linear_v3.bin" -o "$TMP/two.apc"
	echo "$output"
	[ "$status" -eq 2 ]
	grep -q 'barman input is one file: 2 inputs given' <<<"$output"
	[ ! -e "$TMP/two.apc" ]
}

@test "--begin/--end keep names and declarations, as documented" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/all.apc"
	apcconv -q --begin=5ms --end=10ms "$TD/barman/demo.bin" -o "$TMP/win.apc"
	apcverify -q "$TMP/win.apc"
	for kind in thread_name cookie_name link annotate_channel annotate_group; do
		a=$(apcdump "$TMP/all.apc" | grep -c " $kind ")
		w=$(apcdump "$TMP/win.apc" | grep -c " $kind ")
		echo "$kind: $a in all, $w in the window"
		[ "$a" -gt 0 ]
		[ "$w" -eq "$a" ]
	done
	# and the window did cut: fewer counter values
	[ "$(apcdump "$TMP/win.apc" | grep -c ' block_counter ')" -lt "$(apcdump "$TMP/all.apc" | grep -c ' block_counter ')" ]
}

@test "--begin/--end: a window that keeps only names and declarations writes nothing, exit 1" {
	# demo spans about 0.04 s: a window after its end keeps the names,
	# links and annotation declarations, and no data at all
	run apcconv --begin=100s "$TD/barman/demo.bin" -o "$TMP/w.apc"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TD/barman/demo.bin: nothing to convert in the --begin/--end window (1400 events outside it)" ]
	[[ "${lines[1]}" == "apcconv: $TD/barman/demo.bin (barman) -> nothing written: "*"; outside --begin/--end: 1400" ]]
	[ ! -e "$TMP/w.apc" ]
	[ -z "$(ls -A "$TMP")" ]
	run apcconv -q --stats=json --begin=100s "$TD/barman/demo.bin" -o "$TMP/w.apc"
	[ "$status" -eq 1 ]
	grep -q '"status":1,' <<<"$output"
	grep -q '"output":null' <<<"$output"
}

@test "SIGTERM while the archive is compressed leaves no output behind" {
	[ -x "$APC_TOOLS/barmangen" ] || skip "barmangen not built"
	# 60 MB of input: its data file takes about a second to gzip here
	"$APC_TOOLS/barmangen" --seed 4 --size 60000000 -o "$TMP/big.bin" >/dev/null
	"$APC_BIN/apcconv" -q "$TMP/big.bin" -o "$TMP/big.apc.tar.gz" 2> "$TMP/err" &
	pid=$!
	# the archive's part file appears when compression starts
	for i in $(seq 400); do
		ls -a "$TMP" | grep -q '^\.big\.apc\.tar\.gz\.part' && break
		sleep 0.05
	done
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 2 ] || { echo "exit status $st"; cat "$TMP/err"; false; }
	grep -q interrupted "$TMP/err"
	[ ! -e "$TMP/big.apc.tar.gz" ]
	[ -z "$(ls -A "$TMP" | grep -v -e '^err$' -e '^big\.bin$')" ]
}

@test "SIGTERM while captured.xml and events.xml are built leaves no output behind" {
	# 300,000 counters: after the data file, their XML takes a second or
	# so; the signal comes when captured.xml is in the part folder, and
	# the run went on to write events.xml and exit 0
	mkdir "$TMP/in.apc"
	apcpack_py "$TMP/in.apc" <<'EOF'
d = sys.argv[1]
open(d + "/0000000000", "wb").write(frames([summary(), block_counter()]))
with open(d + "/captured.xml", "w") as f:
    f.write('<?xml version="1.0"?>\n<captured version="1" protocol="680"><counters>\n')
    f.write('<counter key="0x11" type="T_cnt0"/>\n')
    f.writelines('<counter key="0x%x" type="X_%d"/>\n' % (0x100 + k, k) for k in range(300000))
    f.write('</counters></captured>\n')
EOF
	"$APC_BIN/apcconv" -q "$TMP/in.apc" -o "$TMP/out.apc" 2> "$TMP/err" &
	pid=$!
	seen=
	for i in $(seq 6000); do
		if compgen -G "$TMP/.out.apc.tmp-*/captured.xml" >/dev/null; then seen=1; break; fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	kill -TERM "$pid" 2>/dev/null || true
	st=0
	wait "$pid" || st=$?
	[ -n "$seen" ] || skip "the conversion ended before its captured.xml was seen (exit $st)"
	[ "$st" -eq 2 ] || { echo "exit status $st"; cat "$TMP/err"; false; }
	[ "$(cat "$TMP/err")" = "apcconv: interrupted" ]
	[ ! -e "$TMP/out.apc" ]
	[ -z "$(ls -A "$TMP" | grep -v -e '^err$' -e '^in\.apc$')" ]
}

@test "captured.xml's created comes from the input's wall clock when it has one" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/a.apc"
	# the demo's Summary says 1750000000 s since the epoch
	apcdump -c 1 "$TMP/a.apc" | grep -q ' timestamp=1750000000000000000 '
	grep -q 'created="1750000000"' "$TMP/a.apc/captured.xml"
	SOURCE_DATE_EPOCH=12345 apcconv -q "$TD/barman/demo.bin" -o "$TMP/b.apc"
	grep -q 'created="1750000000"' "$TMP/b.apc/captured.xml"
}

@test "--end before --begin is a usage error" {
	run apcconv --begin=20ms --end=10ms "$TD/barman/demo.bin" -o "$TMP/w.apc"
	[ "$status" -eq 2 ]
	grep -q -- '--end must come after --begin' <<<"$output"
	[ ! -e "$TMP/w.apc" ]
	# without --begin the window starts at the capture's start: --end=0 is empty too
	for end in 0 0ms; do
		run apcconv --end=$end "$TD/barman/demo.bin" -o "$TMP/w.apc"
		[ "$status" -eq 2 ]
		[ "$output" = "apcconv: --end must come after time 0, the capture's start (an empty window keeps nothing)" ]
		[ ! -e "$TMP/w.apc" ]
	done
	run apcconv --begin=10ms --end=10ms "$TD/barman/demo.bin" -o "$TMP/w.apc"
	[ "$status" -eq 2 ]
	# the smallest window there is still converts: 1 ns at demo's first
	# counter values (5012921 ns into the capture)
	apcconv -q --begin=5012921 --end=5012922 "$TD/barman/demo.bin" -o "$TMP/w.apc"
	[ "$(apcdump "$TMP/w.apc" | grep -c ' block_counter .* ts=5012921 ')" -gt 0 ]
	[ "$(apcdump "$TMP/w.apc" | grep ' block_counter ' | grep -vc ' ts=5012921 ')" -eq 0 ]
}

@test "--begin/--end: finer than a nanosecond rounds to the nearest; too large is said so" {
	need_python
	# demo's second time is 5045670 ns into the capture, its third 5079419
	kept() {
		apcconv -q --stats=json --overwrite --begin="$1" "$TD/barman/demo.bin" -o "$TMP/w.apc" |
			python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["events"], d["first_ts"])'
	}
	all=$(kept 5045670)
	[ "$all" = "1440 5045670" ]
	[ "$(kept 5045.6704us)" = "$all" ]
	# 5045670.6 ns is 5045671, after that event
	[ "$(kept 5045.6706us)" = "1439 5079419" ]
	# half a nanosecond rounds up, as apcdump rounds it
	[ "$(kept 5045670.5)" = "1439 5079419" ]
	[ "$(kept 5045670.5ns)" = "1439 5079419" ]
	# too large for a capture's time, and said so, as apcdump says it
	conv 2 --begin=99999999999s "$TD/barman/demo.bin" -o "$TMP/x.apc"
	[ "${lines[0]}" = "apcconv: --begin time '99999999999s' is too large (at most 9223372036.854775807s)" ]
	conv 2 --end=9223372036854775808 "$TD/barman/demo.bin" -o "$TMP/x.apc"
	[ "${lines[0]}" = "apcconv: --end time '9223372036854775808' is too large (at most 9223372036.854775807s)" ]
	conv 2 --end=18446744073709551616 "$TD/barman/demo.bin" -o "$TMP/x.apc"
	[[ "${lines[0]}" == *"is too large (at most 9223372036.854775807s)" ]]
	[ ! -e "$TMP/x.apc" ]
	conv 0 -q --end=9223372036.854775807s "$TD/barman/demo.bin" -o "$TMP/x.apc"
	conv 2 --end=5x "$TD/barman/demo.bin" -o "$TMP/y.apc"
	[ "${lines[0]}" = "apcconv: bad --end time '5x' (e.g. 1500, 1.5s, 20ms, 3us)" ]
	[ "${lines[1]}" = "Try 'apcconv --help' for more information." ]
}

# conv_cut FILE N : apcconv on the first N bytes of FILE (as $TMP/cut/
# and FILE's name), writing to $TMP/out/o.apc; the output folder starts
# empty.
conv_cut() {
	mkdir -p "$TMP/cut"
	head -c "$2" "$1" > "$TMP/cut/${1##*/}"
	rm -rf "$TMP/out" && mkdir "$TMP/out"
	run apcconv "$TMP/cut/${1##*/}" -o "$TMP/out/o.apc"
	echo "cut at $2: status $status: $output"
}

@test "a cut .tar.gz, .tar or .zip capture: the archive is named as truncated, exit 1" {
	for ext in tar.gz tar zip; do
		apcconv -q "$TD/barman/demo.bin" -o "$TMP/c.apc.$ext"
	done
	# gzip: in its header, in the deflate data, in its 8-byte trailer
	sz=$(stat -c %s "$TMP/c.apc.tar.gz")
	for n in 5 $((sz / 3)) $((sz - 3)); do
		conv_cut "$TMP/c.apc.tar.gz" $n
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "apcconv: $TMP/cut/c.apc.tar.gz: offset 0x"*": truncated gzip stream (the compressed data ends at byte $n)"* ]]
	done
	# every member was whole: converted all the same, the cut still told
	apcconv -q "$TMP/c.apc.tar.gz" -o "$TMP/whole.apc"
	diff -r "$TMP/whole.apc" "$TMP/out/o.apc"
	conv_cut "$TMP/c.apc.tar.gz" $((sz / 3))
	[[ "${lines[0]}" == *"; truncated tar archive: it ends inside the data of c.apc/0000000000 ("* ]]
	# before captured.xml: nothing to convert, and nothing left behind
	[ -z "$(ls -A "$TMP/out")" ]
	# tar: in the first header, in the second, in the data file
	conv_cut "$TMP/c.apc.tar" 300
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TMP/cut/c.apc.tar: offset 0x12c: truncated tar archive: it ends inside the member header after its start (300 of its 512 bytes)" ]
	conv_cut "$TMP/c.apc.tar" 600
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TMP/cut/c.apc.tar: offset 0x258: truncated tar archive: it ends inside the member header after c.apc/ (88 of its 512 bytes)" ]
	conv_cut "$TMP/c.apc.tar" 5000
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/c.apc.tar: offset 0x1388: truncated tar archive: it ends inside the data of c.apc/0000000000 (3976 of its "*" bytes)" ]]
	[ -z "$(ls -A "$TMP/out")" ]
	# zip: in the first header, in the data file, without the end record
	sz=$(stat -c %s "$TMP/c.apc.zip")
	conv_cut "$TMP/c.apc.zip" 20
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/c.apc.zip: offset 0x14: truncated zip archive: it ends inside its first member header"* ]]
	conv_cut "$TMP/c.apc.zip" $((sz / 3))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/c.apc.zip: offset 0x"*": truncated zip archive: it ends inside c.apc/0000000000 or the header after it"* ]]
	[ -z "$(ls -A "$TMP/out")" ]
	conv_cut "$TMP/c.apc.zip" $((sz - 22))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/c.apc.zip: offset 0x"*": truncated zip archive: it has no end of central directory record" ]]
	apcverify -q "$TMP/out/o.apc"
	# a pipe gives the same, named <stdin>
	head -c $(($(stat -c %s "$TMP/c.apc.tar.gz") / 3)) "$TMP/c.apc.tar.gz" > "$TMP/p.tgz"
	rm -rf "$TMP/out" && mkdir "$TMP/out"
	run sh -c 'cat "$1" | "$2" - -o "$3"' sh "$TMP/p.tgz" "$APC_BIN/apcconv" "$TMP/out/p.apc"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: <stdin>: offset 0x"*": truncated gzip stream"* ]]
	[ -z "$(ls -A "$TMP/out")" ]
}

@test "a cut .gz of a Barman dump or a bare capture keeps what came before the cut" {
	# Barman: converted up to the cut, as a cut .bin is
	gzip -c "$TD/barman/demo.bin" > "$TMP/b.bin.gz"
	conv_cut "$TMP/b.bin.gz" $(($(stat -c %s "$TMP/b.bin.gz") / 2))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/b.bin.gz: offset 0x"* ]]
	apcverify -q "$TMP/out/o.apc"
	[ "$(count_msgs "$TMP/out/o.apc" activity)" -gt 0 ]
	# Barman, only the gzip trailer cut: every record, and the cut told
	conv_cut "$TMP/b.bin.gz" $(($(stat -c %s "$TMP/b.bin.gz") - 3))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/b.bin.gz: offset 0xc6b0: truncated gzip stream (the compressed data ends at byte "* ]]
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/whole.apc"
	diff -r "$TMP/whole.apc" "$TMP/out/o.apc"
	# a bare data file: damaged data (1), not an I/O error (2)
	gzip -c "$TMP/whole.apc/0000000000" > "$TMP/d.apc.gz"
	conv_cut "$TMP/d.apc.gz" $(($(stat -c %s "$TMP/d.apc.gz") / 2))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/d.apc.gz: offset 0x"*": truncated gzip stream (the compressed data ends at byte "* ]]
	apcverify -q "$TMP/out/o.apc"
}

@test "a .gz of no known format cut short: the cut is told, not an unknown format" {
	seq 1 30000 | gzip -c > "$TMP/n.gz"
	run apcconv "$TMP/n.gz" -o "$TMP/n.apc"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot tell the input format"* ]]
	conv_cut "$TMP/n.gz" 1000
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/n.gz: offset 0x"*": truncated gzip stream (the compressed data ends at byte 1000)" ]]
	[[ "${lines[1]}" == "apcconv: $TMP/cut/n.gz (gzip) -> nothing written: 0 bytes in, 0 events, "* ]]
	[ "${#lines[@]}" -eq 2 ]
	[ -z "$(ls -A "$TMP/out")" ]
}

@test "a cut LTT tarball: the CPU data before the cut is converted, the cut told" {
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/lttgen" --seed 3 --events 2000 --cpus 1 -o "$TMP/ltt" >/dev/null
	# info/system.xml first and one CPU file (most of the bytes) last, so
	# a cut past the first third falls in that file, whatever gzip does
	tar -C "$TMP" -czf "$TMP/l.tgz" ltt/info ltt/eventdefs ltt/control ltt/cpu/0
	apcconv -q "$TMP/l.tgz" -o "$TMP/l.apc"
	whole=$(apcdump "$TMP/l.apc" | wc -l)
	conv_cut "$TMP/l.tgz" $(($(stat -c %s "$TMP/l.tgz") * 2 / 3))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/l.tgz: offset 0x"*": truncated gzip stream (the compressed data ends at byte "*"); truncated tar archive: it ends inside the data of ltt/cpu/0 ("*" bytes)" ]]
	apcverify -q "$TMP/out/o.apc"
	part=$(apcdump "$TMP/out/o.apc" | wc -l)
	[ "$part" -gt 100 ]
	[ "$part" -lt "$whole" ]
	# only the gzip trailer cut: the same capture, the cut still told
	conv_cut "$TMP/l.tgz" $(($(stat -c %s "$TMP/l.tgz") - 3))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/l.tgz: offset 0x"*": truncated gzip stream (the compressed data ends at byte "*")" ]]
	diff -r "$TMP/l.apc" "$TMP/out/o.apc"
}

# ltt_compressed "PROG ARGS" EXT NAME: an LTT tarball compressed by PROG
# (skipped, visibly, when PROG is not installed) converts as the plain
# tarball does; cut at two thirds, or with bytes flipped half way, the
# CPU data before the damage is converted and the damage is told, with
# the compressed stream's first, as for .tgz.  The tarball is made big
# enough for a cut to keep whole blocks (bzip2 -1: 100 kB, zstd: 128 kB).
ltt_compressed() {
	local prog=$1 ext=$2 name=$3 sz n
	command -v "${prog%% *}" >/dev/null || skip "${prog%% *} is not installed"
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/lttgen" --seed 3 --events 30000 --cpus 1 -o "$TMP/ltt" >/dev/null
	tar -C "$TMP" -cf "$TMP/l.tar" ltt/info ltt/eventdefs ltt/control ltt/cpu/0
	$prog -c "$TMP/l.tar" > "$TMP/l.tar.$ext"
	apcconv -q "$TMP/l.tar" -o "$TMP/l.apc"
	apcconv -q "$TMP/l.tar.$ext" -o "$TMP/w.apc"
	diff -r "$TMP/l.apc" "$TMP/w.apc"
	whole=$(apcdump "$TMP/l.apc" | wc -l)
	sz=$(stat -c %s "$TMP/l.tar.$ext")
	n=$((sz * 2 / 3))
	conv_cut "$TMP/l.tar.$ext" $n
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/l.tar.$ext: offset 0x"*": truncated $name stream (the compressed data ends at byte $n); truncated tar archive: it ends inside the data of ltt/cpu/0 ("*" bytes)" ]]
	apcverify -q "$TMP/out/o.apc"
	part=$(apcdump "$TMP/out/o.apc" | wc -l)
	[ "$part" -gt 100 ]
	[ "$part" -lt "$whole" ]
	# the same from a pipe, named <stdin>
	rm -rf "$TMP/out" && mkdir "$TMP/out"
	run sh -c 'cat "$1" | "$2" - -o "$3"' sh "$TMP/cut/l.tar.$ext" "$APC_BIN/apcconv" "$TMP/out/p.apc"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: <stdin>: offset 0x"*": truncated $name stream (the compressed data ends at byte $n); truncated tar archive: "* ]]
	apcverify -q "$TMP/out/p.apc"
	# bytes flipped half way: found, no crash, no hang, nothing half-written
	cp "$TMP/l.tar.$ext" "$TMP/bad.tar.$ext"
	printf '\125\252\125\252\125\252\125\252' | dd of="$TMP/bad.tar.$ext" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
	rm -rf "$TMP/out" && mkdir "$TMP/out"
	run timeout 60 "$APC_BIN/apcconv" "$TMP/bad.tar.$ext" -o "$TMP/out/b.apc"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/bad.tar.$ext: offset 0x"*": $name data corrupt before compressed byte "* ]]
	[ -z "$(ls -A "$TMP/out")" ] || apcverify -q "$TMP/out/b.apc"
	[ -z "$(ls -A "$TMP/out" | grep -v '^b\.apc$')" ]
}

@test "a cut or damaged .tar.bz2 LTT tarball: the data before the damage is converted, the damage told" {
	ltt_compressed "bzip2 -1" bz2 bzip2
}

@test "a cut or damaged .tar.xz LTT tarball: the data before the damage is converted, the damage told" {
	ltt_compressed xz xz xz
}

@test "a cut or damaged .tar.zst LTT tarball: the data before the damage is converted, the damage told" {
	ltt_compressed "zstd -q" zst zstd
}

@test "a cut or damaged .tar.lz4 LTT tarball: the data before the damage is converted, the damage told" {
	# 64 KiB blocks (lz4's default is 4 MiB, more than the whole tarball)
	ltt_compressed "lz4 -q -B4" lz4 lz4
}

@test "a cut or damaged .tar.lz LTT tarball: the data before the damage is converted, the damage told" {
	# tests/lzip.py writes what lzip -c does (lzip -t accepts it)
	ltt_compressed "$PYLZIP" lz lzip
}

@test "a Barman dump in gzip, bzip2, xz, zstd, lz4 or lzip converts as the dump; cut, it keeps what came before" {
	local found=0
	"$APC_TOOLS/barmangen" -o "$TMP/b.bin" --seed 5 --records 10000 --buffer 1000000
	apcconv -q "$TMP/b.bin" -o "$TMP/plain.apc"
	whole=$(count_msgs "$TMP/plain.apc" block_counter)
	for c in "gzip:gz:gzip" "bzip2 -1:bz2:bzip2" "xz:xz:xz" "zstd -q:zst:zstd" "lz4 -q -B4:lz4:lz4" \
		 "lzip:lz:lzip" "$PYLZIP:lz:lzip"; do
		IFS=: read -r prog ext name <<<"$c"
		if ! command -v "${prog%% *}" >/dev/null; then
			echo "# ${prog%% *} is not installed: $ext not tested" >&3
			continue
		fi
		found=1
		$prog -c "$TMP/b.bin" > "$TMP/b.bin.$ext"
		rm -rf "$TMP/w.apc"
		apcconv -q "$TMP/b.bin.$ext" -o "$TMP/w.apc"
		diff -r "$TMP/plain.apc" "$TMP/w.apc"
		n=$(($(stat -c %s "$TMP/b.bin.$ext") * 2 / 3))
		conv_cut "$TMP/b.bin.$ext" $n
		[ "$status" -eq 1 ]
		# the reader stops at the short read; the stream's cut is the cause
		[[ "${lines[0]}" == "apcconv: $TMP/cut/b.bin.$ext: offset 0x"*": truncated $name stream (the compressed data ends at byte $n); data area truncated: "* ]]
		apcverify -q "$TMP/out/o.apc"
		part=$(count_msgs "$TMP/out/o.apc" block_counter)
		[ "$part" -gt 0 ]
		[ "$part" -lt "$whole" ]
	done
	[ "$found" -eq 1 ] || skip "none of gzip, bzip2, xz, zstd, lz4, lzip is installed"
}

@test "a compressed Barman dump cut in the bytes its reader never reads: every record, and the cut told" {
	local found=0 sz
	# 2000 records in a 1 MB buffer and 200 kB after it: the reader takes
	# the records and leaves the rest
	"$APC_TOOLS/barmangen" -o "$TMP/t.bin" --seed 5 --records 2000 --trailing 200000
	apcconv -q "$TMP/t.bin" -o "$TMP/plain.apc"
	for c in "gzip:gz:gzip" "bzip2 -1:bz2:bzip2" "xz:xz:xz" "zstd -q:zst:zstd" "lz4 -q -B4:lz4:lz4" \
		 "lzip:lz:lzip" "$PYLZIP:lz:lzip"; do
		IFS=: read -r prog ext name <<<"$c"
		if ! command -v "${prog%% *}" >/dev/null; then
			echo "# ${prog%% *} is not installed: $ext not tested" >&3
			continue
		fi
		found=1
		$prog -c "$TMP/t.bin" > "$TMP/t.bin.$ext"
		sz=$(stat -c %s "$TMP/t.bin.$ext")
		conv_cut "$TMP/t.bin.$ext" $((sz - 3))
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" == "apcconv: $TMP/cut/t.bin.$ext: offset 0x"*": truncated $name stream (the compressed data ends at byte $((sz - 3)))" ]]
		diff -r "$TMP/plain.apc" "$TMP/out/o.apc"
	done
	[ "$found" -eq 1 ] || skip "none of gzip, bzip2, xz, zstd, lz4, lzip is installed"
}

@test "a compressed input cut before anything could be decoded is told as cut, not an unknown format" {
	command -v bzip2 >/dev/null || skip "bzip2 is not installed"
	# one 900 kB bzip2 block: nothing comes out of it until it is whole
	bzip2 -c "$TD/barman/demo.bin" > "$TMP/d.bin.bz2"
	n=$(($(stat -c %s "$TMP/d.bin.bz2") / 2))
	conv_cut "$TMP/d.bin.bz2" $n
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TMP/cut/d.bin.bz2: offset 0x0: truncated bzip2 stream (the compressed data ends at byte $n)" ]
	[[ "${lines[1]}" == "apcconv: $TMP/cut/d.bin.bz2 (bzip2) -> nothing written: 0 bytes in, 0 events, "* ]]
	[ "${#lines[@]}" -eq 2 ]
	[ -z "$(ls -A "$TMP/out")" ]
}

@test "a cut or damaged cpio LTT archive: the members before the damage are converted, the damage told" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/lttgen" --seed 3 --events 30000 -o "$TMP/ltt" >/dev/null
	# a cpio with cpu/0 last; at: where cpu/0's header starts
	at=$(write_cpio "$TMP" "$TMP/l.cpio" ltt/info/system.xml ltt/info/bookmarks.xml ltt/eventdefs/core.xml \
		ltt/eventdefs/extra.xml ltt/control/processes ltt/control/facilities \
		ltt/control/interrupts ltt/cpu/1 ltt/cpu/0 | awk '$1 == "ltt/cpu/0" { print $2 }')
	apcconv -q "$TMP/l.cpio" -o "$TMP/l.apc"
	whole=$(apcdump "$TMP/l.apc" | wc -l)
	# cut in cpu/0's data: cpu/0 is left out (libarchive may not read its
	# header), cpu/1 before it is converted, and the damage names it
	conv_cut "$TMP/l.cpio" $((at + 100000))
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/cut/l.cpio: offset $(printf 0x%x "$at"): cpio header of ltt/cpu/0: "*" bytes of data run past the end of the archive (99880 are there)" ]]
	apcverify -q "$TMP/out/o.apc"
	part=$(apcdump "$TMP/out/o.apc" | wc -l)
	[ "$part" -gt 100 ]
	[ "$part" -lt "$whole" ]
	# cut in cpu/0's header
	conv_cut "$TMP/l.cpio" $((at + 50))
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: $TMP/cut/l.cpio: offset $(printf 0x%x $((at + 50))): truncated cpio archive: it ends inside the member header after ltt/cpu/1 (50 of its 110 bytes)" ]
	[ "$(apcdump "$TMP/out/o.apc" | wc -l)" -eq "$part" ]
	# its magic damaged: not skipped over to the next header
	cp "$TMP/l.cpio" "$TMP/bad.cpio"
	printf 'Z' | dd of="$TMP/bad.cpio" bs=1 seek=$((at + 5)) conv=notrunc 2>/dev/null
	run apcconv "$TMP/bad.cpio" -o "$TMP/bad.apc"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcconv: $TMP/bad.cpio: offset $(printf 0x%x "$at"): damaged cpio archive: the header after ltt/cpu/1 cannot be read ("* ]]
}

@test "a tar cut before its ustar magic is still told as a cut tar, from the header's 156th byte" {
	apcconv -q "$TD/barman/demo.bin" -o "$TMP/c.apc.tar"
	for n in 156 200 261; do
		conv_cut "$TMP/c.apc.tar" $n
		[ "$status" -eq 1 ]
		[ "${lines[0]}" = "apcconv: $TMP/cut/c.apc.tar: offset $(printf 0x%x $n): truncated tar archive: it ends inside the member header after its start ($n of its 512 bytes)" ]
		[[ "${lines[1]}" == "apcconv: $TMP/cut/c.apc.tar (tar) -> nothing written: 0 bytes in, 0 events, "* ]]
		[ "${#lines[@]}" -eq 2 ]
		[ -z "$(ls -A "$TMP/out")" ]
	done
	# before the checksum's end: too little to tell a tar from other data
	conv_cut "$TMP/c.apc.tar" 100
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot tell the input format"* ]]
}

@test "--events that cannot be read or is not XML: one line of ours, exit 2, no output" {
	echo hi > "$TMP/t.txt"
	echo '<x/>' > "$TMP/x.xml"
	for ev in "$TMP" "$TMP/nope.xml" "$TMP/t.txt" "$TMP/x.xml"; do
		run apcconv -q --events="$ev" "$TD/barman/demo.bin" -o "$TMP/o.apc"
		[ "$status" -eq 2 ]
		# libxml2's own "I/O error : Is a directory" line is not there
		[ "${#lines[@]}" -eq 1 ]
		[ ! -e "$TMP/o.apc" ]
		case $ev in
		"$TMP") [ "$output" = "apcconv: $TMP: cannot read: is a directory" ] ;;
		*nope.xml) [ "$output" = "apcconv: $ev: cannot open: no such file or directory" ] ;;
		*t.txt) [ "$output" = "apcconv: $ev: offset 0x0: line 1: not well-formed XML: extra content at the end of the document" ] ;;
		*x.xml) [ "$output" = "apcconv: $ev: the events file has no <events> root" ] ;;
		esac
	done
	# where it breaks, and stdin named as every message names it; an
	# empty file and entity declarations are refused too
	: > "$TMP/empty.xml"
	run apcconv -q --events="$TMP/empty.xml" "$TD/barman/demo.bin" -o "$TMP/o.apc"
	[ "$output" = "apcconv: $TMP/empty.xml: empty file, not XML" ]
	printf '<!DOCTYPE e [<!ENTITY a "x">]><events/>' > "$TMP/ent.xml"
	run apcconv -q --events="$TMP/ent.xml" "$TD/barman/demo.bin" -o "$TMP/o.apc"
	[ "$output" = "apcconv: $TMP/ent.xml: declares XML entities (refused)" ]
	printf '<events>\n<category name="x">\n</events>\n' > "$TMP/cut.xml"
	run apcconv -q --events="$TMP/cut.xml" "$TD/barman/demo.bin" -o "$TMP/o.apc"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: $TMP/cut.xml: offset 0x26: line 3: not well-formed XML: opening and ending tag mismatch: category line 2 and events" ]
	run sh -c '"$0" -q --events=- "$1" -o "$2" < "$3"' "$APC_BIN/apcconv" "$TD/barman/demo.bin" "$TMP/o.apc" "$TMP/cut.xml"
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: <stdin>: offset 0x26: line 3: not well-formed XML: opening and ending tag mismatch: category line 2 and events" ]
	[ ! -e "$TMP/o.apc" ]
	# a compressed one reads as the plain one
	printf '<events><category name="L"><event counter="Z" title="New" name="z"/></category></events>\n' |
		gzip -c > "$TMP/ev.xml.gz"
	apcconv -q --events="$TMP/ev.xml.gz" "$TD/barman/demo.bin" -o "$TMP/o.apc"
	grep -q '<event counter="Z" title="New" name="z"/>' "$TMP/o.apc/events.xml"
}

@test "--events is read before the input: a bad one stops the run with nothing converted" {
	# Read at the end, a broken --events file cost a whole conversion
	# before its error; now the writer reads it when it opens.
	run apcconv -q --stats=json --events="$TMP/nope.xml" "$TD/barman/demo.bin" -o "$TMP/o.apc"
	[ "$status" -eq 2 ]
	[[ "$output" == *"apcconv: $TMP/nope.xml: cannot open: no such file or directory"* ]]
	json=$(printf '%s\n' "${lines[@]}" | grep '^{')
	[[ "$json" == *'"status":2'* ]]
	[[ "$json" == *'"events":0,'* ]]
	[[ "$json" == *'"frames":0,'* ]]
	[ ! -e "$TMP/o.apc" ]
}

@test "standard input on a terminal is refused in the same words, naming <stdin>, by all three tools" {
	command -v script >/dev/null || skip "script(1) is not installed: no terminal to test with"
	for p in apcconv apcdump apcverify; do
		# script gives the command a terminal on stdin (and stdout)
		run timeout 10 script -qec "'$APC_BIN/$p' -" /dev/null
		[ "$status" -eq 2 ]
		[ "$(tr -d '\r' <<<"$output")" = "$p: <stdin>: refusing to read binary data from a terminal" ]
	done
	run timeout 10 script -qec "'$APC_BIN/apcverify' -q -" /dev/null
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	# the library's own refusal (apcserve) names it too; an events file is not binary
	run timeout 10 script -qec "'$APC_BIN/apcserve' -p 0 -" /dev/null
	[ "$status" -eq 2 ]
	[ "$(tr -d '\r' <<<"$output")" = "apcserve: <stdin>: refusing to read binary data from a terminal" ]
	run timeout 10 script -qec "'$APC_BIN/apcconv' --events=- '$TD/barman/demo.bin' -o '$TMP/e.apc'" /dev/null
	[ "$status" -eq 2 ]
	[ "$(tr -d '\r' <<<"$output")" = "apcconv: <stdin>: refusing to read the events file from a terminal" ]
	[ ! -e "$TMP/e.apc" ]
}

@test "default names: compression and archive extensions come off, and -o - names its folder so" {
	cd "$TMP"
	for ext in gz bz2 xz; do
		case $ext in
		gz) gzip -c "$TD/barman/demo.bin" > "demo.bin.$ext" ;;
		bz2) bzip2 -c "$TD/barman/demo.bin" > "demo.bin.$ext" ;;
		xz) xz -c "$TD/barman/demo.bin" > "demo.bin.$ext" ;;
		esac
		apcconv -q "demo.bin.$ext"
		[ -d demo.apc ]
		[ ! -e "demo.bin.apc" ]
		rm -r demo.apc
	done
	# told by content, named by extension: every compression and archive
	# read, on gzip data, including the short tar forms
	gzip -c "$TD/barman/demo.bin" > g
	for name in demo.bin.lzma demo.bin.lz demo.bin.zst demo.bin.lz4 demo.bin.Z demo.tlz \
		    demo.tzst demo.taz demo.tbz demo.bin.tar.lz; do
		cp g "$name"
		apcconv -q "$name"
		[ -d demo.apc ] || { echo "$name: not demo.apc: $(ls)"; false; }
		rm -r demo.apc "$name"
	done
	# the tar stream's folder is the default name, not a fixed one
	apcconv -q "$TD/barman/demo.bin" -o - > s.tar
	[ "$(tar tf s.tar | sort | tr '\n' ' ')" = "demo.apc/ demo.apc/0000000000 demo.apc/captured.xml demo.apc/events.xml demo.apc/session.xml " ]
	apcconv -q - -o - < "$TD/barman/demo.bin" > s.tar
	[ "$(tar tf s.tar | head -1)" = "stdin.apc/" ]
}

@test "-vv adds time and memory; --stats=json carries CPU time and peak RSS" {
	run apcconv -v "$TD/barman/demo.bin" -o "$TMP/a.apc"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'peak RSS' <<<"$output")" -eq 0 ]
	run apcconv -vv "$TD/barman/demo.bin" -o "$TMP/b.apc"
	[ "$status" -eq 0 ]
	# the kinds' lines come first, then the resources line
	grep -q '^apcconv:   barman sample ' <<<"$output"
	[[ "${lines[-1]}" =~ ^apcconv:\ \ \ [0-9.]+\ s\ wall,\ [0-9.]+\ s\ user,\ [0-9.]+\ s\ system\ \([0-9.]+\ CPUs\ busy\),\ peak\ RSS\ [0-9.]+\ MiB\;\ threads:\ read-ahead\ (yes|no),\ write-behind\ (yes|no)$ ]]
	# single-threaded when told so
	APC_NO_THREADS=1 run apcconv -vv "$TD/barman/demo.bin" -o "$TMP/c.apc"
	[[ "${lines[-1]}" == *"threads: read-ahead no, write-behind no" ]]
	apcconv -q --stats=json "$TD/barman/demo.bin" -o "$TMP/d.apc" > "$TMP/s.json"
	python3 - "$TMP/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cpu_user_s"] >= 0 and d["cpu_system_s"] >= 0, d
# a real process: more than 1 MiB resident, less than the 64 MiB bound
assert 1024 < d["max_rss_kib"] < 65536, d["max_rss_kib"]
PY
}

@test "progress: redrawn on a terminal, whole lines into a log with --progress, off in pipes" {
	# A stdin that stays open a while makes the run last past the
	# redraw interval (0.25 s on a terminal, 5 s into a log).
	(cat "$TD/barman/demo.bin"; sleep 6) | "$APC_BIN/apcconv" --progress - -o "$TMP/a.apc" 2> "$TMP/log"
	grep -qE '^apcconv: +[0-9.]+%  +[0-9.]+ MB/s  ETA +[0-9]+ s$' "$TMP/log"
	[ "$(tr -d -c '\r\033' < "$TMP/log" | wc -c)" -eq 0 ]
	# not asked for, and stderr not a terminal: no progress at all
	(cat "$TD/barman/demo.bin"; sleep 1) | "$APC_BIN/apcconv" - -o "$TMP/b.apc" 2> "$TMP/log"
	[ "$(wc -l < "$TMP/log")" -eq 1 ]
	grep -q ' -> .*b.apc: ' "$TMP/log"
	command -v script >/dev/null || skip "script(1) is not installed: no terminal to test with"
	# on a terminal: redrawn in place, then the line is cleared
	script -qec "(cat '$TD/barman/demo.bin'; sleep 1) | '$APC_BIN/apcconv' - -o '$TMP/c.apc'" /dev/null > "$TMP/tty"
	grep -q "$(printf '\rapcconv: ')" "$TMP/tty"
	grep -q "$(printf '\r\033\\[K')" "$TMP/tty"
	# each redrawn line erases what a longer one before it left
	grep -q "$(printf '\rapcconv: .*s\033\\[K')" "$TMP/tty"
}

@test "output errors name the output as given, not the temporary folder, in lowercase" {
	run apcconv -q "$TD/barman/demo.bin" -o /nonexistent/dir/x
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: /nonexistent/dir/x.apc: cannot create: no such file or directory" ]
	run apcconv -q "$TD/barman/demo.bin" -o /nonexistent/dir/x.apc.zip
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: /nonexistent/dir/x.apc.zip: cannot create: no such file or directory" ]
	# a tar stream on stdout is built in TMPDIR: that is named
	run env TMPDIR=/nonexistent "$APC_BIN/apcconv" -q "$TD/barman/demo.bin" -o - > /dev/null
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: /nonexistent (TMPDIR): cannot create a temporary folder: no such file or directory" ]
	if [ -w /dev/full ]; then
		exits 2 sh -c 'exec "$0" -q "$1" -o - > /dev/full' "$APC_BIN/apcconv" "$TD/barman/demo.bin"
		[ "$output" = "apcconv: stdout: demo.apc/0000000000: cannot write: no space left on device" ]
	fi
}

@test "a full disk: the output and the member named, nothing left behind" {
	mkdir "$TMP/small"
	# demo.bin's capture data file is some 15 KB
	mount -t tmpfs -o size=8k tmpfs "$TMP/small" 2>/dev/null || skip "cannot mount a small tmpfs here (needs root)"
	cd "$TMP/small"
	for out in big.apc big.apc.zip; do
		run apcconv -q "$TD/barman/demo.bin" -o $out
		[ "$status" -eq 2 ]
		[ "$output" = "apcconv: $out: 0000000000: cannot write: no space left on device" ]
		[ -z "$(ls -A)" ]
	done
	run env TMPDIR="$TMP/small" "$APC_BIN/apcconv" -q "$TD/barman/demo.bin" -o - > /dev/null
	[ "$status" -eq 2 ]
	[ "$output" = "apcconv: $TMP/small (TMPDIR): 0000000000: cannot write: no space left on device" ]
	[ -z "$(ls -A)" ]
}

@test "past a file size limit (ulimit -f) the conversion fails with a message, not a signal, and leaves nothing" {
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/lttgen" --seed 3 --events 30000 -o "$TMP/ltt" >/dev/null
	# the capture's data file is some 400 KB; 100 blocks of 1 KiB are too few
	run bash -c "ulimit -f 100; '$APC_BIN/apcconv' -q -o '$TMP/out.apc' '$TMP/ltt'"
	[ "$status" -ne 0 ]
	[ "$status" -lt 128 ]
	# the output named as given, not its temporary folder
	[ "$output" = "apcconv: $TMP/out.apc: 0000000000: cannot write: file too large" ]
	[ ! -e "$TMP/out.apc" ]
	[ -z "$(ls -A "$TMP" | grep -v '^ltt$')" ]
	# reading a .tar.xz whose decoded copy hits the limit falls back to
	# decoding it as it is listed: the same listing
	command -v xz >/dev/null || skip "xz is not installed"
	apcconv -q -o "$TMP/ref.apc" "$TMP/ltt"
	tar -C "$TMP" -cJf "$TMP/ref.apc.tar.xz" ref.apc
	apcdump --summary "$TMP/ref.apc" | grep -v -e '^File:' -e '^File size:' >"$TMP/want"
	run bash -c "ulimit -f 100; '$APC_BIN/apcdump' --summary '$TMP/ref.apc.tar.xz' | grep -v -e '^File:' -e '^File size:'"
	[ "$status" -eq 0 ]
	diff "$TMP/want" - <<<"$output"
	# apcconv says why such an archive is slow, before the long part
	"$APC_TOOLS/lttgen" --seed 3 --events 3000 --block-size 65536 -o "$TMP/n" >/dev/null
	tar -C "$TMP" -cJf "$TMP/n.tar.xz" n
	apcconv -q "$TMP/n" -o "$TMP/n.apc"
	run bash -c "ulimit -f 400; '$APC_BIN/apcconv' '$TMP/n.tar.xz' -o '$TMP/m.apc'"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "apcconv: $TMP/n.tar.xz: note: cannot keep a decoded copy of the archive in ${TMPDIR:-/tmp} (file too large): each member is decoded from the archive's start, which is slow (point TMPDIR at a folder with room)" ]
	cmp "$TMP/n.apc/0000000000" "$TMP/m.apc/0000000000"
	# not with -q
	run bash -c "ulimit -f 400; '$APC_BIN/apcconv' -q '$TMP/n.tar.xz' -o '$TMP/q.apc'"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a compressed tar's decoded copy stops short of filling TMPDIR" {
	# A few KB of bzip2 decode to gigabytes: the copy leaves the smaller
	# of 1 GiB and a tenth of TMPDIR's file system free, and the members
	# are read from the archive instead.  A 64 MiB tmpfs of our own
	# (root, a mount namespace) makes the file system small.
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a small tmpfs"
	command -v unshare >/dev/null || skip "unshare is not installed"
	command -v bzip2 >/dev/null || skip "bzip2 is not installed"
	mkdir "$TMP/small"
	unshare -m mount -t tmpfs -o size=1m tmpfs "$TMP/small" 2>/dev/null ||
		skip "cannot mount a tmpfs in a mount namespace here"
	"$APC_TOOLS/lttgen" --seed 3 --events 500 -o "$TMP/n" >/dev/null
	apcconv -q "$TMP/n" -o "$TMP/n.apc"
	truncate -s 100M "$TMP/n/pad"
	tar -C "$TMP" -cf - n | bzip2 -1 >"$TMP/n.tar.bz2"
	[ "$(stat -c %s "$TMP/n.tar.bz2")" -lt 200000 ]
	run unshare -m bash -c "mount -t tmpfs -o size=64m tmpfs '$TMP/small' &&
		TMPDIR='$TMP/small' '$APC_BIN/apcconv' '$TMP/n.tar.bz2' -o '$TMP/m.apc' && df -k '$TMP/small'"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "apcconv: $TMP/n.tar.bz2: note: cannot keep a decoded copy of the archive in $TMP/small (it would leave less than 6 MiB free there): each member is decoded from the archive's start, which is slow (point TMPDIR at a folder with room)" ]
	cmp "$TMP/n.apc/0000000000" "$TMP/m.apc/0000000000"
}

@test "TPTP: an empty or header-only trace writes nothing and exits 1 (the process's own link is not content)" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	printf '<?xml version="1.0"?>\n<TRACE>\n</TRACE>\n' >"$TMP/empty.trcxml"
	"$G" --seed 3 -o "$TMP/a.trcxml"
	# cut after processCreate: a header and no data
	sed '/<processCreate/q' "$TMP/a.trcxml" >"$TMP/hdr.trcxml"
	grep -q '<processCreate' "$TMP/hdr.trcxml"
	"$G" --seed 3 --binary -o "$TMP/a.trcbin"
	head -c 20 "$TMP/a.trcbin" >"$TMP/hdr.trcbin"
	for f in empty.trcxml hdr.trcxml hdr.trcbin; do
		run apcconv "$TMP/$f" -o "$TMP/$f.apc"
		[ "$status" -eq 1 ]
		[[ "$output" == *"-> nothing written"* ]]
		[ ! -e "$TMP/$f.apc" ]
	done
	run apcconv "$TMP/empty.trcxml" -o "$TMP/empty.apc"
	[[ "$output" == *"empty.trcxml: no counter values, samples or thread activity to convert"* ]]
}

@test "TPTP: -v and --stats=json report the records read per kind, XML and binary" {
	G="$APC_TOOLS/tptpgen"
	[ -x "$G" ] || skip "tptpgen not built"
	"$G" --seed 3 --truth "$TMP/x.truth" -o "$TMP/a.trcxml"
	"$G" --seed 3 --binary --truth "$TMP/b.truth" -o "$TMP/a.trcbin"
	for f in a.trcxml a.trcbin; do
		truth="$TMP/x.truth"
		[ "$f" = a.trcxml ] || truth="$TMP/b.truth"
		apcconv -q --stats=json "$TMP/$f" -o "$TMP/$f.apc" | python3 -c '
import json, sys
o = json.load(sys.stdin)
kinds = {k["kind"]: (k["became"], k["count"]) for k in o["records_by_kind"]}
truth = dict(l.split()[:2] for l in open(sys.argv[1]) if len(l.split()) == 2)
assert kinds["tptp methodEntry"][1] == int(truth["entries"]), (kinds, truth)
assert kinds["tptp methodExit"][1] == int(truth["exits"]), (kinds, truth)
assert kinds["tptp threadStart"][1] == int(truth["threads"]), (kinds, truth)
assert kinds["tptp objAlloc"][0].startswith("counters tptp_live_heap"), kinds
# every record read is accounted for by some kind
assert sum(c for _, c in kinds.values()) == o["records_read"], (kinds, o["records_read"])' "$truth"
		run apcconv -v "$TMP/$f" -o "$TMP/$f.v.apc"
		[ "$status" -eq 0 ]
		[[ "$output" == *"tptp methodEntry "*" -> method job start (Java methods view)"* ]]
	done
}

#!/usr/bin/env bats
# archive.bats - archives cut where their format gives no sign of it
# (a tar at a 512-byte member boundary, a cpio between members), damage
# told before a reader is chosen, and a damaged zip's offset: what each
# of apcconv, apcdump and apcverify says, and that whole archives from
# every writer at hand are not accused.

load helpers

NEED_PYTHON=1

# ltt_tree DIR: a two-CPU LTT trace in $TMP/DIR (6319 events whole).
ltt_tree() {
	[ -x "$APC_TOOLS/lttgen" ] || skip "lttgen not built"
	"$APC_TOOLS/lttgen" --seed 3 --events 3000 --cpus 2 --block-size 8192 -o "$TMP/$1" >/dev/null
}

# member_at TAR NAME: where NAME's header starts in TAR.
member_at() {
	python3 -c 'import sys, tarfile
print(tarfile.open(sys.argv[1]).getmember(sys.argv[2]).offset)' "$1" "$2"
}

# data_end TAR: where the last member's data (with its padding) ends.
data_end() {
	python3 -c 'import sys, tarfile
m = tarfile.open(sys.argv[1]).getmembers()[-1]
print(m.offset_data + (m.size + 511) // 512 * 512)' "$1"
}

@test "a tar cut at a member boundary: the cut told with its offset, exit 1, the members before converted" {
	ltt_tree ltt
	# GNU tar's order: control, cpu, eventdefs, info; bookmarks.xml last
	tar -cf "$TMP/l.tar" -C "$TMP" ltt
	[ "$(tar -tf "$TMP/l.tar" | tail -1)" = ltt/info/bookmarks.xml ]
	at=$(member_at "$TMP/l.tar" ltt/info/bookmarks.xml)
	head -c "$at" "$TMP/l.tar" > "$TMP/cut.tar"
	conv 1 "$TMP/cut.tar" -o "$TMP/cut.apc"
	[ "${lines[0]}" = "apcconv: $TMP/cut.tar: offset $(printf 0x%x "$at"): truncated tar archive: it ends after member ltt/info/system.xml with no end-of-archive blocks" ]
	[[ "${lines[1]}" == "apcconv: $TMP/cut.tar (ltt) -> $TMP/cut.apc: "*" 6321 events, "* ]]
	# what came before the cut is what the folder without the member gives
	cp -r "$TMP/ltt" "$TMP/part" && rm "$TMP/part/info/bookmarks.xml"
	apcconv -q "$TMP/part" -o "$TMP/part.apc"
	diff -r "$TMP/part.apc" "$TMP/cut.apc"
	# the whole tar: nothing to say
	conv 0 "$TMP/l.tar" -q -o "$TMP/whole.apc"
	[ -z "$output" ]
}

@test "a tar cut at a member boundary before a CPU's tracefile: the cut is the damage, not the missing CPU" {
	ltt_tree ltt
	tar -cf "$TMP/b.tar" -C "$TMP" ltt/info ltt/eventdefs ltt/control ltt/cpu
	at=$(member_at "$TMP/b.tar" ltt/cpu/1)
	head -c "$at" "$TMP/b.tar" > "$TMP/cut.tar"
	conv 1 "$TMP/cut.tar" -o "$TMP/cut.apc"
	[ "${lines[0]}" = "apcconv: $TMP/cut.tar: offset $(printf 0x%x "$at"): truncated tar archive: it ends after member ltt/cpu/0 with no end-of-archive blocks" ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == "apcconv: $TMP/cut.tar (ltt) -> $TMP/cut.apc: "* ]]
	apcverify -q "$TMP/cut.apc"
}

@test "a tar cut at a member boundary before the format can be told: the cut, exit 1, not 'cannot tell the input format'" {
	ltt_tree ltt
	tar -cf "$TMP/l.tar" -C "$TMP" ltt
	# ltt/, ltt/control/, ltt/control/interrupts (empty): three headers
	head -c 1536 "$TMP/l.tar" > "$TMP/t2.tar"
	conv 1 "$TMP/t2.tar" -o "$TMP/t2.apc"
	[ "${lines[0]}" = "apcconv: $TMP/t2.tar: offset 0x600: truncated tar archive: it ends after member ltt/control/interrupts with no end-of-archive blocks" ]
	[[ "$output" != *"cannot tell"* ]]
	[ ! -e "$TMP/t2.apc" ]
	# no regular file before the cut at all
	head -c 1024 "$TMP/l.tar" > "$TMP/t0.tar"
	conv 1 "$TMP/t0.tar" -o "$TMP/t0.apc"
	[ "${lines[0]}" = "apcconv: $TMP/t0.tar: offset 0x400: truncated tar archive: it ends after member ltt/control/ with no end-of-archive blocks" ]
	[ ! -e "$TMP/t0.apc" ]
}

@test "a tar cut at a member boundary, then compressed, or on stdin: the same cut told" {
	ltt_tree ltt
	tar -cf "$TMP/l.tar" -C "$TMP" ltt
	at=$(member_at "$TMP/l.tar" ltt/info/bookmarks.xml)
	head -c "$at" "$TMP/l.tar" > "$TMP/cut.tar"
	local want="truncated tar archive: it ends after member ltt/info/system.xml with no end-of-archive blocks"
	one() { # PROG EXT NAME
		$1 -c < "$TMP/cut.tar" > "$TMP/cut.tar.$2"
		conv 1 "$TMP/cut.tar.$2" -o "$TMP/c$2.apc"
		[ "${lines[0]}" = "apcconv: $TMP/cut.tar.$2: offset $(printf 0x%x "$at"): $want" ]
		[[ "${lines[1]}" == *" 6321 events, "* ]]
		$1 -c < "$TMP/l.tar" > "$TMP/l.tar.$2"
		conv 0 "$TMP/l.tar.$2" -q -o "$TMP/w$2.apc"
	}
	each_compressor one "gzip:gz:gzip" "bzip2:bz2:bzip2" "xz:xz:xz" "zstd -q:zst:zstd" "lz4 -q:lz4:lz4"
	conv 1 - -o "$TMP/in.apc" < "$TMP/cut.tar"
	[ "${lines[0]}" = "apcconv: <stdin>: offset $(printf 0x%x "$at"): $want" ]
	run sh -c 'cat "$1" | "$2" - -o "$3"' sh "$TMP/cut.tar" "$APC_BIN/apcconv" "$TMP/pipe.apc"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "apcconv: <stdin>: offset $(printf 0x%x "$at"): $want" ]
}

@test "an .apc.tar cut at a member boundary: apcdump lists what is left and exits 1, apcverify gives an [archive] error" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/c.apc.tar"
	at=$(member_at "$TMP/c.apc.tar" c.apc/session.xml)
	head -c "$at" "$TMP/c.apc.tar" > "$TMP/cut.apc.tar"
	local msg="offset $(printf 0x%x "$at"): truncated tar archive: it ends after member c.apc/events.xml with no end-of-archive blocks"
	run apcdump "$TMP/cut.apc.tar"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "apcdump: $TMP/cut.apc.tar: $msg" ]
	[ "$(apcdump "$TMP/c.apc.tar" | wc -l)" -eq "$(grep -vc '^apcdump: ' <<<"$output")" ]
	run apcverify "$TMP/cut.apc.tar"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$TMP/cut.apc.tar: error: $msg [archive]" ]
	[ "${lines[1]}" = "$TMP/cut.apc.tar: session.xml: error: session.xml is missing from what the damage left of the archive: no check needs it [archive]" ]
	# compressed, the same
	xz -c < "$TMP/cut.apc.tar" > "$TMP/cut.apc.tar.xz"
	run apcverify "$TMP/cut.apc.tar.xz"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$TMP/cut.apc.tar.xz: error: $msg [archive]" ]
	run apcverify "$TMP/c.apc.tar"
	[ "$status" -eq 0 ]
}

@test "every cut of a tar at a 512-byte boundary up to its end-of-archive blocks exits 1; from one zero block on, 0" {
	ltt_tree ltt
	tar -cf "$TMP/l.tar" -C "$TMP" ltt
	end=$(data_end "$TMP/l.tar")
	sz=$(stat -c %s "$TMP/l.tar")
	for ((n = 512; n <= sz; n += 512)); do
		head -c $n "$TMP/l.tar" > "$TMP/c.tar"
		run apcconv -q "$TMP/c.tar" -o "$TMP/c.apc"
		rm -rf "$TMP/c.apc"
		if [ $n -le $end ]; then
			[ "$status" -eq 1 ] || { echo "cut at $n of $sz (data ends at $end): $status: $output"; false; }
		else
			[ "$status" -eq 0 ] || { echo "cut at $n of $sz (data ends at $end): $status: $output"; false; }
		fi
	done
}

@test "whole tars from GNU tar, bsdtar, python tarfile and apcconv's own writer are not taken as cut" {
	ltt_tree ltt
	# long names: GNU and pax extended headers too
	local long=ltt_in_a_folder_whose_name_is_long_enough_that_every_member_needs_a_long_name_header_of_its_tar_format
	cp -r "$TMP/ltt" "$TMP/$long"
	for f in gnu pax ustar v7; do
		tar --format=$f -cf "$TMP/$f.tar" -C "$TMP" ltt
		conv 0 "$TMP/$f.tar" -q -o "$TMP/$f.apc"
		[ -z "$output" ]
	done
	for f in gnu pax; do
		tar --format=$f -cf "$TMP/long-$f.tar" -C "$TMP" "$long"
		conv 0 "$TMP/long-$f.tar" -q -o "$TMP/long-$f.apc"
	done
	(cd "$TMP" && python3 -c '
import sys, tarfile
for fmt, name in ((tarfile.PAX_FORMAT, "py-pax"), (tarfile.GNU_FORMAT, "py-gnu"), (tarfile.USTAR_FORMAT, "py-ustar")):
    with tarfile.open(name + ".tar", "w", format=fmt) as t:
        t.add("ltt")
    if fmt != tarfile.USTAR_FORMAT:
        with tarfile.open(name + "-long.tar", "w", format=fmt) as t:
            t.add(sys.argv[1])
' "$long")
	for f in py-pax py-gnu py-ustar py-pax-long py-gnu-long; do
		conv 0 "$TMP/$f.tar" -q -o "$TMP/$f.apc"
		[ -z "$output" ]
	done
	if command -v bsdtar >/dev/null; then
		bsdtar -cf "$TMP/bsd.tar" -C "$TMP" ltt
		conv 0 "$TMP/bsd.tar" -q -o "$TMP/bsd.apc"
	else
		echo "# bsdtar is not installed: not tested" >&3
	fi
	# apcconv's own tar, to a file and on stdout, and read back
	for ext in tar tar.gz tar.bz2 tar.xz; do
		apcconv -q "$TMP/ltt" -o "$TMP/own.apc.$ext"
		conv 0 "$TMP/own.apc.$ext" -q -o "$TMP/again-$ext.apc"
		verify 0 -q "$TMP/own.apc.$ext"
		dump "$TMP/own.apc.$ext"
		[ "$status" -eq 0 ]
	done
	apcconv -q "$TMP/ltt" -o - > "$TMP/stdout.tar"
	conv 0 "$TMP/stdout.tar" -q -o "$TMP/stdout.apc"
}

@test "a cpio cut between members: the cut told, naming the last member, with no TRAILER!!! entry" {
	ltt_tree ltt
	# a cpio with cpu/0 last; the cut: where the trailer starts
	at=$(write_cpio "$TMP" "$TMP/l.cpio" ltt/info/system.xml ltt/eventdefs/core.xml ltt/eventdefs/extra.xml \
		ltt/control/processes ltt/control/facilities ltt/control/interrupts ltt/cpu/1 ltt/cpu/0 |
		awk '$1 == "TRAILER!!!" { print $2 }')
	conv 0 "$TMP/l.cpio" -q -o "$TMP/whole.apc"
	head -c "$at" "$TMP/l.cpio" > "$TMP/cut.cpio"
	conv 1 "$TMP/cut.cpio" -o "$TMP/cut.apc"
	[ "${lines[0]}" = "apcconv: $TMP/cut.cpio: offset $(printf 0x%x "$at"): truncated cpio archive: it ends after member ltt/cpu/0 with no TRAILER!!! entry" ]
	# every member was there
	diff -r "$TMP/whole.apc" "$TMP/cut.apc"
}

# zip_flip ZIP OUT AT: OUT is ZIP with the byte at AT inverted.
zip_flip() {
	python3 -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[3])] ^= 0xff
open(sys.argv[2], "wb").write(b)' "$1" "$2" "$3"
}

# zip_dir_entry ZIP NAME: where NAME's central directory entry starts.
zip_dir_entry() {
	python3 -c 'import sys, struct
b = open(sys.argv[1], "rb").read()
e = b.rfind(b"PK\5\6")
p = struct.unpack("<L", b[e + 16:e + 20])[0]
while b[p:p + 4] == b"PK\1\2":
    n, m, k = struct.unpack("<3H", b[p + 28:p + 34])
    if b[p + 46:p + 46 + n].decode() == sys.argv[2]:
        print(p)
    p += 46 + n + m + k' "$1" "$2"
}

@test "a zip whose central directory or a local header is damaged: the damage's offset is told" {
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc.zip"
	# the signature of session.xml's central directory entry
	at=$(zip_dir_entry "$TMP/d.apc.zip" d.apc/session.xml)
	[ -n "$at" ]
	zip_flip "$TMP/d.apc.zip" "$TMP/z.apc.zip" $((at + 2))
	conv 1 "$TMP/z.apc.zip" -o "$TMP/z.apc"
	[[ "${lines[0]}" == "apcconv: $TMP/z.apc.zip: offset $(printf 0x%x "$at"): damaged zip archive: its central directory cannot be read ("*")" ]]
	[ ! -e "$TMP/z.apc" ]
	run apcverify "$TMP/z.apc.zip"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "$TMP/z.apc.zip: error: offset $(printf 0x%x "$at"): damaged zip archive: its central directory cannot be read ("*") [archive]" ]]
	# the signature of captured.xml's local header: the members before it are read
	lh=$(python3 -c 'import sys, zipfile
print(zipfile.ZipFile(sys.argv[1]).getinfo("d.apc/captured.xml").header_offset)' "$TMP/d.apc.zip")
	zip_flip "$TMP/d.apc.zip" "$TMP/l.apc.zip" $((lh + 1))
	run apcdump "$TMP/l.apc.zip"
	[ "$status" -eq 1 ]
	[[ "${lines[-1]}" == "apcdump: $TMP/l.apc.zip: offset $(printf 0x%x "$lh"): damaged zip archive: the member after d.apc/0000000000 cannot be read ("*")" ]]
	# whole: nothing to say
	verify 0 -q "$TMP/d.apc.zip"
}

@test "damage that stops a run before a format is told: the summary says nothing written, naming the input as told" {
	ltt_tree ltt
	tar -cf "$TMP/l.tar" -C "$TMP" ltt
	local none="-> nothing written: 0 bytes in, 0 events, 0 frames, 0 bytes written, span 0.000000000 s, "
	# cut in control/processes' data: ltt/control/interrupts (empty) is all there is
	head -c 3072 "$TMP/l.tar" > "$TMP/t.tar"
	conv 1 "$TMP/t.tar" -o "$TMP/t.apc"
	[ "${lines[0]}" = "apcconv: $TMP/t.tar: offset 0xc00: truncated tar archive: it ends inside the data of ltt/control/processes (1024 of its 8192 bytes)" ]
	[[ "${lines[1]}" == "apcconv: $TMP/t.tar (tar) $none"* ]]
	[ "${#lines[@]}" -eq 2 ]
	[ ! -e "$TMP/t.apc" ]
	# a tar cut in its first header: nothing listed at all
	head -c 300 "$TMP/l.tar" | xz -c > "$TMP/h.tar.xz"
	conv 1 "$TMP/h.tar.xz" -o "$TMP/h.apc"
	[ "${lines[0]}" = "apcconv: $TMP/h.tar.xz: offset 0x12c: truncated tar archive: it ends inside the member header after its start (300 of its 512 bytes)" ]
	[[ "${lines[1]}" == "apcconv: $TMP/h.tar.xz (tar.xz) $none"* ]]
	# a gzip stream cut in its first bytes
	gzip -c "$TMP/l.tar" | head -c 32 > "$TMP/g.tar.gz"
	conv 1 "$TMP/g.tar.gz" -o "$TMP/g.apc"
	[ "${lines[0]}" = "apcconv: $TMP/g.tar.gz: offset 0x0: truncated gzip stream (the compressed data ends at byte 32)" ]
	[[ "${lines[1]}" == "apcconv: $TMP/g.tar.gz (gzip) $none"* ]]
	# a zip whose central directory is damaged
	apcconv -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/d.apc.zip"
	zip_flip "$TMP/d.apc.zip" "$TMP/z.apc.zip" $(($(zip_dir_entry "$TMP/d.apc.zip" d.apc/session.xml) + 2))
	conv 1 "$TMP/z.apc.zip" -o "$TMP/z.apc"
	[[ "${lines[1]}" == "apcconv: $TMP/z.apc.zip (zip) $none"* ]]
	# -q: the damage alone
	conv 1 -q "$TMP/t.tar" -o "$TMP/t.apc"
	[ "${#lines[@]}" -eq 1 ]
	# apcserve reports it in apcconv's words, and serves nothing
	exits 1 timeout -k 5 20 "$APC_BIN/apcserve" --port 0 "$TMP/t.tar"
	[ "${lines[0]}" = "apcserve: $TMP/t.tar: offset 0xc00: truncated tar archive: it ends inside the data of ltt/control/processes (1024 of its 8192 bytes)" ]
	[[ "${lines[1]}" == "apcserve: $TMP/t.tar (tar) $none"* ]]
	[ "${#lines[@]}" -eq 2 ]
}

@test "--stats=json of a run damage stops before a format is told: format null unless -f gave it, the damage" {
	ltt_tree ltt
	tar -cf "$TMP/l.tar" -C "$TMP" ltt
	head -c 1024 "$TMP/l.tar" > "$TMP/t0.tar"
	run apcconv -q "$TMP/t0.tar" -o "$TMP/t0.apc" --stats=json
	[ "$status" -eq 1 ]
	python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["format"] is None and o["output"] is None and o["status"] == 1 and o["ok"] is False, o
assert o["damage"] == sys.argv[1] + ": offset 0x400: truncated tar archive: it ends after member ltt/control/ with no end-of-archive blocks", o
assert o["problems"] == 1 and o["bytes_in"] == 0, o
' "$TMP/t0.tar" <<<"${lines[-1]}"
	[ "${#lines[@]}" -eq 2 ]
	# told with -f: the format is known, and the summary names it
	run apcconv -f ltt "$TMP/t0.tar" -o "$TMP/t0.apc" --stats=json
	[ "$status" -eq 1 ]
	[[ "${lines[1]}" == "apcconv: $TMP/t0.tar (ltt) -> nothing written: 0 bytes in, "* ]]
	python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["format"] == "ltt" and o["output"] is None and o["status"] == 1, o
' <<<"${lines[-1]}"
	[ ! -e "$TMP/t0.apc" ]
}

@test "a trace or capture several folders deep in a tar or zip, alone there, is found as the folder it is" {
	ltt_tree ltt
	conv 0 "$TMP/ltt" -o "$TMP/folder.apc"
	apcdump "$TMP/folder.apc" >"$TMP/folder.txt"
	mkdir -p "$TMP/deep/home/me/traces"
	cp -r "$TMP/ltt" "$TMP/deep/home/me/traces/"
	tar -cf "$TMP/deep.tar" -C "$TMP/deep" home
	(cd "$TMP/deep" && zip -qr "$TMP/deep.zip" home 2>/dev/null) || python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for r, d, fs in os.walk("home"):
        for f in fs:
            z.write(os.path.join(r, f))' "$TMP/deep.zip"
	for a in deep.tar deep.zip; do
		conv 0 "$TMP/$a" -o "$TMP/$a.apc"
		[[ "$output" == "apcconv: $TMP/$a (ltt) -> "* ]]
		apcdump "$TMP/$a.apc" | cmp - "$TMP/folder.txt"
	done
	# a capture so held lists and verifies as its folder does
	mkdir -p "$TMP/cap/runs/2026"
	cp -r "$TMP/folder.apc" "$TMP/cap/runs/2026/"
	tar -cf "$TMP/cap.tar" -C "$TMP/cap" runs
	apcdump "$TMP/cap.tar" | cmp - "$TMP/folder.txt"
	verify 0 "$TMP/cap.tar"
}

@test "a zip Python writes with LZMA or bzip2, an empty member among them, converts whole" {
	ltt_tree ltt
	[ ! -s "$TMP/ltt/control/interrupts" ]
	conv 0 "$TMP/ltt" -o "$TMP/folder.apc"
	apcdump "$TMP/folder.apc" >"$TMP/folder.txt"
	for m in ZIP_LZMA ZIP_BZIP2 ZIP_DEFLATED; do
		(cd "$TMP" && python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", getattr(zipfile, sys.argv[2])) as z:
    for r, d, fs in os.walk("ltt"):
        for f in fs:
            z.write(os.path.join(r, f))
assert zipfile.ZipFile(sys.argv[1]).testzip() is None' "$TMP/$m.zip" "$m") || skip "python3 cannot write $m"
		conv 0 "$TMP/$m.zip" -o "$TMP/$m.apc"
		apcdump "$TMP/$m.apc" | cmp - "$TMP/folder.txt"
	done
}

@test "names past ASCII: archives hold them as UTF-8 and read back, a zip's flagged ones too; a name not UTF-8 goes as its bytes" {
	# the C locale, as in CI and scripts: libarchive converts member
	# names through it, and "é" once failed ("can't translate pathname")
	export LC_ALL=C
	cp "$APC_ROOT/testdata/barman/demo.bin" "$TMP/my dump é.bin"
	cp "$APC_ROOT/testdata/barman/demo.bin" "$TMP/"$'lat\xe9.bin'
	conv 0 "$TMP/my dump é.bin" -o "$TMP/folder é.apc"
	apcdump "$TMP/folder é.apc" >"$TMP/folder.txt"
	conv 0 "$TMP/folder é.apc" -o "$TMP/again é.apc"
	apcdump "$TMP/again é.apc" >"$TMP/again.txt"
	(cd "$TMP" && apcconv -q "my dump é.bin" -o - >"$TMP/out.tar")
	conv 0 "$TMP/my dump é.bin" -o "$TMP/ü x.apc.zip"
	conv 0 "$TMP/my dump é.bin" -o "$TMP/ü x.apc.tar.gz"
	python3 - "$TMP" <<'PY'
import sys, tarfile, zipfile
t = sys.argv[1]
assert tarfile.open(t + "/out.tar").getnames()[0] == "my dump é.apc", tarfile.open(t + "/out.tar").getnames()
assert tarfile.open(t + "/ü x.apc.tar.gz").getnames()[1] == "ü x.apc/0000000000"
z = zipfile.ZipFile(t + "/ü x.apc.zip").infolist()
assert z[1].filename == "ü x.apc/0000000000" and z[1].flag_bits & 0x800, (z[1].filename, z[1].flag_bits)
# a zip of the folder by Python: UTF-8 names, flagged
with zipfile.ZipFile(t + "/py é.zip", "w") as o:
    for leaf in ("0000000000", "captured.xml", "events.xml", "session.xml"):
        o.write(t + "/folder é.apc/" + leaf, "folder é.apc/" + leaf)
PY
	for a in out.tar "ü x.apc.zip" "ü x.apc.tar.gz" "py é.zip"; do
		apcdump "$TMP/$a" | cmp - "$TMP/folder.txt"
		verify 0 "$TMP/$a"
		conv 0 "$TMP/$a" -o "$TMP/again.apc" --overwrite
		apcdump "$TMP/again.apc" | cmp - "$TMP/again.txt"
	done
	# "lat\xe9" is no UTF-8: the member is named by its bytes
	(cd "$TMP" && apcconv -q $'lat\xe9.bin' -o - >"$TMP/lat.tar")
	python3 -c '
import sys, tarfile
n = tarfile.open(sys.argv[1], encoding="utf-8", errors="surrogateescape").getnames()[0]
assert n.encode("utf-8", "surrogateescape") == b"lat\xe9.apc", n' "$TMP/lat.tar"
	apcdump "$TMP/lat.tar" | cmp - "$TMP/folder.txt"
}

@test "an LTT trace under a folder named past ASCII, zipped by Python, is found in the C locale" {
	export LC_ALL=C
	ltt_tree "trace é"
	conv 0 "$TMP/trace é" -o "$TMP/folder.apc"
	apcdump "$TMP/folder.apc" >"$TMP/folder.txt"
	(cd "$TMP" && python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for r, d, fs in os.walk("trace é"):
        for f in fs:
            z.write(os.path.join(r, f))' "$TMP/t.zip")
	conv 0 "$TMP/t.zip" -o "$TMP/t.apc"
	[[ "${lines[0]}" == "apcconv: $TMP/t.zip (ltt) -> "* ]]
	apcdump "$TMP/t.apc" | cmp - "$TMP/folder.txt"
}

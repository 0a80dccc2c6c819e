#!/usr/bin/env bats
# golden.bats - apcdump listings of converted fixtures against reviewed
# .dump.expect files.  UPDATE_GOLDENS=1 rewrites them (then read the
# diff before committing it).

load helpers

setup() {
	TMP="$(mktemp -d)"
}

teardown() {
	rm -rf "$TMP"
}

# golden INPUT: convert, list, compare with INPUT's .dump.expect
golden() {
	in="$APC_ROOT/$1"
	expect="${in%.*}.dump.expect"
	apcconv -q "$in" -o "$TMP/g.apc"
	apcdump "$TMP/g.apc" | sed "s|$TMP/g.apc|CAPTURE|g" > "$TMP/dump"
	if [ "${UPDATE_GOLDENS:-0}" = 1 ]; then
		cp "$TMP/dump" "$expect"
	fi
	diff -u "$expect" "$TMP/dump"
}

@test "golden: Barman 32-bit little-endian linear, protocol 1" {
	golden testdata/barman/le32_linear_v1.bin
}

@test "golden: Barman 32-bit big-endian circular with tasks, maps and a chart" {
	golden testdata/barman/be32_circular.bin
}

# helpers.bash - shared set-up for the bats CLI tests.
# The commands come from $APC_BIN (set by tests/run.sh); real files from
# ../shared/testdata, skipped visibly when absent.

: "${APC_ROOT:=$(cd "$BATS_TEST_DIRNAME/.." && pwd)}"
: "${APC_BIN:=$APC_ROOT/build/rel/bin}"
: "${APC_TOOLS:=$APC_ROOT/build/rel/tools}"
# The Python snippets that import tests/apcpack.py find it through APC_ROOT.
export APC_ROOT
SHARED="${APC_SHARED_TESTDATA:-$APC_ROOT/../shared/testdata}"

need_shared() {
	[ -d "$SHARED" ] || skip "../shared/testdata is absent (real files not available)"
}

apcconv() { "$APC_BIN/apcconv" "$@"; }
apcdump() { "$APC_BIN/apcdump" "$@"; }
apcverify() { "$APC_BIN/apcverify" "$@"; }

# Every test gets a temporary folder, $TMP, removed after it; a file that
# needs more defines its own setup() or teardown().  A file whose inputs
# python3 writes sets NEED_PYTHON=1: its tests then skip without it.
setup() {
	TMP="$(mktemp -d)"
	[ -z "${NEED_PYTHON:-}" ] || need_python
}

teardown() {
	rm -rf "$TMP"
}

need_python() {
	command -v python3 >/dev/null || skip "python3 is not installed"
}

# conv STATUS ARGS...: run apcconv ARGS, show what it says (kept in
# $output), and expect exit status STATUS.
conv() {
	local want=$1
	shift
	run apcconv "$@"
	echo "$output"
	[ "$status" -eq "$want" ]
}

# dump ARGS...: run apcdump ARGS and show its listing (kept in $output).
dump() {
	run apcdump "$@"
	echo "$output"
}

# verify STATUS ARGS...: the same for apcverify.
verify() {
	local want=$1
	shift
	run apcverify "$@"
	echo "$output"
	[ "$status" -eq "$want" ]
}

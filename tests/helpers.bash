# helpers.bash - shared set-up for the bats CLI tests.
# The commands come from $APC_BIN (set by tests/run.sh); real files from
# ../shared/testdata, skipped visibly when absent.

: "${APC_ROOT:=$(cd "$BATS_TEST_DIRNAME/.." && pwd)}"
: "${APC_BIN:=$APC_ROOT/build/rel/bin}"
: "${APC_TOOLS:=$APC_ROOT/build/rel/tools}"
# The Python snippets that import tests/apcpack.py find it through APC_ROOT.
export APC_ROOT
SHARED="${APC_SHARED_TESTDATA:-$APC_ROOT/../shared/testdata}"
# lzip -c's output from python3, for machines without lzip (a compressor
# "command" in the tests' lists: its first word is what must be installed)
PYLZIP="python3 $APC_ROOT/tests/lzip.py"

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

# apcpack_py ARG...: the Python on standard input, run with apcpack.py's
# helpers (p, s, CANARY, summary, block_counter, frames, write_cap) and
# os, struct and sys at hand, ARG... as sys.argv[1:].
apcpack_py() {
	need_python
	python3 -c '
import os, struct, sys
sys.path.insert(0, os.environ["APC_ROOT"] + "/tests")
from apcpack import p, s, CANARY, summary, block_counter, frames, write_cap
exec(sys.stdin.read())' "$@"
}

# exits STATUS CMD ARGS...: run CMD ARGS, show what it says (kept in
# $output and $lines), and expect exit status STATUS.
exits() {
	local want=$1
	shift
	run "$@"
	echo "$output"
	[ "$status" -eq "$want" ]
}

# conv STATUS ARGS..., verify STATUS ARGS...: exits for apcconv, apcverify.
conv() { exits "$1" apcconv "${@:2}"; }
verify() { exits "$1" apcverify "${@:2}"; }

# dump ARGS...: run apcdump ARGS and show its listing (kept in $output).
dump() {
	run apcdump "$@"
	echo "$output"
}

# bad_option PROG: PROG refuses an unknown option as getopt does, exit 2.
bad_option() {
	exits 2 "$1" -Z x
	[ "$output" = "$1: invalid option -- 'Z'
Try '$1 --help' for more information." ]
}

# each_compressor FN ENTRY...: FN PROG EXT NAME for each ENTRY
# ("prog and options:ext:stream name") whose program is installed; the
# others are noted on fd 3, and the test is skipped when none is.
each_compressor() {
	local fn=$1 c prog ext name n=0
	shift
	for c in "$@"; do
		IFS=: read -r prog ext name <<<"$c"
		if ! command -v "${prog%% *}" >/dev/null; then
			echo "# ${prog%% *} is not installed: .$ext not tested" >&3
			continue
		fi
		"$fn" "$prog" "$ext" "$name"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || skip "none of the compressors is installed"
}

# write_cpio DIR OUT MEMBER...: OUT, a "new" (070701) cpio of DIR's
# MEMBERs (paths relative to DIR) in that order, then its TRAILER!!!;
# prints where each header starts, "NAME OFFSET" a line, the trailer's
# last.
write_cpio() {
	local dir=$1 out=$2
	shift 2
	(cd "$dir" && python3 - "$out" "$@" <<'PY'
import sys
out = bytearray()
def member(name, data, mode=0o100644):
    global out
    print(name, len(out))
    n = name.encode() + b"\0"
    out += b"070701" + b"".join(b"%08X" % v for v in (0, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(n), 0)) + n
    out += b"\0" * (-len(out) % 4) + data
    out += b"\0" * (-len(out) % 4)
for name in sys.argv[2:]:
    member(name, open(name, "rb").read())
member("TRAILER!!!", b"", 0)
open(sys.argv[1], "wb").write(out)
PY
	)
}

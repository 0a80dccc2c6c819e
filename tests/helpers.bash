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

#!/bin/sh
# run.sh - run the C unit tests and the bats CLI tests, print each
# result, and finish with one line "N passed, N failed, N skipped".
# Usage: BUILD=build/rel sh tests/run.sh [--unit-only] UNIT_BINARIES...
# RUNNER, when set, runs each unit binary (make check-cross: qemu-aarch64);
# BIN_DIR and TOOLS_DIR, when set, hold the commands and generators the
# bats tests run instead of BUILD's (make check-aarch64: qemu wrappers).
set -u
RUNNER=${RUNNER:-}
BUILD=${BUILD:-build/rel}
export APC_BIN="${BIN_DIR:-$PWD/$BUILD/bin}" APC_TOOLS="${TOOLS_DIR:-$PWD/$BUILD/tools}" APC_ROOT="$PWD"
# Under AddressSanitizer (make check SANITIZE=1) any single allocation
# over 256 MiB aborts with a report: no test input is that large, so
# such an allocation can only come from a length a file merely claims.
# A report exits 66 (ASan, LeakSanitizer) or 67 (UBSan) rather than their
# default 1, which is also the commands' own "damaged input" status: a
# leak on a damage path went unseen by every test expecting exit 1.
export ASAN_OPTIONS="${ASAN_OPTIONS:-max_allocation_size_mb=256:allocator_may_return_null=0:exitcode=66}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-exitcode=67:print_stacktrace=1}"
unit_only=0
[ "${1:-}" = "--unit-only" ] && { unit_only=1; shift; }

pass=0 fail=0 skip=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

count() {
	# Count TAP-ish lines: "ok ..." (with "# skip" -> skipped), "not ok ...".
	p=$(grep -E '^ok ' "$tmp" | grep -vc '# skip')
	s=$(grep -E '^ok .*# skip' -c "$tmp")
	f=$(grep -Ec '^not ok ' "$tmp")
	pass=$((pass + p)); skip=$((skip + s)); fail=$((fail + f))
}

for t in "$@"; do
	echo "== unit: $(basename "$t")"
	$RUNNER "$t" >"$tmp" 2>&1
	rc=$?
	grep -v -E '^[0-9]+ passed, [0-9]+ failed' "$tmp"
	count
	# A unit binary that crashed before reporting counts as one failure.
	if [ $rc -ne 0 ] && ! grep -qE '^not ok ' "$tmp"; then
		echo "not ok - $(basename "$t") exited with status $rc"
		fail=$((fail + 1))
	fi
done

if [ $unit_only -eq 0 ]; then
	if ls tests/*.bats >/dev/null 2>&1; then
		echo "== bats"
		# BATS_FILTER: only the tests whose names match (make check-threads)
		bats --tap ${BATS_FILTER:+--filter "$BATS_FILTER"} tests/*.bats >"$tmp" 2>&1
		cat "$tmp"
		count
		# bats failing without any "not ok" (syntax error) is a failure.
		if ! grep -qE '^(ok|not ok) ' "$tmp"; then fail=$((fail + 1)); fi
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

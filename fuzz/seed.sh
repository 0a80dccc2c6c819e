#!/bin/sh
# seed.sh - build the fuzzers' seed corpora from the project's generators,
# testdata/ and (when present) ../shared/testdata, into
# build/fuzz/corpus/TARGET/.  Nothing here is committed: run it again
# after `make all`.  Multi-file targets take their members joined by the
# separator FZ_SEP of fuzz/targets.h ("@@@\n"), in the order targets.c
# lists them.
#
# Every seed fits the -max_len fuzz/run.sh gives its target (fuzz/maxlen.sh):
# a multi-file seed has its largest members cut so that the later, small
# ones (system.xml, captured.xml, ...) survive whole.
#
# Usage: sh fuzz/seed.sh   (from the project root; needs python3)
set -eu
ROOT=$(pwd)
BUILD=${BUILD:-build/rel}
TOOLS="$ROOT/$BUILD/tools"
BIN="$ROOT/$BUILD/bin"
SHARED="$ROOT/../shared/testdata"
C="$ROOT/build/fuzz/corpus"
. "$ROOT/fuzz/maxlen.sh"

[ -x "$TOOLS/barmangen" ] || make --no-print-directory all >/dev/null
rm -rf "$C"
for t in barman ltt_block eventdefs tptp_bin tptp_xml apc annotate verify; do mkdir -p "$C/$t"; done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# cut FILE OUT : the first -max_len bytes of FILE, for the target OUT is in.
cut() { head -c "$(fuzz_max_len "$(basename "$(dirname "$2")")")" "$1" >"$2"; }

# pack OUT FILE... : members joined by the separator ("-" = empty member),
# the largest cut down until the whole fits the target's -max_len.
pack() {
	python3 - "$(fuzz_max_len "$(basename "$(dirname "$1")")")" "$@" <<'EOF'
import sys
limit, out, files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
parts = [b"" if f == "-" else open(f, "rb").read() for f in files]
sep = b"@@@\n"
while sum(map(len, parts)) + len(sep) * (len(parts) - 1) > limit:
    over = sum(map(len, parts)) + len(sep) * (len(parts) - 1) - limit
    i = max(range(len(parts)), key=lambda k: len(parts[k]))
    parts[i] = parts[i][:max(0, len(parts[i]) - over)]
open(out, "wb").write(sep.join(parts)[:limit])
EOF
}

# ---- barman ----------------------------------------------------------
n=0
for f in testdata/barman/*.bin; do cut "$f" "$C/barman/td_$(basename "$f")"; done
for args in "--records 40" "--records 60 --circular --buffer 2048" "--bits 32 --endian big --records 30" \
	"--version 1 --records 20" "--version 2 --tasks 3 --mmaps 2 --records 30" \
	"--charts 2 --series 2 --records 30" "--cores 8 --records 50 --extra" \
	"--uncommitted --records 20 --circular --buffer 1024" "--junk 64 --trailing 32 --records 10"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$TOOLS/barmangen" -o "$W/gen.bin" --seed $n $args >/dev/null 2>&1 &&
		cut "$W/gen.bin" "$C/barman/gen$n.bin" || true
done
if [ -d "$SHARED/barman" ]; then
	for f in "$SHARED"/barman/*.bin; do cut "$f" "$C/barman/shared_$(basename "$f")"; done
fi

# ---- LTT -------------------------------------------------------------
# Members: cpu/0 info/system.xml eventdefs/core.xml control/facilities
# control/processes control/interrupts cpu/1 eventdefs/extra.xml info/bookmarks.xml
n=0
for args in "--block-size 256 --events 40 --cpus 2" "--block-size 512 --events 60 --endian big --cpus 2" \
	"--block-size 256 --events 50 --usec --cpus 1" "--block-size 300 --events 40 --undefined --cpus 2" \
	"--block-size 256 --events 80 --trailer new --cpus 2"; do
	n=$((n + 1))
	d="$W/ltt$n"
	# shellcheck disable=SC2086
	"$TOOLS/lttgen" -o "$d" --seed $n $args >/dev/null
	m() { [ -f "$d/$1" ] && echo "$d/$1" || echo -; }
	extra=$(ls "$d"/eventdefs/*.xml | grep -v core.xml | head -n 1 || true)
	pack "$C/ltt_block/gen$n" "$(m cpu/0)" "$(m info/system.xml)" "$(m eventdefs/core.xml)" \
		"$(m control/facilities)" "$(m control/processes)" "$(m control/interrupts)" \
		"$(m cpu/1)" "${extra:--}" "$(m info/bookmarks.xml)"
	cp "$d/eventdefs/core.xml" "$C/eventdefs/gen_core$n.xml"
	head -c 200 "$d/cpu/0" >"$W/pay"
	pack "$C/eventdefs/gen_core_pay$n" "$d/eventdefs/core.xml" "$W/pay"
	[ -n "$extra" ] && pack "$C/eventdefs/gen_extra_pay$n" "$extra" "$W/pay"
	cp "$d/info/system.xml" "$C/eventdefs/gen_system$n.xml"
done
if [ -d "$SHARED/ltt" ]; then
	s="$SHARED/ltt/smp_example"
	head -c 30000 "$s/cpu/0" >"$W/c0"
	head -c 30000 "$s/cpu/1" >"$W/c1"
	pack "$C/ltt_block/smp_example" "$W/c0" "$s/info/system.xml" "$s/eventdefs/core.xml" - - - "$W/c1"
	for f in "$SHARED"/ltt/eventdefs-history/*; do
		cp "$f" "$C/eventdefs/hist_$(basename "$f")"
		pack "$C/eventdefs/hist_pay_$(basename "$f")" "$f" "$W/c0"
	done
	cp "$s/info/system.xml" "$C/eventdefs/smp_system.xml"
fi

# ---- TPTP ------------------------------------------------------------
n=0
for args in "" "--bare" "--threads 3 --calls 20" "--truncate 900" "--leave-open" \
	"--monitor-stacks --no-process --process-name main"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$TOOLS/tptpgen" --seed $n --threads 2 --calls 10 $args -o "$W/t.xml" >/dev/null
	cut "$W/t.xml" "$C/tptp_xml/gen$n.xml"
done
n=0
for args in "" "--big-endian" "--platform32" "--len-incl-header" "--mhz" \
	"--big-endian --platform32 --leave-open" "--monitor-stacks --no-process --process-name main"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$TOOLS/tptpgen" --binary --seed $n --threads 2 --calls 10 $args -o "$W/t.bin" >/dev/null
	cut "$W/t.bin" "$C/tptp_bin/gen$n.trcbin"
done
if [ -d "$SHARED/tptp" ]; then
	for f in "$SHARED"/tptp/*.trcxml; do cut "$f" "$C/tptp_xml/shared_$(basename "$f")"; done
fi

# ---- Annotate ----------------------------------------------------------
if [ -d "$SHARED/annotate" ]; then
	for v in v3 v4 v5; do
		for f in "$SHARED/annotate/$v"/*.bin; do
			cut "$f" "$C/annotate/${v}_$(basename "$f")"
			head -c 3000 "$f" >"$C/annotate/${v}_short_$(basename "$f")"
		done
	done
fi

# ---- APC and verify: captures converted by apcconv, and real ones --------
n=0
for f in testdata/barman/*.bin; do
	n=$((n + 1))
	"$BIN/apcconv" -q "$f" -o "$W/cap$n.apc" >/dev/null 2>&1 || continue
	head -c 50000 "$W/cap$n.apc/0000000000" >"$W/d"
	head -c 6000 "$W/cap$n.apc/events.xml" >"$W/e"
	pack "$C/apc/conv$n" "$W/d" "$W/cap$n.apc/captured.xml" "$W/e"
	cut "$W/cap$n.apc/0000000000" "$C/apc/bare$n"
done
d="$W/ltt1"
if "$BIN/apcconv" -q "$d" -o "$W/ltt.apc" >/dev/null 2>&1; then
	cut "$W/ltt.apc/0000000000" "$C/apc/ltt_bare"
fi
"$TOOLS/tptpgen" --seed 9 --threads 2 --calls 8 -o "$W/t9.xml" >/dev/null
if "$BIN/apcconv" -q "$W/t9.xml" -o "$W/tptp.apc" >/dev/null 2>&1; then
	cut "$W/tptp.apc/0000000000" "$C/apc/tptp_bare"
fi
if [ -d "$SHARED/apc" ]; then
	for a in "$SHARED"/apc/*.apc; do
		b=$(basename "$a" .apc)
		head -c 50000 "$a/0000000000" >"$W/d"
		head -c 8000 "$a/events.xml" >"$W/e" 2>/dev/null || : >"$W/e"
		pack "$C/apc/shared_$b" "$W/d" "$a/captured.xml" "$W/e"
		cut "$a/0000000000" "$C/apc/shared_bare_$b"
	done
fi
cp "$C"/apc/* "$C/verify/"

# ---- convert: every reader's seeds behind the byte that picks the format
# (apc_fuzz_convert's table: 0 barman, 1 tptp-bin, 2 tptp-xml, 3 annotate,
# 4 ltt, 5 apc)
mkdir -p "$C/convert"
i=0
for t in barman tptp_bin tptp_xml annotate ltt_block apc; do
	for f in "$C/$t"/*; do
		[ -f "$f" ] || continue
		{ printf "\\$(printf %03o $i)"; cat "$f"; } >"$C/convert/${t}_$(basename "$f")"
	done
	i=$((i + 1))
done

# ... and a few of them compressed, in each compression read (those whose
# tool is here; lzip from tests/lzip.py), so the decoders are fuzzed too
for f in testdata/barman/demo.bin testdata/barman/le32_linear_v1.bin; do
	[ -f "$f" ] || continue
	for c in "gzip -c" "bzip2 -c" "xz -c" "xz --format=lzma -c" "zstd -q -c" "lz4 -q -c" \
		 "python3 tests/lzip.py"; do
		command -v "${c%% *}" >/dev/null 2>&1 || continue
		out="$C/convert/z_$(echo "$c" | tr -c 'a-z0-9' _)_$(basename "$f")"
		head -c 8000 "$f" >"$W/plain"
		{ printf '\000'; $c "$W/plain"; } >"$out" 2>/dev/null || rm -f "$out"
	done
done

for t in "$C"/*; do
	echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"
done

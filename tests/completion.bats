#!/usr/bin/env bats
# completion.bats - scripts/apctools.bash, the bash completion: the
# command lines a user would <TAB> on, and the value lists it writes out
# against the ones the commands themselves print.

load helpers

setup() {
	TMP="$(mktemp -d)"
	# shellcheck source=../scripts/apctools.bash
	. "$APC_ROOT/scripts/apctools.bash"
}

# replies CMD WORD...: what completing the last WORD of "CMD WORD..."
# offers, one a line, sorted.  Words are given as bash splits them: with
# the "=" of "--from=x" a word of its own, unless written as one word.
replies() {
	local cmd=$1
	shift
	COMP_WORDS=("$APC_BIN/$cmd" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_apctools "$APC_BIN/$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort
}

@test "completion: options come from each command's --help" {
	[ "$(replies apcconv --fr)" = "--from=" ]
	[ "$(replies apcverify --st)" = "--strict" ]
	[ "$(replies apcconv --over)" = "--overwrite" ]
	run replies apcdump -
	grep -qx -- '--summary' <<<"$output"
	grep -qx -- '--frame=' <<<"$output"
	grep -qx -- '-x' <<<"$output"
	# both of "--progress, --no-progress" on one line of --help
	[ "$(replies apcrecord --no-p)" = "--no-progress" ]
	[ "$(replies apcserve --re)" = "--realtime" ]
	# every option offered is one the command takes: none is refused as
	# unknown (their values may be, and the commands stop at -h)
	local c o
	for c in apcconv apcdump apcverify apcrecord apcserve; do
		for o in $(_apctools_options "$APC_BIN/$c"); do
			run "$APC_BIN/$c" "$o" --help
			if grep -q 'unrecognized option\|invalid option' <<<"$output"; then
				echo "$c: $o: $output"
				false
			fi
		done
	done
}

@test "completion: -f and --from offer the formats apcconv --list-formats lists" {
	want=$("$APC_BIN/apcconv" --list-formats | awk 'NR > 1 { print $1 }' | sort)
	[ "$(wc -l <<<"$want")" -ge 6 ]
	[ "$(replies apcconv -f '')" = "$want" ]
	[ "$(replies apcserve --from '')" = "$want" ]
	[ "$(replies apcconv --from = tptp)" = "$(printf 'tptp-bin\ntptp-xml')" ]
	# --from=tptp as one word (COMP_WORDBREAKS without "="): whole words back
	[ "$(replies apcconv --from=tptp)" = "$(printf -- '--from=tptp-bin\n--from=tptp-xml')" ]
	[ "$(replies apcconv --stats = '')" = "json" ]
}

@test "completion: --frame completes each item of a list of frame types" {
	[ "$(replies apcdump --frame = block)" = "block_counter" ]
	[ "$(replies apcdump --frame = name,s)" = "$(printf 'name,sched_trace\nname,summary')" ]
	[ "$(replies apcdump --frame=perf_)" = "$(printf -- '--frame=perf_aux\n--frame=perf_data\n--frame=perf_sync')" ]
	# zero-length frames, which the message names apart
	[ "$(replies apcdump --frame = summary,em)" = "summary,empty" ]
}

@test "completion: the value lists written out are the ones the commands print" {
	run "$APC_BIN/apcdump" --frame=no-such-type /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"(names: ${_apctools_frames// /, }, or a number); also type_N, an unknown type, and empty, a zero-length frame"* ]]
	run "$APC_BIN/apcrecord" localhost:1 --sample-rate=no-such-rate
	[[ "$output" == *"(high, normal, low or none)"* ]]
	[ "$_apctools_rates" = "high normal low none" ]
	run "$APC_BIN/apcrecord" localhost:1 --buffer-mode=no-such-mode
	[[ "$output" == *"(streaming, large, medium or small)"* ]]
	[ "$_apctools_modes" = "streaming large medium small" ]
	[ "$(replies apcrecord --sample-rate = n)" = "$(printf 'none\nnormal')" ]
	[ "$(replies apcrecord --buffer-mode = s)" = "$(printf 'small\nstreaming')" ]
}

@test "completion: inputs, outputs and --events complete file names; numbers and times nothing" {
	cd "$TMP"
	mkdir trace.d
	touch dump.bin dump.bin.gz defs.xml
	[ "$(replies apcconv du)" = "$(printf 'dump.bin\ndump.bin.gz')" ]
	[ "$(replies apcconv dump.bin -o tr)" = "trace.d" ]
	[ "$(replies apcconv --events = de)" = "defs.xml" ]
	[ -z "$(replies apcdump --begin = '')" ]
	[ -z "$(replies apcdump -c '')" ]
	[ -z "$(replies apcverify --max-errors = '')" ]
}

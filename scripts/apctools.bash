# apctools.bash - bash completion for apcconv, apcdump, apcverify,
# apcrecord and apcserve.
#
# Installed by `make install` as one file per command in
# $(PREFIX)/share/bash-completion/completions (where bash-completion
# looks a command up by its name); or source it from ~/.bashrc.
#
# The options come from each command's own --help and the input formats
# from apcconv --list-formats, so they follow the commands as they change.
# The few value lists --help gives only in words (frame types, sample
# rates, buffer modes) are written out here; tests/completion.bats checks
# them against the lists the commands print when given a wrong value.

_apctools_frames="summary backtrace name counter block_counter annotate sched_trace idle external proc perf_data activity_trace perf_aux perf_sync"
_apctools_rates="high normal low none"
_apctools_modes="streaming large medium small"

# The options a command's --help lists: "-o", "--output=", "--overwrite".
_apctools_options()
{
	"$1" --help 2>/dev/null | awk '
		/^ +-/ {
			sub(/^ +/, "")
			split($0, col, /  +/)
			n = split(col[1], opt, /, */)
			for (i = 1; i <= n; i++) {
				t = opt[i]
				sub(/ .*/, "", t)
				if (t !~ /^--?[A-Za-z0-9]/)
					continue
				if (t ~ /=/)
					sub(/=.*/, "=", t)
				print t
			}
		}'
}

# Set COMPREPLY to the words of list $1 that start with $2, or, when $3
# is set, to the last item of a comma-separated $2 completed from $1.
_apctools_words()
{
	local list=$1 cur=$2 head=
	if [ -n "${3:-}" ] && [[ $cur == *,* ]]; then
		head=${cur%,*},
		cur=${cur##*,}
	fi
	mapfile -t COMPREPLY < <(IFS=$'\n' compgen -P "$head" -W "$list" -- "$cur")
}

# Set COMPREPLY to the files and folders whose names start with $1.
_apctools_files()
{
	compopt -o filenames 2>/dev/null || :
	mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

_apctools()
{
	local cmd=${1##*/} cur=${COMP_WORDS[COMP_CWORD]} prev='' opt='' pfx=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# The option a value belongs to: "-f VALUE", "--from VALUE", or
	# "--from=VALUE", which bash splits at the "=" into three words (the
	# "=" is in COMP_WORDBREAKS) unless told otherwise.
	if [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 1 ]; then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [ "$cur" = "=" ]; then
		opt=$prev
		cur=
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		pfx=$opt=
		cur=${cur#*=}
	else
		opt=$prev
	fi

	_apctools_value "$1" "$cmd" "$opt" "$cur" && {
		# "--from=ba" in one word: the replies are whole words too
		[ -n "$pfx" ] && COMPREPLY=("${COMPREPLY[@]/#/$pfx}")
		return 0
	}

	if [[ $cur == -* ]]; then
		local o words=
		for o in $(_apctools_options "$1"); do
			words+=$o$'\n'
		done
		_apctools_words "$words" "$cur"
		# an option that takes a value: no space after its "="
		if [[ ${COMPREPLY[0]:-} == *= ]]; then
			compopt -o nospace 2>/dev/null || :
		fi
		return 0
	fi
	# inputs and captures: files and folders (an LTT trace, an .apc)
	_apctools_files "$cur"
	return 0
}

# COMPREPLY for the value of option $3 of command $2 (run as $1), $4 typed
# so far; false if $3 is not an option that takes a value.
_apctools_value()
{
	local cur=$4
	case "$2:$3" in
	apcconv:-f | apcconv:--from | apcserve:-f | apcserve:--from)
		_apctools_words "$("$1" --list-formats 2>/dev/null | awk 'NR > 1 { print $1 }')" "$cur"
		return 0 ;;
	apcconv:--stats)
		_apctools_words json "$cur"
		return 0 ;;
	apcdump:--frame)
		_apctools_words "${_apctools_frames// /$'\n'}"$'\nempty' "$cur" list
		return 0 ;;
	apcrecord:--sample-rate)
		_apctools_words "${_apctools_rates// /$'\n'}" "$cur"
		return 0 ;;
	apcrecord:--buffer-mode)
		_apctools_words "${_apctools_modes// /$'\n'}" "$cur"
		return 0 ;;
	*:-o | *:--output | *:--events | apcrecord:--session)
		_apctools_files "$cur"
		return 0 ;;
	*:--begin | *:--end | *:--core | *:-c | *:--count | *:--max-errors | *:-p | *:--port | \
	*:-l | *:--listen | *:-d | *:--duration | *:--timeout | *:--counters)
		return 0 ;; # a number, a time or a name: nothing to offer
	esac
	return 1
}

complete -F _apctools apcconv apcdump apcverify apcrecord apcserve

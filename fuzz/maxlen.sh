# maxlen.sh - sourced by fuzz/run.sh and fuzz/seed.sh: the -max_len each
# target is fuzzed with.  Small inputs run faster and every seed fits:
# single-file formats get 8 KiB, targets whose input is several files
# joined (an LTT tree, eventdefs plus payload, an .apc folder) 16 KiB;
# convert one byte more (its first byte picks the format).
fuzz_max_len() {
	case "$1" in
	ltt_block | eventdefs | apc | verify) echo 16384 ;;
	convert) echo 16385 ;;
	*) echo 8192 ;;
	esac
}

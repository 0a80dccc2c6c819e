#!/bin/sh
# qemu-wrap.sh DIR - for make check-aarch64: for each aarch64 command in
# DIR/bin and generator in DIR/tools, a script of the same name in
# DIR/qemu/bin or DIR/qemu/tools that runs it under qemu-aarch64, so the
# bats tests run the Arm binaries as they run the native ones.  The
# program keeps its own path as argv[0] (its messages name it the same).
set -eu
dir=$1
for kind in bin tools; do
	mkdir -p "$dir/qemu/$kind"
	for f in "$dir/$kind"/*; do
		case $f in *.o | *.d) continue ;; esac
		[ -f "$f" ] && [ -x "$f" ] || continue
		w="$dir/qemu/$kind/$(basename "$f")"
		printf '#!/bin/sh\nexec qemu-aarch64 "%s" "$@"\n' "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" >"$w"
		chmod +x "$w"
	done
done

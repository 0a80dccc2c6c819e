#!/bin/sh
# demo.sh - convert the bundled Barman sample, check it and show it.
# Run by `make demo` (after deps and build).
set -eu
BUILD=${BUILD:-build/rel}
BIN=$BUILD/bin
in=testdata/barman/demo.bin
out=build/demo.apc

echo "\$ apcconv $in -o $out --overwrite"
"$BIN/apcconv" "$in" -o "$out" --overwrite
echo
echo "\$ apcverify $out"
"$BIN/apcverify" "$out"
echo
echo "\$ apcdump --summary $out"
"$BIN/apcdump" --summary "$out"
echo
echo "\$ apcdump -c 12 $out"
"$BIN/apcdump" -c 12 "$out"

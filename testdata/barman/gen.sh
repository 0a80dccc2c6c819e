#!/bin/sh
# Regenerates the barman fixtures with tools/barmangen (deterministic:
# same options and seed, same bytes).  Run from the project root after
# `make build/rel/tools/barmangen`; GEN=path overrides the generator.
set -e
GEN=${GEN:-build/rel/tools/barmangen}
D=testdata/barman
g() { name=$1; shift; "$GEN" -o "$D/$name.bin" --truth "$D/$name.truth" "$@"; }

g le64_linear_v3     --seed 1  --bits 64 --records 300 --buffer 32K --cores 2 --tasks 4 --mmaps 2 --charts 2 --series 5 --extra --uncommitted
g be64_linear_v2     --seed 2  --endian big --version 2 --records 200 --buffer 24K --tasks 3 --mmaps 3 --charts 1 --series 2
g be32_circular      --seed 3  --endian big --bits 32 --circular --buffer 3K --records 300 --tasks 4 --mmaps 2 --charts 1 --series 2
g le32_linear_v1     --seed 4  --bits 32 --version 1 --records 100 --buffer 8K
g le64_empty         --seed 5  --records 0 --buffer 1K
g le64_cores64       --seed 6  --cores 64 --records 400 --buffer 40K
g le64_circular_wrap --seed 7  --circular --buffer 4000 --records 700 --tasks 2 --extra
g le64_circular_part --seed 8  --circular --buffer 32K --records 50 --tasks 2
g le32_junk_trailing --seed 9  --bits 32 --junk 333 --trailing 77 --records 80 --buffer 8K
g le64_truncated     --seed 10 --records 150 --buffer 16K --damage truncate
g be64_badlen_circ   --seed 11 --endian big --circular --buffer 8K --records 300 --damage badlen --tasks 2
g le64_badlen_circ_older --seed 13 --circular --buffer 12000 --records 500 --damage badlen --tasks 2
g le32_custom_charts --seed 12 --bits 32 --records 300 --buffer 24K --charts 3 --series 7 --tasks 2 --mmaps 1
g demo               --seed 42 --bits 64 --records 600 --buffer 48K --cores 2 --tasks 3 --mmaps 2 --charts 1 --series 3 --start-ms 5

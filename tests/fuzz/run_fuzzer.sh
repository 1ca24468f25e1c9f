#!/usr/bin/env bash
# One libFuzzer harness under CTest: replay every committed corpus input once (a regression input
# that crashes again fails here, by name), then fuzz for SECONDS from that corpus, so that a change
# that breaks a parser is likely to be caught even without a committed input for it.
#   run_fuzzer.sh BINARY FUZZ_SOURCE_DIR NAME SECONDS SCRATCH_DIR
set -u
bin=$1 src=$2 name=$3 secs=$4 scratch=$5/$name
corpus=$src/corpus/$name
if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
  echo "fuzz $name: no committed corpus in $corpus" >&2
  exit 1
fi
opts=(-print_final_stats=1 -timeout=60)
[ -f "$src/dict/$name.dict" ] && opts+=(-dict="$src/dict/$name.dict")
# Per-harness flags (e.g. -max_len), one per line.
[ -f "$src/opts/$name" ] && mapfile -t extra < <(grep -v '^#' "$src/opts/$name") && opts+=("${extra[@]}")
rm -rf "$scratch" && mkdir -p "$scratch/new"
echo "fuzz $name: replaying $(ls "$corpus" | wc -l) corpus inputs"
"$bin" "${opts[@]}" -runs=0 -artifact_prefix="$scratch/" "$corpus" || {
  echo "fuzz $name: a corpus input fails (artifact in $scratch)" >&2; exit 1; }
echo "fuzz $name: fuzzing for ${secs}s"
"$bin" "${opts[@]}" -max_total_time="$secs" -artifact_prefix="$scratch/" "$scratch/new" "$corpus" || {
  echo "fuzz $name: FINDING (crash or invariant violation): reproduce with $bin $scratch/crash-*" >&2; exit 1; }

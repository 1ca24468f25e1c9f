#!/usr/bin/env bash
# One libFuzzer harness under CTest, in one process: libFuzzer first runs every committed corpus input
# (tests/fuzz/corpus/NAME: a regression input that crashes again fails here, and is named in the
# output), then fuzzes from that corpus until SECONDS have passed since the start — plus the harness's
# set-up allowance ("# ctest-setup-seconds: N" in tests/fuzz/opts/NAME: harnesses that make keys for
# every algorithm first), so that a change that breaks a parser is likely to be caught even without a
# committed input for it.
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
setup=0
if [ -f "$src/opts/$name" ]; then
  mapfile -t extra < <(grep -v '^#' "$src/opts/$name")
  opts+=("${extra[@]}")
  setup=$(sed -n 's/^# ctest-setup-seconds: *\([0-9]*\).*/\1/p' "$src/opts/$name")
fi
rm -rf "$scratch" && mkdir -p "$scratch/new"
echo "fuzz $name: $(ls "$corpus" | wc -l) corpus inputs, then fuzzing until ${secs}s + ${setup:-0}s of set-up"
if ! "$bin" "${opts[@]}" -max_total_time=$((secs + ${setup:-0})) -artifact_prefix="$scratch/" "$scratch/new" "$corpus"; then
  echo "fuzz $name: FINDING (crash, sanitizer report or invariant violation): reproduce with" \
       "$bin $scratch/crash-* (or the corpus input named above)" >&2
  exit 1
fi

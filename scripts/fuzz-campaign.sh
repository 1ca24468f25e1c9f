#!/usr/bin/env bash
# The libFuzzer campaign (docs/fuzzing.md): every harness of build/fuzz runs in sessions until it has
# made at least FUZZ_TARGET_RUNS executions AND its last session found no new coverage edge (the
# plateau), whichever comes later. Resumable: state lives in BUILD/campaign/<harness>/ (working corpus,
# crash artifacts, one line per session in sessions.tsv); run it again and it carries on where it
# stopped. Sessions run under `nice -n 19`, FUZZ_JOBS harnesses at a time.
#
#   fuzz-campaign.sh run BUILD [HARNESS...]    run (or resume) the campaign (default: every harness)
#   fuzz-campaign.sh report BUILD              the table docs/fuzzing.md shows (executions, edges, state)
#   fuzz-campaign.sh merge BUILD [HARNESS...]  minimise each working corpus (-merge=1) into
#                                              tests/fuzz/corpus/<harness>/ (what is committed)
#   fuzz-campaign.sh seeds BUILD [HARNESS...]  (re)generate the harnesses' seed inputs
#
# Environment: FUZZ_TARGET_RUNS (10000000), FUZZ_SESSION_SECONDS (1800), FUZZ_JOBS (1),
# FUZZ_MAX_SECONDS (0 = no cap: otherwise a harness stops, marked "capped", after this much fuzzing;
# a harness's own cap, "# campaign-max-seconds: N" in tests/fuzz/opts/NAME, applies too: the smaller
# of the two wins). A short campaign: FUZZ_SESSION_SECONDS=90 FUZZ_MAX_SECONDS=90 (one session each).
# A harness whose state file says "paused" stops after its current session; the next run resumes it.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
fz=$src/tests/fuzz
cmd=${1:-}
build=${2:-}
[ -n "$cmd" ] && [ -n "$build" ] || { sed -n '2,20p' "$0" >&2; exit 2; }
shift 2
build=$(cd "$build" && pwd) || exit 2
camp=$build/campaign
target_runs=${FUZZ_TARGET_RUNS:-10000000}
session=${FUZZ_SESSION_SECONDS:-1800}
jobs=${FUZZ_JOBS:-1}
cap=${FUZZ_MAX_SECONDS:-0}
if [ $# -gt 0 ]; then harnesses=("$@"); else mapfile -t harnesses < "$build/fuzzers.txt"; fi

bin() { echo "$build/tests/fuzz/fuzz_$1"; }

# libFuzzer flags of a harness: its dictionary and tests/fuzz/opts/<name>.
flags() {
  local h=$1
  echo "-timeout=60"
  [ -f "$fz/dict/$h.dict" ] && echo "-dict=$fz/dict/$h.dict"
  [ -f "$fz/opts/$h" ] && grep -v '^#' "$fz/opts/$h"
}

# Seed inputs: written by the harness itself (DSIG_FUZZ_SEEDS), plus test vectors for the JOSE ones.
seeds() {
  local h=$1 d=$camp/$1/seeds
  rm -rf "$d" && mkdir -p "$d"
  if ! DSIG_FUZZ_SEEDS=$d DSIG_VECTORS=$src/tests/vectors nice -n 19 "$(bin "$h")" > "$camp/$h/seeds.log" 2>&1; then
    echo "fuzz $h: the seed generator failed ($camp/$h/seeds.log)" >&2
    return 1
  fi
  echo "fuzz $h: $(ls "$d" | wc -l) seeds"
}

# Sum of a column of sessions.tsv (execs = 2, seconds = 3).
total() { awk -F'\t' -v c="$2" 'NR > 1 { s += $c } END { printf "%d", s }' "$camp/$1/sessions.tsv" 2>/dev/null || echo 0; }
last_cov() { awk -F'\t' 'NR > 1 { c = $4 } END { print c + 0 }' "$camp/$1/sessions.tsv" 2>/dev/null || echo 0; }

# One harness until done: sessions of $session seconds.
run_one() {
  local h=$1 dir=$camp/$1
  mkdir -p "$dir/corpus" "$dir/artifacts"
  [ -f "$dir/sessions.tsv" ] || printf 'date\texecs\tseconds\tcov\tft\tcorpus\tnew_units\texit\n' > "$dir/sessions.tsv"
  [ -d "$dir/seeds" ] || seeds "$h" || return 1
  while :; do
    [ -f "$dir/state" ] && [ "$(cat "$dir/state")" != running ] && return 0
    local runs secs prev
    runs=$(total "$h" 2) secs=$(total "$h" 3) prev=$(last_cov "$h")
    local hcap
    hcap=$(sed -n 's/^# campaign-max-seconds: *\([0-9]*\).*/\1/p' "$fz/opts/$h" 2>/dev/null)
    hcap=${hcap:-0}
    if [ "$cap" -gt 0 ] && { [ "$hcap" -eq 0 ] || [ "$cap" -lt "$hcap" ]; }; then hcap=$cap; fi
    if [ "$hcap" -gt 0 ] && [ "$secs" -ge "$hcap" ]; then echo capped > "$dir/state"; return 0; fi
    echo running > "$dir/state"
    local log=$dir/session-$(date +%Y%m%d-%H%M%S).log t0 rc
    t0=$(date +%s)
    mapfile -t extra < <(flags "$h")
    local dirs=("$dir/corpus" "$dir/seeds")
    [ -d "$fz/corpus/$h" ] && dirs+=("$fz/corpus/$h")
    # Allocation stacks cost a third of the time of the OpenSSL-heavy harnesses: not recorded in the
    # campaign (a finding is reproduced with the defaults).
    ASAN_OPTIONS=malloc_context_size=0:${ASAN_OPTIONS:-} DSIG_VECTORS=$src/tests/vectors \
      nice -n 19 "$(bin "$h")" "${extra[@]}" -print_final_stats=1 -max_total_time="$session" \
      -artifact_prefix="$dir/artifacts/" "${dirs[@]}" > "$log" 2>&1
    rc=$?
    local execs cov ft corp newu
    execs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -1)
    newu=$(grep -a 'stat::new_units_added' "$log" | awk '{print $2}' | tail -1)
    cov=$(grep -a -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    ft=$(grep -a -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    corp=$(ls "$dir/corpus" | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "${execs:-0}" "$(( $(date +%s) - t0 ))" \
      "${cov:-0}" "${ft:-0}" "$corp" "${newu:-0}" "$rc" >> "$dir/sessions.tsv"
    if [ "$rc" -ne 0 ]; then
      echo finding > "$dir/state"
      echo "fuzz $h: FINDING (exit $rc): $log, artifacts in $dir/artifacts" >&2
      return 1
    fi
    runs=$(( runs + ${execs:-0} ))
    echo "fuzz $h: $runs executions, cov $cov (previous session $prev)"
    if [ "$runs" -ge "$target_runs" ] && [ "${cov:-0}" -le "$prev" ]; then echo done > "$dir/state"; return 0; fi
    [ "$(cat "$dir/state")" = paused ] && return 0
  done
}

# Everything runs from one function, parsed before it starts: the script may be edited while a
# campaign runs.
main() {
  case $cmd in
  run)
    running=0
    for h in "${harnesses[@]}"; do
      [ -x "$(bin "$h")" ] || { echo "fuzz: $(bin "$h") not built (make fuzz-build)" >&2; exit 2; }
      # A harness interrupted mid-session or paused is resumed; one with a finding waits for its fix
      # (remove its state file).
      case $(cat "$camp/$h/state" 2>/dev/null) in running | paused) rm -f "$camp/$h/state" ;; esac
      run_one "$h" &
      running=$((running + 1))
      if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    bash "$0" report "$build" "${harnesses[@]}"
    ;;
  report)
    printf '| harness | executions | fuzzing time | executions/s | edges (cov) | features (ft) | corpus | state |\n|---|---:|---:|---:|---:|---:|---:|---|\n'
    for h in "${harnesses[@]}"; do
      t=$camp/$h/sessions.tsv
      [ -f "$t" ] || { printf '| fuzz_%s | 0 | – | – | – | – | – | not started |\n' "$h"; continue; }
      awk -F'\t' -v h="$h" -v st="$(cat "$camp/$h/state" 2>/dev/null || echo -)" \
        'NR > 1 { e += $2; s += $3; c = $4; f = $5; n = $6 }
         END { printf "| fuzz_%s | %d | %s | %d | %d | %d | %d | %s |\n", h, e,
                      (s >= 3600 ? sprintf("%.1f h", s / 3600) : sprintf("%d s", s)), (s ? e / s : 0), c, f, n, st }' "$t"
    done
    ;;
  merge)
    for h in "${harnesses[@]}"; do
      out=$fz/corpus/$h tmp=$camp/$h/merged
      rm -rf "$tmp" && mkdir -p "$tmp"
      mapfile -t extra < <(flags "$h")
      dirs=()
      for d in "$out" "$camp/$h/seeds" "$camp/$h/corpus"; do [ -d "$d" ] && dirs+=("$d"); done
      nice -n 19 "$(bin "$h")" "${extra[@]}" -merge=1 "$tmp" "${dirs[@]}" > "$camp/$h/merge.log" 2>&1 ||
        { echo "fuzz $h: merge failed ($camp/$h/merge.log)" >&2; exit 1; }
      # Regression inputs (named regress-*) are kept whatever the merge thinks of their coverage.
      keep=$(mktemp -d)
      [ -d "$out" ] && find "$out" -name 'regress-*' -exec cp {} "$keep/" \;
      rm -rf "$out" && mkdir -p "$out" && cp "$tmp"/* "$out/" 2>/dev/null
      cp "$keep"/* "$out/" 2>/dev/null
      rm -rf "$keep"
      echo "fuzz $h: $(ls "$out" | wc -l) inputs, $(du -sk --apparent-size "$out" | cut -f1) KiB in tests/fuzz/corpus/$h"
    done
    ;;
  seeds)
    for h in "${harnesses[@]}"; do mkdir -p "$camp/$h"; seeds "$h"; done
    ;;
  *)
    sed -n '2,20p' "$0" >&2
    exit 2
    ;;
  esac
}

main; exit $?

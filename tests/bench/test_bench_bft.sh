#!/usr/bin/env bash
# `dsig bench bft` through the tool (smoke test, no timing checks): a tiny run of every protocol,
# scheme and layout prints a row each with p10 <= p50 <= p90, the ratio lines, and writes the CSV
# (one line per row, documented columns) and the SVG (axis, units, legend) with --out and no file
# without it; bad options exit 2.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tool" bench bft --help >"$tmp/help" || fail "--help status"
for o in --protocols --schemes --layout --count --batch --runs --out; do
  grep -q -- "$o" "$tmp/help" || fail "help lacks $o"
done
"$tool" bench --help | grep -q 'bench bft' || fail "dsig bench --help does not list bft"

"$tool" bench bft --quick --count 8 --batch 4 --warmup 2 --out "$tmp" -q >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "quick run failed"; }
rows=$(grep -cE '^(procs|fit) ' "$tmp/out")
[ "$rows" -eq 24 ] || fail "expected 24 rows (2 layouts x (3 protocols + pbft client) x 3 schemes), got $rows"
awk '/^(procs|fit) / { split($0, a, "|"); n = split(a[2], v, " ");
       if (n != 3 || v[1] + 0 > v[2] + 0 || v[2] + 0 > v[3] + 0 || v[1] + 0 <= 0) { print "bad row: " $0; bad = 1 } }
     END { exit bad }' "$tmp/out" || fail "row percentiles"
for l in procs fit; do for p in cbc rbc pbft; do
  grep -q "^# $l $p: 1 - p50(dsig)/p50(ed25519) = " "$tmp/out" || fail "no ratio line for $l $p"
done; done
grep -q 'paper: 0.73' "$tmp/out" && grep -q 'paper: 0.69' "$tmp/out" || fail "the paper's figures are missing"
csv=$(ls "$tmp"/benchmark_bft_*.csv) && svg=$(ls "$tmp"/benchmark_bft_*.svg) || fail "no CSV / SVG"
head -1 "$csv" | grep -q '^layout,protocol,metric,scheme,n_processes,msg_bytes,samples,p10_us,p50_us,p90_us' || fail "CSV header"
[ "$(($(wc -l < "$csv") - 1))" -eq 24 ] || fail "CSV rows"
grep -q '<svg' "$svg" && grep -q 'microseconds' "$svg" && grep -q 'p10 .. p90' "$svg" && grep -q '>dsig<' "$svg" ||
  fail "SVG lacks axis unit, legend or whisker note"
# one protocol, one layout, only DSig: pbft gives two metrics. No --out: no file anywhere (run in an
# empty directory to see it), and the output says so.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$tool" bench bft --quick --count 4 --batch 4 --warmup 1 --protocols pbft --schemes dsig \
  --layout procs -q) >"$tmp/out2" 2>&1 || fail "pbft/dsig/procs run"
[ "$(grep -cE '^procs ' "$tmp/out2")" -eq 2 ] || fail "pbft rows: $(cat "$tmp/out2")"
[ -z "$(ls -A "$tmp/cwd")" ] || fail "without --out, files written into the current directory: $(ls -A "$tmp/cwd")"
grep -q 'not written (give --out DIR)' "$tmp/out2" || fail "without --out, no 'not written' line"

for bad in "--count 0" "--schemes rsa" "--layout cloud" "--f 9" "--size 0" "--nope"; do
  # shellcheck disable=SC2086
  "$tool" bench bft $bad >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "'$bad' status"
  [ -s "$tmp/err" ] || fail "'$bad' without a message"
done
echo "PASS"

#!/usr/bin/env bash
# `dsig bench keccak` through the tool (smoke test, no timing checks): --quick prints every metric with
# median, min and max; --help documents the options; bad options exit 2 with a message.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tool" bench keccak --help >"$tmp/help" || fail "--help status"
grep -q -- '--quick' "$tmp/help" && grep -q -- '--runs' "$tmp/help" || fail "help text: $(cat "$tmp/help")"
"$tool" bench --help | grep -q 'bench keccak' || fail "dsig bench --help does not list keccak"

"$tool" bench keccak --quick >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "quick run failed"; }
grep -q '^keccak back-end: ' "$tmp/out" || fail "no back-end line"
grep -q '^METRIC  *MEDIAN  *MIN  *MAX  *UNIT' "$tmp/out" || fail "no header"
for m in 'Keccak-f\[1600\], 1 state' 'Keccak-f\[1600\] x4 portable' 'SHAKE256 bulk, 64 KiB chunks (dsig)' \
         'SHAKE256 bulk, 64 KiB chunks (EVP)' 'SHAKE256 32 B in -> 32 B out (dsig)' \
         'SHAKE256 32 B in -> 32 B out (EVP)'; do
    grep -q "^$m" "$tmp/out" || fail "metric missing: $m"
done
# Every metric row: three positive numbers with min <= median <= max.
awk '/^(Keccak|SHAKE)/ { n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]$/ && n < 3) v[n++] = $i + 0;
       if (n < 3 || v[1] <= 0 || v[1] > v[0] || v[0] > v[2]) { print "bad row: " $0; bad = 1 } }
     END { exit bad }' "$tmp/out" || fail "row format"

"$tool" bench keccak --runs 2 --quick >/dev/null || fail "--runs 2"
"$tool" bench keccak --runs 0 >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--runs 0 status"
grep -q 'valid: 1..15' "$tmp/err" || fail "--runs 0 message: $(cat "$tmp/err")"
"$tool" bench keccak --nope >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "unknown option status"
grep -q 'valid:' "$tmp/err" || fail "unknown option message"
echo "ok"

#!/usr/bin/env bash
# `dsig bench apps` as a smoke test (no timing checks): a tiny run of every configuration prints a row
# per (application, transport, pinning, scheme), the R lines, the audit lines and the 2-CPU note when it
# applies, and writes the CSV (24 rows with the documented columns) and one SVG per application (with
# --out; without it no file); bad options exit 2 naming what was wrong. SKIP without redis-server.
set -u
D=${DSIG_TOOL:?DSIG_TOOL must point at the dsig tool}
command -v redis-server >/dev/null || { echo "SKIP: redis-server is not installed (scripts/install-deps.sh)"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-apps-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$D" bench apps --help | grep -q -- '--transports' || fail "help"
out=$("$D" bench apps --schemes none,rsa 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q 'unknown scheme' || fail "bad scheme: $out"
out=$("$D" bench apps --requests 0 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q -- '--requests' || fail "bad count: $out"
# Without --out no file is written anywhere (an empty working directory stays empty).
mkdir "$T/cwd"
(cd "$T/cwd" && "$D" bench apps --requests 4 --runs 1 --warmup 1 --apps book --transports unix --pin off \
    --schemes none -q) >"$T/out0" 2>&1 || fail "run without --out: $(cat "$T/out0")"
[ -z "$(ls -A "$T/cwd")" ] || fail "without --out, files in the current directory: $(ls -A "$T/cwd")"
grep -q 'not written (give --out DIR)' "$T/out0" || fail "without --out, no 'not written' line"

"$D" bench apps --requests 30 --runs 2 --warmup 10 -q --out "$T" >"$T/out" 2>"$T/err" || fail "run: $(cat "$T/err")"
ncpu=$(nproc)
pins=2
[ "$ncpu" -lt 2 ] && pins=1
rows=$((pins * 2 * 2 * 3))
[ "$(grep -cE '^(kv|book) +(unix|tcp) ' "$T/out")" -eq "$rows" ] || fail "table rows: $(cat "$T/out")"
[ "$(grep -c '^R ' "$T/out")" -eq $((pins * 4)) ] || fail "R lines"
grep -q 'the paper: 0.86' "$T/out" || fail "paper's R"
[ "$(grep -c '^audit: .* entries verified with public keys only' "$T/out")" -eq $((pins * 4)) ] || fail "audit lines"
[ "$ncpu" -gt 2 ] || grep -q '^note: 2 CPUs' "$T/out" || fail "2-CPU note"
csv=$(ls "$T"/bench_apps_*.csv)
head -1 "$csv" | grep -q '^date,machine,cpus,app,transport,pinned,scheme,requests,p10_us,p50_us,p90_us' || fail "CSV header"
[ "$(($(wc -l <"$csv") - 1))" -eq "$rows" ] || fail "CSV rows"
for app in kv book; do
    svg=$(ls "$T"/bench_apps_${app}_*.svg) || fail "no $app SVG"
    grep -q '<svg' "$svg" && grep -q 'µs' "$svg" && grep -q 'R = 1 - added' "$svg" && grep -q 'requests per bar' "$svg" ||
        fail "$app SVG content"
done
echo "ok"

#!/usr/bin/env bash
# `dsig bench` through the tool: a quick two-algorithm run produces a well-formed CSV and SVG; bad
# arguments give a clear error and exit status 2. Exits 77 (skip) if the CLI does not expose `bench`.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
"$tool" bench stream --help 2>/dev/null | grep -q -- --sizes || { echo "dsig bench not wired into the CLI: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

algs=$("$tool" bench stream --list | awk '$1=="HS256"||$1=="Ed25519"{print $1}' | paste -sd, -)
[ -n "$algs" ] || { echo "neither HS256 nor Ed25519 is registered yet: skip"; exit 77; }
n=$(echo "$algs" | tr , '\n' | wc -l)

"$tool" bench stream --alg "$algs" --sizes 1 --warmup 0 --measure 1 --out "$tmp" >"$tmp/stdout" \
    2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "quick run failed"; }
csv=$(ls "$tmp"/benchmark_stream_sig_*.csv) || fail "no CSV"
svg=$(ls "$tmp"/benchmark_stream_sig_*.svg) || fail "no SVG"
head -1 "$csv" | grep -q '^kty,alg,key_bits,kib,bytes,sign_ms_median,' || fail "CSV header: $(head -1 "$csv")"
[ "$(wc -l <"$csv")" -eq $((n + 1)) ] || fail "CSV has $(wc -l <"$csv") lines, want $((n + 1))"
awk -F, 'NR>1 && $4 != 1024 {exit 1}' "$csv" || fail "KiB column"
head -c 4 "$svg" | grep -q '^<svg' || fail "SVG does not start with <svg"
grep -q '^KTY *| ALG *| KiB *| SIGN' "$tmp/stdout" || fail "table header"
grep -q 'CSV: ' "$tmp/stdout" || fail "summary does not name the CSV"
ls -a "$tmp" | grep -q dsig-bench-payload && fail "payload file left behind"

# Plain integers: no thousands dot in KiB (1024, not 1.024) or in the summary's totals.
grep -Eq '^[a-zA-Z]+ *\| [^|]+\| 1024 +\|' "$tmp/stdout" || fail "KiB column is not a plain 1024: $(sed -n 3p "$tmp/stdout")"
grep -Eq '[0-9]\.[0-9]{3}\.[0-9]{3}' "$tmp/stdout" && fail "a thousands-dotted number: $(grep -E '[0-9]\.[0-9]{3}\.' "$tmp/stdout")"
grep -q '^Total algs: .* Total bytes: [0-9]* (' "$tmp/stdout" || fail "summary totals: $(grep Total "$tmp/stdout")"
# The chart can be read alone: machine, date, iterations, axis ticks and unit, whiskers.
grep -q 'CPU.*UTC; 0 warm-up, 1 measured iterations' "$svg" || fail "SVG lacks machine/date/iterations"
grep -q '>MiB/s</text>' "$svg" || fail "SVG lacks its axis unit"
[ "$(grep -c 'text-anchor="middle">[0-9]' "$svg")" -ge 3 ] || fail "SVG lacks axis ticks"

# Files only with --out: neither a table run nor --json writes into the current directory.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$tool" bench stream --alg "$algs" --sizes 64K --warmup 0 --measure 1 >"$tmp/noout" \
    2>/dev/null) || fail "run without --out"
(cd "$tmp/cwd" && "$tool" bench stream --alg "$algs" --sizes 64K --warmup 0 --measure 1 --json \
    --source file >/dev/null 2>&1) || fail "--json run without --out"
[ -z "$(ls -A "$tmp/cwd")" ] || fail "files written without --out: $(ls -A "$tmp/cwd")"
grep -q 'not written (give --out DIR)' "$tmp/noout" || fail "summary does not say no files were written"

# --json: one object per row.
"$tool" bench stream --alg "$algs" --sizes 64K --warmup 0 --measure 1 --json --out "$tmp/j" \
    >"$tmp/json" 2>/dev/null || fail "json run"
[ "$(grep -c '^{"kty":' "$tmp/json")" -eq "$n" ] || fail "JSON rows"

# Errors: exit 2 with a message listing what is valid.
"$tool" bench stream --alg NO-SUCH-ALG >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "unknown alg status"
grep -q 'valid:' "$tmp/err" || fail "unknown alg message: $(cat "$tmp/err")"
"$tool" bench stream --sizes 0 >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "bad size status"
grep -q 'valid:' "$tmp/err" || fail "bad size message"
"$tool" bench nope >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown subcommand status"

# bench sig --json: the documented fields.
first=${algs%%,*}
"$tool" bench sig --alg "$first" --warmup 0 --measure 3 --max-time 0.05 --json >"$tmp/sig" 2>/dev/null \
    || fail "bench sig"
[ "$(grep -c '"op":"keygen"\|"op":"sign"\|"op":"verify"' "$tmp/sig")" -eq 3 ] || fail "sig rows"
grep -q '"median_ns":.*"p90_ns":.*"p99_ns":' "$tmp/sig" || fail "sig fields"
echo "ok"

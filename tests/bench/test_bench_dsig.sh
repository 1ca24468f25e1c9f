#!/usr/bin/env bash
# `dsig bench dsig` through the tool (no timing checks): a tiny quick run prints the table and the
# same-run ratios but no PASS/FAIL judgement (those only with --targets); --json gives one well-formed object per row with the documented fields; bad options
# exit 2 with a message listing what is valid. DSig rows are required only when the runtime is built.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
"$tool" bench dsig --help 2>/dev/null | grep -q -- --batch-sizes || { echo "dsig bench dsig missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tool" bench dsig --quick --count 16 >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "quick run"; }
grep -q '^SCHEME *| HBSS *| HASH *| BATCH *| OP ' "$tmp/out" || fail "table header"
[ "$(grep -c '^sodium-ed25519 ' "$tmp/out")" -eq 6 ] || fail "sodium rows"
[ "$(grep -c '^openssl-ed25519 ' "$tmp/out")" -eq 6 ] || fail "openssl rows"
grep -qE 'PASS|FAIL' "$tmp/out" && fail "a run without --targets judges: $(grep -E 'PASS|FAIL' "$tmp/out")"
[ "$(grep -c '^ratio ' "$tmp/out")" -eq 2 ] || fail "ratio lines: $(grep '^ratio' "$tmp/out")"
dsig_built=1
grep -q 'not in this build' "$tmp/err" && dsig_built=0
if [ "$dsig_built" = 1 ]; then
    [ "$(grep -c '^dsig ' "$tmp/out")" -eq 8 ] || fail "dsig rows"
    grep -Eq '^ratio sign: dsig [0-9.]+ us, sodium-ed25519 sign [0-9.]+ us: [0-9.]+x faster' "$tmp/out" ||
        fail "sign ratio: $(grep '^ratio sign' "$tmp/out")"
    "$tool" bench dsig --quick --count 16 --targets >"$tmp/t" 2>/dev/null || fail "--targets run"
    [ "$(grep -cE '^(PASS|FAIL) ' "$tmp/t")" -eq 6 ] || fail "target lines: $(grep -E '^(PASS|FAIL|SKIP)' "$tmp/t")"
fi

"$tool" bench dsig --quick --count 16 --json >"$tmp/json" 2>"$tmp/err" || { cat "$tmp/err"; fail "json run"; }
want=$((12 + 8 * dsig_built))
[ "$(wc -l <"$tmp/json")" -eq "$want" ] || fail "JSON rows: $(wc -l <"$tmp/json"), want $want"
if command -v jq >/dev/null; then
    jq -e -s 'all(.[]; (.scheme|type)=="string" and (.op|type)=="string" and (.msg_bytes|type)=="number"
              and (.median_ns|type)=="number" and (.p90_ns|type)=="number" and (.p99_ns|type)=="number"
              and has("w") and has("hash") and has("batch"))' "$tmp/json" >/dev/null || fail "JSON fields"
    [ "$(jq -s '[.[] | select(.scheme=="sodium-ed25519" and .op=="sign" and .msg_bytes==8)] | length' \
        "$tmp/json")" -eq 2 ] || fail "sodium sign rows (latency + throughput)"
fi
grep -q '^ratio ' "$tmp/err" || fail "ratios on stderr with --json"

for bad in "--w 3" "--hash md5" "--batch-sizes 3" "--sizes 2M" "--count 0" "--nope"; do
    # shellcheck disable=SC2086
    "$tool" bench dsig $bad >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] || fail "'$bad' exit $rc"
    grep -qE 'valid|--count' "$tmp/err" || fail "'$bad' message: $(cat "$tmp/err")"
done
echo ok

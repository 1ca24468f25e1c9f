#!/usr/bin/env bash
# `dsig bench dsig` through the tool (no timing checks): a tiny quick run prints the table and the
# target lines; --json gives one well-formed object per row with the documented fields; bad options
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
[ "$(grep -cE '^(PASS|FAIL|SKIP) ' "$tmp/out")" -eq 6 ] || fail "target lines: $(grep -E '^(PASS|FAIL|SKIP)' "$tmp/out")"
dsig_built=1
grep -q 'not in this build' "$tmp/err" && dsig_built=0
if [ "$dsig_built" = 1 ]; then
    [ "$(grep -c '^dsig ' "$tmp/out")" -eq 8 ] || fail "dsig rows"
    grep -q '^SKIP ' "$tmp/out" && fail "targets skipped although DSig ran"
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
grep -qE '^(PASS|FAIL|SKIP) ' "$tmp/err" || fail "targets on stderr with --json"

for bad in "--w 3" "--hash md5" "--batch-sizes 3" "--sizes 2M" "--count 0" "--nope"; do
    # shellcheck disable=SC2086
    "$tool" bench dsig $bad >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] || fail "'$bad' exit $rc"
    grep -qE 'valid|--count' "$tmp/err" || fail "'$bad' message: $(cat "$tmp/err")"
done
echo ok

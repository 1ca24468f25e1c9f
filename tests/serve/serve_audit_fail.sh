#!/usr/bin/env bash
# tests/serve/serve_audit_fail.sh — no signature without its durable audit record, with the server's
# fdatasync made to fail on demand (LD_PRELOAD of tests/serve/fail_sync.c: EIO on the audit log while
# $T/fail exists; optionally slow):
#   - while every sync fails, a sign request and then 60 concurrent ones get 503 and no signature;
#     /readyz says 503;
#     the metrics count the failures; the server log has the failure, with the request id of a request
#     whose signature was held back (the id of its response header and of its audit record);
#   - once syncs work again the log recovers by itself and signing resumes; every record of the
#     refused requests says what the client got (503: a correction follows a record written as 200);
#     the transparency log still verifies (`dsig log verify`), every record at its index;
#   - the log deleted: signing stops (503) until SIGHUP creates it again; renamed: until it is renamed
#     back;
#   - queueing is measured: with one server thread held by a slow sync, a /healthz sent meanwhile has
#     the wait in its queue_ms and in dsig_serve_request_queue_seconds;
#   - without a key /readyz says 503 until a reload brings one.
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-audit-fail curl jq sha256sum
SHIM=${DSIG_FAIL_SYNC_LIB:?DSIG_FAIL_SYNC_LIB must point at the fdatasync shim}
# The shim comes before a sanitizer's runtime in the preload list: tell ASan that this is intended.
[ "$SAN" = 1 ] && export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
mkdir -p "$T/keys" "$T/log" "$T/out"
"$D" keygen -q -a Ed25519 -o "$T/keys/k.jwk"
config() { # config THREADS
    cat >"$T/serve.json" <<EOF2
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys", "state_registry_dir": "",
 "audit": {"path": "log/audit.log"},
 "limits": {"request_timeout_s": 5, "threads": $1, "max_connections_per_address": 0},
 "tenants": [{"name": "t", "tokens": [{"sha256": "$(printf tok | sha256sum | cut -d' ' -f1)"}], "keys": ["*"],
              "operations": ["sign"]}]}
EOF2
}
start() { LD_PRELOAD=$SHIM DSIG_FAIL_SYNC_MATCH=audit.log DSIG_FAIL_SYNC_FLAG=$T/fail serve_start; }
# sign N: prints "CODE REQUEST-ID" of a sign request (the body in $T/out/N).
sign() {
    local code
    code=$(curl -s -o "$T/out/$1" -D "$T/out/$1.h" -w '%{http_code}' -X POST -H 'Authorization: Bearer tok' \
        --data-binary "payload $1" "$U/v1/keys/k/sign" || true)
    echo "$code $(tr -d '\r' <"$T/out/$1.h" | sed -n 's/^DSig-Request-Id: //Ip')"
}
export -f sign
export T U
not_ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$U/readyz")" = 503 ]; }

config 2
start
export U
[ "$(sign 0 | cut -d' ' -f1)" = 200 ] || die "signing with a working disk"
serve_ready || die "/readyz with a working disk"
ok

# --- every fdatasync fails: no signature, and the records say so -----------------------------------
sleep 1 # let the log sync the records of the requests above: the next sync is a signature's
: >"$T/fail"
sign 1 >"$T/codes" # its own sync fails: held back
seq 2 61 | xargs -P 30 -I{} bash -c 'sign {}' >>"$T/codes"
[ "$(wc -l <"$T/codes")" = 61 ] || die "not every client answered"
grep -q '^200 ' "$T/codes" && die "$(grep -c '^200 ' "$T/codes") signatures released while the audit log could not sync"
[ "$(grep -c '^503 [0-9a-f]\{16\}$' "$T/codes")" = 61 ] || die "want 61 × 503 with a request id: $(sort "$T/codes" | uniq -c | head)"
grep -q '"error":"audit_unavailable"' "$T/out/1" || die "503 body: $(cat "$T/out/1")"
not_ready || die "/readyz while the audit log cannot sync"
curl -s -o "$T/metrics" "$U/metrics"
grep -q '^dsig_serve_audit_sync_failures_total [1-9]' "$T/metrics" || die "sync failures not counted"
grep -q '^dsig_serve_audit_ready 0$' "$T/metrics" || die "dsig_serve_audit_ready"
grep -q '^dsig_serve_ready 0$' "$T/metrics" || die "dsig_serve_ready"
grep -q '"level":"error","msg":"audit log stopped: fdatasync failed' "$T/serve.log" || die "no log of the stop"
held=$(sed -n 's/.*"msg":"signature not released[^"]*","request_id":"\([0-9a-f]*\)".*/\1/p' "$T/serve.log" | head -1)
[ -n "$held" ] && grep -q " $held\$" "$T/codes" || die "no server log line with the request id of a held-back signature"
ok

# --- the disk works again: the log recovers by itself --------------------------------------------
rm "$T/fail"
wait_until 10 serve_ready || die "the audit log did not recover"
[ "$(sign 100 | cut -d' ' -f1)" = 200 ] || die "signing after the recovery"
audit_recovered "$T/log/audit.log" "fdatasync failed: Input/output error"
# What each refused client got: the last record of its request id says 503.
while read -r code id; do
    last=$(jq -c --arg id "$id" 'select(.request_id == $id) | .code' "$T/log/audit.log" | tail -1)
    [ "$last" = 503 ] || die "request $id got $code, its last audit record says ${last:-nothing}"
done <"$T/codes"
[ "$(jq -s --arg id "$held" '[.[] | select(.request_id == $id)] | map(.code) == [200, 503]' "$T/log/audit.log")" = true ] ||
    die "the held-back signature's record and its correction"
ok
# The transparency log survived the failure and the recovery's rewrite: every record in its place,
# every checkpoint signed over records that stayed (a checkpoint covers durable records only).
sleep 1.2 # the next checkpoint (every second by default)
"$D" log verify -q "$T/log/audit.log" --log-key "$("$D" log key "$T/log/audit.log.key")" ||
    die "the transparency log does not verify after the recovery"
jq -s -e 'to_entries | all(.key == .value.index)' "$T/log/audit.log" >/dev/null || die "indexes after the recovery"
ok

# --- the log deleted, then renamed ------------------------------------------------------------------
rm "$T/log/audit.log"
[ "$(sign 200 | cut -d' ' -f1)" = 503 ] || die "signing into a deleted audit log"
not_ready || die "/readyz with the audit log deleted"
grep -q 'audit log stopped: the audit log .* was deleted' "$T/serve.log" || die "no log of the deletion"
kill -HUP $SP
wait_until 10 serve_ready || die "SIGHUP did not bring the audit log back"
[ "$(sign 201 | cut -d' ' -f1)" = 200 ] || die "signing after SIGHUP"
[ -s "$T/log/audit.log" ] || die "no new audit log"
mv "$T/log/audit.log" "$T/log/moved"
[ "$(sign 202 | cut -d' ' -f1)" = 503 ] || die "signing into a renamed audit log"
mv "$T/log/moved" "$T/log/audit.log"
wait_until 10 serve_ready || die "renamed back, the audit log did not recover"
[ "$(sign 203 | cut -d' ' -f1)" = 200 ] || die "signing after the rename back"
jq -c . "$T/log/audit.log" >/dev/null || die "the audit log is not JSON lines"
serve_stop

# --- queueing behind a slow sync is measured ----------------------------------------------------------
config 1
DSIG_SYNC_DELAY_MS=400 start
sign 300 >"$T/slow" &
sp=$!
sleep 0.1
curl -s -o /dev/null "$U/healthz"
wait $sp
q=$(jq -s '[.[] | select(.op == "healthz")] | last | .queue_ms' "$T/log/audit.log")
awk -v q="$q" 'BEGIN { exit !(q >= 100) }' || die "healthz queued behind a 400 ms sync: queue_ms $q"
curl -s -o "$T/metrics" "$U/metrics"
grep -q '^dsig_serve_request_queue_seconds_bucket{endpoint="healthz",le="0.1"} 0$' "$T/metrics" ||
    die "queue histogram: $(grep 'queue_seconds_bucket{endpoint="healthz"' "$T/metrics" | head -3)"
ok
serve_stop

# --- no key: not ready until a reload brings one -----------------------------------------------------
mkdir -p "$T/nokeys"
mv "$T/keys/k.jwk" "$T/nokeys/"
config 2
start
not_ready || die "/readyz without a key"
curl -s -o "$T/out/ready" "$U/readyz"
grep -q '"reason":"no keys loaded"' "$T/out/ready" || die "/readyz reason without a key: $(cat "$T/out/ready")"
mv "$T/nokeys/k.jwk" "$T/keys/"
kill -HUP $SP
wait_until 10 serve_ready || die "/readyz after a reload brought a key"
ok
serve_stop
echo "$PASSED passed, 0 failed"

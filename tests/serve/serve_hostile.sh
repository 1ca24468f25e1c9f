#!/usr/bin/env bash
# tests/serve/serve_hostile.sh — unauthenticated clients must not make `dsig serve` unavailable to others.
# Each attack comes from its own loopback address (127.0.0.2 ...) while a legitimate client (127.0.0.1)
# asks GET /healthz on a new connection every 50 ms (tests/serve/serve_probe.c, "storm"); every one of
# its requests must be answered, each within 1 s (3 s under a sanitizer, whose server is many times
# slower; on a machine so loaded that the same client, unattacked, already waits longer than a third
# of that, three times that wait: a liveness bound against outages of many seconds, not a performance
# figure):
#   hit-and-run   1000 connections that send half a request head and close, then 200 that send a head
#                 and part of a body and close: their sockets are released at once (at most 5 left in
#                 CLOSE-WAIT within the same bound after the last one), the body ones are audited as
#                 client_abort;
#   slowloris     30 connections sending one header line a second: all closed at the header deadline
#                 (header_timeout_s 2), not kept alive by the dripping;
#   idle          40 connections from one address sending nothing: 32 (the default
#                 max_connections_per_address) are kept, 8 are refused at once;
#   slow body     3 uploads at 10 bytes/s: cut by the minimum upload rate (1024 B/s over each
#                 request_timeout_s window of 3 s), audited as too_slow, never signed.
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-hostile jq sha256sum
P=${DSIG_SERVE_PROBE:?DSIG_SERVE_PROBE must point at serve_probe}
LAT=1000
[ "$SAN" = 1 ] && LAT=3000
mkdir -p "$T/keys"
"$D" keygen -q -a Ed25519 -o "$T/keys/k.jwk"
cat >"$T/serve.json" <<EOF2
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys", "state_registry_dir": "",
 "audit": {"path": "audit.log", "sync": "none"},
 "limits": {"request_timeout_s": 3, "header_timeout_s": 2, "threads": 2},
 "tenants": [{"name": "t", "tokens": [{"sha256": "$(printf tok | sha256sum | cut -d' ' -f1)"}], "keys": ["*"],
              "operations": ["sign"]}]}
EOF2
serve_start
# storm MODE N SECS SRC [BYTES]: run the attack; sets LEGIT_OK LEGIT_TOTAL LEGIT_MAX CLOSE_WAIT OPEN.
storm() {
    local out
    out=$("$P" storm "$PORT" "$@") || die "serve_probe storm $*"
    read -r _ legit _ LEGIT_MAX <<<"$(grep '^legit' <<<"$out")"
    LEGIT_OK=${legit%/*} LEGIT_TOTAL=${legit#*/}
    read -r _ _ _ _ _ CLOSE_WAIT _ OPEN _ RELEASED <<<"$(grep '^attack' <<<"$out")"
    echo "$1: $out" | tr '\n' ' '
    echo
    [ "$LEGIT_TOTAL" -ge 5 ] && [ "$LEGIT_OK" = "$LEGIT_TOTAL" ] ||
        die "$1: the legitimate client got $LEGIT_OK of $LEGIT_TOTAL answers"
    [ "$LEGIT_MAX" -le $LAT ] || die "$1: the legitimate client waited $LEGIT_MAX ms (bound $LAT ms)"
    ok
}
# The bound: LAT, or 3 × the legitimate client's longest wait without an attack (a loaded machine).
out=$("$P" storm "$PORT" hitrun 0 2 127.0.0.2) || die "serve_probe baseline"
base=$(sed -n 's/^legit [0-9]*\/[0-9]* max_ms \([0-9]*\)$/\1/p' <<<"$out")
[ -n "$base" ] || die "baseline: $out"
[ $((3 * base)) -gt $LAT ] && LAT=$((3 * base))
echo "baseline: the legitimate client waited at most $base ms without an attack; bound $LAT ms"
head_partial='POST /v1/keys/k/sign HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer tok\r\nContent-Le'
body_partial='POST /v1/keys/k/sign HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer tok\r\nContent-Length: 100000\r\n\r\nabc'

storm hitrun 1000 3 127.0.0.2 "$head_partial"
[ "$CLOSE_WAIT" -le 5 ] && [ "${RELEASED:-99999}" -le $LAT ] ||
    die "hit-and-run: $CLOSE_WAIT server sockets in CLOSE-WAIT $RELEASED ms after the last connection"
storm hitrun 200 2 127.0.0.2 "$body_partial"
[ "$CLOSE_WAIT" -le 5 ] && [ "${RELEASED:-99999}" -le $LAT ] ||
    die "hit-and-run with a body: $CLOSE_WAIT server sockets in CLOSE-WAIT $RELEASED ms after the last connection"
ok
storm slowloris 30 5 127.0.0.3
[ "$OPEN" = 0 ] || die "slowloris: $OPEN connections still open after the header deadline"
ok
storm idle 40 1 127.0.0.4
[ "$OPEN" = 32 ] || die "idle: $OPEN of 40 connections from one address kept (want 32: the default limit)"
ok
storm slowbody 3 6 127.0.0.5 'POST /v1/keys/k/sign HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer tok\r\nContent-Length: 1000000\r\n\r\n'
[ "$OPEN" = 0 ] || die "slow body: $OPEN uploads still open"
ok

curl -s "$U/metrics" >"$T/metrics"
grep -q '^dsig_serve_connections_cut_total{reason="header_timeout"} [1-9]' "$T/metrics" || die "header_timeout cuts not counted"
grep -q '^dsig_serve_connections_cut_total{reason="too_slow"} 3$' "$T/metrics" || die "too_slow cuts not counted"
grep -q '^dsig_serve_connections_cut_total{reason="per_address"} [1-9]' "$T/metrics" || die "per-address refusals not counted"
ok
serve_stop
count() { jq -s "$1" "$T/audit.log"; }
[ "$(count '[.[] | select(.op == "sign" and .code == 200)] | length')" = 0 ] || die "an attacker got a signature"
[ "$(count '[.[] | select(.op == "sign" and .result == "client_abort" and .bytes == 3)] | length')" -ge 150 ] ||
    die "uploads cut by their client not audited as client_abort"
[ "$(count '[.[] | select(.op == "sign" and .result == "timeout")] | length')" = 0 ] ||
    die "uploads cut by their client audited as timeout"
[ "$(count '[.[] | select(.op == "sign" and .result == "too_slow")] | length')" = 3 ] || die "slow uploads not audited as too_slow"
ok
echo "$PASSED passed, 0 failed"

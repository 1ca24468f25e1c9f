#!/usr/bin/env bash
# tests/serve/serve_tlog.sh — the audit log of `dsig serve` as a transparency log, end to end:
#   signatures carry DSig-Log-Index; every record holds its index and the SHA-256 of the JWS released;
#   GET /v1/log/checkpoint is a C2SP checkpoint signed with the log key (note verifier key printed at
#   start and by `dsig log key`); inclusion proofs of every signature and consistency proofs between
#   checkpoints, checked by the independent RFC 9162 checker (tests/tlog/rfc9162.py) and by
#   `dsig log prove`; a restart continues the tree; a shutdown signs a last checkpoint; the whole log
#   passes `dsig log verify`; bad requests to the log endpoints get 400/404/401.
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-tlog curl jq sha256sum python3
C=${DSIG_SOURCE_DIR:?}/tests/tlog/rfc9162.py

mkdir -p "$T/keys" "$T/log" "$T/out"
"$D" keygen -q -a Ed25519 -o "$T/keys/ed.jwk"
"$D" keygen -q -a ES256 -o "$T/keys/es.jwk"
"$D" keygen -q -a Ed25519 -o "$T/logkey.jwk"
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "jwks": true,
  "audit": {"path": "log/audit.log", "log_key": "logkey.jwk", "log_origin": "example.test/dsig",
            "checkpoint_interval_ms": 100},
  "tenants": [{"name": "signer", "tokens": [{"sha256": "$(h tokS)"}], "keys": ["*"], "operations": ["sign", "verify"]}]
}
JSON
VK=$("$D" log key "$T/logkey.jwk" --origin example.test/dsig)
[[ "$VK" == example.test/dsig+*+* ]] || die "dsig log key: $VK"
serve_start
grep -qF "note verifier key $VK" "$T/serve.log" || die "the start-up log does not print the verifier key"
ok
A=(-H "Authorization: Bearer tokS")

sign() { # sign KID N: the JWS in out/N.jws, the index header in out/N.idx
    curl -s -D "$T/out/$2.h" "${A[@]}" --data-binary "payload $2" -o "$T/out/$2.jws" "$U/v1/keys/$1/sign"
    tr -d '\r' <"$T/out/$2.h" | sed -n 's/^DSig-Log-Index: //Ip' >"$T/out/$2.idx"
    [ -s "$T/out/$2.idx" ] || die "sign $2: no DSig-Log-Index header"
}
for i in $(seq 1 12); do sign $([ $((i % 3)) = 0 ] && echo es || echo ed) $i; done
ok
# Indexes are strictly increasing and are the records' positions.
prev=-1
for i in $(seq 1 12); do
    idx=$(cat "$T/out/$i.idx")
    [ "$idx" -gt "$prev" ] || die "index $idx after $prev"
    prev=$idx
    rec=$(sed -n "$((idx + 1))p" "$T/log/audit.log")
    [ "$(jq .index <<<"$rec")" = "$idx" ] || die "line $((idx + 1)) is not record $idx"
    want=$(head -c -1 "$T/out/$i.jws" | sha256sum | cut -d' ' -f1)
    [ "$(jq -r .jws_sha256 <<<"$rec")" = "$want" ] || die "record $idx: jws_sha256 is not the JWS's"
    [ "$(jq -r .alg <<<"$rec")" != null ] && [ "$(jq -r .thumbprint <<<"$rec")" != null ] || die "record $idx: no key"
done
ok

# The checkpoint covers the signatures soon (every 100 ms), and is signed by the log key.
covered() { curl -s "${A[@]}" "$U/v1/log/checkpoint" >"$T/ckpt" && [ "$(sed -n 2p "$T/ckpt")" -gt "$prev" ]; }
wait_until 10 covered || die "no checkpoint covers record $prev: $(cat "$T/ckpt")"
[ "$(head -1 "$T/ckpt")" = example.test/dsig ] || die "checkpoint origin: $(head -1 "$T/ckpt")"
grep -q "^— example.test/dsig " "$T/ckpt" || die "checkpoint signature line"
ok

# Inclusion proofs of every signature: the RFC 9162 checker (against the log file) and dsig log prove.
for i in $(seq 1 12); do
    idx=$(cat "$T/out/$i.idx")
    curl -s "${A[@]}" "$U/v1/log/proof?index=$idx" >"$T/out/$i.proof"
    python3 "$C" inclusion "$T/log/audit.log" "$T/out/$i.proof" >/dev/null || die "proof $idx: RFC 9162 checker"
    sed -n "$((idx + 1))p" "$T/log/audit.log" >"$T/out/$i.rec"
    "$D" log prove -q --proof "$T/out/$i.proof" --log-key "$VK" --record "$T/out/$i.rec" --jws "$T/out/$i.jws" ||
        die "dsig log prove --proof $idx"
done
ok
# A proof for another record does not prove this one; a tampered proof does not verify.
rc=0
"$D" log prove -q --proof "$T/out/1.proof" --log-key "$VK" --record "$T/out/2.rec" 2>"$T/err" || rc=$?
[ $rc = 1 ] && grep -q "not of this record" "$T/err" || die "a proof of another record accepted (rc $rc)"
jq '.hashes[0] |= (.[0:63] + (if .[63:64] == "0" then "1" else "0" end))' "$T/out/5.proof" >"$T/bad.proof"
rc=0
"$D" log prove -q --proof "$T/bad.proof" --log-key "$VK" 2>"$T/err" || rc=$?
[ $rc = 1 ] || die "a tampered proof accepted (rc $rc)"
ok

# Consistency between the first and the latest checkpoint, by the checker.
n=$(sed -n 2p "$T/ckpt")
for m in 1 3 $((n / 2)) $n; do
    curl -s "${A[@]}" "$U/v1/log/consistency?from=$m&to=$n" >"$T/cons.json"
    python3 "$C" consistency "$T/log/audit.log" "$T/cons.json" >/dev/null || die "consistency $m -> $n"
done
ok
# Bad requests.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "${A[@]}" "$U/v1/log/proof")" = 400 ] || die "proof without index"
[ "$(code "${A[@]}" "$U/v1/log/proof?index=x1")" = 400 ] || die "proof with a bad index"
[ "$(code "${A[@]}" "$U/v1/log/proof?index=99999999")" = 404 ] || die "proof past the tree"
[ "$(code "${A[@]}" "$U/v1/log/consistency?from=0")" = 400 ] || die "consistency from 0"
[ "$(code "${A[@]}" "$U/v1/log/consistency?from=2&to=99999999")" = 400 ] || die "consistency past the tree"
[ "$(code "$U/v1/log/checkpoint")" = 401 ] || die "checkpoint without a token"
[ "$(code -X POST "${A[@]}" "$U/v1/log/checkpoint")" = 405 ] || die "POST checkpoint"
ok

# The JWK Set: no token; public keys only; a JWS verifies with the key taken from it.
curl -sf "$U/.well-known/jwks.json" >"$T/jwks.json" || die "GET /.well-known/jwks.json without a token"
[ "$(jq '.keys | length' "$T/jwks.json")" = 2 ] || die "the JWK Set does not list the 2 served keys"
[ "$(jq '[.keys[] | select(has("d"))] | length' "$T/jwks.json")" = 0 ] || die "the JWK Set holds private members"
jq '.keys[] | select(.crv == "Ed25519")' "$T/jwks.json" >"$T/ed.pub.jwk"
printf 'payload 1' >"$T/p1"
"$D" verify -q -k "$T/ed.pub.jwk" -s "$T/out/1.jws" "$T/p1" || die "a JWS does not verify with its key from the JWK Set"
[ "$(code -X POST "$U/.well-known/jwks.json")" = 405 ] || die "POST to the JWK Set"
ok

# dsig log prove from the log file itself, by JWS (the latest checkpoint beside the log).
idx=$(cat "$T/out/4.idx")
digest=$(jq -r '.blake3 // .sha256' <<<"$(sed -n "$((idx + 1))p" "$T/log/audit.log")")
"$D" log prove -q "$T/log/audit.log" --log-key "$VK" --jws "$T/out/4.jws" --payload-digest "$digest" ||
    die "dsig log prove LOG --jws"
ok

# Shutdown: a last checkpoint of every record; a restart continues the tree where it ended.
serve_stop
total=$(wc -l <"$T/log/audit.log")
[ "$(sed -n 2p "$T/log/audit.log.checkpoint")" = "$total" ] || die "the shutdown checkpoint does not cover all $total records"
serve_start
sign ed 13
[ "$(cat "$T/out/13.idx")" = "$total" ] || die "after a restart the index is $(cat "$T/out/13.idx"), want $total"
serve_stop
"$D" log verify "$T/log/audit.log" --log-key "$VK" >"$T/verify.out" || die "dsig log verify: $(cat "$T/verify.out")"
grep -q "^OK: $((total + 1)) records" "$T/verify.out" || die "verify: $(cat "$T/verify.out")"
ok

# A rotated log: the tree continues in the new file, across a restart; verify takes both files.
mv "$T/log/audit.log" "$T/log/audit.log.1"
serve_start
sign ed 14
kill -HUP "$SP" # nothing to reopen here (the new file is already in use); harmless
sign ed 15
serve_stop
serve_start
sign ed 16
serve_stop
"$D" log verify -q "$T/log/audit.log.1" "$T/log/audit.log" --log-key "$VK" || die "verify of a rotated log"
first=$(head -1 "$T/log/audit.log" | jq .index)
[ "$first" = "$(wc -l <"$T/log/audit.log.1")" ] || die "the new file starts at record $first"
ok

# "audit.transparency_log": false: a plain audit log (no index, no tree, no checkpoints, no header),
# the log endpoints 404 — what bench/serve_bench.sh TLOG_AB=1 compares against.
mkdir -p "$T/plain"
jq '.audit = {"path": "plain/audit.log", "transparency_log": false}' "$T/serve.json" >"$T/plain.json"
mv "$T/plain.json" "$T/serve.json"
serve_start
curl -s -D "$T/ph" "${A[@]}" --data-binary "plain" -o "$T/plain.jws" "$U/v1/keys/ed/sign"
grep -qi '^DSig-Log-Index:' "$T/ph" && die "a DSig-Log-Index header without the transparency log"
[ "$(code "${A[@]}" "$U/v1/log/checkpoint")" = 404 ] || die "checkpoint without the transparency log"
serve_stop
[ "$(head -1 "$T/plain/audit.log" | jq -r .jws_sha256)" = "$(head -c -1 "$T/plain.jws" | sha256sum | cut -d' ' -f1)" ] ||
    die "the plain audit record: $(head -1 "$T/plain/audit.log")"
[ "$(jq -s 'map(has("index")) | any' "$T/plain/audit.log")" = false ] || die "an index without the transparency log"
ls "$T/plain" | grep -Eq '\.(tree|checkpoints?|key)$' && die "transparency log files: $(ls "$T/plain")"
ok

echo "serve_tlog: $PASSED passed"

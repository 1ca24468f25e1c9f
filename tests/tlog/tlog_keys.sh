#!/usr/bin/env bash
# tests/tlog/tlog_keys.sh — `dsig log verify --keys PATH [--jws DIR]` on the log of a real `dsig serve`
# run: the log verifies with the service's key directory, with its JWK Set, and with the released JWS;
# a key directory lacking a key, a key replaced under the same id (another thumbprint), a JWS that is in
# no record and a JWS swapped with another key's are each reported (exit 1) at the exact record; the
# integrity check comes first (an edited record is named as edited, not as a key mismatch); usage
# errors (--jws without --keys, --keys on prove) exit 2.
set -euo pipefail
. "${DSIG_SOURCE_DIR:?}/tests/serve/serve_lib.sh"
serve_lib_init dsig-tlog-keys curl jq sha256sum

mkdir -p "$T/keys" "$T/log" "$T/jws"
"$D" keygen -q -a Ed25519 -o "$T/keys/ed.jwk"
"$D" keygen -q -a ES256 -o "$T/keys/es.jwk"
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/serve.json" <<JSON
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys", "jwks": true,
 "audit": {"path": "log/audit.log", "checkpoint_interval_ms": 50},
 "tenants": [{"name": "s", "tokens": [{"sha256": "$(h tok)"}], "keys": ["*"], "operations": ["sign"]}]}
JSON
serve_start
A=(-H "Authorization: Bearer tok")
# Signatures by both keys (every third by es), one refused request (an unknown key: a record without a
# key), the index of each from DSig-Log-Index.
for i in $(seq 1 9); do
    kid=$([ $((i % 3)) = 0 ] && echo es || echo ed)
    curl -sf -D "$T/h" "${A[@]}" --data-binary "payload $i" -o "$T/jws/$i.jws" "$U/v1/keys/$kid/sign"
    tr -d '\r' <"$T/h" | sed -n 's/^DSig-Log-Index: //Ip' >"$T/$i.idx"
    [ $i = 4 ] && curl -s -o /dev/null "${A[@]}" --data-binary x "$U/v1/keys/nosuch/sign"
done
curl -sf "$U/.well-known/jwks.json" >"$T/jwks.json"
serve_stop
VK=$("$D" log key "$T/log/audit.log.key")
L=$T/log/audit.log
ES1=$(cat "$T/3.idx") # the first record signed by es
ED1=$(cat "$T/1.idx") # and by ed

"$D" log verify "$L" --log-key "$VK" --keys "$T/keys" --jws "$T/jws" >"$T/out" || die "with --keys DIR --jws: $(cat "$T/out")"
grep -q "^keys: the key of 9 records matches one of the 2 keys given" "$T/out" || die "verify --keys: $(cat "$T/out")"
grep -q "JWS: 9 files" "$T/out" || die "verify --jws: $(cat "$T/out")"
"$D" log verify -q "$L" --log-key "$VK" --keys "$T/jwks.json" --jws "$T/jws" || die "with the JWK Set"
# Public keys only, in two directories (a key split from the other): --keys repeats.
mkdir -p "$T/pub1" "$T/pub2"
jq '.keys[] | select(.crv == "Ed25519")' "$T/jwks.json" >"$T/pub1/ed.jwk"
jq '.keys[] | select(.crv == "P-256")' "$T/jwks.json" >"$T/pub2/es.pub"
"$D" log verify -q "$L" --log-key "$VK" --keys "$T/pub1" --keys "$T/pub2" || die "with two public key directories"
ok

# expect NAME PATTERN [verify args...]: exit 1 and a message matching PATTERN.
expect() {
    local name=$1 pat=$2 rc=0
    shift 2
    "$D" log verify "$L" --log-key "$VK" "$@" >/dev/null 2>"$T/err" || rc=$?
    [ $rc = 1 ] || die "$name: exit $rc, want 1 ($(cat "$T/err"))"
    grep -Eq "$pat" "$T/err" || die "$name: message '$(cat "$T/err")' does not match '$pat'"
    ok
}
expect "a key missing" "audit.log:$((ES1 + 1)): record $ES1: key \"es\" \(thumbprint [A-Za-z0-9_-]{43}\) is not among the keys given" \
    --keys "$T/pub1"
# Another key under the same id: a new es key (another thumbprint).
mkdir -p "$T/other"
cp "$T/keys/ed.jwk" "$T/other/"
"$D" keygen -q -a ES256 -o "$T/other/es.jwk"
expect "another key under the id" "record $ES1: key \"es\" has thumbprint [A-Za-z0-9_-]{43} in the log, but the key \"es\" given \(.*/other/es.jwk\) has thumbprint [A-Za-z0-9_-]{43}: another key under this id" \
    --keys "$T/other"
# The ed key itself (same thumbprint: "alg" is not in it) bound to another algorithm of its key type.
mkdir -p "$T/swap"
cp "$T/keys/es.jwk" "$T/swap/es.jwk"
jq '.alg = "DSig"' "$T/pub1/ed.jwk" >"$T/swap/ed.pub"
expect "algorithm" "record $ED1: algorithm Ed25519 in the log, but the key \"ed\" \(.*/swap/ed.pub\) is bound to DSig" \
    --keys "$T/swap"
# A JWS in no record.
mkdir -p "$T/jws2"
cp "$T/jws/"*.jws "$T/jws2/"
printf 'eyJhbGciOiJFZERTQSJ9..AAAA\n' >"$T/jws2/stray.jws"
expect "a JWS in no record" "the JWS '.*/stray.jws' is in no record of the log" --keys "$T/keys" --jws "$T/jws2"
# An edited record (its thumbprint changed): the log check names it as edited, at its line.
mkdir -p "$T/c"
cp "$L" "$L".checkpoint "$L".checkpoints "$L".tree "$T/c/"
sed -i "$((ES1 + 1))s/\"thumbprint\":\"[A-Za-z0-9_-]*\"/\"thumbprint\":\"$(printf 'A%.0s' $(seq 43))\"/" "$T/c/audit.log"
rc=0
"$D" log verify "$T/c/audit.log" --log-key "$VK" --keys "$T/keys" >/dev/null 2>"$T/err" || rc=$?
[ $rc = 1 ] && grep -q "audit.log:$((ES1 + 1)): record $ES1 was edited" "$T/err" || die "edited thumbprint: rc $rc, $(cat "$T/err")"
ok

# Usage errors and unreadable keys: exit 2.
code() { local rc=0; "$D" log "$@" >/dev/null 2>"$T/err" || rc=$?; echo $rc; }
[ "$(code verify "$L" --log-key "$VK" --jws "$T/jws")" = 2 ] || die "--jws without --keys"
[ "$(code prove "$L" --log-key "$VK" --index 0 --keys "$T/keys")" = 2 ] || die "--keys on prove"
[ "$(code verify "$L" --log-key "$VK" --keys "$T/nothere")" = 2 ] || die "--keys of a missing path"
mkdir -p "$T/empty"
[ "$(code verify "$L" --log-key "$VK" --keys "$T/empty")" = 2 ] && grep -q "no key in" "$T/err" || die "an empty key directory"
ok

echo "tlog_keys: $PASSED passed"

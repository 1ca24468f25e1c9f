#!/usr/bin/env bash
# tests/serve/serve_sign_digest.sh — POST /v1/keys/{kid}/sign-digest end to end: the client hashes,
# the service signs the digest, and the signature is a standard one of the message —
#   ES256 and RS256 over SHA-256 (checked by `dsig verify` over the message and by the openssl CLI),
#   ML-DSA-44 over an external mu the client computed itself (Python hashlib SHAKE256, FIPS 204
#   Algorithm 7 line 6) and over a HashML-DSA SHA-512 pre-hash (verified as HashML-DSA, not as pure);
# refused, with a message naming what is wrong: an algorithm that signs no digest (Ed25519), another
# hash, a wrong length, bad base64url, an unknown member, not JSON, a body over 1 KiB, a token without
# the "sign-digest" operation (also one that may sign), GET; every record says "sign-digest" with the
# hash and digest signed, its index is the DSig-Log-Index, and the log passes `dsig log verify`.
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-digest curl jq sha256sum python3 openssl

mkdir -p "$T/keys" "$T/log" "$T/out"
for k in es:ES256 rs:RS256 ml:ML-DSA-44 ed:Ed25519; do
    "$D" keygen -q -a "${k#*:}" -o "$T/keys/${k%%:*}.jwk"
    "$D" pubkey -q -k "$T/keys/${k%%:*}.jwk" -o "$T/${k%%:*}.pub"
done
"$D" pubkey -q --pem -k "$T/keys/es.jwk" -o "$T/es.pem"
"$D" pubkey -q --pem -k "$T/keys/rs.jwk" -o "$T/rs.pem"
"$D" keygen -q -a Ed25519 -o "$T/logkey.jwk"
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "audit": {"path": "log/audit.log", "log_key": "logkey.jwk", "log_origin": "example.test/digest"},
  "tenants": [
    {"name": "hasher", "tokens": [{"sha256": "$(h tokH)"}], "keys": ["*"], "operations": ["sign-digest"]},
    {"name": "signer", "tokens": [{"sha256": "$(h tokS)"}], "keys": ["*"], "operations": ["sign", "verify"]}
  ]
}
JSON
VK=$("$D" log key "$T/logkey.jwk" --origin example.test/digest)
serve_start
AH=(-H "Authorization: Bearer tokH")
printf 'a payload the service never sees, %s\n' "$(date +%N)" >"$T/msg"
b64() { python3 -c 'import base64,sys; print(base64.urlsafe_b64encode(bytes.fromhex(sys.argv[1])).decode().rstrip("="))' "$1"; }
unb64() { python3 -c 'import base64,sys; s=sys.argv[1]; sys.stdout.buffer.write(base64.urlsafe_b64decode(s+"="*(-len(s)%4)))' "$1"; }

# digest KID HASH HEX N: POST it; the response in out/N.json, the index header in out/N.idx, the
# signature bytes in out/N.sig; the HTTP code printed.
digest() {
    local code
    code=$(curl -s -D "$T/out/$4.h" -o "$T/out/$4.json" -w '%{http_code}' "${AH[@]}" -H 'Content-Type: application/json' \
        --data-binary "{\"hash\":\"$2\",\"digest\":\"$(b64 "$3")\"}" "$U/v1/keys/$1/sign-digest")
    if [ "$code" = 200 ]; then
        tr -d '\r' <"$T/out/$4.h" | sed -n 's/^DSig-Log-Index: //Ip' >"$T/out/$4.idx"
        unb64 "$(jq -r .signature "$T/out/$4.json")" >"$T/out/$4.sig"
    fi
    echo "$code"
}
record() { sed -n "$(($(cat "$T/out/$1.idx") + 1))p" "$T/log/audit.log"; }
check_record() { # N HASH HEX
    local rec
    rec=$(record "$1")
    [ "$(jq -r .op <<<"$rec")" = sign-digest ] || die "record of $1: op $(jq -r .op <<<"$rec")"
    [ "$(jq -r .signed_hash <<<"$rec")" = "$2" ] || die "record of $1: signed_hash"
    [ "$(jq -r .signed_digest <<<"$rec")" = "$3" ] || die "record of $1: signed_digest is not the digest signed"
    [ "$(jq -r .jws_sha256 <<<"$rec")" = "$(head -c -1 "$T/out/$1.json" | sha256sum | cut -d' ' -f1)" ] ||
        die "record of $1: jws_sha256 is not the response body's"
    [ "$(jq -r .code <<<"$rec")" = 200 ] || die "record of $1: code"
}

# ES256 and RS256 over SHA-256: a signature of the message, for dsig and for OpenSSL.
SHA256=$(sha256sum "$T/msg" | cut -d' ' -f1)
for k in es rs; do
    [ "$(digest $k SHA-256 "$SHA256" $k)" = 200 ] || die "sign-digest $k: $(cat "$T/out/$k.json")"
    [ "$(jq -r .alg "$T/out/$k.json")" = "$([ $k = es ] && echo ES256 || echo RS256)" ] || die "$k: alg"
    "$D" verify -q -k "$T/$k.pub" -s "$T/out/$k.sig" --format raw "$T/msg" || die "$k: not a signature of the message"
    check_record $k SHA-256 "$SHA256"
done
python3 - "$T/out/es.sig" "$T/out/es.der" <<'PY'
import sys
raw = open(sys.argv[1], 'rb').read()
def integer(b):
    b = b.lstrip(b'\0') or b'\0'
    if b[0] & 0x80: b = b'\0' + b
    return b'\x02' + bytes([len(b)]) + b
body = integer(raw[:32]) + integer(raw[32:])
open(sys.argv[2], 'wb').write(b'\x30' + bytes([len(body)]) + body)
PY
openssl dgst -sha256 -verify "$T/es.pem" -signature "$T/out/es.der" "$T/msg" >/dev/null || die "openssl: ES256"
openssl dgst -sha256 -verify "$T/rs.pem" -signature "$T/out/rs.sig" "$T/msg" >/dev/null || die "openssl: RS256"
ok

# ML-DSA-44: mu = SHAKE256(SHAKE256(pk, 64) || 0 || 0 || M, 64), from the public JWK alone.
MU=$(python3 - "$T/ml.pub" "$T/msg" <<'PY'
import base64, hashlib, json, sys
pub = json.load(open(sys.argv[1]))['pub']
pk = base64.urlsafe_b64decode(pub + '=' * (-len(pub) % 4))
tr = hashlib.shake_256(pk).digest(64)
print(hashlib.shake_256(tr + b'\0\0' + open(sys.argv[2], 'rb').read()).hexdigest(64))
PY
)
[ "$(digest ml ExternalMu "$MU" mu)" = 200 ] || die "sign-digest ExternalMu: $(cat "$T/out/mu.json")"
"$D" verify -q -k "$T/ml.pub" -s "$T/out/mu.sig" --format raw "$T/msg" || die "ExternalMu: not an ML-DSA signature of M"
check_record mu ExternalMu "$MU"
SHA512=$(sha512sum "$T/msg" | cut -d' ' -f1)
[ "$(digest ml SHA-512 "$SHA512" ph)" = 200 ] || die "sign-digest HashML-DSA: $(cat "$T/out/ph.json")"
"$D" verify -q -k "$T/ml.pub" -s "$T/out/ph.sig" --format raw --prehash SHA-512 "$T/msg" ||
    die "SHA-512: not a HashML-DSA signature of M"
rc=0
"$D" verify -q -k "$T/ml.pub" -s "$T/out/ph.sig" --format raw "$T/msg" 2>/dev/null || rc=$?
[ $rc = 1 ] || die "a HashML-DSA signature verified as pure ML-DSA (exit $rc)"
check_record ph SHA-512 "$SHA512"
ok

# Refusals: 400 with a message naming the problem; nothing signed, nothing released.
refused() { # CODE WHAT BODY-PATTERN curl-args...
    local want=$1 what=$2 pat=$3 code
    shift 3
    code=$(curl -s -o "$T/out/r.json" -w '%{http_code}' "$@")
    [ "$code" = "$want" ] || die "$what: HTTP $code, expected $want ($(cat "$T/out/r.json"))"
    grep -q -- "$pat" "$T/out/r.json" || die "$what: message $(cat "$T/out/r.json") lacks '$pat'"
    jq -e 'has("signature") | not' "$T/out/r.json" >/dev/null || die "$what: a signature was released"
}
P=(-H 'Content-Type: application/json')
refused 400 "Ed25519" "Ed25519 does not sign a digest" "${AH[@]}" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA-512\",\"digest\":\"$(b64 "$SHA512")\"}" "$U/v1/keys/ed/sign-digest"
refused 400 "another hash" "it takes: SHA-256" "${AH[@]}" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA-384\",\"digest\":\"$(b64 "$SHA512")\"}" "$U/v1/keys/es/sign-digest"
refused 400 "wrong length" "is 32 bytes, got 31" "${AH[@]}" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA-256\",\"digest\":\"$(b64 "${SHA256:2}")\"}" "$U/v1/keys/rs/sign-digest"
refused 400 "bad base64url" "not canonical base64url" "${AH[@]}" "${P[@]}" \
    --data-binary '{"hash":"SHA-256","digest":"ab+/cd=="}' "$U/v1/keys/es/sign-digest"
refused 400 "unknown member" 'unknown member' "${AH[@]}" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA-256\",\"digest\":\"$(b64 "$SHA256")\",\"context\":\"x\"}" "$U/v1/keys/es/sign-digest"
refused 400 "duplicate member" 'JSON object' "${AH[@]}" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA-256\",\"hash\":\"SHA-256\",\"digest\":\"$(b64 "$SHA256")\"}" "$U/v1/keys/es/sign-digest"
refused 400 "not JSON" 'JSON object' "${AH[@]}" "${P[@]}" --data-binary 'hash=SHA-256' "$U/v1/keys/es/sign-digest"
refused 400 "hash name with a quote" 'not a hash name' "${AH[@]}" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA\\\"256\",\"digest\":\"$(b64 "$SHA256")\"}" "$U/v1/keys/es/sign-digest"
head -c 2000 /dev/zero | tr '\0' ' ' >"$T/big"
refused 413 "body over 1 KiB" 'at most 1024 bytes' "${AH[@]}" "${P[@]}" --data-binary @"$T/big" "$U/v1/keys/es/sign-digest"
refused 403 "a signing token" 'sign-digest' -H "Authorization: Bearer tokS" "${P[@]}" \
    --data-binary "{\"hash\":\"SHA-256\",\"digest\":\"$(b64 "$SHA256")\"}" "$U/v1/keys/es/sign-digest"
refused 403 "a digest token on /sign" 'may not sign' "${AH[@]}" --data-binary @"$T/msg" "$U/v1/keys/es/sign"
refused 405 "GET" 'method not allowed' "${AH[@]}" "$U/v1/keys/es/sign-digest"
refused 404 "unknown key" 'no such key' "${AH[@]}" "${P[@]}" --data-binary '{}' "$U/v1/keys/nokey/sign-digest"
ok

# The key list says which keys take digests for this token.
curl -s "${AH[@]}" "$U/v1/keys" >"$T/out/keys.json"
[ "$(jq -r '.keys[] | select(.kid=="es") | .operations | join(",")' "$T/out/keys.json")" = sign-digest ] || die "keys: es"
[ "$(jq -r '.keys[] | select(.kid=="ed") | .operations | length' "$T/out/keys.json")" = 0 ] || die "keys: ed"
ok

serve_stop
"$D" log verify -q "$T/log/audit.log" --log-key "$VK" || die "dsig log verify of a log with sign-digest records"
# 4 signed, 12 refused (the /sign request is recorded as op "sign")
[ "$(grep -c '"op":"sign-digest"' "$T/log/audit.log")" -eq 16 ] ||
    die "sign-digest records: $(jq -r 'select(.op=="sign-digest") | "\(.code)/\(.result)"' "$T/log/audit.log" | tr '\n' ' ')"
ok
echo "$PASSED passed"

#!/usr/bin/env bash
# tests/serve/serve_rotate.sh — key versions and rotation end to end: sign with version 1, rotate
# (POST /v1/keys/{id}/rotate, "admin"), sign again (the new kid in the JWS header), the old JWS still
# verifies — through /verify (the version picked by its kid) and with `dsig verify` against the
# version 1 public key taken from the JWK Set — then retire version 1: its JWS is refused, the JWK Set
# (served without a token) lists live versions only, the newest version cannot be retired; rotation
# is refused without "admin" (403) and for a stateful key (HSS-LMS: 409); a restart keeps the
# versions and the retirement; every record says which version it used; concurrent rotations while
# signing all land (each its own version).
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-rotate curl jq sha256sum

mkdir -p "$T/keys" "$T/out"
"$D" keygen -q -a Ed25519 -o "$T/keys/ed.jwk"
"$D" keygen -q -a ES256 -o "$T/keys/es.jwk"
"$D" keygen -q -a Ed25519 -o "$T/logkey.jwk"
"$D" keygen -q -a HSS-LMS --param LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4 -o "$T/keys/lms.state" --pub "$T/keys/lms.pub"
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "include_kid": true,
  "jwks": true,
  "audit": {"path": "audit.log", "log_key": "logkey.jwk", "log_origin": "example.test/rotate"},
  "tenants": [
    {"name": "ops", "tokens": [{"sha256": "$(h tokA)"}], "keys": ["*"], "operations": ["sign", "verify", "admin"]},
    {"name": "app", "tokens": [{"sha256": "$(h tokS)"}], "keys": ["*"], "operations": ["sign", "verify"]}
  ]
}
JSON
serve_start
printf 'rotation payload %s\n' "$(date +%N)" >"$T/msg"
A=(-H "Authorization: Bearer tokA")
S=(-H "Authorization: Bearer tokS")
# call CODE OUT curl-args...: the HTTP code must be CODE; the body in $T/out/OUT
call() {
    local want=$1 out=$2 code
    shift 2
    code=$(curl -s -o "$T/out/$out" -w '%{http_code}' "$@")
    [ "$code" = "$want" ] || die "$out: HTTP $code, expected $want: $(cat "$T/out/$out")"
}
hdr_kid() { # the protected header's kid of the compact JWS in file $1
    local b
    b=$(cut -d. -f1 "$1" | tr '_-' '/+')
    while [ $((${#b} % 4)) != 0 ]; do b="$b="; done
    base64 -d <<<"$b" | jq -r .kid
}
verify() { # CODE OUT KEY JWS-FILE
    call "$1" "$2" "${S[@]}" -H "DSig-Signature: $(tr -d '\n' <"$4")" --data-binary @"$T/msg" "$U/v1/keys/$3/verify"
}

# Version 1 signs; its thumbprint is the JWS kid (a plain ed.jwk without its own "kid").
call 200 v1.jws "${S[@]}" --data-binary @"$T/msg" "$U/v1/keys/ed/sign"
TP1=$(curl -s "${S[@]}" "$U/v1/keys" | jq -r '.keys[] | select(.kid=="ed") | .thumbprint')
[ "$(hdr_kid "$T/out/v1.jws")" = "$TP1" ] || die "v1 JWS kid $(hdr_kid "$T/out/v1.jws"), expected $TP1"
ok

# Rotation: without "admin" refused, with it version 2 (kid ed.v2), written to the key directory.
call 403 r403 "${S[@]}" -X POST "$U/v1/keys/ed/rotate"
grep -q 'operation ."admin' "$T/out/r403" || die "403 does not name the admin operation: $(cat "$T/out/r403")"
call 200 rot "${A[@]}" -X POST "$U/v1/keys/ed/rotate"
[ "$(jq -r '.kid, .version, .alg' "$T/out/rot" | tr '\n' ' ')" = "ed.v2 2 Ed25519 " ] || die "rotate: $(cat "$T/out/rot")"
TP2=$(jq -r .thumbprint "$T/out/rot")
[ "$TP2" != "$TP1" ] || die "rotation kept the same key"
[ -f "$T/keys/ed.v2.jwk" ] || die "no ed.v2.jwk written"
[ "$(stat -c %a "$T/keys/ed.v2.jwk")" = 600 ] || die "ed.v2.jwk mode $(stat -c %a "$T/keys/ed.v2.jwk")"
call 405 rget "${A[@]}" "$U/v1/keys/ed/rotate"
call 404 rnone "${A[@]}" -X POST "$U/v1/keys/nokey/rotate"
call 409 rlms "${A[@]}" -X POST "$U/v1/keys/lms/rotate"
grep -q 'stateful' "$T/out/rlms" || die "409 for lms does not say stateful: $(cat "$T/out/rlms")"
ls "$T/keys" | grep -q '^lms\.v' && die "a version file was made for the stateful key"
ok

# Version 2 signs now (GET /v1/keys/ed is its JWK); the v1 JWS still verifies, picked by its kid.
call 200 v2.jws "${S[@]}" --data-binary @"$T/msg" "$U/v1/keys/ed/sign"
[ "$(hdr_kid "$T/out/v2.jws")" = ed.v2 ] || die "v2 JWS kid $(hdr_kid "$T/out/v2.jws")"
call 200 jwk "${S[@]}" "$U/v1/keys/ed"
[ "$(jq -r .kid "$T/out/jwk")" = ed.v2 ] || die "GET /v1/keys/ed is not version 2: $(cat "$T/out/jwk")"
verify 200 ver1 ed "$T/out/v1.jws"
[ "$(jq -r '.valid, .version' "$T/out/ver1" | tr '\n' ' ')" = "true 1 " ] || die "v1 verify: $(cat "$T/out/ver1")"
verify 200 ver2 ed "$T/out/v2.jws"
[ "$(jq -r .version "$T/out/ver2")" = 2 ] || die "v2 verify: $(cat "$T/out/ver2")"
call 200 vers "${S[@]}" "$U/v1/keys/ed/versions"
[ "$(jq -c '[.versions[] | [.kid, .state]]' "$T/out/vers")" = '[["ed","verify-only"],["ed.v2","signing"]]' ] ||
    die "versions: $(cat "$T/out/vers")"
ok

# The JWK Set: no token needed, both versions; `dsig verify` of the v1 JWS with the v1 public key.
call 200 jwks "$U/.well-known/jwks.json"
OTHERS=$(curl -s "${S[@]}" "$U/v1/keys" | jq -r '.keys[] | select(.kid != "ed") | .thumbprint')
[ "$(jq -r '.keys[].kid' "$T/out/jwks" | sort | paste -sd,)" = "$(printf '%s\n' "$TP1" ed.v2 $OTHERS | sort | paste -sd,)" ] ||
    die "JWKS kids: $(jq -c '[.keys[].kid]' "$T/out/jwks")"
jq -r '.keys[] | has("d")' "$T/out/jwks" | grep -q true && die "the JWK Set holds a private key"
jq --arg k "$TP1" '.keys[] | select(.kid == $k)' "$T/out/jwks" >"$T/v1.pub"
jq '.keys[] | select(.kid == "ed.v2")' "$T/out/jwks" >"$T/v2.pub"
"$D" verify -q -k "$T/v1.pub" -s "$T/out/v1.jws" "$T/msg" || die "dsig verify of the v1 JWS with the JWKS v1 key"
"$D" verify -q -k "$T/v2.pub" -s "$T/out/v2.jws" "$T/msg" || die "dsig verify of the v2 JWS with the JWKS v2 key"
rc=0
"$D" verify -q -k "$T/v2.pub" -s "$T/out/v1.jws" "$T/msg" 2>/dev/null || rc=$?
[ $rc = 1 ] || die "the v1 JWS verified with the v2 key (exit $rc)"
ok

# Retire: the signing version refused (409), version 1 retired; its JWS is refused, JWKS drops it.
call 409 ret2 "${A[@]}" -X POST "$U/v1/keys/ed/versions/2/retire"
grep -q 'signing version' "$T/out/ret2" || die "409 for the signing version: $(cat "$T/out/ret2")"
call 403 ret403 "${S[@]}" -X POST "$U/v1/keys/ed/versions/1/retire"
call 404 ret404 "${A[@]}" -X POST "$U/v1/keys/ed/versions/7/retire"
call 404 retbad "${A[@]}" -X POST "$U/v1/keys/ed/versions/01/retire"
call 200 ret1 "${A[@]}" -X POST "$U/v1/keys/ed/versions/1/retire"
[ "$(jq -r '.kid, .state' "$T/out/ret1" | tr '\n' ' ')" = "ed retired " ] || die "retire: $(cat "$T/out/ret1")"
[ -f "$T/keys/ed.v1.retired" ] || die "no retirement marker"
verify 422 ver1r ed "$T/out/v1.jws"
grep -q 'retired' "$T/out/ver1r" || die "the retired v1 JWS refusal does not say retired: $(cat "$T/out/ver1r")"
verify 200 ver2b ed "$T/out/v2.jws"
call 200 jwks2 "$U/.well-known/jwks.json"
jq -e --arg k "$TP1" '[.keys[] | select(.kid == $k)] | length == 0' "$T/out/jwks2" >/dev/null ||
    die "the retired version is still in the JWK Set"
jq -e '[.keys[] | select(.kid == "ed.v2")] | length == 1' "$T/out/jwks2" >/dev/null || die "v2 missing from the JWK Set"
call 200 vers2 "${S[@]}" "$U/v1/keys/ed/versions"
[ "$(jq -c '[.versions[] | [.version, .state]]' "$T/out/vers2")" = '[[1,"retired"],[2,"signing"]]' ] ||
    die "versions after retire: $(cat "$T/out/vers2")"
# A kid of no version of this key: 422 naming it.
call 200 es.jws "${S[@]}" --data-binary @"$T/msg" "$U/v1/keys/es/sign"
verify 422 vwrong ed "$T/out/es.jws"
grep -q 'names no version' "$T/out/vwrong" || die "unknown kid: $(cat "$T/out/vwrong")"
ok

# Rotations while signing: every rotation gets its own version, every signature verifies.
PIDS=()
for i in 1 2 3; do
    curl -s -o "$T/out/cr$i" -w '%{http_code}\n' "${A[@]}" -X POST "$U/v1/keys/es/rotate" >"$T/out/crc$i" &
    PIDS+=($!)
    curl -s -o "$T/out/cs$i.jws" "${S[@]}" --data-binary @"$T/msg" "$U/v1/keys/es/sign" &
    PIDS+=($!)
done
wait "${PIDS[@]}" # not a bare wait: the server is a child too
for i in 1 2 3; do
    [ "$(cat "$T/out/crc$i")" = 200 ] || die "concurrent rotation $i: $(cat "$T/out/cr$i")"
    verify 200 cv$i es "$T/out/cs$i.jws"
done
[ "$(jq -r .version "$T/out/cr"{1,2,3} | sort -n | paste -sd,)" = 2,3,4 ] || die "concurrent rotations' versions"
ok

# The audit log: each record names the version it used; `dsig log verify --keys` matches every record
# to its version's key file in the key directory (KID.vN.jwk for version N).
serve_stop
"$D" log verify -q "$T/audit.log" --log-key "$("$D" log key "$T/logkey.jwk" --origin example.test/rotate)" \
    --keys "$T/keys" || die "dsig log verify --keys of a log with rotated keys"
[ "$(jq -r 'select(.op == "sign" and .kid == "ed") | .version' "$T/audit.log" | sort -u | paste -sd,)" = 1,2 ] ||
    die "sign records' versions: $(jq -c 'select(.op=="sign" and .kid=="ed") | .version' "$T/audit.log")"
[ "$(jq -c 'select(.op == "rotate" and .code == 200 and .kid == "ed") | .version' "$T/audit.log")" = 2 ] ||
    die "rotate record"
[ "$(jq -c 'select(.op == "retire" and .code == 200) | .version' "$T/audit.log")" = 1 ] || die "retire record"
ok

# A restart keeps the versions and the retirement.
serve_start
verify 200 rv2 ed "$T/out/v2.jws"
verify 422 rv1 ed "$T/out/v1.jws"
call 200 rvers "${S[@]}" "$U/v1/keys/es/versions"
[ "$(jq -c '[.versions[] | .state]' "$T/out/rvers")" = '["verify-only","verify-only","verify-only","signing"]' ] ||
    die "es versions after the restart: $(cat "$T/out/rvers")"
call 200 rs.jws "${S[@]}" --data-binary @"$T/msg" "$U/v1/keys/es/sign"
[ "$(hdr_kid "$T/out/rs.jws")" = es.v4 ] || die "after the restart es signs with $(hdr_kid "$T/out/rs.jws")"
call 200 rjwks "$U/.well-known/jwks.json"
[ "$(jq '.keys | length' "$T/out/rjwks")" = 6 ] || die "JWKS after the restart: $(jq -c '[.keys[].kid]' "$T/out/rjwks")"
serve_stop
echo "$PASSED passed"

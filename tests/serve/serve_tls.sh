#!/usr/bin/env bash
# tests/serve/serve_tls.sh — `dsig serve` with built-in TLS ("tls" in the configuration: libmicrohttpd +
# GnuTLS), driven with curl --cacert against self-signed EC P-256 certificates made with the openssl
# CLI (SAN IP:127.0.0.1):
#   the startup line says "(https)"; /healthz; a multi-MiB upload signed over TLS and checked with
#   `dsig verify`; the verify endpoint (200 / 422); concurrent uploads; a client cut off mid-upload;
#   SIGHUP; TLS 1.2 accepted with min_version "1.2" and refused with "1.3"; TLS 1.1, a TLS 1.2 CBC
#   suite and an FFDHE-only TLS 1.3 client refused; X25519 without a HelloRetryRequest; plain HTTP to
#   the TLS port gets no 200; a client trusting another CA fails; hit-and-run handshakes are released at
#   once (with tests/serve/serve_probe.c); start refused for a key file of mode
#   0644, a key of another certificate, a symlinked key, a missing key, a JWK as key, a certificate
#   file holding a private key, and a pair GnuTLS
#   refuses (SM2: libmicrohttpd's message reported).
# Prints SKIP if this libmicrohttpd has no TLS (the start fails with "TLS is not supported").
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-tls curl jq openssl sha256sum

if [ "$SAN" = 1 ]; then
    MIB=4 # sanitizers: smaller payloads
else
    MIB=16
fi

mkdir -p "$T/keys" "$T/tls" "$T/other" "$T/log" "$T/out"
"$D" keygen -q -a ES256 -o "$T/keys/es.jwk"
"$D" keygen -q -a Ed25519 -o "$T/keys/ed.jwk"
"$D" pubkey -q -k "$T/keys/es.jwk" -o "$T/es.pub"
# mkcert DIR: a self-signed EC P-256 certificate for 127.0.0.1 (cert.pem) and its key (key.pem, 0600).
mkcert() {
    (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$1/key.pem" -out "$1/cert.pem" \
        2>"$T/openssl.err") || die "openssl req: $(cat "$T/openssl.err")"
    chmod 644 "$1/cert.pem"
}
mkcert "$T/tls"
mkcert "$T/other"
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
# config MIN_VERSION [KEY]: the configuration (relative paths: resolved from its directory).
config() {
    cat >"$T/serve.json" <<EOF
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "state_registry_dir": "",
  "audit": {"path": "log/audit.log", "sync": "none", "payload_digest": "sha256"},
  "limits": {"request_timeout_s": 5, "threads": 2},
  "tls": {"cert": "${3:-tls/cert.pem}", "key": "${2:-tls/key.pem}", "min_version": "$1"},
  "tenants": [
    {"name": "signer", "tokens": [{"sha256": "$(h tokS)"}], "keys": ["*"], "operations": ["sign", "verify"]}
  ]
}
EOF
}
start() { serve_start https; }
stop() { serve_stop; }
# code TOKEN METHOD PATH [curl args...]: the HTTP status over TLS trusting our certificate ("000": none).
code() {
    local tok=$1 m=$2 p=$3
    shift 3
    local auth=()
    [ -n "$tok" ] && auth=(-H "Authorization: Bearer $tok")
    curl -s --cacert "$T/tls/cert.pem" -o "$T/out/body" -w '%{http_code}' -X "$m" "${auth[@]}" "$@" "$U$p" || true
}
expect() { # expect WANT TOKEN METHOD PATH [args]
    local want=$1 got
    shift
    got=$(code "$@")
    [ "$got" = "$want" ] || die "$* -> $got, want $want ($(head -c 300 "$T/out/body"))"
    ok
}

# --- minimum TLS 1.2 ---------------------------------------------------------------------------
config 1.2
if ! start; then
    if grep -q 'TLS is not supported by this libmicrohttpd' "$T/serve.log"; then
        echo "SKIP: this libmicrohttpd has no TLS support"
        exit 0
    fi
    die "TLS server did not start"
fi
grep -q "listening on port $PORT (https)" "$T/serve.log" || die "startup line without (https)"
ok
expect 200 "" GET /healthz
[ "$(cat "$T/out/body")" = ok ] || die "healthz body"
curl -sS -v --cacert "$T/tls/cert.pem" -o /dev/null "$U/healthz" 2>"$T/out/v" || die "TLS 1.3 client"
grep -q 'SSL connection using TLSv1.3' "$T/out/v" || die "not TLS 1.3: $(grep 'SSL connection' "$T/out/v")"
ok
# TLS 1.2 is accepted (min_version 1.2), with an ECDHE AEAD suite
curl -sS -v --cacert "$T/tls/cert.pem" --tls-max 1.2 -o /dev/null "$U/healthz" 2>"$T/out/v" || die "TLS 1.2 client refused"
grep -q 'SSL connection using TLSv1.2 / ECDHE-ECDSA-AES128-GCM-SHA256' "$T/out/v" ||
    die "TLS 1.2 suite: $(grep 'SSL connection' "$T/out/v")"
ok
# refused: TLS 1.1, a TLS 1.2 CBC suite (only AEAD suites are allowed)
curl -s --cacert "$T/tls/cert.pem" --tlsv1.1 --tls-max 1.1 -o /dev/null "$U/healthz" 2>/dev/null &&
    die "TLS 1.1 accepted"
curl -s --cacert "$T/tls/cert.pem" --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-SHA -o /dev/null "$U/healthz" \
    2>/dev/null && die "CBC suite accepted"
ok
# TLS 1.3 key exchange: elliptic curves only (an FFDHE-only client is refused), and X25519 (OpenSSL's
# default key share) is taken without a HelloRetryRequest round trip
echo | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$T/tls/cert.pem" -groups ffdhe2048 \
    >"$T/out/s" 2>&1 || true
grep -q 'Cipher is (NONE)' "$T/out/s" || die "FFDHE group accepted: $(grep -E 'Temp Key|Cipher is' "$T/out/s")"
echo | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$T/tls/cert.pem" -msg >"$T/out/s" 2>&1 || true
grep -q 'Server Temp Key: X25519' "$T/out/s" || die "not X25519: $(grep -E 'Temp Key|Cipher is' "$T/out/s")"
[ "$(grep -c '<<< .*ServerHello' "$T/out/s")" = 1 ] || die "HelloRetryRequest for OpenSSL's default key share"
ok
# plain HTTP to the TLS port: no HTTP answer at all (the handshake fails)
got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/healthz" || true)
[ "$got" != 200 ] || die "plain HTTP answered 200 on the TLS port"
ok
# a client that trusts another CA refuses the server
curl -s --cacert "$T/other/cert.pem" -o /dev/null "$U/healthz" && die "client with another CA connected"
ok

# sign a few MiB over TLS, check with dsig verify, then through the verify endpoint (200, then 422)
head -c $((MIB * 1024 * 1024)) /dev/urandom >"$T/payload"
expect 200 tokS POST /v1/keys/es/sign -T "$T/payload"
cp "$T/out/body" "$T/payload.jws"
"$D" verify -q -k "$T/es.pub" -s "$T/payload.jws" "$T/payload" || die "dsig verify of the TLS-signed payload"
ok
expect 200 tokS POST /v1/keys/es/verify -H "DSig-Signature: $(tr -d '\n' <"$T/payload.jws")" -T "$T/payload"
[ "$(jq -r .valid "$T/out/body")" = true ] || die "verify body"
printf 'X' | dd of="$T/payload" bs=1 seek=1000 conv=notrunc status=none
expect 422 tokS POST /v1/keys/es/verify -H "DSig-Signature: $(tr -d '\n' <"$T/payload.jws")" -T "$T/payload"
[ "$(jq -r .valid "$T/out/body")" = false ] || die "tampered payload valid"
expect 401 "" POST /v1/keys/es/sign -T "$T/payload"
# JSON output over TLS, streamed from stdin (chunked)
head -c 100000 /dev/urandom >"$T/small"
curl -sS --cacert "$T/tls/cert.pem" -X POST -H "Authorization: Bearer tokS" -H "Accept: application/json" \
    -T - "$U/v1/keys/ed/sign" <"$T/small" >"$T/small.json" || die "chunked JSON sign"
"$D" pubkey -q -k "$T/keys/ed.jwk" -o "$T/ed.pub"
"$D" verify -q -k "$T/ed.pub" -s "$T/small.json" "$T/small" || die "dsig verify of the JSON signature"
ok

# concurrent uploads (4 x 2 MiB) over TLS, each verified
head -c $((2 * 1024 * 1024)) /dev/urandom >"$T/p2"
pids=()
for i in 1 2 3 4; do
    curl -sS --cacert "$T/tls/cert.pem" -X POST -H "Authorization: Bearer tokS" -T "$T/p2" \
        -o "$T/out/c$i.jws" "$U/v1/keys/es/sign" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || die "concurrent upload failed"; done
for i in 1 2 3 4; do "$D" verify -q -k "$T/es.pub" -s "$T/out/c$i.jws" "$T/p2" || die "concurrent $i"; done
ok

# a client cut off mid-upload: no signature, the server goes on
curl -s --cacert "$T/tls/cert.pem" -X POST -H "Authorization: Bearer tokS" --limit-rate 200K --max-time 1 \
    -T "$T/p2" -o "$T/out/cut" "$U/v1/keys/es/sign" && die "cut upload completed"
expect 200 "" GET /healthz
for _ in $(seq 50); do
    grep -q '"result":"client_abort"' "$T/log/audit.log" && break
    sleep 0.1
done
grep -q '"op":"sign".*"result":"client_abort"' "$T/log/audit.log" || die "no client_abort audit line"
# the audit lines of the concurrent uploads have their size and SHA-256: the digest saw the decrypted bytes
n=$(grep -c "\"op\":\"sign\".*\"bytes\":2097152,\"sha256\":\"$(sha256sum <"$T/p2" | cut -d' ' -f1)\".*\"code\":200" \
    "$T/log/audit.log" || true)
[ "$n" = 4 ] || die "audit lines of the TLS uploads: $n, want 4"
ok

# Hit-and-run over TLS: 300 connections that send the start of a ClientHello and close are released at
# once in poll(2) mode too; HTTPS keeps answering.
if [ -n "${DSIG_SERVE_PROBE:-}" ]; then
    out=$(SERVE_PROBE_LEGIT=0 "$DSIG_SERVE_PROBE" storm "$PORT" hitrun 300 1 127.0.0.2 \
        '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03')
    read -r _ _ _ _ _ cw _ _ _ released <<<"$(grep '^attack' <<<"$out")"
    # A generous bound (the sockets of a missed hang-up stay until request_timeout_s, 5 s here, plus
    # the probe's 10 s limit): a loaded machine must not fail it.
    [ "$cw" -le 5 ] && [ "$released" -le 4000 ] || die "TLS hit-and-run: $cw sockets in CLOSE-WAIT after $released ms"
    expect 200 "" GET /healthz
fi

# SIGHUP reloads the configuration and the keys; TLS keeps serving (the certificate is not reloaded)
"$D" keygen -q -a ES256 -o "$T/keys/new.jwk"
kill -HUP $SP
wait_until 5 grep -q 'configuration reloaded: 3 keys' "$T/serve.log" || die "reload"
expect 200 tokS GET /v1/keys/new
stop

# --- minimum TLS 1.3 ---------------------------------------------------------------------------
config 1.3
start || die "TLS 1.3 server did not start"
curl -s --cacert "$T/tls/cert.pem" --tls-max 1.2 -o /dev/null "$U/healthz" && die "TLS 1.2 client accepted by 1.3 server"
ok
expect 200 "" GET /healthz
expect 200 tokS POST /v1/keys/es/sign -T "$T/p2"
"$D" verify -q -k "$T/es.pub" -s "$T/out/body" "$T/p2" || die "dsig verify (TLS 1.3 server)"
stop

# --- refused starts -----------------------------------------------------------------------------
# refused REASON: the server must exit without listening, naming the reason.
refused() {
    if start; then
        stop
        die "server started: want refusal \"$1\""
    fi
    grep -qF "$1" "$T/serve.log" || die "refusal without \"$1\": $(cat "$T/serve.log")"
    grep -Eq 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$T/serve.log" && die "sanitizer report"
    ok
}
chmod 644 "$T/tls/key.pem"
config 1.2
refused "tls.key \"$T/tls/key.pem\": mode 0644: the private key must not be readable by group or others (chmod 600)"
chmod 600 "$T/tls/key.pem"
config 1.2 other/key.pem
refused "does not match the certificate of tls.cert"
ln -s key.pem "$T/tls/link.pem"
config 1.2 tls/link.pem
refused "a symbolic link"
config 1.2 tls/missing.pem
refused "tls.key \"$T/tls/missing.pem\": No such file or directory"
config 1.2 keys/es.jwk
chmod 600 "$T/keys/es.jwk"
refused "not an unencrypted PEM private key"
# a certificate file that also holds the private key (its mode is not checked): refused
cat "$T/tls/cert.pem" "$T/tls/key.pem" >"$T/tls/combined.pem"
config 1.2 tls/key.pem tls/combined.pem
refused "contains a private key: put the key in its own file"
# a pair OpenSSL accepts but GnuTLS cannot load (SM2): libmicrohttpd's own messages explain the refusal
if (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:SM2 -nodes -days 2 -subj /CN=x \
        -keyout "$T/tls/key.pem" -out "$T/tls/cert.pem" 2>/dev/null); then
    config 1.2
    refused "serve: tls: cannot start TLS on 127.0.0.1 port 0: GnuTLS failed to setup x509 certificate/key"
else
    echo "note: this openssl cannot make an SM2 certificate: GnuTLS start failure not exercised"
fi

echo "$PASSED passed"

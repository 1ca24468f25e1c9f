#!/usr/bin/env bash
# cli_roundtrip.sh — every algorithm of `dsig list --names` through the tool: seeded keygen (mode 0600,
# reproducible), sign/verify through a file, a pipe and stdin, every format, empty and 1 MiB payloads,
# tampering and wrong keys (exit 1), public-key verification, PEM keys made by OpenSSL, and the
# official JWS examples (RFC 7797 §4.2 byte-exact, RFC 7515 A.1–A.4 verified).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S1=00112233445566778899aabbccddeeff
S2=ffeeddccbbaa99887766554433221100

# Payloads: small text, empty, 1 MiB, and copies with one flipped byte.
printf 'dsig round trip\n' >"$T/small"
: >"$T/empty"
head -c 1048576 /dev/urandom >"$T/big"
flip() { # flip SRC DST OFFSET: copy with the byte at OFFSET xor 0x01
    cp "$1" "$2"
    local b
    b=$(od -An -tu1 -j "$3" -N1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$2" bs=1 seek="$3" conv=notrunc status=none
}
flip "$T/small" "$T/small.bad" 3
flip "$T/big" "$T/big.bad" 700000

sign_pipe() { cat "$1" | "$D" sign "${@:2}" -; }           # sign_pipe PAYLOAD ARGS...
verify_pipe() { cat "$1" | "$D" verify "${@:2}" -; }       # verify_pipe PAYLOAD ARGS...
sign_stdin() { "$D" sign "${@:2}" <"$1"; }                 # no FILE argument at all
verify_stdin() { "$D" verify "${@:2}" <"$1"; }
mode_of() { stat -c %a "$1"; }
differ() { ! cmp -s "$1" "$2"; }

run 0 "$D" list --names
mapfile -t ALGS <"$OUT"
[ "${#ALGS[@]}" -gt 0 ] || die "the registry is empty"
run 0 "$D" list
cp "$OUT" "$T/table"
run 0 "$D" list --json

for alg in "${ALGS[@]}"; do
    CASE=$alg
    d=$T/$alg
    mkdir "$d"
    symmetric=0
    if awk -v a="$alg" '$1 == a' "$T/table" | grep -q symmetric; then symmetric=1; fi

    # Keys: seeded, private file 0600, reproducible from the seed, a second independent key.
    if [ $symmetric = 1 ]; then
        run 0 "$D" keygen -a "$alg" --seed $S1 -o "$d/k1.jwk"
        run 0 "$D" keygen -a "$alg" --seed $S2 -o "$d/k2.jwk"
        vk=$d/k1.jwk
        wrong=$d/k2.jwk
        run 2 "$D" pubkey -k "$d/k1.jwk"
    else
        run 0 "$D" keygen -a "$alg" --seed $S1 -o "$d/k1.jwk" --pub "$d/p1.jwk"
        run 0 "$D" keygen -a "$alg" --seed $S2 -o "$d/k2.jwk" --pub "$d/p2.jwk"
        check "public key file mode" [ "$(mode_of "$d/p1.jwk")" = 644 ]
        run 0 "$D" pubkey -k "$d/k1.jwk" -o "$d/p1b.jwk"
        check "pubkey output equals keygen --pub" cmp -s "$d/p1.jwk" "$d/p1b.jwk"
        vk=$d/p1.jwk
        wrong=$d/p2.jwk
    fi
    check "private key file mode is 0600" [ "$(mode_of "$d/k1.jwk")" = 600 ]
    run 0 "$D" keygen -a "$alg" --seed $S1 -o "$d/k1again.jwk"
    check "seeded keygen is reproducible" cmp -s "$d/k1.jwk" "$d/k1again.jwk"
    check "different seeds give different keys" differ "$d/k1.jwk" "$d/k2.jwk"

    # A file, detached JWS (the default format), written to -o.
    run 0 "$D" sign -k "$d/k1.jwk" -o "$d/s.jws" "$T/small"
    run 0 "$D" verify -k "$vk" -s "$d/s.jws" "$T/small"
    grep -qx OK "$ERR" || die "verify did not print OK"
    run 0 "$D" verify -q -k "$vk" -s "$d/s.jws" --format jws "$T/small"
    check "--quiet prints nothing" [ ! -s "$ERR" ]
    run 1 "$D" verify -k "$vk" -s "$d/s.jws" "$T/small.bad"
    run 1 "$D" verify -k "$wrong" -s "$d/s.jws" "$T/small"
    run 1 "$D" verify -k "$vk" -s "$d/s.jws" "$T/empty"

    # A pipe ("-"), flattened JSON, signature on stdout.
    run 0 sign_pipe "$T/small" -k "$d/k1.jwk" --format json
    cp "$OUT" "$d/s.json"
    run 0 verify_pipe "$T/small" -k "$vk" -s "$d/s.json"
    run 0 "$D" verify -k "$vk" -s "$d/s.json" --format json "$T/small"
    run 1 verify_pipe "$T/small.bad" -k "$vk" -s "$d/s.json"
    run 1 "$D" verify -k "$wrong" -s "$d/s.json" "$T/small"

    # Standard input without a FILE argument, raw signature bytes.
    run 0 sign_stdin "$T/small" -k "$d/k1.jwk" --format raw -o "$d/s.raw"
    run 0 verify_stdin "$T/small" -k "$vk" -s "$d/s.raw"
    run 0 "$D" verify -k "$vk" -s "$d/s.raw" --format raw "$T/small"
    run 1 verify_stdin "$T/small.bad" -k "$vk" -s "$d/s.raw"
    run 1 "$D" verify -k "$wrong" -s "$d/s.raw" "$T/small"

    # Compact JWS with the payload embedded: no FILE needed; a FILE must equal the payload.
    run 0 "$D" sign -k "$d/k1.jwk" --format compact -o "$d/s.compact" "$T/small"
    run 0 "$D" verify -k "$vk" -s "$d/s.compact"
    run 0 "$D" verify -k "$vk" -s "$d/s.compact" --format compact "$T/small"
    run 1 "$D" verify -k "$vk" -s "$d/s.compact" "$T/small.bad"
    run 1 "$D" verify -k "$wrong" -s "$d/s.compact"

    # "kid" (RFC 7638 thumbprint) in the header still verifies.
    run 0 "$D" sign -k "$d/k1.jwk" --kid -o "$d/s.kid.jws" "$T/small"
    run 0 "$D" verify -k "$vk" -s "$d/s.kid.jws" "$T/small"

    # Empty payload.
    run 0 "$D" sign -k "$d/k1.jwk" -o "$d/e.jws" "$T/empty"
    run 0 "$D" verify -k "$vk" -s "$d/e.jws" "$T/empty"
    run 0 verify_stdin "$T/empty" -k "$vk" -s "$d/e.jws"
    run 1 "$D" verify -k "$vk" -s "$d/e.jws" "$T/small"

    # 1 MiB through a pipe, verified from the file and through stdin.
    run 0 sign_pipe "$T/big" -k "$d/k1.jwk" -o "$d/b.jws"
    run 0 "$D" verify -k "$vk" -s "$d/b.jws" "$T/big"
    run 0 verify_stdin "$T/big" -k "$vk" -s "$d/b.jws"
    run 1 "$D" verify -k "$vk" -s "$d/b.jws" "$T/big.bad"
    run 1 "$D" verify -k "$wrong" -s "$d/b.jws" "$T/big"

    if [ $symmetric = 0 ]; then
        # The public key cannot sign; a failed sign leaves no output file.
        run 2 "$D" sign -k "$vk" -o "$d/nope.jws" "$T/small"
        check "failed sign left no output" [ ! -e "$d/nope.jws" ]
    fi
done
CASE=""

# PEM keys made by OpenSSL (unbound: sign needs -a; verify too unless the key type admits one algorithm).
pem_case() { # pem_case ALG GENPKEY-ARGS...
    local alg=$1 d=$T/pem-$1
    shift
    printf '%s\n' "${ALGS[@]}" | grep -qx -- "$alg" || return 0
    CASE="PEM $alg"
    mkdir "$d"
    openssl genpkey "$@" -out "$d/k.pem" 2>/dev/null || die "openssl genpkey $*"
    openssl pkey -in "$d/k.pem" -pubout -out "$d/p.pem" 2>/dev/null || die "openssl pkey -pubout"
    run 0 "$D" sign -k "$d/k.pem" -a "$alg" -o "$d/s.jws" "$T/small"
    run 0 "$D" verify -k "$d/p.pem" -a "$alg" -s "$d/s.jws" "$T/small"
    run 0 "$D" verify -k "$d/k.pem" -a "$alg" -s "$d/s.jws" "$T/small"
    run 1 "$D" verify -k "$d/p.pem" -a "$alg" -s "$d/s.jws" "$T/small.bad"
    run 0 sign_pipe "$T/big" -k "$d/k.pem" -a "$alg" --format raw -o "$d/b.raw"
    run 0 "$D" verify -k "$d/p.pem" -a "$alg" -s "$d/b.raw" "$T/big"
    run 1 "$D" verify -k "$d/p.pem" -a "$alg" -s "$d/b.raw" "$T/big.bad"
    reject 'give -a' "$D" sign -k "$d/k.pem" "$T/small"
    # verify without -a: the key type decides when it admits one algorithm (EC, OKP), else refused
    if [ "$("$D" key info --json "$d/p.pem" | jq -r .alg_source)" = "key type" ]; then
        run 0 "$D" verify -k "$d/p.pem" -s "$d/s.jws" "$T/small"
    else
        reject 'give -a' "$D" verify -k "$d/p.pem" -s "$d/s.jws" "$T/small"
    fi
    run 0 "$D" pubkey -k "$d/k.pem" --pem -o "$d/p2.pem"
    check "dsig pubkey --pem equals openssl's public key" cmp -s "$d/p.pem" "$d/p2.pem"
    run 0 "$D" pubkey "$d/k.pem" -o "$d/p.jwk"
    run 0 "$D" verify -k "$d/p.jwk" -a "$alg" -s "$d/s.jws" "$T/small"
    # PEM written by dsig is read by OpenSSL.
    run 0 "$D" keygen -a "$alg" --seed $S1 --pem -o "$d/g.pem"
    check "openssl parses dsig's PEM" openssl pkey -in "$d/g.pem" -noout
}
openssl_dgst_verify() { # interop: a raw signature verified by OpenSSL
    openssl dgst "$@" >/dev/null 2>&1
}
if command -v openssl >/dev/null; then
    pem_case RS256 -algorithm RSA -pkeyopt rsa_keygen_bits:2048
    if [ -e "$T/pem-RS256/b.raw" ]; then
        check "OpenSSL verifies an RS256 raw signature" openssl_dgst_verify -sha256 \
            -verify "$T/pem-RS256/p.pem" -signature "$T/pem-RS256/b.raw" "$T/big"
    fi
    pem_case PS256 -algorithm RSA -pkeyopt rsa_keygen_bits:2048
    if [ -e "$T/pem-PS256/b.raw" ]; then
        check "OpenSSL verifies a PS256 raw signature" openssl_dgst_verify -sha256 \
            -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 \
            -verify "$T/pem-PS256/p.pem" -signature "$T/pem-PS256/b.raw" "$T/big"
    fi
    pem_case ES256 -algorithm EC -pkeyopt ec_paramgen_curve:P-256
    pem_case ES384 -algorithm EC -pkeyopt ec_paramgen_curve:P-384
    pem_case ES512 -algorithm EC -pkeyopt ec_paramgen_curve:P-521
    pem_case Ed25519 -algorithm ED25519
    pem_case Ed448 -algorithm ED448
else
    echo "openssl not found: PEM cases skipped"
fi
CASE=""

# Official examples (read at run time from the vectors directory).
V=${DSIG_VECTORS:-}/jws
if [ -n "${DSIG_VECTORS:-}" ] && [ -d "$V" ] && command -v jq >/dev/null; then
    has() { printf '%s\n' "${ALGS[@]}" | grep -qx -- "$1"; }
    if has HS256; then
        CASE="RFC 7797 4.2"
        jq -c .jwk "$V/rfc7797/rfc7797_section4.json" >"$T/rfc7797.jwk"
        jq -j .payload_utf8 "$V/rfc7797/rfc7797_section4.json" >"$T/rfc7797.payload"
        want=$(jq -r '.examples[1].jws_compact_detached' "$V/rfc7797/rfc7797_section4.json")
        run 0 "$D" sign -k "$T/rfc7797.jwk" -a HS256 "$T/rfc7797.payload"
        check "RFC 7797 4.2 detached JWS reproduced byte for byte" [ "$(cat "$OUT")" = "$want" ]
        printf '%s\n' "$want" >"$T/rfc7797.jws"
        run 0 "$D" verify -k "$T/rfc7797.jwk" -a HS256 -s "$T/rfc7797.jws" "$T/rfc7797.payload"
        run 1 "$D" verify -k "$T/rfc7797.jwk" -a HS256 -s "$T/rfc7797.jws" "$T/small"
    fi
    for ex in 1:HS256 2:RS256 3:ES256 4:ES512; do
        n=${ex%%:*} alg=${ex#*:}
        has "$alg" || continue
        CASE="RFC 7515 A.$n"
        run 0 "$D" verify -k "$V/rfc7515/rfc7515_A.$n.jwk" -a "$alg" -s "$V/rfc7515/rfc7515_A.$n.jwsc"
    done
else
    echo "vectors or jq not found: official JWS examples skipped"
fi

# Format detection: a raw signature whose first byte is '{' is still raw (1 in 256 raw signatures).
if printf '%s\n' "${ALGS[@]}" | grep -qx HS256; then
    CASE="raw signature starting with '{'"
    "$D" keygen -a HS256 --seed $S1 -o "$T/brace.jwk"
    found=0
    for i in $(seq 1 4000); do
        printf 'brace %d' "$i" >"$T/brace.msg"
        "$D" sign -k "$T/brace.jwk" --format raw -o "$T/brace.sig" "$T/brace.msg"
        if [ "$(head -c1 "$T/brace.sig")" = "{" ]; then found=1; break; fi
    done
    check "found a tag starting with '{'" [ $found = 1 ]
    run 0 "$D" verify -k "$T/brace.jwk" -s "$T/brace.sig" "$T/brace.msg"
fi

finish

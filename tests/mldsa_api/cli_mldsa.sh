#!/usr/bin/env bash
# cli_mldsa.sh — ML-DSA through the `dsig` tool: keygen (seeded, reproducible, AKP JWK), JWS and raw
# round trips, --deterministic, --context (mismatch fails), --prehash round trip, refusals (context
# with JWS, options for algorithms without them, unknown pre-hash, PEM) and bad AKP JWKs.
source "$DSIG_SOURCE_DIR/tests/cli/lib.sh"

SEED=000102030405060708090a0b0c0d0e0f
printf 'ML-DSA through the CLI\n' >"$T/msg"
printf 'ML-DSA through the CLI!\n' >"$T/msg.bad"

CASE="list"
run 0 "$D" list
for a in ML-DSA-44 ML-DSA-65 ML-DSA-87; do
    check "$a listed with the pq and options flags" grep -Eq "^$a +ML-DSA +AKP .*pq.*options" "$OUT"
done

for a in ML-DSA-44 ML-DSA-65 ML-DSA-87; do
    CASE="$a keygen"
    akp_keygen "$a" $SEED

    CASE="$a JWS"
    jws_roundtrip "$a"

    CASE="$a deterministic"
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/$a.d1" "$T/msg"
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/$a.d2" "$T/msg"
    check "deterministic JWS repeats" cmp -s "$T/$a.d1" "$T/$a.d2"
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.h1" "$T/msg"
    check "hedged JWS differs" differ "$T/$a.h1" "$T/$a.jws"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.d1" "$T/msg"

    CASE="$a raw + context"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --context 0a0b0c -o "$T/$a.raw" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" --context 0a0b0c "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" --context 0a0b0d "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" --context 0a0b0c "$T/msg.bad"

    CASE="$a prehash"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --prehash SHA-512 --context 01 -o "$T/$a.ph" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph" --prehash SHA-512 --context 01 "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph" --prehash SHA-256 --context 01 "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph" --context 01 "$T/msg"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --prehash SHAKE256 -o "$T/$a.ph2" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph2" --prehash SHAKE256 "$T/msg"
done

a=ML-DSA-44
CASE="refusals"
reject 'raw' "$D" sign -k "$T/$a.jwk" --context 00 "$T/msg"
reject 'raw' "$D" sign -k "$T/$a.jwk" --format json --prehash SHA-256 "$T/msg"
reject 'raw signatures only' "$D" verify -k "$T/$a.pub" -s "$T/$a.jws" --context 00 "$T/msg"
reject 'pre-hash.*MD5|MD5' "$D" sign -k "$T/$a.jwk" --format raw --prehash MD5 "$T/msg"
reject 'context.*255|255' "$D" sign -k "$T/$a.jwk" --format raw --context "$(printf '00%.0s' $(seq 256))" "$T/msg"
reject 'hex' "$D" sign -k "$T/$a.jwk" --format raw --context zz "$T/msg"
run 0 "$D" keygen -a ES256 -o "$T/es.jwk"
reject 'ES256 takes no signing options' "$D" sign -k "$T/es.jwk" --deterministic "$T/msg"
reject 'ES256 takes no signing options' "$D" sign -k "$T/es.jwk" --format raw --context 00 "$T/msg"
reject 'PEM' "$D" keygen -a ML-DSA-65 --pem -o "$T/k.pem"
reject 'PEM' "$D" pubkey --pem "$T/$a.jwk"
reject 'signature.*2420|2420' "$D" verify -k "$T/$a.pub" -s "$T/msg" --format raw "$T/msg"

CASE="bad AKP JWKs"
pub=$(jwk_member "$T/$a.pub" pub)
priv=$(jwk_member "$T/$a.jwk" priv)
pub65=$(jwk_member "$T/ML-DSA-65.pub" pub)
run 0 "$D" keygen -a ML-DSA-44 --seed ffeeddccbbaa99887766554433221100 -o "$T/other.jwk"
otherpub=$(jwk_member "$T/other.jwk" pub)
printf '{"kty":"AKP","pub":"%s"}' "$pub" >"$T/noalg.jwk"
reject '"alg" is required' "$D" verify -k "$T/noalg.jwk" -s "$T/$a.jws" "$T/msg"
printf '{"kty":"AKP","alg":"ML-DSA-44","pub":"%s"}' "$pub65" >"$T/len.jwk"
reject 'must be 1312 bytes, got 1952' "$D" verify -k "$T/len.jwk" -s "$T/$a.jws" "$T/msg"
printf '{"kty":"AKP","alg":"ML-DSA-44","pub":"%s","priv":"%s"}' "$pub65" "$priv" >"$T/len2.jwk"
reject 'must be 1312 bytes' "$D" sign -k "$T/len2.jwk" "$T/msg"
printf '{"kty":"AKP","alg":"ML-DSA-44","pub":"%s","priv":"%s"}' "$otherpub" "$priv" >"$T/mismatch.jwk"
reject 'does not match' "$D" sign -k "$T/mismatch.jwk" "$T/msg"
printf '{"kty":"AKP","alg":"ML-DSA-44","pub":"%s","priv":"AAAA"}' "$pub" >"$T/shortseed.jwk"
reject 'priv.*32 bytes' "$D" sign -k "$T/shortseed.jwk" "$T/msg"
printf '{"kty":"AKP","alg":"ML-DSA-13","pub":"%s"}' "$pub" >"$T/unk.jwk"
reject 'not supported' "$D" verify -k "$T/unk.jwk" -s "$T/$a.jws" "$T/msg"

finish

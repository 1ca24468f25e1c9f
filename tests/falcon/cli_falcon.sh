#!/usr/bin/env bash
# cli_falcon.sh — FALCON512 / FALCON1024 through the `dsig` tool: listing, seeded (reproducible) AKP
# JWK keygen, JWS / JSON / raw round trips, randomized signatures, tampered payload, refusals of
# options Falcon does not take, and a JWK whose "pub" does not match "priv".
source "$DSIG_SOURCE_DIR/tests/cli/lib.sh"

SEED=000102030405060708090a0b0c0d0e0f
printf 'Falcon through the CLI\n' >"$T/msg"
printf 'Falcon through the CLI!\n' >"$T/msg.bad"

CASE="list"
run 0 "$D" list
for a in FALCON512 FALCON1024; do
    check "$a listed with the pq flag" grep -Eq "^$a +FALCON +AKP .*pq" "$OUT"
done

for a in FALCON512 FALCON1024; do
    CASE="$a keygen"
    akp_keygen "$a" $SEED

    CASE="$a JWS"
    jws_roundtrip "$a"
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.jws2" "$T/msg"
    check "signatures are randomized" differ "$T/$a.jws" "$T/$a.jws2"

    CASE="$a raw"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw -o "$T/$a.raw" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" "$T/msg.bad"
    head -c 100 "$T/$a.raw" >"$T/$a.short"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.short" "$T/msg"
done

a=FALCON512
CASE="refusals"
reject 'context|option' "$D" sign -k "$T/$a.jwk" --format raw --context 00 "$T/msg"
reject 'deterministic|option' "$D" sign -k "$T/$a.jwk" --deterministic "$T/msg"
# "pub" of FALCON512 key 1 with "priv" of another seed: must not import.
run 0 "$D" keygen -a "$a" --seed 0f0e0d0c0b0a09080706050403020100 -o "$T/other.jwk"
pub=$(jwk_member "$T/$a.pub" pub)
priv=$(jwk_member "$T/other.jwk" priv)
printf '{"kty":"AKP","alg":"FALCON512","pub":"%s","priv":"%s"}' "$pub" "$priv" >"$T/mixed.jwk"
reject 'does not match' "$D" sign -k "$T/mixed.jwk" "$T/msg"

finish

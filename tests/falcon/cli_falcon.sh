#!/usr/bin/env bash
# cli_falcon.sh — FALCON512 / FALCON1024 through the `dsig` tool: listing, seeded (reproducible) AKP
# JWK keygen, JWS / JSON / raw round trips, randomized signatures, tampered payload, refusals of
# options Falcon does not take, and a JWK whose "pub" does not match "priv".
source "$DSIG_SOURCE_DIR/tests/cli/lib.sh"

SEED=000102030405060708090a0b0c0d0e0f
differ() { ! cmp -s "$1" "$2"; }
printf 'Falcon through the CLI\n' >"$T/msg"
printf 'Falcon through the CLI!\n' >"$T/msg.bad"

CASE="list"
run 0 "$D" list
for a in FALCON512 FALCON1024; do
    check "$a listed with the pq flag" grep -Eq "^$a +FALCON +AKP .*pq" "$OUT"
done

for a in FALCON512 FALCON1024; do
    CASE="$a keygen"
    run 0 "$D" keygen -a "$a" --seed $SEED -o "$T/$a.jwk" --pub "$T/$a.pub"
    run 0 "$D" keygen -a "$a" --seed $SEED -o "$T/$a.again.jwk"
    check "seeded keygen is reproducible" cmp -s "$T/$a.jwk" "$T/$a.again.jwk"
    check "AKP JWK with alg" grep -q "\"kty\":\"AKP\".*\"alg\":\"$a\"" "$T/$a.jwk"
    check "private JWK has priv" grep -q '"priv":"' "$T/$a.jwk"
    check "public JWK has no priv" bash -c "! grep -q '\"priv\"' '$T/$a.pub'"

    CASE="$a JWS"
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.jws" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.jws" "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.jws" "$T/msg.bad"
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.jws2" "$T/msg"
    check "signatures are randomized" differ "$T/$a.jws" "$T/$a.jws2"
    run 0 "$D" sign -k "$T/$a.jwk" --format json -o "$T/$a.json" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.json" "$T/msg"

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
pub=$(sed -E 's/.*"pub":"([^"]*)".*/\1/' "$T/$a.pub")
priv=$(sed -E 's/.*"priv":"([^"]*)".*/\1/' "$T/other.jwk")
printf '{"kty":"AKP","alg":"FALCON512","pub":"%s","priv":"%s"}' "$pub" "$priv" >"$T/mixed.jwk"
reject 'does not match' "$D" sign -k "$T/mixed.jwk" "$T/msg"

finish

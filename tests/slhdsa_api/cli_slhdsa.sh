#!/usr/bin/env bash
# cli_slhdsa.sh — SLH-DSA through the `dsig` tool: list, seeded keygen (AKP JWK), JWS and raw round
# trips for SHA2-128f and SHAKE-128f, the two-pass raw signature of a regular file (deterministic:
# reproducible, equal for a file argument and a file on stdin, and equal to the exact one-pass
# HashSLH-DSA path where both are exact), one-pass pipe signing, --one-pass, and refusals (pipe +
# --deterministic, JWS on a pipe + --deterministic, bad AKP JWKs, wrong lengths, PEM).
source "$DSIG_SOURCE_DIR/tests/cli/lib.sh"

SEED=000102030405060708090a0b0c0d0e0f
head -c 70000 /dev/urandom >"$T/msg"
cp "$T/msg" "$T/msg.bad"
printf 'x' >>"$T/msg.bad"

CASE="list"
run 0 "$D" list
for a in SLH-DSA-SHA2-128s SLH-DSA-SHA2-256f SLH-DSA-SHAKE-128f SLH-DSA-SHAKE-256s; do
    check "$a listed with the pq and options flags" grep -Eq "^$a +SLH-DSA +AKP .*pq.*options" "$OUT"
done

for a in SLH-DSA-SHA2-128f SLH-DSA-SHAKE-128f; do
    CASE="$a keygen"
    akp_keygen "$a" $SEED

    CASE="$a JWS (two pass on a regular file; one pass on a pipe)"
    jws_roundtrip "$a"
    reject 'two-pass|twice' "$D" sign -k "$T/$a.jwk" --deterministic - < <(cat "$T/msg" || true)

    CASE="$a raw two-pass"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw -o "$T/$a.raw" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" --format raw "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.raw" --format raw "$T/msg.bad"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw -o "$T/$a.raw2" "$T/msg"
    check "hedged two-pass signatures differ" differ "$T/$a.raw" "$T/$a.raw2"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic -o "$T/$a.d1" "$T/msg"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic -o "$T/$a.d2" "$T/msg"
    check "deterministic two-pass repeats" cmp -s "$T/$a.d1" "$T/$a.d2"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.d1" --format raw "$T/msg"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic -o "$T/$a.d3" - <"$T/msg"
    check "a regular file on stdin is signed in two passes too" cmp -s "$T/$a.d1" "$T/$a.d3"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic --context 0a0b -o "$T/$a.dc" "$T/msg"
    check "context changes the deterministic signature" differ "$T/$a.d1" "$T/$a.dc"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.dc" --format raw --context 0a0b "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.dc" --format raw --context 0a0c "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.dc" --format raw "$T/msg"

    CASE="$a pipes and --one-pass"
    cat "$T/msg" | run 0 "$D" sign -k "$T/$a.jwk" --format raw -o "$T/$a.pipe" -
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.pipe" --format raw "$T/msg"
    # Process substitution: a pipe that dsig may leave unread without a SIGPIPE for `cat`.
    reject 'deterministic.*(two-pass|twice)' "$D" sign -k "$T/$a.jwk" --format raw --deterministic - < <(cat "$T/msg" || true)
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --one-pass -o "$T/$a.op" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.op" --format raw "$T/msg"
    reject 'deterministic' "$D" sign -k "$T/$a.jwk" --format raw --one-pass --deterministic "$T/msg"

    CASE="$a HashSLH-DSA"
    # With a pre-hash M' is complete after one pass, so the pipe (one pass) and the file (two passes)
    # both give the exact deterministic FIPS 205 signature.
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --prehash SHA-512 --context 01 --deterministic -o "$T/$a.ph1" "$T/msg"
    cat "$T/msg" | run 0 "$D" sign -k "$T/$a.jwk" --format raw --prehash SHA-512 --context 01 --deterministic -o "$T/$a.ph2" -
    check "pre-hash: one-pass pipe = two-pass file" cmp -s "$T/$a.ph1" "$T/$a.ph2"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph1" --format raw --prehash SHA-512 --context 01 "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph1" --format raw --prehash SHA-256 --context 01 "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.ph1" --format raw --context 01 "$T/msg"
done

a=SLH-DSA-SHA2-128f
CASE="refusals"
reject 'pre-hash.*MD5|MD5' "$D" sign -k "$T/$a.jwk" --format raw --prehash MD5 "$T/msg"
reject 'context.*255|255' "$D" sign -k "$T/$a.jwk" --format raw --context "$(printf '00%.0s' $(seq 256))" "$T/msg"
reject 'raw' "$D" sign -k "$T/$a.jwk" --context 00 "$T/msg"
reject 'PEM' "$D" keygen -a $a --pem -o "$T/k.pem"
reject 'PEM' "$D" pubkey --pem "$T/$a.jwk"
reject 'signature.*17088|17088' "$D" verify -k "$T/$a.pub" -s "$T/msg" --format raw "$T/msg"
reject '' "$D" verify -k "$T/SLH-DSA-SHAKE-128f.pub" -s "$T/$a.d1" --format raw "$T/msg"

CASE="bad AKP JWKs"
pub=$(jwk_member "$T/$a.pub" pub)
priv=$(jwk_member "$T/$a.jwk" priv)
run 0 "$D" keygen -a $a --seed ffeeddccbbaa99887766554433221100 -o "$T/other.jwk"
otherpub=$(jwk_member "$T/other.jwk" pub)
printf '{"kty":"AKP","pub":"%s"}' "$pub" >"$T/noalg.jwk"
reject '"alg" is required' "$D" verify -k "$T/noalg.jwk" -s "$T/$a.jws" "$T/msg"
printf '{"kty":"AKP","alg":"SLH-DSA-SHA2-192f","pub":"%s"}' "$pub" >"$T/len.jwk"
reject 'must be 48 bytes, got 32' "$D" verify -k "$T/len.jwk" -s "$T/$a.jws" "$T/msg"
printf '{"kty":"AKP","alg":"%s","pub":"%s","priv":"AAAA"}' $a "$pub" >"$T/shortpriv.jwk"
reject 'priv.*64 bytes' "$D" sign -k "$T/shortpriv.jwk" "$T/msg"
printf '{"kty":"AKP","alg":"%s","pub":"%s","priv":"%s"}' $a "$otherpub" "$priv" >"$T/mismatch.jwk"
reject 'does not match' "$D" sign -k "$T/mismatch.jwk" "$T/msg"
printf '{"kty":"AKP","alg":"SLH-DSA-SHA2-128x","pub":"%s"}' "$pub" >"$T/unk.jwk"
reject 'not supported' "$D" verify -k "$T/unk.jwk" -s "$T/$a.jws" "$T/msg"

finish

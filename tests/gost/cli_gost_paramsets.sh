#!/usr/bin/env bash
# `dsig keygen -a GOST3410-2012-256 --param SET` for each TC26 256-bit set: the JWK names the set
# (crv GOST-256-A..D), sign and verify through the tool, a signature does not verify under another
# set's key, no --param gives GOST-256-B, an unknown or ambiguous set name is refused (exit 2).
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
"$tool" keygen --help 2>&1 | grep -q -- --param || { echo "dsig keygen has no --param: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

printf 'GOST R 34.10-2012 paramsets\n' >"$tmp/m.txt"
for set in A B C D; do
    "$tool" keygen -a GOST3410-2012-256 --param "GOST-256-$set" -o "$tmp/k$set.jwk" --pub "$tmp/p$set.jwk" -q \
        || fail "keygen GOST-256-$set"
    grep -q "\"crv\":\"GOST-256-$set\"" "$tmp/p$set.jwk" || fail "public JWK of $set: $(cat "$tmp/p$set.jwk")"
    "$tool" sign -k "$tmp/k$set.jwk" -o "$tmp/s$set" "$tmp/m.txt" || fail "sign with GOST-256-$set"
    "$tool" verify -q -k "$tmp/p$set.jwk" -s "$tmp/s$set" "$tmp/m.txt" || fail "verify with GOST-256-$set"
done
"$tool" keygen -a GOST3410-2012-256 --param id-tc26-gost-3410-2012-256-paramSetD -o "$tmp/kd.jwk" -q \
    || fail "keygen by TC26 name"
grep -q '"crv":"GOST-256-D"' "$tmp/kd.jwk" || fail "TC26 name did not select paramSetD"
"$tool" verify -q -k "$tmp/pA.jwk" -s "$tmp/sB" "$tmp/m.txt" 2>/dev/null && fail "B signature verified under an A key"
"$tool" keygen -a GOST3410-2012-256 -o "$tmp/kdef.jwk" -q || fail "default keygen"
grep -q '"crv":"GOST-256-B"' "$tmp/kdef.jwk" || fail "default set is not B"
for bad in A TCA GOST-256-E; do
    "$tool" keygen -a GOST3410-2012-256 --param "$bad" -o "$tmp/bad.jwk" -q 2>"$tmp/err"
    [ $? -eq 2 ] || fail "--param $bad: exit status"
    grep -q 'GOST-256-A' "$tmp/err" || fail "--param $bad: message does not list the sets: $(cat "$tmp/err")"
    [ -e "$tmp/bad.jwk" ] && fail "--param $bad left a key file"
done
echo "ok"

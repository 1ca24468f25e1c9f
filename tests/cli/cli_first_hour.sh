#!/usr/bin/env bash
# cli_first_hour.sh — what a new user meets in a first hour with the tool: malformed signatures are
# errors (exit 2), options that do not apply are refused, a JWK's own kid is kept, keys from the
# openssl command line (SEC1, PKCS#1, DER) work, `verify --json` and `key info` speak to scripts,
# private key files others may write are refused, a terminal is never read or written silently.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S1=000102030405060708090a0b0c0d0e0f
cd "$T"
printf 'payload\n' >m
jqe() { jq -e "$@" >/dev/null; }   # a jq test, quietly


CASE="setup"
run 0 "$D" keygen -a ES256 --seed $S1 -o es.jwk --pub es.pub
run 0 "$D" sign -k es.jwk -o m.jws m

# ---- 3. malformed signature input is exit 2; a wrong signature is exit 1 -------------------------
CASE="malformed signatures"
: >empty.sig
printf 'not a signature at all\n' >garbage.sig
printf '{"protected":' >json.sig
head -c 40 m.jws >trunc40.sig
head -c 10 m.jws >trunc10.sig
for f in empty garbage json trunc40 trunc10; do
    run 2 "$D" verify -k es.pub -s $f.sig m
    grep -qi "malformed\|invalid JSON\|empty" "$ERR" || die "$f.sig: no 'malformed' in: $(cat "$ERR")"
done
head -c 64 /dev/urandom >binary.sig          # binary is a raw signature: it just does not verify
run 1 "$D" verify -k es.pub -s binary.sig m
run 1 "$D" verify -k es.pub -s m.jws <(printf 'other\n')

# ---- 6. options that do not apply are refused ----------------------------------------------------
CASE="options that do not apply"
reject "ES256 keys have one size.*P-256" "$D" keygen -a ES256 --bits 384 -o never.jwk
[ ! -e never.jwk ] || die "a refused keygen wrote a key"
reject "one size" "$D" keygen -a Ed25519 --bits 512
run 0 "$D" keygen -a ES256 --bits 256 -o p256.jwk      # the size it has anyway
reject "--kid.*raw" "$D" sign -k es.jwk --kid --format raw -o never.sig m
[ ! -e never.sig ] || die "a refused sign wrote a signature"

# ---- 7. a JWK's own kid is kept by pubkey and sign --kid -----------------------------------------
CASE="own kid"
jq -c '.kid = "release-2026"' es.jwk >mine.jwk
chmod 600 mine.jwk
run 0 "$D" pubkey mine.jwk -o mine.pub
check "pubkey keeps the kid" [ "$(jq -r .kid mine.pub)" = release-2026 ]
run 0 "$D" sign -k mine.jwk --kid -o kid.jws m
hdr=$(cut -d. -f1 kid.jws)
while [ $((${#hdr} % 4)) -ne 0 ]; do hdr+="="; done
check "sign --kid puts the JWK's kid in the header" \
    [ "$(printf '%s' "$hdr" | basenc --base64url -d | jq -r .kid)" = release-2026 ]
run 0 "$D" verify -k mine.pub -s kid.jws m

# ---- 9. keys from the openssl command line: SEC1, PKCS#1, DER ------------------------------------
CASE="openssl key forms"
openssl ecparam -name prime256v1 -genkey -noout -out sec1.pem 2>/dev/null
grep -q 'BEGIN EC PRIVATE KEY' sec1.pem || die "openssl did not write SEC1"
openssl ecparam -name prime256v1 -genkey -out sec1params.pem 2>/dev/null   # EC PARAMETERS first
openssl genrsa -traditional -out pkcs1.pem 2048 2>/dev/null
grep -q 'BEGIN RSA PRIVATE KEY' pkcs1.pem || die "openssl did not write PKCS#1"
openssl rsa -in pkcs1.pem -RSAPublicKey_out -out pkcs1.pub.pem 2>/dev/null
openssl pkey -in sec1.pem -outform DER -out pk8.der
openssl ec -in sec1.pem -outform DER -out sec1.der 2>/dev/null
openssl pkey -in sec1.pem -pubout -outform DER -out spki.der
openssl rsa -in pkcs1.pem -RSAPublicKey_out -outform DER -out pkcs1.pub.der 2>/dev/null
openssl genpkey -algorithm ED25519 -outform DER -out ed.der
openssl pkey -inform DER -in ed.der -pubout -outform DER -out ed.pub.der
for k in sec1.pem sec1params.pem pk8.der sec1.der; do
    run 0 "$D" sign -k $k -a ES256 -o $k.sig m
done
for k in sec1.pem pk8.der sec1.der; do                   # one key in three forms; its SPKI in DER
    run 0 "$D" verify -k spki.der -s $k.sig m            # no -a: a P-256 key admits ES256 only
done
run 0 "$D" sign -k pkcs1.pem -a PS256 -o rsa.sig m
run 0 "$D" verify -k pkcs1.pub.pem -a PS256 -s rsa.sig m
run 0 "$D" verify -k pkcs1.pub.der -a PS256 -s rsa.sig m
run 0 "$D" sign -k ed.der -a Ed25519 --format raw -o ed.sig m
run 0 "$D" verify -k ed.pub.der -s ed.sig m
run 0 "$D" key info sec1.der
grep -q '^form: *DER' "$OUT" || die "key info: $(cat "$OUT")"
head -c 100 /dev/urandom | { printf '\x30'; cat; } >junk.der
reject "junk.der.*DER" "$D" sign -k junk.der -a ES256 m

# ---- 16. -a EdDSA (the legacy JOSE name) on verify -----------------------------------------------
CASE="EdDSA alias"
run 0 "$D" keygen -a Ed25519 --seed $S1 -o ed.jwk --pub ed.pub
run 0 "$D" sign -k ed.jwk -o ed.jws m
jq -c 'del(.alg)' ed.pub >ed.noalg.pub
run 0 "$D" verify -k ed.noalg.pub -a EdDSA -s ed.jws m
run 0 "$D" verify -k ed.pub -a EdDSA -s ed.jws m
reject "unknown algorithm 'EdDSA'" "$D" verify -k es.pub -a EdDSA -s m.jws m
reject "unknown algorithm 'EdDSA'" "$D" sign -k ed.jwk -a EdDSA m      # an alias for verifying only

# ---- 17. hex options name the bad character ------------------------------------------------------
CASE="hex errors"
reject "character 7 \('…'\) is not a hex digit" "$D" keygen -a Ed25519 --seed 000102…1f
reject "has 5 hex digits" "$D" keygen -a Ed25519 --seed 00010
reject "character 3 \('z'\)" "$D" sign -k ml.jwk --format raw --context 00zz m

# ---- 18. a JWK without "crv" names it ------------------------------------------------------------
CASE="missing crv"
printf '{"kty":"EC","x":"AA","y":"AA"}' >nocrv.jwk
reject '"crv" is missing.*P-256' "$D" verify -k nocrv.jwk -s m.jws m

# ---- 24. a public JWK without "alg" verifies when its type admits one algorithm ------------------
CASE="JWK without alg"
jq -c 'del(.alg)' es.pub >es.noalg.pub
run 0 "$D" verify -k es.noalg.pub -s m.jws m
run 0 "$D" keygen -a PS256 --seed $S1 -o ps.jwk --pub ps.pub
run 0 "$D" sign -k ps.jwk -o ps.jws m
jq -c 'del(.alg)' ps.pub >ps.noalg.pub
reject "RS256.*PS256.*PS512.*give -a" "$D" verify -k ps.noalg.pub -s ps.jws m
run 0 "$D" verify -k ps.noalg.pub -a PS256 -s ps.jws m
# The header never decides: an HS256 JWS does not make the P-256 key an HMAC key.
run 0 "$D" keygen -a HS256 --seed $S1 -o hs.jwk
run 0 "$D" sign -k hs.jwk -o hs.jws m
reject "ES256" "$D" verify -k es.noalg.pub -s hs.jws m

# ---- 20. verify --json and key info --------------------------------------------------------------
CASE="verify --json"
run 0 "$D" verify -k es.pub -s m.jws --json m
check "valid object" jqe '.valid == true and .status == "valid" and .alg == "ES256" and (.kid|length) == 43 and .reason == null' "$OUT"
[ ! -s "$ERR" ] || die "verify --json wrote to stderr on success: $(cat "$ERR")"
run 1 "$D" verify -k es.pub -s m.jws --json <(printf 'other\n')
check "invalid object" jqe '.valid == false and .status == "invalid" and (.reason|test("does not verify"))' "$OUT"
run 2 "$D" verify -k es.pub -s garbage.sig --json m
check "error object" jqe '.valid == false and .status == "error" and (.reason|test("malformed"))' "$OUT"
run 0 "$D" verify -k mine.pub -s kid.jws --json m
check "kid is the key's own" jqe '.kid == "release-2026"' "$OUT"
run 2 "$D" verify -k es.pub --json m                   # a usage error is an outcome too
check "usage error object" jqe '.valid == false and .status == "error" and (.reason|test("missing -s SIG"))' "$OUT"
run 2 "$D" verify -k nowhere.jwk -s m.jws --json m
check "unreadable key object" jqe '.status == "error" and .kid == null and (.reason|test("nowhere.jwk"))' "$OUT"
CASE="key info"
run 0 "$D" key info es.jwk
grep -q '^algorithm: *ES256 (bound' "$OUT" || die "key info algorithm: $(cat "$OUT")"
grep -q '^part: *private' "$OUT" || die "key info part"
run 0 "$D" key info --json es.noalg.pub
check "key info --json" jqe '.kty == "EC" and .crv == "P-256" and .alg == "ES256" and .alg_source == "key type" and .private == false and .signatures_left == null and (.thumbprint|length) == 43' "$OUT"
run 0 "$D" key info --json ps.noalg.pub
check "key info names the candidates" jqe '.alg == null' "$OUT"
grep -q 'PS384' <("$D" key info ps.noalg.pub) || die "key info text does not name the candidates"
if "$D" list --names | grep -qx HSS-LMS; then
    run 0 "$D" keygen -a HSS-LMS --param LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8 -o lms.state --pub lms.pub
    run 0 "$D" key info --json lms.state
    check "state file: signatures left" jqe '.form == "state file" and .signatures_left == 32 and .private == true' "$OUT"
    run 0 "$D" sign -k lms.state -o lms.sig m
    run 0 "$D" key info --json lms.state
    check "one signature less" jqe '.signatures_left == 31' "$OUT"
fi
! grep -q '"d"' <("$D" key info --json es.jwk) || die "key info printed private material"
reject "unknown subcommand 'nope'" "$D" key nope

# ---- 21. private key files others may write are refused, readable ones warned about --------------
CASE="key file modes"
cp es.jwk open.jwk
chmod 666 open.jwk
reject "mode 0666.*writable by group or others" "$D" sign -k open.jwk -o never.sig m
[ ! -e never.sig ] || die "a refused sign wrote a signature"
chmod 620 open.jwk
reject "mode 0620" "$D" pubkey open.jwk
chmod 644 open.jwk
run 0 "$D" sign -k open.jwk -o open.sig m
grep -q "warning: key 'open.jwk': mode 0644: a private key readable" "$ERR" || die "no warning for 0644: $(cat "$ERR")"
chmod 600 open.jwk
run 0 "$D" sign -k open.jwk -o open.sig m
[ ! -s "$ERR" ] || die "a 0600 key drew a message: $(cat "$ERR")"
cp sec1.pem open.pem && chmod 606 open.pem
reject "open.pem.*mode 0606" "$D" sign -k open.pem -a ES256 m
cp es.pub open.pub && chmod 666 open.pub
run 0 "$D" verify -k open.pub -s m.jws m                 # a public key is no secret
if [ -e lms.state ]; then
    chmod 660 lms.state
    reject "state file '.*lms.state' is accessible by other users \(mode 660\)" "$D" sign -k lms.state -o never.sig m
    chmod 600 lms.state
fi

# ---- 2. keygen --force without --pub warns that the old public key is stale ----------------------
CASE="keygen --force"
run 0 "$D" keygen -a ES256 -o f.jwk --pub f.pub
run 0 "$D" keygen -a ES256 -o f.jwk --force
grep -q "warning: 'f.jwk' holds a new key.*--pub" "$ERR" || die "no stale public key warning: $(cat "$ERR")"
run 0 "$D" keygen -a ES256 -o f.jwk --force --pub f.pub
[ ! -s "$ERR" ] || die "keygen --force --pub warned: $(cat "$ERR")"
run 0 "$D" sign -k f.jwk -o f.jws m
run 0 "$D" verify -k f.pub -s f.jws m

# ---- 8, 23. the terminal: no silent read of a tty, no binary written to one ----------------------
CASE="terminal"
if command -v script >/dev/null; then
    rc=0
    timeout 20 script -qec "'$D' verify -k es.pub -s m.jws" /dev/null </dev/null >"$OUT" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || die "verify without FILE on a terminal: exit $rc (124 = it waited): $(cat "$OUT")"
    grep -q "no payload: give FILE" "$OUT" || die "verify on a terminal: $(cat "$OUT")"
    rc=0
    timeout 20 script -qec "'$D' sign -k es.jwk" /dev/null </dev/null >"$OUT" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || die "sign without FILE on a terminal: exit $rc"
    rc=0
    timeout 20 script -qec "'$D' sign -k es.jwk --format raw m" /dev/null </dev/null >"$OUT" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || die "raw signature to a terminal: exit $rc"
    grep -q "binary raw signature to the terminal" "$OUT" || die "raw to a terminal: $(cat "$OUT")"
    rc=0
    timeout 20 script -qec "'$D' sign -k es.jwk m" /dev/null </dev/null >"$OUT" 2>&1 || rc=$?
    [ "$rc" -eq 0 ] || die "a JWS to a terminal is text and allowed: exit $rc"
    PASSED=$((PASSED + 4))
fi
run 0 sh -c "'$D' sign -k es.jwk --format raw m > raw.sig"   # redirected: fine

# ---- 23. messages ----------------------------------------------------------------------------------
CASE="messages"
reject "needs a key of type EC P-256, got one of type RSA" "$D" sign -k pkcs1.pem -a ES256 m
for c in list keygen pubkey sign verify key bench "bench stream" "bench sig" "bench dsig" "bench keccak" \
         "bench apps" "bench bft" ping node bft serve kv "kv serve" book "book serve" audit version help; do
    # shellcheck disable=SC2086
    "$D" $c --help >"$OUT" 2>"$ERR" || die "'dsig $c --help' exits non-zero"
    head -1 "$OUT" | grep -q '^Usage: dsig' || die "'dsig $c --help' does not start with 'Usage: dsig' on stdout"
    PASSED=$((PASSED + 1))
done
# Every command: an unknown option is a usage error (exit 2) that names it; a missing required
# argument too; a run-time failure names the file.
for c in list keygen pubkey sign verify "key info" "bench stream" "bench sig" "bench dsig" "bench apps" \
         "bench bft" ping node "bft client" serve kv "kv serve" book "book serve" "audit verify"; do
    # shellcheck disable=SC2086
    run 2 "$D" $c --no-such-option
    grep -q -- "--no-such-option" "$ERR" || die "'dsig $c --no-such-option' does not name the option: $(cat "$ERR")"
done
reject "a role is needed" "$D" bft
reject "unknown role 'nope'" "$D" bft nope --config c.json
reject "--config, --id and --key are required" "$D" bft client
reject "--connect, --id, --key and --server-key are needed" "$D" kv GET k
reject "--listen, --key, --keys and --log are needed" "$D" book serve --listen unix:b.sock
reject "--redis ADDR" "$D" kv serve --listen unix:k.sock --key es.jwk --keys . --log kv.log
reject "expected verify LOG" "$D" audit
reject "unknown subcommand 'nope'" "$D" audit nope x.log
reject "verify needs --keys DIR" "$D" audit verify x.log
reject "receipt takes --server-key only" "$D" audit receipt r.bin
run 2 "$D" audit verify nowhere.log --keys .
grep -q "nowhere.log" "$ERR" || die "audit verify of a missing log does not name it: $(cat "$ERR")"
run 2 "$D" audit receipt nowhere.bin --server-key es.pub
grep -q "nowhere.bin" "$ERR" || die "audit receipt of a missing file does not name it: $(cat "$ERR")"
run 2 "$D" bft client --config nowhere.json --id 1 --key es.jwk --replicas 1,2,3,4
grep -q "nowhere.json" "$ERR" || die "bft with a missing configuration does not name it: $(cat "$ERR")"
finish

#!/usr/bin/env bash
# cli_badinput.sh — hostile and broken input: every case must fail with a non-zero exit below 128
# (no crash), a message on stderr naming what was wrong, and never be accepted. Where a forged JWS
# can carry a correct MAC (crafted headers), it does, so that only the header check can reject it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S1=00112233445566778899aabbccddeeff
has() { "$D" list --names | grep -qx -- "$1"; }
b64u() { basenc --base64url -w0 | tr -d '='; }         # stdin -> base64url without padding
b64u_decode() { # base64url (no padding) on stdin -> bytes
    local s
    s=$(cat)
    while [ $((${#s} % 4)) -ne 0 ]; do s+="="; done
    printf '%s' "$s" | basenc --base64url -d
}
hmac256() { # hmac256 HEXKEY: HMAC-SHA256 of stdin, base64url
    openssl dgst -sha256 -mac HMAC -macopt "hexkey:$1" -binary | b64u
}
printf 'payload\n' >"$T/m"

# ---- usage errors --------------------------------------------------------------------------------
reject "unknown option '--bogus'" "$D" sign --bogus
reject "unknown option '-Z'" "$D" verify -Z
reject "unknown option '--nope'" "$D" list --nope
reject "unknown option '--frobnicate'" "$D" --frobnicate
reject "unknown command 'frobnicate'" "$D" frobnicate
reject "unknown algorithm 'NOPE256'" "$D" keygen -a NOPE256
reject "needs a value" "$D" keygen -a
reject "missing -a" "$D" keygen
reject "missing -k" "$D" sign "$T/m"
reject "missing -s" "$D" verify -k "$T/m"
reject "unknown format 'xml'" "$D" sign -k "$T/m" --format xml
reject "hex" "$D" keygen -a HS256 --seed 00zz
reject "decimal" "$D" keygen -a HS256 --bits -5
# DSig keys stay bound to DSig: never written as PEM (which records no algorithm), and an unbound
# PEM Ed25519 key never signs DSig (its plain Ed25519 signatures are the attacker's to ask for).
run 0 "$D" keygen -q -a DSig -o "$T/dsig.jwk"
reject "DSig key cannot be written as PEM" "$D" keygen -a DSig --pem -o "$T/dsig.pem"
[ ! -e "$T/dsig.pem" ] || die "keygen -a DSig --pem wrote a file"
reject "DSig key cannot be written as PEM" "$D" pubkey --pem -k "$T/dsig.jwk"
run 0 "$D" keygen -q -a Ed25519 --pem -o "$T/ed.pem"
run 2 "$D" sign -a DSig -k "$T/ed.pem" -o "$T/never.sig" "$T/m"
grep -q "make one with .dsig keygen -a DSig" "$ERR" || die "no advice on making a DSig key: $(cat "$ERR")"
[ ! -e "$T/never.sig" ] || die "an unbound PEM key signed DSig"
run 2 "$D"
run 0 "$D" help
run 0 "$D" --help
run 0 "$D" version
for c in list keygen pubkey sign verify help version; do
    run 0 "$D" "$c" --help
    grep -q "^Usage: dsig $c" "$OUT" || die "'dsig $c --help' prints no usage"
    run 0 "$D" help "$c"
done

# ---- keys ------------------------------------------------------------------------------------------
if ! has HS256 || ! has ES256; then
    echo "HS256 or ES256 not registered: key and JWS cases skipped"
    finish
    exit 0
fi
run 0 "$D" keygen -a HS256 --seed $S1 -o "$T/hs.jwk"
run 0 "$D" keygen -a ES256 --seed $S1 -o "$T/es.jwk" --pub "$T/es.pub.jwk"
hskey=$(jq -j .k "$T/hs.jwk" | b64u_decode | od -An -tx1 -v | tr -d ' \n')
reject "unknown algorithm 'NOPE'" "$D" sign -k "$T/hs.jwk" -a NOPE "$T/m"

reject "key '.*bad1.jwk'" sh -c "printf '{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":' >'$T/bad1.jwk'; '$D' sign -k '$T/bad1.jwk' '$T/m'"
printf '{"kty":"EC","crv":"P-256"}' >"$T/bad2.jwk"
reject "key '.*bad2.jwk'" "$D" verify -k "$T/bad2.jwk" -s "$T/m" "$T/m"
printf '{"kty":"XYZ","k":"AAAA"}' >"$T/bad3.jwk"
reject "bad3.jwk" "$D" sign -k "$T/bad3.jwk" -a HS256 "$T/m"
printf '{"kty":"oct","k":"AAAA","k":"BBBB"}' >"$T/bad4.jwk"
reject "bad4.jwk" "$D" sign -k "$T/bad4.jwk" -a HS256 "$T/m"
printf '{"kty":"oct","k":"AA+A/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}' >"$T/bad5.jwk"
reject "bad5.jwk" "$D" sign -k "$T/bad5.jwk" -a HS256 "$T/m"
printf 'this is not a key\n' >"$T/bad6.jwk"
reject "neither a JWK" "$D" sign -k "$T/bad6.jwk" "$T/m"
printf -- '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' >"$T/bad7.pem"
reject "bad7.pem" "$D" sign -k "$T/bad7.pem" -a ES256 "$T/m"
# An EC public key whose point is not on the curve.
jq -c '.y = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"' "$T/es.pub.jwk" >"$T/offcurve.jwk"
run 0 "$D" sign -k "$T/es.jwk" -o "$T/m.jws" "$T/m"
reject "offcurve.jwk" "$D" verify -k "$T/offcurve.jwk" -s "$T/m.jws" "$T/m"
# A public key cannot sign.
reject "es.pub.jwk" "$D" sign -k "$T/es.pub.jwk" -o "$T/never.jws" "$T/m"
[ ! -e "$T/never.jws" ] || die "a failed sign left an output file"

# ---- JWS structure ---------------------------------------------------------------------------------
hdr=$(cut -d. -f1 <"$T/m.jws")
sig=$(cut -d. -f3 <"$T/m.jws")
bad() { # bad NAME CONTENT: write a signature file
    printf '%s\n' "$2" >"$T/$1"
}
bad mal1.jws "not a jws at all"
bad mal2.jws "$hdr.."
bad mal3.jws "$hdr"
bad mal4.jws "..$sig"
bad mal5.jws "$hdr..$sig.$sig"
bad mal6.jws '{"protected":'
bad mal7.jws "{\"protected\":\"$hdr\",\"signature\":\"$sig\",\"signature\":\"$sig\"}"
bad mal8.jws "{\"protected\":\"$hdr\"}"
head -c 40 "$T/m.jws" >"$T/trunc1.jws"
head -c $(($(wc -c <"$T/m.jws") - 12)) "$T/m.jws" >"$T/trunc2.jws"
: >"$T/emptysig.jws"
for f in mal1 mal2 mal3 mal4 mal5 mal6 mal7 mal8 trunc1 trunc2 emptysig; do
    CASE=$f
    reject "$f.jws" "$D" verify -k "$T/es.pub.jwk" -s "$T/$f.jws" "$T/m"
done
CASE="forced format"
reject "m.jws" "$D" verify -k "$T/es.pub.jwk" -s "$T/m.jws" --format json "$T/m"
reject "m.jws" "$D" verify -k "$T/es.pub.jwk" -s "$T/m.jws" --format compact "$T/m"

# Bad base64url: padding, '+' and '/', a character outside the alphabet, non-canonical trailing bits.
CASE=base64url
bad b64a.jws "$hdr=..$sig"
bad b64b.jws "${hdr}..${sig:0:10}+${sig:11}"
bad b64c.jws "${hdr:0:5}/${hdr:6}..$sig"
bad b64d.jws "$hdr..${sig:0:20}*${sig:21}"
bad b64e.jws "$hdr..${sig}A"
for f in b64a b64b b64c b64d b64e; do
    reject "$f.jws" "$D" verify -k "$T/es.pub.jwk" -s "$T/$f.jws" "$T/m"
done

# ---- JWS headers, with correct MACs over the forged signing input ------------------------------------
# forge NAME HEADER-JSON: detached b64:false JWS with a valid HMAC-SHA256 under the HS256 test key.
forge() {
    local h s
    h=$(printf '%s' "$2" | b64u)
    s=$({ printf '%s.' "$h"; cat "$T/m"; } | hmac256 "$hskey")
    printf '%s..%s\n' "$h" "$s" >"$T/$1"
}
CASE="forge sanity"
forge ok.jws '{"alg":"HS256","b64":false,"crit":["b64"]}'
run 0 "$D" verify -k "$T/hs.jwk" -s "$T/ok.jws" "$T/m"   # the forging itself is right

CASE="alg none"
forge none1.jws '{"alg":"none","b64":false,"crit":["b64"]}'
reject "none1.jws" "$D" verify -k "$T/hs.jwk" -s "$T/none1.jws" "$T/m"
printf '%s..\n' "$(printf '{"alg":"none","b64":false,"crit":["b64"]}' | b64u)" >"$T/none2.jws"
reject "none2.jws" "$D" verify -k "$T/hs.jwk" -s "$T/none2.jws" "$T/m"
printf '%s.%s.\n' "$(printf '{"alg":"none"}' | b64u)" "$(b64u <"$T/m")" >"$T/none3.jws"
reject "none3.jws" "$D" verify -k "$T/hs.jwk" -s "$T/none3.jws"
reject "none" "$D" verify -k "$T/hs.jwk" -a none -s "$T/none2.jws" "$T/m"

CASE="unknown crit"
forge crit1.jws '{"alg":"HS256","b64":false,"crit":["b64","exp"],"exp":1}'
reject "crit1.jws" "$D" verify -k "$T/hs.jwk" -s "$T/crit1.jws" "$T/m"
forge crit2.jws '{"alg":"HS256","b64":false,"crit":[]}'
reject "crit2.jws" "$D" verify -k "$T/hs.jwk" -s "$T/crit2.jws" "$T/m"

CASE="b64 without crit"
forge b64nocrit.jws '{"alg":"HS256","b64":false}'
reject "b64nocrit.jws" "$D" verify -k "$T/hs.jwk" -s "$T/b64nocrit.jws" "$T/m"
forge dup.jws '{"alg":"HS256","alg":"HS256","b64":false,"crit":["b64"]}'
reject "dup.jws" "$D" verify -k "$T/hs.jwk" -s "$T/dup.jws" "$T/m"

CASE="wrong header alg"
forge hs384.jws '{"alg":"HS384","b64":false,"crit":["b64"]}'
reject "hs384.jws" "$D" verify -k "$T/hs.jwk" -s "$T/hs384.jws" "$T/m"

# ---- algorithm confusion --------------------------------------------------------------------------
if has RS256; then
    CASE="HS256 with an RSA public key"
    run 0 "$D" keygen -a RS256 --seed $S1 -o "$T/rsa.jwk" --pub "$T/rsa.pub.jwk"
    run 0 "$D" pubkey -k "$T/rsa.jwk" --pem -o "$T/rsa.pub.pem"
    # The classic attack: MAC the input with the public key's bytes as the HMAC key.
    for pubfile in rsa.pub.jwk rsa.pub.pem; do
        pkhex=$(od -An -tx1 -v "$T/$pubfile" | tr -d ' \n')
        h=$(printf '{"alg":"HS256","b64":false,"crit":["b64"]}' | b64u)
        s=$({ printf '%s.' "$h"; cat "$T/m"; } | hmac256 "$pkhex")
        printf '%s..%s\n' "$h" "$s" >"$T/confuse.jws"
        reject "confuse.jws|$pubfile" "$D" verify -k "$T/$pubfile" -s "$T/confuse.jws" "$T/m"
        reject "$pubfile" "$D" verify -k "$T/$pubfile" -a HS256 -s "$T/confuse.jws" "$T/m"
    done
fi
if has ES384; then
    CASE="ES256 JWS with a P-384 key"
    run 0 "$D" keygen -a ES384 --seed $S1 -o "$T/p384.jwk" --pub "$T/p384.pub.jwk"
    reject "p384.pub.jwk" "$D" verify -k "$T/p384.pub.jwk" -s "$T/m.jws" "$T/m"
    reject "p384.pub.jwk" "$D" verify -k "$T/p384.pub.jwk" -a ES256 -s "$T/m.jws" "$T/m"
    openssl pkey -in <("$D" pubkey -k "$T/p384.jwk" --pem) -pubin -out "$T/p384.pub.pem" 2>/dev/null ||
        "$D" pubkey -k "$T/p384.jwk" --pem -o "$T/p384.pub.pem"
    reject "p384.pub.pem" "$D" verify -k "$T/p384.pub.pem" -a ES256 -s "$T/m.jws" "$T/m"
fi
CASE="key bound to another alg"
reject "es.jwk" "$D" sign -k "$T/es.jwk" -a ES384 "$T/m"
reject "es.pub.jwk" "$D" verify -k "$T/es.pub.jwk" -a HS256 -s "$T/m.jws" "$T/m"

if command -v openssl >/dev/null && has RS256; then
    CASE="RSA-1024"
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$T/rsa1024.pem" 2>/dev/null
    openssl pkey -in "$T/rsa1024.pem" -pubout -out "$T/rsa1024.pub.pem" 2>/dev/null
    reject "rsa1024.pem" "$D" sign -k "$T/rsa1024.pem" -a RS256 -o "$T/never.jws" "$T/m"
    [ ! -e "$T/never.jws" ] || die "a failed sign left an output file"
    # A signature really made by the 1024-bit key must not be accepted either.
    h=$(printf '{"alg":"RS256","b64":false,"crit":["b64"]}' | b64u)
    s=$({ printf '%s.' "$h"; cat "$T/m"; } | openssl dgst -sha256 -sign "$T/rsa1024.pem" -binary | b64u)
    printf '%s..%s\n' "$h" "$s" >"$T/rsa1024.jws"
    reject "rsa1024.pub.pem" "$D" verify -k "$T/rsa1024.pub.pem" -a RS256 -s "$T/rsa1024.jws" "$T/m"
    reject "key .*bits|rsa1024" "$D" keygen -a RS256 --bits 1024
fi

# ---- files -------------------------------------------------------------------------------------------
CASE="missing files"
reject "cannot open '.*/missing.jwk'" "$D" sign -k "$T/missing.jwk" "$T/m"
reject "cannot open '.*/missing.jws'" "$D" verify -k "$T/hs.jwk" -s "$T/missing.jws" "$T/m"
reject "cannot open '.*/missing.txt'" "$D" sign -k "$T/hs.jwk" -o "$T/never.jws" "$T/missing.txt"
[ ! -e "$T/never.jws" ] || die "a failed sign left an output file"
reject "cannot open '.*/missing.txt'" "$D" verify -k "$T/hs.jwk" -s "$T/ok.jws" "$T/missing.txt"
reject "cannot open '.*/missing.jwk'" "$D" pubkey "$T/missing.jwk"
reject "cannot create" "$D" keygen -a HS256 -o "$T/no/such/dir/k.jwk"
reject "cannot create" "$D" sign -k "$T/hs.jwk" -o "$T/no/such/dir/s.jws" "$T/m"

CASE="directories"
mkdir "$T/dir"
reject "'.*/dir'.*directory" "$D" sign -k "$T/hs.jwk" "$T/dir"
reject "'.*/dir'.*directory" "$D" verify -k "$T/hs.jwk" -s "$T/ok.jws" "$T/dir"
reject "'.*/dir'.*directory" "$D" verify -k "$T/hs.jwk" -s "$T/dir" "$T/m"
reject "'.*/dir'.*directory" "$D" sign -k "$T/dir" "$T/m"
reject "directory" "$D" sign -k "$T/hs.jwk" -o "$T/dir" "$T/m"

CASE="unreadable files"
# A file that opens but cannot be read: /proc/self/mem fails with EIO at offset 0, even for root.
reject "I/O error" "$D" sign -k "$T/hs.jwk" -o "$T/never.jws" /proc/self/mem
[ ! -e "$T/never.jws" ] || die "a failed sign left an output file"
run 2 "$D" verify -k "$T/hs.jwk" -s "$T/ok.jws" /proc/self/mem
grep -Eiq "I/O error" "$ERR" || die "a read error during verify was not reported as an I/O error"
reject "I/O error" "$D" verify -k "$T/hs.jwk" -s /proc/self/mem "$T/m"
if [ "$(id -u)" != 0 ]; then
    cp "$T/m" "$T/noperm"
    chmod 000 "$T/noperm"
    reject "noperm.*Permission denied" "$D" sign -k "$T/hs.jwk" "$T/noperm"
fi
CASE="stdin twice"
reject "standard input" "$D" verify -k - -s - "$T/m"
reject "standard input" "$D" sign -k - -
CASE="closed stdout"
reject "stdout" sh -c "'$D' sign -k '$T/hs.jwk' '$T/m' >/dev/full"


# ---- embedded payloads ----------------------------------------------------------------------------
# "hello" signed with its payload inside the signature (compact, and flattened JSON with "payload"):
# FILE, when given, must be that payload — an empty or truncated download must never verify.
CASE="embedded payload"
printf hello >"$T/hello"
: >"$T/empty0"
run 0 "$D" sign -k "$T/hs.jwk" --format compact -o "$T/hello.compact" "$T/hello"
IFS=. read -r eh ep es <"$T/hello.compact"
printf '{"protected":"%s","payload":"%s","signature":"%s"}\n' "$eh" "$ep" "$es" >"$T/hello.json"
printf '{"protected":"%s","payload":"","signature":"%s"}\n' "$eh" "$es" >"$T/hello.nopayload.json"
run 0 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json"
grep -q "embedded" "$ERR" || die "verify without FILE does not say it checked the embedded payload"
run 0 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json" "$T/hello"
run 0 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json" --format json "$T/hello"
run 0 sh -c "'$D' verify -k '$T/hs.jwk' -s '$T/hello.json' - <'$T/hello'"
for f in "$T/empty0" /dev/null; do
    CASE="embedded payload vs $f"
    run 1 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json" "$f"
    run 1 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json" --format json "$f"
    run 1 "$D" verify -k "$T/hs.jwk" -s "$T/hello.compact" "$f"
    run 1 sh -c "'$D' verify -k '$T/hs.jwk' -s '$T/hello.json' - <'$f'"
    # an empty "payload" member is an (empty) embedded payload whose signature is wrong
    reject "hello.nopayload.json" "$D" verify -k "$T/hs.jwk" -s "$T/hello.nopayload.json" "$f"
done
CASE="embedded payload, wrong format"
reject "dsig_jws_verify_compact|payload" "$D" verify -k "$T/hs.jwk" -s "$T/hello.compact" --format jws "$T/hello"
printf hellp >"$T/hellp"
run 1 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json" "$T/hellp"
run 1 "$D" verify -k "$T/hs.jwk" -s "$T/hello.json" "$T/m"

# ---- output files ------------------------------------------------------------------------------------
# An output never replaces an input: the key (the private key!), the payload, through a symlink or a
# hard link too. The refused command changes nothing.
CASE="output is an input"
cp "$T/hs.jwk" "$T/hs.keep"
cp "$T/es.jwk" "$T/es.keep"
cp "$T/m" "$T/m.keep"
ln -s hs.jwk "$T/hs.symlink"
ln "$T/hs.jwk" "$T/hs.hardlink"
for o in "$T/hs.jwk" "$T/hs.symlink" "$T/hs.hardlink"; do
    reject "same file as the key" "$D" sign -k "$T/hs.jwk" -o "$o" "$T/m"
    check "sign -o $o kept the key" cmp -s "$T/hs.jwk" "$T/hs.keep"
done
reject "same file as the key" "$D" sign -k "$T/hs.symlink" -o "$T/hs.jwk" "$T/m"
reject "same file as the payload" "$D" sign -k "$T/hs.jwk" -o "$T/m" "$T/m"
reject "same file as the payload" sh -c "'$D' sign -k '$T/hs.jwk' -o '$T/m' - <'$T/m'"
check "sign -o PAYLOAD kept the payload" cmp -s "$T/m" "$T/m.keep"
reject "same file as the key" sh -c "'$D' sign -k - -o '$T/hs.jwk' '$T/m' <'$T/hs.jwk'"
check "sign -k - -o KEY kept the key" cmp -s "$T/hs.jwk" "$T/hs.keep"
reject "same file as the key" "$D" pubkey -k "$T/es.jwk" -o "$T/es.jwk"
check "pubkey -o KEY kept the private key" cmp -s "$T/es.jwk" "$T/es.keep"
reject "same file as the key" "$D" pubkey "$T/es.jwk" --pem -o "$T/es.jwk"
check "pubkey --pem -o KEY kept the private key" cmp -s "$T/es.jwk" "$T/es.keep"
run 0 "$D" sign -k "$T/hs.jwk" -o "$T/m.sig" "$T/m"   # an ordinary output still works
run 0 "$D" sign -k "$T/hs.jwk" -o "$T/m.sig" "$T/m"   # and is replaced
run 0 "$D" verify -k "$T/hs.jwk" -s "$T/m.sig" "$T/m"
# Devices are never "the same file". Outputs go to devices only through symlinks in $T: a tool
# with the old bug (unlink on a failed write) running as root would otherwise remove /dev/full.
ln -s /dev/null "$T/devnull"
ln -s /dev/full "$T/devfull"
run 0 "$D" sign -k "$T/hs.jwk" -o "$T/devnull" /dev/null

# keygen never replaces an existing file unless --force, never follows a symlink.
CASE="keygen over existing files"
reject "already exists.*--force" "$D" keygen -a HS256 -o "$T/hs.jwk"
check "keygen -o EXISTING kept the key" cmp -s "$T/hs.jwk" "$T/hs.keep"
reject "already exists.*--force" "$D" keygen -a ES256 -o "$T/es.jwk" --pub "$T/es.newpub.jwk"
check "keygen -o EXISTING kept the key" cmp -s "$T/es.jwk" "$T/es.keep"
[ ! -e "$T/es.newpub.jwk" ] || die "a refused keygen left its public key"
printf 'precious\n' >"$T/victim"
ln -s victim "$T/victim.link"
ln -s "$T/nowhere" "$T/dangling.link"
reject "victim.link" "$D" keygen -a HS256 -o "$T/victim.link"
reject "dangling.link" "$D" keygen -a HS256 -o "$T/dangling.link"
check "keygen did not write through a symlink" grep -qx precious "$T/victim"
[ ! -e "$T/nowhere" ] || die "keygen created the target of a dangling symlink"
run 0 "$D" keygen -a HS256 --force -o "$T/victim.link"
check "keygen --force replaced the link, not its target" grep -qx precious "$T/victim"
check "keygen --force replaced the symlink" [ ! -L "$T/victim.link" ]
check "keygen --force wrote a regular file" [ -f "$T/victim.link" ]
check "keygen --force: mode 0600" [ "$(stat -c %a "$T/victim.link")" = 600 ]
run 0 "$D" sign -k "$T/victim.link" -o "$T/devnull" "$T/m"
cp "$T/hs.keep" "$T/forced.jwk"
chmod 644 "$T/forced.jwk"
run 0 "$D" keygen -a HS256 --force -o "$T/forced.jwk"
differ() { ! cmp -s "$1" "$2"; }
check "keygen --force replaced the key" differ "$T/forced.jwk" "$T/hs.keep"
check "keygen --force: mode 0600" [ "$(stat -c %a "$T/forced.jwk")" = 600 ]
reject "same file" "$D" keygen -a ES256 --force -o "$T/forced.jwk" --pub "$T/forced.jwk"
ln -s forced.jwk "$T/forced.publink"
cp "$T/forced.jwk" "$T/forced.keep"
reject "same file" "$D" keygen -a ES256 --force -o "$T/forced.jwk" --pub "$T/forced.publink"
check "a refused keygen --force kept the old key" cmp -s "$T/forced.jwk" "$T/forced.keep"
ls "$T" | grep -q '\.new-' && die "keygen --force left a temporary file"

# keygen -o K --pub P: when P cannot be written, no private key is left behind (and --force keeps
# the old one); --pub must not end up over the new private key either.
CASE="keygen --pub failure"
reject "cannot create" "$D" keygen -a ES256 -o "$T/k3.jwk" --pub "$T/no/such/dir/p3.jwk"
[ ! -e "$T/k3.jwk" ] || die "keygen left the private key after --pub failed"
reject "cannot write" "$D" keygen -a ES256 -o "$T/k4.jwk" --pub "$T/devfull"
[ ! -e "$T/k4.jwk" ] || die "keygen left the private key after --pub failed to write"
reject "cannot write" "$D" keygen -a ES256 --force -o "$T/forced.jwk" --pub "$T/devfull"
check "keygen --force kept the old key when --pub failed" cmp -s "$T/forced.jwk" "$T/forced.keep"
ls "$T" | grep -q '\.new-' && die "keygen --force left a temporary file"
ln -s k5.jwk "$T/k5.publink"
reject "same file" "$D" keygen -a ES256 -o "$T/k5.jwk" --pub "$T/k5.publink"
[ ! -e "$T/k5.jwk" ] || die "keygen left a private key (and its public key was written over it)"

# A failed write removes only a file the command created, never the user's existing file.
CASE="failed writes"
reject "cannot write" "$D" sign -k "$T/hs.jwk" -o "$T/devfull" "$T/m"
check "a failed write kept the user's symlink" [ -L "$T/devfull" ]
# RLIMIT_FSIZE of one block: a 10 KiB compact JWS cannot be written, the short message still can.
head -c 8192 /dev/zero >"$T/m8k"
printf 'old signature\n' >"$T/old.sig"
reject "cannot write.*old.sig" sh -c "trap '' XFSZ; ulimit -f 1; '$D' sign -k '$T/hs.jwk' --format compact -o '$T/old.sig' '$T/m8k'"
check "a failed write did not unlink the user's file" [ -e "$T/old.sig" ]
reject "cannot write.*new.sig" sh -c "trap '' XFSZ; ulimit -f 1; '$D' sign -k '$T/hs.jwk' --format compact -o '$T/new.sig' '$T/m8k'"
[ ! -e "$T/new.sig" ] || die "a failed write left a partial file it created"

finish

#!/usr/bin/env bash
# cli_jws_two_pass.sh — `dsig sign` with JWS output for two-pass algorithms (SLH-DSA): on a regular
# file (argument, or redirected to standard input) every format signs in two passes, so
# --deterministic is allowed and the JWS signature is the exact FIPS 205 signature of the signing
# input header.payload — checked against the two-pass raw signature of a file holding that input
# (byte-exact with dsig_sign_ex / ACVP, tests/slhdsa_api) — and verifies; pipes and --one-pass sign
# in one pass (hedged: valid, never repeated; --deterministic refused); algorithms without the
# two-pass flag keep their one-pass path (ML-DSA deterministic JWS: file = pipe); `dsig list` flags.
source "$DSIG_SOURCE_DIR/tests/cli/lib.sh"

SEED=202122232425262728292a2b2c2d2e2f
differ() { ! cmp -s "$1" "$2"; }
b64url() { basenc --base64url -w0 | tr -d '='; }
seg() { tr -d '\n' <"$1" | cut -d. -f"$2"; }              # segment N of a compact JWS
member() { tr -d '\n' <"$1" | sed -E "s/.*\"$2\":\"([^\"]*)\".*/\\1/"; } # a JSON string member
head -c 200000 /dev/urandom >"$T/msg"                      # several 64 KiB reads per pass
cp "$T/msg" "$T/msg.bad"
printf 'x' >>"$T/msg.bad"

CASE="list"
run 0 "$D" list
check "SLH-DSA has the two-pass flag" grep -Eq '^SLH-DSA-SHA2-128f +SLH-DSA .*options,two-pass$' "$OUT"
if grep -Eq '^ML-DSA-44 ' "$OUT"; then
    check "ML-DSA has options, not two-pass" grep -Eq '^ML-DSA-44 .*options$' "$OUT"
fi
if grep -Eq '^XMSS ' "$OUT"; then
    check "XMSS is stateful" grep -Eq '^XMSS .*stateful' "$OUT"
fi
check "no unnamed flag bits" bash -c "! grep -q '0x' '$OUT'"
run 0 "$D" list --json
check "JSON flags name two-pass" grep -q '"name": "SLH-DSA-SHAKE-128f".*"two-pass"' "$OUT"
run 0 "$D" list --help
check "help explains two-pass" grep -q 'two-pass (has an exact' "$OUT"

for a in SLH-DSA-SHA2-128f SLH-DSA-SHAKE-128f; do
    CASE="$a keygen"
    run 0 "$D" keygen -a "$a" --seed $SEED -o "$T/$a.jwk" --pub "$T/$a.pub"

    CASE="$a deterministic detached JWS = exact signature of header.payload"
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/$a.d1" "$T/msg"
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/$a.d2" "$T/msg"
    check "deterministic two-pass JWS repeats" cmp -s "$T/$a.d1" "$T/$a.d2"
    check "detached (empty payload segment)" test -z "$(seg "$T/$a.d1" 2)"
    { printf '%s.' "$(seg "$T/$a.d1" 1)"; cat "$T/msg"; } >"$T/$a.input"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic -o "$T/$a.rawin" "$T/$a.input"
    check "JWS signature = raw signature of the signing input" \
        test "$(seg "$T/$a.d1" 3)" = "$(b64url <"$T/$a.rawin")"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.d1" "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.d1" "$T/msg.bad"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.rawin" --format raw "$T/$a.input"
    # A regular file on standard input is read twice too (same signature); so is one that does not
    # start at offset 0 (seek back to where it started, not to 0).
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/$a.d3" - <"$T/msg"
    check "file on stdin = file argument" cmp -s "$T/$a.d1" "$T/$a.d3"
    { printf 'prefix'; cat "$T/msg"; } >"$T/$a.prefixed"
    (exec <"$T/$a.prefixed" && dd bs=6 count=1 status=none >/dev/null &&
        "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/$a.d4" -) 2>"$ERR" || die "offset stdin"
    check "stdin at an offset signs from that offset" cmp -s "$T/$a.d1" "$T/$a.d4"

    CASE="$a deterministic JSON and compact"
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic --format json -o "$T/$a.json" "$T/msg"
    check "JSON: same header and signature as the detached JWS" \
        test "$(member "$T/$a.json" protected).$(member "$T/$a.json" signature)" = \
        "$(seg "$T/$a.d1" 1).$(seg "$T/$a.d1" 3)"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.json" "$T/msg"
    head -c 3000 "$T/msg" >"$T/small"
    run 0 "$D" sign -k "$T/$a.jwk" --deterministic --format compact -o "$T/$a.cmp" "$T/small"
    printf '%s.%s' "$(seg "$T/$a.cmp" 1)" "$(seg "$T/$a.cmp" 2)" >"$T/$a.cinput"
    run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic -o "$T/$a.craw" "$T/$a.cinput"
    check "compact signature = raw signature of header.BASE64URL(payload)" \
        test "$(seg "$T/$a.cmp" 3)" = "$(b64url <"$T/$a.craw")"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.cmp" "$T/small"

    CASE="$a hedged two-pass JWS"
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.h1" "$T/msg"
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.h2" "$T/msg"
    check "hedged signatures differ" differ "$T/$a.h1" "$T/$a.h2"
    check "hedged differs from deterministic" differ "$T/$a.h1" "$T/$a.d1"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.h1" "$T/msg"

    CASE="$a pipes and --one-pass (one pass)"
    cat "$T/msg" | run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.p1" -
    cat "$T/msg" | run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.p2" -
    check "pipe signatures differ (fresh randomness)" differ "$T/$a.p1" "$T/$a.p2"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.p1" "$T/msg"
    cat "$T/msg" | run 0 "$D" sign -k "$T/$a.jwk" --format json -o "$T/$a.pj" -
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.pj" "$T/msg"
    reject 'deterministic.*(two-pass|twice)' "$D" sign -k "$T/$a.jwk" --deterministic - < <(cat "$T/msg" || true)
    run 0 "$D" sign -k "$T/$a.jwk" --one-pass -o "$T/$a.o1" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.o1" "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.o1" "$T/msg.bad"
    reject 'deterministic' "$D" sign -k "$T/$a.jwk" --one-pass --deterministic "$T/msg"
    reject 'deterministic' "$D" sign -k "$T/$a.jwk" --one-pass --deterministic --format compact "$T/small"
    # JOSE still refuses a context / pre-hash, in two passes as in one.
    reject 'format raw|empty context' "$D" sign -k "$T/$a.jwk" --deterministic --context 01 "$T/msg"
done

CASE="empty payload"
a=SLH-DSA-SHA2-128f
: >"$T/empty"
run 0 "$D" sign -k "$T/$a.jwk" --deterministic -o "$T/e.jws" "$T/empty"
printf '%s.' "$(seg "$T/e.jws" 1)" >"$T/e.input"
run 0 "$D" sign -k "$T/$a.jwk" --format raw --deterministic -o "$T/e.raw" "$T/e.input"
check "empty payload: JWS signature = raw signature of 'header.'" \
    test "$(seg "$T/e.jws" 3)" = "$(b64url <"$T/e.raw")"
run 0 "$D" verify -k "$T/$a.pub" -s "$T/e.jws" "$T/empty"

if "$D" list --names | grep -qx ML-DSA-44; then
    CASE="ML-DSA (options, no two-pass): one pass for files too"
    run 0 "$D" keygen -a ML-DSA-44 --seed $SEED -o "$T/ml.jwk" --pub "$T/ml.pub"
    run 0 "$D" sign -k "$T/ml.jwk" --deterministic -o "$T/ml.f" "$T/msg"
    cat "$T/msg" | run 0 "$D" sign -k "$T/ml.jwk" --deterministic -o "$T/ml.p" -
    check "deterministic ML-DSA JWS: file = pipe" cmp -s "$T/ml.f" "$T/ml.p"
    run 0 "$D" verify -k "$T/ml.pub" -s "$T/ml.f" "$T/msg"
fi

# docs/cli.md against the usage texts, both ways (no drift): every option of `dsig CMD --help` is in
# the command's section of the page and in its synopsis line; every option the section's tables and
# the synopsis give exists in the usage. -h/--help and -q/--quiet are documented once, globally.
CASE="docs/cli.md = usage texts"
DOC=$DSIG_SOURCE_DIR/docs/cli.md
opts() { grep -oE -- '--[a-z][a-z0-9-]*' | grep -vxE -- '--(help|quiet)' | sort -u || true; }
section() { awk -v h="### dsig $1" '$0 == h {on = 1; next} /^#/ {on = 0} on' "$DOC"; }
table_opts() { section "$1" | grep -E '^\| `-' | cut -d'|' -f2 | opts; }
synopsis() { awk -v c="$1" '/^## Synopsis/ {s = 1} s && /^```/ {n++} n == 1 && $1 == "dsig" {on = ($2 == c)}
                             n == 1 && on' "$DOC" | opts; }
usage_line() { awk 'NR > 1 && /^$/ {exit} {print}' "$OUT" | opts; }
for c in list keygen pubkey sign verify key; do
    run 0 "$D" "$c" --help
    u=$(opts <"$OUT")
    check "$c: the page has a section" test -n "$(section "$c")"
    for o in $u; do
        check "$c $o (usage) is documented in docs/cli.md" grep -qx -- "$o" <<<"$(section "$c" | opts)"
    done
    for o in $(table_opts "$c"); do
        check "$c $o (docs/cli.md table) exists in the usage text" grep -qx -- "$o" <<<"$u"
    done
    check "$c: synopsis options = usage line options" test "$(synopsis "$c")" = "$(usage_line)"
done
# Each benchmark's row of the `dsig bench` table names every option of its usage text.
for b in stream sig dsig keccak apps bft; do
    row=$(section bench | grep "^| \`$b\` |") || die "docs/cli.md: no row for dsig bench $b"
    run 0 "$D" bench "$b" --help
    for o in $(opts <"$OUT"); do
        check "bench $b $o is in its docs/cli.md row" grep -qE -- "\`$o[\` ]" <<<"$row"
    done
done
# The application commands have a section here and their options on their own page (or in the section).
for c in "kv:kv, dsig book:kv.md" "kv serve:kv, dsig book:kv.md" "book:kv, dsig book:orderbook.md kv.md" \
         "book serve:kv, dsig book:orderbook.md kv.md" "audit:audit:kv.md" "bft:bft:bft.md"; do
    IFS=: read -r cmd sec pages <<<"$c"
    check "docs/cli.md has a section for dsig $cmd" test -n "$(section "$sec")"
    # shellcheck disable=SC2086
    run 0 "$D" $cmd --help
    docs=$(section "$sec"; for pg in $pages; do cat "$DSIG_SOURCE_DIR/docs/$pg"; done)
    for o in $(opts <"$OUT"); do
        check "dsig $cmd $o is documented (docs/cli.md or docs/$pages)" grep -qE -- "$o([^a-z-]|$)" <<<"$docs"
    done
done

CASE="every registered JOSE name is documented"
run 0 "$D" list --names
for n in $(cat "$OUT"); do
    check "$n in docs/jws.md or docs/naming.md" \
        grep -qF -- "\`$n\`" "$DSIG_SOURCE_DIR/docs/jws.md" "$DSIG_SOURCE_DIR/docs/naming.md"
done

finish

# tests/cli/lib.sh — helpers shared by the CLI shell tests (sourced, not run).
#   run WANT CMD...      run CMD, require exit code WANT (and no sanitizer report); output in $OUT/$ERR
#   reject PATTERN CMD... run CMD, require a non-zero exit < 128, a stderr matching PATTERN (grep -Ei)
#                         and no sanitizer report
#   check WHAT CMD...    require CMD to succeed
#   differ A B           true when files A and B differ
#   jwk_member FILE NAME print the string member NAME of the one-line JWK in FILE
#   akp_keygen ALG SEED  seeded AKP keygen into $T/ALG.jwk and $T/ALG.pub, checked (see below)
#   jws_roundtrip ALG    JWS and JSON round trips of $T/msg with $T/ALG.jwk / $T/ALG.pub (see below)
set -euo pipefail

D=${DSIG_TOOL:?DSIG_TOOL must point at the dsig tool}
T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
# set -e must never end a test silently.
trap 'die "unexpected failure at line $LINENO: $BASH_COMMAND"' ERR
OUT=$T/.out
ERR=$T/.err
PASSED=0
CASE=""

# Stop at the first failure with a clear message.
die() {
    echo "FAIL${CASE:+ [$CASE]}: $*" >&2
    if [ -s "$ERR" ]; then sed 's/^/    stderr: /' "$ERR" | head -20 >&2; fi
    echo "$PASSED passed, 1 failed"
    exit 1
}

# Sanitizer reports count as crashes even when the exit code looks ordinary.
no_sanitizer_report() {
    if grep -Eq 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$ERR"; then
        die "sanitizer report while running: $*"
    fi
}

run() {
    local want=$1 rc=0
    shift
    "$@" >"$OUT" 2>"$ERR" || rc=$?
    no_sanitizer_report "$@"
    [ "$rc" -eq "$want" ] || die "expected exit $want, got $rc: $*"
    PASSED=$((PASSED + 1))
}

reject() {
    local pattern=$1 rc=0
    shift
    "$@" >"$OUT" 2>"$ERR" || rc=$?
    no_sanitizer_report "$@"
    [ "$rc" -ne 0 ] || die "accepted (exit 0): $*"
    [ "$rc" -lt 128 ] || die "crashed (exit $rc): $*"
    [ -s "$ERR" ] || die "no message on stderr: $*"
    grep -Eiq -- "$pattern" "$ERR" || die "stderr does not match /$pattern/: $*"
    PASSED=$((PASSED + 1))
}

check() { # check DESCRIPTION TEST-COMMAND...
    local what=$1
    shift
    "$@" || die "$what"
    PASSED=$((PASSED + 1))
}

# True when the two files differ (randomized signatures, hedged vs deterministic).
differ() { ! cmp -s "$1" "$2"; }

# The string member $2 of the one-line JWK in file $1 (base64url, so no quotes inside).
jwk_member() {
    sed -E "s/.*\"$2\":\"([^\"]*)\".*/\1/" "$1"
}

# AKP key generation through the tool: seeded keygen of $1 with seed $2 into $T/$1.jwk (+ $T/$1.pub)
# is reproducible, names kty AKP and the alg, and only the private JWK holds "priv".
akp_keygen() {
    local a=$1 seed=$2
    run 0 "$D" keygen -a "$a" --seed "$seed" -o "$T/$a.jwk" --pub "$T/$a.pub"
    run 0 "$D" keygen -a "$a" --seed "$seed" -o "$T/$a.again.jwk"
    check "seeded keygen is reproducible" cmp -s "$T/$a.jwk" "$T/$a.again.jwk"
    check "AKP JWK with alg" grep -q "\"kty\":\"AKP\".*\"alg\":\"$a\"" "$T/$a.jwk"
    check "private JWK has priv" grep -q '"priv":"' "$T/$a.jwk"
    check "public JWK has no priv" bash -c "! grep -q '\"priv\"' '$T/$a.pub'"
}

# Compact JWS ($T/$1.jws) and JSON ($T/$1.json) signatures of $T/msg with the keys of akp_keygen:
# both verify, and the compact one fails on $T/msg.bad.
jws_roundtrip() {
    local a=$1
    run 0 "$D" sign -k "$T/$a.jwk" -o "$T/$a.jws" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.jws" "$T/msg"
    run 1 "$D" verify -k "$T/$a.pub" -s "$T/$a.jws" "$T/msg.bad"
    run 0 "$D" sign -k "$T/$a.jwk" --format json -o "$T/$a.json" "$T/msg"
    run 0 "$D" verify -k "$T/$a.pub" -s "$T/$a.json" "$T/msg"
}

finish() {
    echo "$PASSED passed, 0 failed"
}

# tests/cli/lib.sh — helpers shared by the CLI shell tests (sourced, not run).
#   run WANT CMD...      run CMD, require exit code WANT (and no sanitizer report); output in $OUT/$ERR
#   reject PATTERN CMD... run CMD, require a non-zero exit < 128, a stderr matching PATTERN (grep -Ei)
#                         and no sanitizer report
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

finish() {
    echo "$PASSED passed, 0 failed"
}

# tests/serve/serve_lib.sh — the shared prelude of the `dsig serve` shell tests (sourced, not run):
# the tool and the commands a test needs (SKIP without them), a private temporary directory removed at
# exit together with the server, pass/fail counting with the server's log on failure, and whether the
# tool is a sanitizer build (smaller payloads, no RSS bounds).
#
#   serve_lib_init PREFIX COMMAND...   sets D (the tool), T (the directory), SP (server pid, ""),
#                                      PASSED, SAN (1 under ASan/TSan); installs the EXIT and ERR traps.
#   die MESSAGE                        fail: message, the last server log lines, the counts; exit 1
#   ok                                 count one passed check
#   serve_start [SCHEME [DIR]]         run `$D serve --config $T/serve.json` (from DIR, default $T; with the
#                                      caller's environment), logging to $T/serve.log; wait for its port:
#                                      SP, PORT, U=SCHEME://127.0.0.1:PORT. Returns 1 if it exited instead
#   serve_stop                         SIGTERM; the server must exit 0 without a sanitizer report
#   wait_until SECONDS COMMAND...      run COMMAND every 0.1 s until it succeeds; 1 if it never does
#   serve_ready                        succeeds if GET $U/readyz answers 200
#   audit_recovered LOG CAUSE          LOG is JSON lines and holds an audit_recovered event for CAUSE
serve_lib_init() {
    local prefix=$1
    shift
    D=${DSIG_TOOL:?DSIG_TOOL must point at the dsig tool}
    [[ "$D" == */* && "$D" != /* ]] && D=$PWD/$D # serve_start runs it from another directory
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/install-deps.sh)"; exit 0; }
    done
    T=$(mktemp -d "${TMPDIR:-/tmp}/$prefix.XXXXXX")
    SP=""
    PASSED=0
    trap serve_lib_cleanup EXIT
    trap 'die "unexpected failure at line $LINENO: $BASH_COMMAND"' ERR
    SAN=0
    # Not `ldd | grep -q`: under pipefail, grep leaving early makes ldd die of SIGPIPE and the
    # pipeline fail, which read a TSan build as a plain one.
    local libs
    libs=$(ldd "$D" 2>/dev/null || true)
    case "${DSIG_SANITIZE:-OFF}/${DSIG_TSAN:-OFF}/$libs" in
        ON/* | */ON/* | *libasan* | *libtsan*) SAN=1 ;;
    esac
}
serve_lib_cleanup() {
    [ -n "$SP" ] && kill "$SP" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$T"
}
die() {
    echo "FAIL: $*" >&2
    [ -f "$T/serve.log" ] && sed 's/^/    server: /' "$T/serve.log" | tail -20 >&2
    echo "$PASSED passed, 1 failed"
    exit 1
}
ok() { PASSED=$((PASSED + 1)); }
serve_start() {
    local scheme=${1:-http} dir=${2:-$T}
    : >"$T/serve.log"
    (cd "$dir" && exec "$D" serve --config "$T/serve.json" 2>>"$T/serve.log") &
    SP=$!
    PORT=""
    for _ in $(seq 150); do
        PORT=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/serve.log")
        [ -n "$PORT" ] && break
        if ! kill -0 $SP 2>/dev/null; then
            wait $SP 2>/dev/null || true
            SP=""
            return 1
        fi
        sleep 0.1
    done
    [ -n "$PORT" ] || die "server did not start"
    U=$scheme://127.0.0.1:$PORT
}
serve_stop() {
    kill $SP
    local rc=0
    wait $SP || rc=$?
    SP=""
    [ $rc = 0 ] || die "server exit status $rc"
    grep -Eq 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$T/serve.log" && die "sanitizer report"
    ok
}
wait_until() {
    local secs=$1 i
    shift
    for ((i = 0; i < secs * 10; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
serve_ready() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$U/readyz")" = 200 ]
}
audit_recovered() {
    jq -c . "$1" >/dev/null || die "the audit log $1 is not JSON lines"
    grep -qF "\"event\":\"audit_recovered\",\"cause\":\"$2\"" "$1" || die "no recovery event for \"$2\" in $1"
}

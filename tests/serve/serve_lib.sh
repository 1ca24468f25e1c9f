# tests/serve/serve_lib.sh — the shared prelude of the `dsig serve` shell tests (sourced, not run):
# the tool and the commands a test needs (SKIP without them), a private temporary directory removed at
# exit together with the server, pass/fail counting with the server's log on failure, and whether the
# tool is a sanitizer build (smaller payloads, no RSS bounds).
#
#   serve_lib_init PREFIX COMMAND...   sets D (the tool), T (the directory), SP (server pid, ""),
#                                      PASSED, SAN (1 under ASan/TSan); installs the EXIT and ERR traps.
#   die MESSAGE                        fail: message, the last server log lines, the counts; exit 1
#   ok                                 count one passed check
serve_lib_init() {
    local prefix=$1
    shift
    D=${DSIG_TOOL:?DSIG_TOOL must point at the dsig tool}
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

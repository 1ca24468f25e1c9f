#!/usr/bin/env bash
# cli_docs.sh — every command block of README.md and docs/*.md runs as written.
#
# Fenced blocks are classified by their info string:
#   ```sh          run here, as a reader does: the blocks of one document top to bottom in one
#                  directory (a fresh one per document, holding the sample inputs below), each under
#                  bash -e -o pipefail with `dsig` the tool under test on PATH; any failing command fails
#                  the test — so a block may use what an earlier block of its document made, and must not
#                  trip over it (a key file that already exists). Processes a block leaves running (a
#                  server started with &) are stopped after it
#   ```sh no-run   shell that is not run here (a build, a server that runs until stopped, minutes of
#                  benchmarks); the text around it says why. Listed in the output, never silently skipped
#   ```text, c, json, nginx, yaml ...   not shell: output samples, synopses, code, configuration
# A block without an info string fails the test: every block says what it is.
#
# Sample inputs (what the documents sign): big.iso (1 MiB), file, f, payload, msg.txt (small), dir/.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SRC=${DSIG_SOURCE_DIR:?DSIG_SOURCE_DIR must point at the source tree}
mkdir -p "$T/bin"
ln -s "$D" "$T/bin/dsig"
export PATH="$T/bin:$PATH"

# Extract the blocks of one file as records: "KIND<TAB>LINE" on stdout, each block's text in
# $T/blocks/N.sh (N in file order). KIND: run, norun, other, untagged.
extract() {
    rm -rf "$T/blocks"
    mkdir "$T/blocks"
    awk -v dir="$T/blocks" '
        /^```/ {
            if (!inb) {
                inb = 1; n++; info = substr($0, 4); gsub(/[ \t]+$/, "", info)
                kind = info == "" ? "untagged" : info == "sh" ? "run" : info ~ /^sh no-run/ ? "norun" : "other"
                print kind "\t" FNR
                file = dir "/" n ".sh"; printf "" > file
            } else { inb = 0; close(file) }
            next
        }
        inb { print > file }
        END { if (inb) print "unterminated\t" FNR }
    ' "$1"
}

# A fresh directory with the sample inputs.
fixture() {
    local d=$1
    mkdir -p "$d/dir/sub"
    head -c 1048576 /dev/urandom >"$d/big.iso"
    printf 'a file to sign\n' >"$d/file"
    printf 'f\n' >"$d/f"
    printf 'payload\n' >"$d/payload"
    printf 'a short message\n' >"$d/msg.txt"
    printf 'one\n' >"$d/dir/one.txt"
    printf 'two\n' >"$d/dir/sub/two.txt"
}

ran=0 norun=0 ndoc=0
for doc in "$SRC"/README.md "$SRC"/docs/*.md; do
    rel=${doc#"$SRC"/}
    ndoc=$((ndoc + 1))
    d="$T/run/$ndoc-$(basename "$rel" .md)"   # one directory per document, made at its first block
    extract "$doc" >"$T/blocks.idx"   # complete before any block runs
    n=0
    while IFS=$'\t' read -r kind line; do
        n=$((n + 1))
        CASE="$rel:$line"
        case $kind in
        untagged) die "code block without an info string: tag it sh (run by this test), 'sh no-run' (shell that cannot run here: say why), or text / c / json / ..." ;;
        unterminated) die "unterminated code block" ;;
        norun) norun=$((norun + 1)); echo "not run ($kind): $rel:$line: $(head -c 70 "$T/blocks/$n.sh" | head -1)" ;;
        run)
            [ -d "$d" ] || fixture "$d"
            rc=0
            # timeout leads a process group of its own: what the block started in the background
            # is in it, and is stopped once the block is done.
            (cd "$d" && exec timeout 600 bash -e -o pipefail "$T/blocks/$n.sh") </dev/null >"$OUT" 2>"$ERR" &
            pid=$!
            wait "$pid" || rc=$?
            kill -TERM -- "-$pid" 2>/dev/null || true
            # What it started may still be shutting down (a service writing its last checkpoint):
            # wait for the group to be gone before the next block or the clean-up.
            for _ in $(seq 100); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
            no_sanitizer_report "$rel:$line"
            if [ "$rc" -ne 0 ]; then
                sed 's/^/    block: /' "$T/blocks/$n.sh" >&2
                sed 's/^/    stdout: /' "$OUT" | tail -5 >&2
                die "block exits $rc"
            fi
            ran=$((ran + 1))
            PASSED=$((PASSED + 1))
            ;;
        esac
    done <"$T/blocks.idx"
    rm -rf "$d"
done
CASE=""
[ "$ran" -ge 8 ] || die "only $ran runnable blocks found: is DSIG_SOURCE_DIR right?"
echo "$ran blocks run, $norun marked no-run"
finish

#!/usr/bin/env bash
# tests/tlog/tlog_tamper.sh — a `dsig serve` transparency log tampered with in each way is caught by
# `dsig log verify` at the exact record, with exit status 1: a record edited (found exactly with the
# service's tree file, as a range between checkpoints without it), deleted, reordered, the log cut at a
# record boundary and inside a record, a checkpoint edited; the untouched log passes (exit 0); the
# service refuses to start on a changed log; the command's usage conventions (--help, unknown option).
set -euo pipefail
. "${DSIG_SOURCE_DIR:?}/tests/serve/serve_lib.sh"
serve_lib_init dsig-tlog-tamper curl jq sha256sum

mkdir -p "$T/keys" "$T/log"
"$D" keygen -q -a Ed25519 -o "$T/keys/ed.jwk"
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/serve.json" <<JSON
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys",
 "audit": {"path": "log/audit.log", "checkpoint_interval_ms": 50},
 "tenants": [{"name": "s", "tokens": [{"sha256": "$(h tok)"}], "keys": ["*"], "operations": ["sign"]}]}
JSON
serve_start
# Twenty signatures, with a pause so that several checkpoints are made along the way.
for i in $(seq 1 20); do
    curl -sf -H "Authorization: Bearer tok" --data-binary "p$i" -o /dev/null "$U/v1/keys/ed/sign"
    [ $((i % 5)) = 0 ] && sleep 0.2
done
serve_stop
VK=$("$D" log key "$T/log/audit.log.key")
L=$T/log/audit.log
N=$(wc -l <"$L")
[ "$(grep -c '^— ' "$L.checkpoints")" -ge 4 ] || die "fewer than 4 checkpoints"

"$D" log verify "$L" --log-key "$VK" >"$T/out" || die "the untouched log: $(cat "$T/out")"
grep -q "^OK: $N records" "$T/out" || die "verify: $(cat "$T/out")"
ok

# expect NAME PATTERN [verify args...]: exit 1 and a message matching PATTERN.
expect() {
    local name=$1 pat=$2 rc=0
    shift 2
    "$D" log verify "$@" --log-key "$VK" >/dev/null 2>"$T/err" || rc=$?
    [ $rc = 1 ] || die "$name: exit $rc, want 1 ($(cat "$T/err"))"
    grep -Eq "$pat" "$T/err" || die "$name: message '$(cat "$T/err")' does not match '$pat'"
    ok
}
# Work on a copy beside the checkpoints and tree file (named LOG.*), as the service left them.
fresh() { mkdir -p "$T/c"; rm -f "$T/c/"*; cp "$L" "$L".checkpoint "$L".checkpoints "$L".tree "$T/c/"; C=$T/c/audit.log; }

fresh; sed -i '8s/"bytes":[0-9]*/"bytes":999/' "$C"
expect edited "audit.log:8: record 7 was edited" "$C"
fresh; sed -i '8s/"bytes":[0-9]*/"bytes":999/' "$C"; rm "$C.tree"
expect "edited, no tree file" "records [0-9]+\.\.[0-9]+ are not those checkpoint [0-9]+ .* one of them was edited" "$C"
fresh; sed -i '12d' "$C"
expect deleted "audit.log:12: record 11 is missing \(deleted\): this line holds record 12" "$C"
fresh; sed -i '5{h;d};6{G}' "$C"
expect reordered "audit.log:5: record 5 is out of place|audit.log:5: record 4 is missing" "$C"
fresh; head -n $((N - 3)) "$L" >"$C"
expect truncated "the log holds $((N - 3)) records, but checkpoint [0-9]+ .* signed [0-9]+: records $((N - 3))\.\.[0-9]+ are missing" "$C"
fresh; head -c -7 "$L" >"$C"
expect "cut inside a record" "audit.log:$N: record $((N - 1)) is truncated" "$C"
fresh; sed -i '0,/^\([0-9]*\)$/s//\1/' "$C.checkpoints"; sed -i '2s/^[0-9]*$/1/' "$C.checkpoints"
expect "checkpoint edited" "checkpoint 1 does not verify" "$C"

# The service refuses to start on a changed log (the tree file, or the last checkpoint, says so).
cp "$L" "$T/orig.log"
sed -i '3s/"bytes":[0-9]*/"bytes":12345/' "$L"
rc=0; serve_start || rc=$?
[ $rc = 1 ] || die "the service started on an edited log"
grep -q "record 2 of the audit log .* is not the one the service wrote" "$T/serve.log" || die "start refusal: $(cat "$T/serve.log")"
mv "$L.tree" "$T/tree.bak" # without the tree file: the last checkpoint still catches it
rc=0; serve_start || rc=$?
[ $rc = 1 ] || die "the service started on an edited log without its tree file"
grep -q "are not those its last checkpoint signed" "$T/serve.log" || die "start refusal: $(cat "$T/serve.log")"
cp "$T/orig.log" "$L"
head -n 5 "$T/orig.log" >"$L"
rc=0; serve_start || rc=$?
[ $rc = 1 ] && grep -q "records were removed" "$T/serve.log" || die "the service started on a truncated log"
cp "$T/orig.log" "$L"
serve_start
serve_stop
ok

# Usage conventions.
"$D" log --help >"$T/help" && head -1 "$T/help" | grep -q '^Usage: dsig log' || die "log --help"
rc=0; "$D" log verify "$L" --log-key "$VK" --bogus 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q -- "--bogus" "$T/err" || die "unknown option: exit $rc, $(cat "$T/err")"
rc=0; "$D" log verify "$L" 2>"$T/err" || rc=$?
[ $rc = 2 ] || die "verify without --log-key: exit $rc"
rc=0; "$D" log verify "$L" --log-key "$("$D" log key "$T/keys/ed.jwk")" 2>"$T/err" || rc=$?
[ $rc = 1 ] && grep -q "does not verify with the log key" "$T/err" || die "another key: exit $rc, $(cat "$T/err")"
ok
echo "tlog_tamper: $PASSED passed"

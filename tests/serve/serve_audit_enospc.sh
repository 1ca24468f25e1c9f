#!/usr/bin/env bash
# tests/serve/serve_audit_enospc.sh — the audit log on a full disk: a 64 KiB tmpfs filled up until a
# record no longer fits (a short write, then ENOSPC). Signing stops with 503 (no signature), the file
# keeps only whole records (no fragment for the next record to be glued to), /readyz says 503; once
# space is freed the log recovers by itself, writes the records it kept, and signing resumes; every
# line of the file is JSON. Needs root to mount the tmpfs: skipped (exit 77) otherwise.
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-enospc curl jq sha256sum
[ "$(id -u)" = 0 ] || { echo "SKIP: mounting a small tmpfs (a full disk) needs root"; exit 77; }
mkdir -p "$T/full" "$T/keys"
if ! mount -t tmpfs -o size=64k,mode=0700 tmpfs "$T/full" 2>"$T/mount.err"; then
    echo "SKIP: cannot mount a tmpfs here: $(cat "$T/mount.err")"
    exit 77
fi
trap 'serve_lib_cleanup_mount' EXIT
serve_lib_cleanup_mount() {
    [ -n "$SP" ] && kill "$SP" 2>/dev/null
    wait 2>/dev/null
    umount "$T/full" 2>/dev/null || true
    serve_lib_cleanup
}
"$D" keygen -q -a Ed25519 -o "$T/keys/k.jwk"
cat >"$T/serve.json" <<EOF2
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys", "state_registry_dir": "",
 "audit": {"path": "full/audit.log"},
 "limits": {"request_timeout_s": 5, "threads": 2},
 "tenants": [{"name": "t", "tokens": [{"sha256": "$(printf tok | sha256sum | cut -d' ' -f1)"}], "keys": ["*"],
              "operations": ["sign"]}]}
EOF2
serve_start
sign() { curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer tok' --data-binary x "$U/v1/keys/k/sign"; }
[ "$(sign)" = 200 ] || die "signing before the disk is full"
# Leave about 700 bytes: two records fit, the third is cut by the end of the file system.
avail=$(df --output=avail -B1 "$T/full" | tail -1)
head -c $((avail - 700)) /dev/zero >"$T/full/filler" 2>/dev/null || true
n=0 got=200
while [ "$got" = 200 ] && [ $n -lt 40 ]; do
    got=$(sign)
    n=$((n + 1))
done
[ "$got" = 503 ] || die "no 503 on a full disk after $n requests (last $got)"
serve_ready && die "/readyz on a full disk"
[ "$(sign)" = 503 ] || die "signing while the disk is full"
[ "$(tail -c 1 "$T/full/audit.log" | od -An -c | tr -d ' ')" = '\n' ] || die "a partial record at the end of the log"
jq -c . "$T/full/audit.log" >/dev/null || die "the audit log is not JSON lines on a full disk"
ok
rm "$T/full/filler"
wait_until 10 serve_ready || die "the audit log did not recover after space was freed"
[ "$(sign)" = 200 ] || die "signing after space was freed"
audit_recovered "$T/full/audit.log" "write failed: No space left on device"
[ "$(jq -s '[.[] | select(.correction == true and .code == 503)] | length' "$T/full/audit.log")" -ge 1 ] ||
    die "the held-back signature's correction"
ok
serve_stop
echo "$PASSED passed, 0 failed"

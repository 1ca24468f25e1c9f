#!/usr/bin/env bash
# `dsig ping` through the tool (no timing checks): the one-command loopback run prints a row per scheme
# and the target line; --json gives one object per scheme and size with the documented fields; bad
# options exit 2 naming what was wrong; the --config mode runs the two ends as two processes.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tool" ping --help | grep -q -- '--config FILE' || fail "help"
"$tool" help ping | grep -q 'dsig ping' || fail "dsig help ping"

# Text: header, three rows, the transport floor and a PASS/FAIL line for 8 B.
"$tool" ping --count 200 --size 8 --runs 1 >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "text run"; }
grep -q '^scheme ' "$tmp/out" || fail "table header"
for s in none sodium-ed25519 dsig; do
    [ "$(grep -c "^$s " "$tmp/out")" -eq 1 ] || fail "row $s: $(cat "$tmp/out")"
done
grep -qE '^(PASS|FAIL) 8 B: DSig adds' "$tmp/out" || fail "target line"
grep -q '^# transport floor' "$tmp/out" || fail "floor line"
grep -qE '^(PASS|FAIL) 8 B: background plane <= 1 core per process' "$tmp/out" || fail "plane target line"
grep -q 'bg-cpu' "$tmp/out" || fail "bg-cpu column"

# JSON: one object per scheme and size; target on stderr.
"$tool" ping --count 200 --size 8,1K --runs 1 --json >"$tmp/json" 2>"$tmp/err" || { cat "$tmp/err"; fail "json run"; }
[ "$(wc -l <"$tmp/json")" -eq 6 ] || fail "JSON rows: $(cat "$tmp/json")"
grep -qE '^(PASS|FAIL) 1024 B' "$tmp/err" || fail "target on stderr with --json"
grep -qE '^(PASS|FAIL) 1024 B: background plane' "$tmp/err" || fail "plane target on stderr with --json"
python3 - "$tmp/json" <<'PY' || fail "JSON fields"
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
need = ["scheme", "msg_bytes", "rtt_median_ns", "sign_median_ns", "transmit_median_ns",
        "verify_median_ns", "fast_path_fraction"]
assert sorted((r["scheme"], r["msg_bytes"]) for r in rows) == sorted(
    (s, b) for s in ("none", "sodium-ed25519", "dsig") for b in (8, 1024)), rows
for r in rows:
    for k in need:
        assert k in r, (k, r)
    for k in need[1:6]:
        assert isinstance(r[k], (int, float)) and r[k] >= 0 or k == "transmit_median_ns", (k, r)
    if r["scheme"] == "dsig":
        assert 0 <= r["fast_path_fraction"] <= 1, r
    else:
        assert r["fast_path_fraction"] is None, r
    assert r["rounds"] == 200, r
    cores = 2 * (os.cpu_count() or 1)
    for k in ("bg_cpu_core_fraction_initiator", "bg_cpu_core_fraction_responder"):
        v = r.get(k)
        assert isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= cores, (k, r)
PY

# Bad options: exit 2 with a message naming the option.
for bad in "--size 0" "--size 9K" "--count 0" "--runs 0" "--schemes rsa" "--id 1" "--config x.json" "--nope"; do
    # shellcheck disable=SC2086
    "$tool" ping $bad >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] || fail "'$bad' exit $rc"
    grep -qE -- "${bad%% *}|unknown" "$tmp/err" || fail "'$bad' message: $(cat "$tmp/err")"
done

# Two processes from a membership file (Unix sockets: no port to pick).
"$tool" keygen -q -a DSig -o "$tmp/k1.jwk" --pub "$tmp/p1.jwk" || fail keygen
"$tool" keygen -q -a DSig -o "$tmp/k2.jwk" --pub "$tmp/p2.jwk" || fail keygen
cat >"$tmp/nodes.json" <<JSON
{"nodes":[{"id":1,"address":"unix:$tmp/n1.sock","public_key":$(cat "$tmp/p1.jwk"),"groups":["ping"]},
          {"id":2,"address":"unix:$tmp/n2.sock","public_key":$(cat "$tmp/p2.jwk"),"groups":["ping"]}],
 "groups":{"ping":{"params":"wots4-haraka-b128"}}}
JSON
"$tool" ping --config "$tmp/nodes.json" --id 1 --key "$tmp/k1.jwk" -q >"$tmp/r.out" 2>"$tmp/r.err" &
pids+=($!)
"$tool" ping --config "$tmp/nodes.json" --id 2 --key "$tmp/k2.jwk" --count 100 --size 8 --runs 1 --json -q \
    >"$tmp/c.json" 2>"$tmp/c.err" || { cat "$tmp/c.err" "$tmp/r.err"; fail "config run"; }
wait "${pids[0]}" || { cat "$tmp/r.err"; fail "responder exit"; }
pids=()
[ "$(wc -l <"$tmp/c.json")" -eq 3 ] || fail "config rows: $(cat "$tmp/c.json")"
# The wrong key for the id is refused.
"$tool" ping --config "$tmp/nodes.json" --id 2 --key "$tmp/k1.jwk" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'is not the key of node 2' "$tmp/err" || fail "wrong key: $rc $(cat "$tmp/err")"
echo "ok"

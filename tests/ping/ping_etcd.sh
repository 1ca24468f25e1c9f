#!/usr/bin/env bash
# `dsig ping --etcd` (run inside tests/coord/etcd_cluster.sh: DSIG_ETCD_ENDPOINTS): nodes join and
# leave during a ping session, and the fast path resumes. Every node's file holds only itself (and
# the group "ping"): the others come from etcd.
#   1. nodes 1 (answers) and 2 (measures, a long session) ping each other;
#   2. node 3 joins, and node 4 joins and pings it: on the fast path;
#   3. nodes 4 and 3 leave cleanly (their leases revoked), node 5 joins and is killed (its lease
#      expires): 1 and 2 see each leave;
#   4. the session of 1 and 2 — whose every block waits until all members acknowledged its batches —
#      goes on and ends with every verification on the fast path.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
eps=${DSIG_ETCD_ENDPOINTS:?run inside tests/coord/etcd_cluster.sh}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.err; do echo "== $f"; tail -20 "$f"; done; exit 1; }
prefix="dsig-ping-etcd-test/$$/"
# Round trips per block of the 1-2 session, long enough for the changes below: ASan builds run a few
# times slower, TSan builds 10-20 times.
count=5000
[ "${DSIG_SANITIZE:-}" = ON ] && count=1500
[ "${DSIG_TSAN:-}" = ON ] && count=300

for i in 1 2 3 4 5; do
  "$tool" keygen -q -a DSig -o "$tmp/k$i.jwk" --pub "$tmp/p$i.jwk" || fail keygen
  cat >"$tmp/c$i.json" <<JSON
{"nodes":[{"id":$i,"address":"unix:$tmp/n$i.sock","public_key":$(cat "$tmp/p$i.jwk"),"groups":["ping"]}],
 "groups":{"ping":{"params":"wots4-haraka-b128"}}}
JSON
done
# ping ID PEER [ping options]: one end, stderr to $tmp/ID.err. It becomes the tool (exec): run it with
# & (its pid is then the tool's, for kill -9) or in ( ).
ping() {
  local id=$1 peer=$2
  shift 2
  exec "$tool" ping --config "$tmp/c$id.json" --id "$id" --key "$tmp/k$id.jwk" --peer "$peer" \
    --etcd "$eps" --etcd-prefix "$prefix" "$@" 2>"$tmp/$id.err"
}
# wait_log FILE TEXT: until FILE has a line with TEXT (20 s at most)
wait_log() {
  for _ in $(seq 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no \"$2\" in $1"
}
fast_fraction() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["fast_path_fraction"])' "$1"; }

start=$(date +%s)
ping 1 2 -q >/dev/null &
pids+=($!)
ping 2 1 --schemes dsig --size 8 --count "$count" --runs 40 --json >"$tmp/2.json" &
p2=$!
pids+=($p2)
wait_log "$tmp/1.err" "member 2 joined"
wait_log "$tmp/2.err" "run 1/40"

# a third node joins; a fourth joins and pings it
ping 3 4 -q >/dev/null &
p3=$!
pids+=($p3)
wait_log "$tmp/1.err" "member 3 joined"
wait_log "$tmp/2.err" "member 3 joined"
(ping 4 3 --schemes dsig --size 8 --count 500 --runs 1 --json >"$tmp/4.json") || fail "node 4 pinging node 3"
wait "$p3" || fail "node 3 exit"
f=$(fast_fraction "$tmp/4.json")
python3 -c "import sys; sys.exit(0 if float('$f') >= 0.99 else 1)" || fail "node 4 -> 3: fast path fraction $f"
echo "node 4 -> node 3 (joined during the 1-2 session): fast_path_fraction $f"
wait_log "$tmp/1.err" "member 4 left"
wait_log "$tmp/1.err" "member 3 left"

# a fifth joins and is killed: its lease expires and every other node drops it
ping 5 6 -q >/dev/null &
p5=$!
pids+=($p5)
wait_log "$tmp/1.err" "member 5 joined"
wait_log "$tmp/2.err" "member 5 joined"
kill -9 "$p5"
killed=$(date +%s)
wait_log "$tmp/1.err" "member 5 left"
wait_log "$tmp/2.err" "member 5 left"
echo "node 5 killed: removed after $(( $(date +%s) - killed )) s (lease 5 s)"
kill -0 "$p2" 2>/dev/null || fail "the 1-2 session ended before the membership changes (make it longer)"
done_runs=$(grep -c '^# run ' "$tmp/2.err")

# the session of 1 and 2 goes on to its end, on the fast path
wait "$p2" || fail "node 2 session"
f=$(fast_fraction "$tmp/2.json")
python3 -c "import sys; sys.exit(0 if float('$f') >= 0.99 else 1)" || fail "node 2 -> 1: fast path fraction $f"
echo "node 2 -> node 1: 40 runs ($done_runs begun before node 5 was gone), fast_path_fraction $f"
grep -q "etcd membership: .* joined, .* left" "$tmp/2.err" || fail "membership counters"
grep "etcd membership" "$tmp/2.err"
wait "${pids[0]}" || fail "node 1 exit"
# a sanitizer report in any process (their exit codes are not all checked) fails the test
! grep -l "ThreadSanitizer\|AddressSanitizer\|LeakSanitizer\|runtime error" "$tmp"/*.err || fail "sanitizer report"
echo "ok ($(( $(date +%s) - start )) s)"

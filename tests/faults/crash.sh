#!/usr/bin/env bash
# Process-level crash test: real `dsig node` processes on Unix sockets — a signer (id 1,
# --sign-to 2,3) and two verifiers (ids 2 and 3, --verify, one line per received message). The signer
# is killed with SIGKILL in mid-stream and restarted; then verifier 3 is killed with SIGKILL and
# restarted. From the verifiers' lines:
#   (a) no one-time key is used twice across the crashes: every (batch seq, key index) seen by any
#       verifier belongs to exactly one message (messages name their process, so they never repeat);
#   (b) the restarted verifier is back on the fast path after the signer's re-sync: its last 100 messages
#       all take it (and the signer's restart does not leave verifier 2 on the slow path either);
#   (c) nothing forged verifies: every genuine message verifies, and every copy with a message bit
#       flipped is rejected.
# Bounded waits; about 5 s. DSIG_TOOL is the built tool.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set (run through ctest)}
tmp=$(mktemp -d)
declare -A pid=()
cleanup() {
  for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.log "$tmp"/*.err; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -n 5 "$f"; }; done; exit 1; }
say() { echo "crash: $*"; }

for i in 1 2 3; do
  "$tool" keygen -q -a DSig -o "$tmp/k$i.jwk" --pub "$tmp/p$i.jwk" || fail "keygen $i"
done
cat >"$tmp/cluster.json" <<JSON
{"nodes":[{"id":1,"address":"unix:$tmp/n1.sock","public_key":$(cat "$tmp/p1.jwk"),"groups":["g"]},
          {"id":2,"address":"unix:$tmp/n2.sock","public_key":$(cat "$tmp/p2.jwk"),"groups":["g"]},
          {"id":3,"address":"unix:$tmp/n3.sock","public_key":$(cat "$tmp/p3.jwk"),"groups":["g"]}],
 "groups":{"g":{"params":"wots4-haraka-b128"}}}
JSON

# start NAME ID ARGS...: a node in the background, stdout to NAME.log, stderr to NAME.err
start() {
  local name=$1 id=$2; shift 2
  "$tool" node --config "$tmp/cluster.json" --id "$id" --key "$tmp/k$id.jwk" --interval 1 "$@" \
    >"$tmp/$name.log" 2>"$tmp/$name.err" &
  pid[$name]=$!
}
lines() { [ -f "$tmp/$1.log" ] && wc -l <"$tmp/$1.log" || echo 0; }
# wait_lines NAME N SECONDS
wait_lines() {
  local t=0
  while [ "$(lines "$1")" -lt "$2" ]; do
    [ $t -ge $(($3 * 20)) ] && fail "$1: only $(lines "$1") of $2 messages after $3 s"
    sleep 0.05; t=$((t + 1))
  done
}
crash() { kill -9 "${pid[$1]}" 2>/dev/null; wait "${pid[$1]}" 2>/dev/null; unset "pid[$1]"; }

start v2 2 --verify
start v3 3 --verify
start s1 1 --sign-to 2,3 --rate 400
wait_lines v2 300 10
wait_lines v3 300 10

# 1. The signer dies mid-stream (SIGKILL: its pools are lost, nothing is flushed) and comes back.
n=$(lines v2)
crash s1
say "signer killed after $n messages at verifier 2"
start s1b 1 --sign-to 2,3 --rate 400
wait_lines v2 $((n + 400)) 10

# 2. Verifier 3 dies (SIGKILL: its cache is lost) and comes back with an empty cache.
crash v3
say "verifier 3 killed after $(lines v3) messages"
start v3b 3 --verify
wait_lines v3b 400 10
n=$(lines v2)
wait_lines v2 $((n + 100)) 10

for k in "${!pid[@]}"; do kill -TERM "${pid[$k]}" 2>/dev/null; done
wait 2>/dev/null
pid=()

python3 - "$tmp" <<'PY' || fail "checks"
import re, sys
d = sys.argv[1]
pat = re.compile(r"^verified signer=(\d+) seq=(\d+) index=(\d+) path=(\w+) result=(\S+) forgery=(\w+) msg=(.*)$")
logs = {}
for name in ("v2", "v3", "v3b"):
    rows = []
    for line in open(f"{d}/{name}.log"):
        m = pat.match(line.rstrip("\n"))
        assert m, (name, line)
        rows.append(m.groups())
    logs[name] = rows
owner = {}
for name, rows in logs.items():
    for signer, seq, idx, path, result, forgery, msg in rows:
        assert signer == "1", (name, signer)
        assert result == "ok", ("a genuine message did not verify", name, seq, idx, result)       # (c)
        assert forgery == "rejected", ("a corrupted copy verified", name, seq, idx)              # (c)
        assert int(seq) != 0, ("signature not located", name, msg)
        key = (int(seq), int(idx))
        if owner.setdefault(key, msg) != msg:                                                     # (a)
            raise AssertionError(f"one-time key {key} signed two messages: {owner[key]!r} and {msg!r}")
tags = {re.sub(r" message \d+$", "", r[6]) for rows in logs.values() for r in rows}
assert len(tags) == 2, ("expected messages of two signer processes", tags)
seqs = {}
for rows in logs.values():
    for r in rows:
        seqs.setdefault(re.sub(r" message \d+$", "", r[6]), set()).add(int(r[1]))
a, b = sorted(seqs.values(), key=min)
assert max(a) < min(b), "the restarted signer reused or went below an earlier batch seq"
v3b = logs["v3b"]
tail = v3b[-100:]
assert all(r[3] == "fast" for r in tail), ("restarted verifier not back on the fast path",
                                           [r[3] for r in tail].count("slow"))
slow_v3b = sum(r[3] == "slow" for r in v3b)
v2_tail = logs["v2"][-100:]
assert all(r[3] == "fast" for r in v2_tail), "verifier 2 not on the fast path after the signer restart"
total = sum(len(r) for r in logs.values())
print(f"crash: {total} verified messages from 2 signer processes, {len(owner)} distinct one-time keys; "
      f"restarted verifier: {slow_v3b} slow then fast; no corrupted copy accepted")
PY
# The re-sync really happened: the restarted verifier verified batches it was sent after it came back,
# and the signer re-sent batches to it on reconnection.
v3line=$(grep -h "^dsig node 3:" "$tmp/v3b.err" | tail -n 1)
s1line=$(grep -h "^dsig node 1:" "$tmp/s1b.err" | tail -n 1)
v3verified=$(sed -n 's/.* verified \([0-9]*\) |.*/\1/p' <<<"$v3line")
s1resent=$(sed -n 's/.* resent \([0-9]*\) .*/\1/p' <<<"$s1line")
[ -n "$v3verified" ] && [ "$v3verified" -gt 0 ] || fail "restarted verifier verified no batch: $v3line"
[ -n "$s1resent" ] && [ "$s1resent" -gt 0 ] || fail "the signer re-sent nothing after the verifier restart: $s1line"
say "restarted verifier: $v3line"
say "restarted signer:   $s1line"
echo ok

#!/usr/bin/env bash
# tests/bft/multihost_bft.sh — BFT replication across three "hosts" (the network namespaces of
# tests/faults/netns_lib.sh): replicas 1 and 2 on hosts 1 and 2, replicas 3 and 4 on host 3, the client
# on host 1, every process a `dsig bft` over TCP on the bridge. Pass: the client gets every result
# right, and the four replicas executed the same history. Then replica 2's host drops off the bridge
# (its link down): the other three go on, and a second client run completes. Skips with exit 77 when
# not root or without namespace support.
set -u
SKIP=77
say() { echo "multihost-bft: $*"; }
skip() { say "SKIP: $*"; exit $SKIP; }
fail() { say "FAIL: $*"; for f in "$work"/*.out; do say "$(basename "$f"): $(grep -v '^decide' "$f" | tail -n 3)"; done; exit 1; }

: "${DSIG_TOOL:?DSIG_TOOL not set (run through ctest)}"
. "$(dirname "$0")/../faults/netns_lib.sh"
netns_up

host_of() { case $1 in 1) echo 1;; 2) echo 2;; 5) echo 1;; *) echo 3;; esac; }
for i in 1 2 3 4 5; do
  "$DSIG_TOOL" keygen -a DSig -o "$work/k$i.jwk" --pub "$work/p$i.jwk" -q || fail "keygen $i"
done
{
  echo '{"nodes":['
  for i in 1 2 3 4 5; do
    [ $i -gt 1 ] && echo ','
    printf '{"id":%d,"address":"tcp:10.250.0.%d:%d","public_key":%s,"groups":["g"]}' \
      "$i" "$(host_of $i)" $((7200 + i)) "$(tr -d '\n' < "$work/p$i.jwk")"
  done
  echo '],"groups":{"g":{"params":"wots4-haraka-b128"}}}'
} > "$work/cluster.json"

COUNT=${DSIG_MULTIHOST_COUNT:-40}
for i in 1 2 3 4; do
  ip netns exec "${NS[$(host_of $i)]}" "$DSIG_TOOL" bft replica --config "$work/cluster.json" --id $i \
    --key "$work/k$i.jwk" --replicas 1,2,3,4 --clients 5 --pool 256 --view-timeout 1000 -q \
    >"$work/r$i.out" 2>&1 & pids+=($!)
done
for i in 1 2 3 4; do
  for _ in $(seq 1 300); do grep -q '^ready' "$work/r$i.out" 2>/dev/null && break; sleep 0.1; done
  grep -q '^ready' "$work/r$i.out" || fail "replica $i not ready"
done
client() {
  ip netns exec "${NS[1]}" "$DSIG_TOOL" bft client --config "$work/cluster.json" --id 5 --key "$work/k5.jwk" \
    --replicas 1,2,3,4 --requests "$1" --pool 256 --deadline 120 -q >>"$work/c.out" 2>&1
}
client "$COUNT"; rc=$?
[ $rc -eq 0 ] || fail "client exited $rc"
[ "$(grep -c '^reply .* ok=1' "$work/c.out")" -eq "$COUNT" ] || fail "not every reply right"
sleep 0.5
# the same history everywhere: every replica's decide lines (seq, view, client, request, history)
for i in 2 3 4; do
  cmp -s <(grep '^decide' "$work/r1.out" | head -n "$COUNT") <(grep '^decide' "$work/r$i.out" | head -n "$COUNT") ||
    fail "replicas 1 and $i executed different histories"
done
say "$COUNT requests over three hosts: every result right, the four replicas agree"

# host 2 leaves the bridge: replica 2 is cut off; the other three (2f+1) go on
ip netns exec "${NS[2]}" ip link set "${NETNS_TAG}h2" down || fail "link down"
client "$COUNT"; rc=$?
[ $rc -eq 0 ] || fail "client exited $rc with host 2 cut off"
sleep 0.5
for i in 3 4; do
  cmp -s <(grep '^decide' "$work/r1.out") <(grep '^decide' "$work/r$i.out") || fail "replicas 1 and $i differ after the cut"
done
say "PASS: with host 2 cut off, replicas 1, 3, 4 executed $(grep -c '^decide' "$work/r1.out") sequence numbers alike"
exit 0

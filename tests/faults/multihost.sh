#!/usr/bin/env bash
# tests/faults/multihost.sh — the multi-host test: three "hosts" (network namespaces) joined by veth
# pairs to a bridge in a fourth namespace, addresses 10.250.0.1-3/24 that exist only inside these
# namespaces (nothing is routed out of them). Host 1 runs the signer, hosts 2 and 3 a verifier each
# (fault_mh_node: a DSig node client that signs / verifies over the node's APP frames); host 3 also runs
# `dsig node` as a fourth member that only receives and verifies batches. The verifiers must verify
# every message, take the fast path once warmed up (all of the second half), and reject a corrupted
# copy of each signature; `dsig node` must have verified batches from the other hosts.
# Skips (exit 77) when not root or when namespaces / veth / bridges are unavailable. Namespaces are
# always removed (trap), also on failure or interrupt.
set -u
SKIP=77
say() { echo "multihost: $*"; }
skip() { say "SKIP: $*"; exit $SKIP; }
fail() { say "FAIL: $*"; exit 1; }

: "${DSIG_TOOL:?DSIG_TOOL not set (run through ctest)}"
: "${DSIG_MH_NODE:?DSIG_MH_NODE not set (run through ctest)}"
. "$(dirname "$0")/netns_lib.sh"

# ---- the network -----------------------------------------------------------------------------------
netns_up

# ---- keys and membership ---------------------------------------------------------------------------
for i in 1 2 3 4; do
  "$DSIG_TOOL" keygen -a DSig -o "$work/k$i.jwk" --pub "$work/p$i.jwk" -q || fail "keygen $i"
done
host_of() { case $1 in 4) echo 3;; *) echo "$1";; esac; }
port_of() { case $1 in 4) echo 7104;; *) echo 7101;; esac; }
{
  echo '{"nodes":['
  for i in 1 2 3 4; do
    [ $i -gt 1 ] && echo ','
    printf '{"id":%d,"address":"tcp:10.250.0.%d:%d","public_key":%s,"groups":["g"]}' \
      "$i" "$(host_of $i)" "$(port_of $i)" "$(tr -d '\n' < "$work/p$i.jwk")"
  done
  echo '],"groups":{"g":{"params":"wots4-haraka-b128"}}}'
} > "$work/cluster.json"

# ---- the nodes -------------------------------------------------------------------------------------
COUNT=${DSIG_MULTIHOST_COUNT:-300}
# Started with `ip netns exec` directly (not through a shell function), so that $! is the program itself
# (ip execs it) and the trap's kill reaches it.
ip netns exec "${NS[3]}" "$DSIG_TOOL" node --config "$work/cluster.json" --id 4 --key "$work/k4.jwk" --interval 1 \
  >"$work/node4.out" 2>"$work/node4.log" & pids+=($!)
ip netns exec "${NS[2]}" "$DSIG_MH_NODE" --config "$work/cluster.json" --id 2 --key "$work/k2.jwk" --role verifier \
  --from 1 --count "$COUNT" >"$work/v2.json" 2>"$work/v2.log" & v2=$!; pids+=($v2)
ip netns exec "${NS[3]}" "$DSIG_MH_NODE" --config "$work/cluster.json" --id 3 --key "$work/k3.jwk" --role verifier \
  --from 1 --count "$COUNT" >"$work/v3.json" 2>"$work/v3.log" & v3=$!; pids+=($v3)
ip netns exec "${NS[1]}" "$DSIG_MH_NODE" --config "$work/cluster.json" --id 1 --key "$work/k1.jwk" --role signer \
  --to 2,3 --count "$COUNT" >"$work/s1.json" 2>"$work/s1.log" & s1=$!; pids+=($s1)

wait $s1; rs=$?
wait $v2; r2=$?
wait $v3; r3=$?
sleep 1.2  # one more statistics line from dsig node
for f in s1 v2 v3; do say "$f: $(cat "$work/$f.json" 2>/dev/null) $(tail -n 3 "$work/$f.log" 2>/dev/null)"; done
say "dsig node (id 4): $(tail -n 1 "$work/node4.log")"
[ $rs -eq 0 ] || fail "signer exited $rs"
[ $r2 -eq 0 ] || fail "verifier 2 exited $r2 (1: a check failed, 3: timeout)"
[ $r3 -eq 0 ] || fail "verifier 3 exited $r3 (1: a check failed, 3: timeout)"
grep -q "\"fast_second_half\":$(( COUNT - COUNT / 2 ))" "$work/v2.json" || fail "verifier 2 not on the fast path"
grep -q "\"fast_second_half\":$(( COUNT - COUNT / 2 ))" "$work/v3.json" || fail "verifier 3 not on the fast path"
grep -q '"forgeries_accepted":0' "$work/v2.json" || fail "verifier 2 accepted a corrupted signature"
grep -q '"forgeries_accepted":0' "$work/v3.json" || fail "verifier 3 accepted a corrupted signature"
# dsig node (id 4) received and verified batches of the other hosts across the bridge.
verified=$(tail -n 1 "$work/node4.log" | sed -n 's/.*verified \([0-9]*\).*/\1/p')
[ -n "$verified" ] && [ "$verified" -gt 0 ] || fail "dsig node (id 4) verified no batch: $(tail -n 1 "$work/node4.log")"
say "PASS: signer on 10.250.0.1, verifiers on .2 and .3 took the fast path once warm; dsig node verified $verified batches"
exit 0

# tests/faults/netns_lib.sh — sourced by the multi-host tests (tests/faults/multihost.sh,
# tests/bft/multihost_bft.sh): three "hosts" (network namespaces) joined by veth pairs to a bridge in a
# fourth namespace, addresses 10.250.0.1-3/24 that exist only inside them (nothing is routed out).
# netns_up creates them (skipping with exit 77 when not root or without namespace / veth / bridge
# support), netns_cleanup (installed as the EXIT trap) kills the processes in `pids`, deletes the
# namespaces and the work directory. Callers define say(), skip() and fail() and set SKIP.
NETNS_TAG="dm$(( $$ % 100000 ))"    # unique per run: parallel runs never share a namespace or a link
NS_SW="${NETNS_TAG}-sw"; NS=("" "${NETNS_TAG}-h1" "${NETNS_TAG}-h2" "${NETNS_TAG}-h3")
work=$(mktemp -d "${TMPDIR:-/tmp}/dsig-multihost-XXXXXX")
pids=()

netns_cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
  for n in "${NS[1]}" "${NS[2]}" "${NS[3]}" "$NS_SW"; do ip netns del "$n" 2>/dev/null; done
  rm -rf "$work"
}
trap netns_cleanup EXIT
trap 'exit 130' INT TERM

netns_up() {
  [ "$(id -u)" -eq 0 ] || skip "needs root for ip netns (running as uid $(id -u))"
  command -v ip >/dev/null 2>&1 || skip "ip (iproute2) not installed: add it with scripts/install-deps.sh"
  local tag=$NETNS_TAG i
  ip netns add "$NS_SW" 2>"$work/err" || skip "cannot create network namespaces: $(cat "$work/err")"
  ip netns exec "$NS_SW" ip link add br0 type bridge 2>"$work/err" || skip "no bridge support: $(cat "$work/err")"
  ip netns exec "$NS_SW" ip link set br0 up
  for i in 1 2 3; do
    ip netns add "${NS[$i]}" || fail "ip netns add ${NS[$i]}"
    # veth pair: ${tag}h$i inside host i, ${tag}s$i on the bridge.
    ip link add "${tag}h$i" type veth peer name "${tag}s$i" 2>"$work/err" || skip "no veth support: $(cat "$work/err")"
    ip link set "${tag}h$i" netns "${NS[$i]}" || fail "move ${tag}h$i"
    ip link set "${tag}s$i" netns "$NS_SW" || fail "move ${tag}s$i"
    ip netns exec "$NS_SW" ip link set "${tag}s$i" master br0 up || fail "attach ${tag}s$i"
    ip netns exec "${NS[$i]}" ip link set lo up
    ip netns exec "${NS[$i]}" ip addr add "10.250.0.$i/24" dev "${tag}h$i" || fail "address on host $i"
    ip netns exec "${NS[$i]}" ip link set "${tag}h$i" up || fail "link up on host $i"
  done
  # Reachability (the bridge may need a moment to forward); a refused connection also proves it.
  for i in 2 3; do
    local ok=0
    for _ in $(seq 1 50); do
      if ip netns exec "${NS[1]}" bash -c "exec 3<>/dev/tcp/10.250.0.$i/9" 2>/dev/null; then ok=1; break; fi
      if ip netns exec "${NS[1]}" bash -c "exec 3<>/dev/tcp/10.250.0.$i/9" 2>&1 | grep -q refused; then ok=1; break; fi
      sleep 0.1
    done
    [ $ok -eq 1 ] || fail "host 1 cannot reach 10.250.0.$i"
  done
  say "namespaces ${NS[*]:1} + $NS_SW up (10.250.0.0/24)"
}

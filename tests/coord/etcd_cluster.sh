#!/usr/bin/env bash
# tests/coord/etcd_cluster.sh — a throw-away 3-member etcd cluster on loopback for the coordinator
# tests. Two uses:
#   etcd_cluster.sh run CMD [ARGS...]   start the cluster (random free ports, data in a temporary
#       directory), run CMD with DSIG_ETCD_ENDPOINTS=http://127.0.0.1:P0,... and
#       DSIG_ETCD_CTL="bash etcd_cluster.sh ctl DIR" in its environment, then kill every member and
#       remove the directory (trap: also when CMD fails or the script is interrupted). Exit: CMD's.
#   etcd_cluster.sh ctl DIR stop|start|wait I   kill -9 member I (0..2) / start it again on its data
#       directory / wait until the cluster answers a linearizable read through member I.
# With DSIG_ETCD_EXTRA_HOST=ADDR (a local address, e.g. a veth's) the members also listen for clients
# on ADDR (same ports), and CMD gets those endpoints in DSIG_ETCD_EXTRA_ENDPOINTS: for a client in
# another network namespace (serve_etcd_partition.sh).
# Without /usr/bin/etcd (scripts/install-deps.sh: etcd-server) it prints SKIP and exits 77.
set -euo pipefail
ETCD=${DSIG_ETCD_BIN:-/usr/bin/etcd}
N=3
here=$(cd "$(dirname "$0")" && pwd)

member_start() { # DIR I
  local d=$1 i=$2
  # shellcheck disable=SC2046
  "$ETCD" $(cat "$d/m$i.args") >"$d/m$i.log" 2>&1 &
  echo $! >"$d/m$i.pid"
  disown $! 2>/dev/null || true # no "Killed" line when it is stopped
}

member_stop() { # DIR I
  local d=$1 i=$2 pid
  pid=$(cat "$d/m$i.pid" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill -9 "$pid" 2>/dev/null || true
  # Wait for it to be gone, so that its port is closed when this returns.
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  rm -f "$d/m$i.pid"
}

member_wait() { # DIR I: a linearizable read through member I answers (the cluster has a leader)
  local d=$1 i=$2 port
  port=$(cut -d' ' -f"$((i + 1))" "$d/client-ports")
  for _ in $(seq 300); do
    if curl -sf -m 2 -X POST -d '{"key":"AA=="}' "http://127.0.0.1:$port/v3/kv/range" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  echo "etcd_cluster: member $i does not answer (log: $d/m$i.log)" >&2
  tail -5 "$d/m$i.log" >&2 || true
  return 1
}

if [ "${1:-}" = ctl ]; then
  d=$2 op=$3 i=$4
  case $op in
    stop) member_stop "$d" "$i" ;;
    start) member_start "$d" "$i" ;;
    wait) member_wait "$d" "$i" ;;
    *) echo "etcd_cluster: unknown ctl operation '$op'" >&2; exit 2 ;;
  esac
  exit 0
fi

[ "${1:-}" = run ] && [ $# -ge 2 ] || { echo "usage: $0 run CMD [ARGS...] | $0 ctl DIR stop|start|wait I" >&2; exit 2; }
shift
if [ ! -x "$ETCD" ]; then
  echo "SKIP: $ETCD is missing (scripts/install-deps.sh installs etcd-server)"
  exit 77
fi

d=$(mktemp -d "${TMPDIR:-/tmp}/dsig-etcd-XXXXXX")
cleanup() {
  for i in $(seq 0 $((N - 1))); do member_stop "$d" "$i"; done
  rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 2N free loopback ports, asked of the kernel (bound to port 0, then released: a small race with other
# programs, no guessing).
read -r -a ports <<<"$(python3 -c '
import socket
ss = [socket.socket() for _ in range('"$((2 * N))"')]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')"
cluster=""
for i in $(seq 0 $((N - 1))); do
  cluster+="${cluster:+,}m$i=http://127.0.0.1:${ports[$((N + i))]}"
done
endpoints="" extra="" xhost=${DSIG_ETCD_EXTRA_HOST:-}
for i in $(seq 0 $((N - 1))); do
  c=${ports[$i]} p=${ports[$((N + i))]}
  endpoints+="${endpoints:+,}http://127.0.0.1:$c"
  [ -z "$xhost" ] || extra+="${extra:+,}http://$xhost:$c"
  # Short heartbeat and election timeouts: a new leader within about a second after one is killed.
  echo "--name m$i --data-dir $d/m$i.data --listen-client-urls http://127.0.0.1:$c${xhost:+,http://$xhost:$c}" \
       "--advertise-client-urls http://127.0.0.1:$c --listen-peer-urls http://127.0.0.1:$p" \
       "--initial-advertise-peer-urls http://127.0.0.1:$p --initial-cluster $cluster" \
       "--initial-cluster-state new --initial-cluster-token dsig-test-$$" \
       "--heartbeat-interval 50 --election-timeout 500 --logger zap --log-level warn" >"$d/m$i.args"
done
echo "${ports[@]:0:$N}" >"$d/client-ports"
for i in $(seq 0 $((N - 1))); do member_start "$d" "$i"; done
for i in $(seq 0 $((N - 1))); do member_wait "$d" "$i"; done

export DSIG_ETCD_ENDPOINTS=$endpoints
[ -z "$extra" ] || export DSIG_ETCD_EXTRA_ENDPOINTS=$extra
export DSIG_ETCD_CTL="bash $here/etcd_cluster.sh ctl $d"
set +e
"$@"
rc=$?
set -e
exit $rc

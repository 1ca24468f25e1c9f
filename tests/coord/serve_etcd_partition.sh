#!/usr/bin/env bash
# tests/coord/serve_etcd_partition.sh — one of three `dsig serve` instances cut off from the etcd
# cluster by a network partition, while the other two sign on.
#
#   serve_etcd_partition.sh        (as root) make a network namespace NS and a veth pair (host side
#                                  H = 10.213.X.1/30, NS side 10.213.X.2/30), run the cluster with its
#                                  members also listening on H (etcd_cluster.sh, DSIG_ETCD_EXTRA_HOST)
#                                  and this script's "inner" part inside it; the namespace and the
#                                  link are removed at exit, whatever happens (trap)
#   serve_etcd_partition.sh inner  the test (environment from the outer part)
#
# Instances 0 and 1 run on the host (etcd on 127.0.0.1) under a client loop each; instance 2 runs in
# NS (etcd through the veth; its clients too, on NS's loopback). With an HSS-LMS and an XMSS key:
#   1. instance 2 signs a few with each key (it holds a range, partly used);
#   2. NS's end of the link goes down: instance 2 signs on to the end of the range it holds — the
#      indices right after its last ones before the cut, consecutive, at most 64 (these keys' largest
#      range) — then answers 503 coordinator_unavailable with Retry-After, and again 503 next time; its
#      stateless key signs; instances 0 and 1 sign both keys during the cut;
#   3. the link comes back: instance 2 signs both keys again;
# and every released signature verifies, no index twice per key. Without the permission to make a
# network namespace (not root, no CAP_SYS_ADMIN, a container without it) it prints SKIP and exits 77.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" != inner ]; then
    command -v ip >/dev/null || { echo "SKIP: ip (iproute2) is not installed (scripts/install-deps.sh)"; exit 77; }
    [ -x "${DSIG_ETCD_BIN:-/usr/bin/etcd}" ] || { echo "SKIP: etcd is missing (scripts/install-deps.sh installs etcd-server)"; exit 77; }
    ns=dsig-part-$$ vh=dsigh$$ vn=dsign$$ net=10.213.$(($$ % 250))
    cleanup() {
        ip netns del "$ns" 2>/dev/null || true # removes NS's end of the pair, and with it the host's
        ip link del "$vh" 2>/dev/null || true
    }
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    if ! err=$(ip netns add "$ns" 2>&1); then
        echo "SKIP: cannot create a network namespace ($err): needs root or CAP_SYS_ADMIN"
        exit 77
    fi
    ip link add "$vh" type veth peer name "$vn"
    ip link set "$vn" netns "$ns"
    ip addr add "$net.1/30" dev "$vh"
    ip link set "$vh" up
    ip -n "$ns" addr add "$net.2/30" dev "$vn"
    ip -n "$ns" link set "$vn" up
    ip -n "$ns" link set lo up
    export DSIG_ETCD_EXTRA_HOST=$net.1 PART_NS=$ns PART_IF=$vn
    set +e
    bash "$here/etcd_cluster.sh" run bash "$here/serve_etcd_partition.sh" inner
    rc=$?
    set -e
    exit $rc
fi

. "$here/../serve/serve_lib.sh"
serve_lib_init dsig-serve-etcd-partition curl jq python3
. "$here/coord_lib.sh"
: "${DSIG_ETCD_EXTRA_ENDPOINTS:?run through the outer part}" "${PART_NS:?}" "${PART_IF:?}"
trap coord_cleanup EXIT
N=3
RANGE_MAX=64 # the largest range of a 1024-index key: ceil(remaining / 16) (docs/scale.md)
IFS=, read -r -a EPS <<<"$DSIG_ETCD_ENDPOINTS"
IFS=, read -r -a XEPS <<<"$DSIG_ETCD_EXTRA_ENDPOINTS"
coord_setup $N "${EPS[@]}"
CLIENT[2]="ip netns exec $PART_NS"
coord_endpoints 2 "${XEPS[@]}"
for i in $(seq 0 $((N - 1))); do coord_start "$i"; done
wait_signs() { # I: instance I releases one more signature with each stateful key within 20 s
    local i=$1 a b
    a=$(grep -c " $i lms 200 " "$T/load.log" || true) b=$(grep -c " $i xmss 200 " "$T/load.log" || true)
    wait_until 20 bash -c "[ \$(grep -c ' $i lms 200 ' '$T/load.log') -gt $a ] &&
                           [ \$(grep -c ' $i xmss 200 ' '$T/load.log') -gt $b ]" ||
        die "instance $i does not sign with both stateful keys"
}
sign2() { # KID TAG: sign on instance 2; "CODE ERROR"
    coord_sign 2 "$1" "$2"
}

WP=()
for i in 0 1; do coord_worker "$i" 0.15 & WP+=($!); done
# --- 1. instance 2 holds a partly used range of each key ---------------------------------------
for kid in lms xmss; do
    for n in 1 2 3 4 5; do
        read -r code err < <(sign2 $kid "before-$kid-$n")
        [ "$code" = 200 ] || die "instance 2 (in the namespace) does not sign: $code $err"
    done
done
ok

# --- 2. the partition --------------------------------------------------------------------------
ip -n "$PART_NS" link set "$PART_IF" down
for kid in lms xmss; do
    n=0
    while :; do
        read -r code err < <(sign2 $kid "cut-$kid-$((n + 1))")
        [ "$code" = 200 ] || break
        n=$((n + 1))
        [ $n -le $RANGE_MAX ] || die "partitioned: instance 2 signed $n with $kid, more than a range"
    done
    [ "$code $err" = "503 coordinator_unavailable" ] || die "partitioned: instance 2 $kid answered $code $err"
    grep -qi '^Retry-After: 1' "$T/i2/last503.$kid.hdr" || die "partitioned: 503 without Retry-After"
    read -r code err < <(sign2 $kid "cut-$kid-again")
    [ "$code" = 503 ] || die "partitioned: instance 2 $kid signed again ($code) without a new range"
    echo "partitioned: instance 2 released $n more $kid signatures, then 503 coordinator_unavailable"
    echo "$kid $n" >>"$T/after-cut"
done
read -r code err < <(sign2 ed "cut-ed")
[ "$code" = 200 ] || die "partitioned: instance 2's stateless key answered $code $err"
for i in 0 1; do wait_signs "$i"; done # the others sign on, during the cut
ok

# --- 3. the link back --------------------------------------------------------------------------
ip -n "$PART_NS" link set "$PART_IF" up
for kid in lms xmss; do
    back=0
    for n in $(seq 100); do
        read -r code err < <(sign2 $kid "back-$kid-$n")
        if [ "$code" = 200 ]; then back=1; break; fi
        [ "$code $err" = "503 coordinator_unavailable" ] || die "link back: instance 2 $kid answered $code $err"
        sleep 0.2
    done
    [ $back = 1 ] || die "link back: instance 2 $kid does not sign again"
done
for i in 0 1; do wait_signs "$i"; done
touch "$T/stop"
for p in "${WP[@]}"; do wait "$p" || true; done
grep -Ev ' 200 -$' "$T/load.log" | head -3 | grep . && die "instances 0 and 1 failed requests (above)"
ok

coord_check
# The signatures released during the cut continue instance 2's range: the indices right after its
# last one before the cut, consecutive (a single signer hands out its window in order).
python3 - "$T" <<'PY' || die "the signatures of the cut are not the rest of the range held (above)"
import base64, sys, glob, os
T = sys.argv[1]
def index(kid, path):
    s = open(path).read().split(".")[2]
    b = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    return int.from_bytes(b[4:8] if kid == "lms" else b[0:4], "big")
bad = 0
for line in open(os.path.join(T, "after-cut")):
    kid, n = line.split()
    before = [index(kid, f"{T}/sig/{kid}/before-{kid}-{k}.jws") for k in range(1, 6)]
    cut = [index(kid, f"{T}/sig/{kid}/cut-{kid}-{k}.jws") for k in range(1, int(n) + 1)]
    want = list(range(before[-1] + 1, before[-1] + 1 + len(cut)))
    if before != list(range(before[0], before[0] + 5)) or cut != want:
        print(f"{kid}: before the cut {before}, during it {cut}")
        bad = 1
sys.exit(bad)
PY
ok
coord_stop_all
echo "instance 2 partitioned from etcd and back, instances 0 and 1 signing throughout: $PASSED checks passed"

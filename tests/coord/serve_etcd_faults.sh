#!/usr/bin/env bash
# tests/coord/serve_etcd_faults.sh — three `dsig serve` instances sharing an HSS-LMS key and an XMSS key
# through the etcd coordinator (run inside etcd_cluster.sh), under concurrent load (one client loop
# per instance, each request alternating the two keys):
#   a. instances SIGKILLed under load and restarted on their state files, one after the other: only
#      the killed instance fails requests (no answer), while it is down;
#   b. each etcd member stopped for 3 s and started again, one at a time (the leader among them):
#      every answer is 200, or a 503 coordinator_unavailable that is over within WINDOW_S (4 s: from
#      the first 503 of an instance and key to its next 200; an election is about a second here, then
#      the reservation's 1 s cooldown), and each instance signs with both keys while each member is
#      down; the instances asked etcd in this phase (ranges were reserved with a member down);
#   c. a majority stopped: each instance signs on to the end of its ranges, then answers 503
#      coordinator_unavailable with Retry-After for both stateful keys, the stateless key signs on;
#      restarted: both stateful keys sign again on every instance;
# then every signature released (200) verifies with `dsig verify` and no index occurs twice, per key.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../serve/serve_lib.sh"
serve_lib_init dsig-serve-etcd-faults curl jq python3
. "$here/coord_lib.sh"
: "${DSIG_ETCD_ENDPOINTS:?run inside etcd_cluster.sh}" "${DSIG_ETCD_CTL:?run inside etcd_cluster.sh}"
trap coord_cleanup EXIT
N=3
WINDOW_S=4
PACE=0.15 # per worker and round (one lms, one xmss): about 3 x 4 signatures/s per key, well inside 1024
IFS=, read -r -a EPS <<<"$DSIG_ETCD_ENDPOINTS"
coord_setup $N "${EPS[@]}"
for i in $(seq 0 $((N - 1))); do coord_start "$i"; done
mark() { echo "$1 $EPOCHREALTIME" >>"$T/phases"; }
count200() { # I KID: the signatures instance I has released with KID so far
    grep -c " $1 $2 200 " "$T/load.log" || true
}
wait_signs() { # I: instance I releases one more signature with each stateful key within 20 s
    local i=$1 a b
    a=$(count200 "$i" lms) b=$(count200 "$i" xmss)
    wait_until 20 bash -c "[ \$(grep -c ' $i lms 200 ' '$T/load.log') -gt $a ] &&
                           [ \$(grep -c ' $i xmss 200 ' '$T/load.log') -gt $b ]" ||
        die "instance $i does not sign with both stateful keys"
}

WP=()
for i in $(seq 0 $((N - 1))); do coord_worker "$i" $PACE & WP+=($!); done
for i in $(seq 0 $((N - 1))); do wait_signs "$i"; done
ok

# --- a. SIGKILL and restart, one instance after the other -------------------------------------
mark a
for i in 1 2; do
    wait_signs "$i"
    coord_kill "$i"
    echo "kill $i $EPOCHREALTIME" >>"$T/phases"
    sleep 1
    coord_start "$i"
    echo "start $i $EPOCHREALTIME" >>"$T/phases"
    wait_signs "$i"
done
ok

# --- b. one etcd member down at a time --------------------------------------------------------
mark b
req_b=0
for i in $(seq 0 $((N - 1))); do req_b=$((req_b - $(coord_metric "$i" dsig_serve_coordinator_requests_total))); done
for m in 0 1 2; do
    $DSIG_ETCD_CTL stop $m
    for i in $(seq 0 $((N - 1))); do wait_signs "$i"; done
    sleep 3
    $DSIG_ETCD_CTL start $m
    $DSIG_ETCD_CTL wait $m
done
sleep 1
for i in $(seq 0 $((N - 1))); do req_b=$((req_b + $(coord_metric "$i" dsig_serve_coordinator_requests_total))); done
mark end
touch "$T/stop"
for p in "${WP[@]}"; do wait "$p" || true; done
[ "$req_b" -gt 0 ] || die "no instance asked etcd while members were down: nothing was tested"
echo "one member down at a time: $req_b etcd requests from the instances"
ok
# Every request's answer, by phase (python3: the windows are time arithmetic).
python3 - "$T/phases" "$T/load.log" $WINDOW_S <<'PY' || die "load answers (above)"
import sys
marks, kills = {}, []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] in ("kill", "start"):
        kills.append((f[0], f[1], float(f[2])))
    else:
        marks[f[0]] = float(f[1])
window = float(sys.argv[3])
down = {}  # instance -> [(from, to)] while it was killed (and just after: a request in flight)
for what, i, t in kills:
    if what == "kill":
        down.setdefault(i, []).append([t - 0.5, None])
    else:
        down[i][-1][1] = t + 0.5
bad, streak, longest, n503 = [], {}, 0.0, 0
for line in open(sys.argv[2]):
    t, i, kid, code, err = line.split()
    t = float(t)
    if t < marks["a"] or t > marks["end"]:
        continue
    if code == "200":
        if (i, kid) in streak:
            longest = max(longest, t - streak.pop((i, kid)))
        continue
    if t < marks["b"]:  # a: only a killed instance fails, with no answer
        if not (code == "000" and any(a <= t <= b for a, b in down.get(i, []))):
            bad.append(line.strip())
    else:  # b: a short coordinator_unavailable window at most
        if code == "503" and err == "coordinator_unavailable":
            n503 += 1
            streak.setdefault((i, kid), t)
        else:
            bad.append(line.strip())
for (i, kid), t0 in streak.items():
    longest = max(longest, marks["end"] - t0)
if bad:
    print("unexpected answers:", *bad[:10], sep="\n  ")
if longest > window:
    print(f"a stateful key answered 503 for {longest:.1f} s with one etcd member down (at most {window} s)")
print(f"one member down at a time: {n503} stateful 503 answers, longest window {longest:.2f} s")
sys.exit(1 if bad or longest > window else 0)
PY
ok

# --- c. a majority of etcd down, then back --------------------------------------------------------
$DSIG_ETCD_CTL stop 0
$DSIG_ETCD_CTL stop 1
# drain I KID: sign until the first 503; it must be coordinator_unavailable with Retry-After, and the
# next request a 503 too (no range without etcd). The six run in parallel: a request that meets the
# majority down waits for the reservation's deadline (5 s) before its 503. Result in $T/drain.I.KID.
drain() {
    local i=$1 kid=$2 n code err
    for n in $(seq 200); do # a range is at most 64 indices of these keys
        read -r code err < <(coord_sign "$i" "$kid" "down-$i-$kid-$n")
        [ "$code" = 200 ] || break
    done
    if [ "$code $err" != "503 coordinator_unavailable" ]; then
        echo "answered $code $err after $((n - 1)) signatures"
    elif ! grep -qi '^Retry-After: 1' "$T/i$i/last503.$kid.hdr"; then
        echo "503 without Retry-After"
    else
        read -r code err < <(coord_sign "$i" "$kid" "down-$i-$kid-again")
        [ "$code" = 503 ] && echo ok || echo "signed again ($code $err) without a new range"
    fi
}
DP=()
for i in $(seq 0 $((N - 1))); do
    for kid in lms xmss; do drain "$i" "$kid" >"$T/drain.$i.$kid" & DP+=($!); done
done
for p in "${DP[@]}"; do wait "$p" || true; done
for i in $(seq 0 $((N - 1))); do
    for kid in lms xmss; do
        r=$(cat "$T/drain.$i.$kid")
        [ "$r" = ok ] || die "majority down: instance $i $kid: $r"
    done
    read -r code err < <(coord_sign "$i" ed "down-$i-ed")
    [ "$code" = 200 ] || die "majority down: instance $i: the stateless key answered $code $err"
done
ok
$DSIG_ETCD_CTL start 0
$DSIG_ETCD_CTL start 1
$DSIG_ETCD_CTL wait 2
for i in $(seq 0 $((N - 1))); do
    for kid in lms xmss; do
        back=0
        for n in $(seq 100); do
            read -r code err < <(coord_sign "$i" "$kid" "up-$i-$kid-$n")
            if [ "$code" = 200 ]; then back=1; break; fi
            [ "$code $err" = "503 coordinator_unavailable" ] || die "etcd back: instance $i $kid answered $code $err"
            sleep 0.2
        done
        [ $back = 1 ] || die "etcd back: instance $i $kid does not sign again"
    done
done
ok

coord_check
coord_stop_all
echo "3 instances (two SIGKILLed and restarted under load; each etcd member stopped alone; a majority" \
     "stopped and restarted): $PASSED checks passed"

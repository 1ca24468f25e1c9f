#!/usr/bin/env bash
# tests/coord/serve_etcd.sh — three `dsig serve` instances sharing one HSS-LMS key through the etcd
# coordinator (run inside etcd_cluster.sh: DSIG_ETCD_ENDPOINTS, DSIG_ETCD_CTL). Each instance has its
# own copy of the state file and its own high-water registry, as on separate hosts.
#   1. the three sign under load; one is SIGKILLed mid-load;
#   2. a majority of etcd is stopped: the stateful key answers 503 coordinator_unavailable with
#      Retry-After once its range is used up, a stateless key on the same instance signs on;
#   3. etcd is restarted: the stateful key signs again;
# and every signature released (200) verifies with `dsig verify` and no index occurs twice.
set -euo pipefail
. "$(dirname "$0")/../serve/serve_lib.sh"
serve_lib_init dsig-serve-etcd curl jq python3
: "${DSIG_ETCD_ENDPOINTS:?run inside etcd_cluster.sh}" "${DSIG_ETCD_CTL:?run inside etcd_cluster.sh}"
N=3
PIDS=()
cleanup_all() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; serve_lib_cleanup; }
trap cleanup_all EXIT
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
eps=$(printf %s "$DSIG_ETCD_ENDPOINTS" | jq -R -c 'split(",")')

# One key of 1024 signatures (one LMS level: the index is the signature's q, bytes 4..8).
DSIG_STATE_REGISTRY=$T/master-hwm "$D" keygen -q -a HSS-LMS --param LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 \
    -o "$T/master.state" --pub "$T/lms.pub"
"$D" keygen -q -a Ed25519 -o "$T/ed.jwk"
"$D" pubkey -q -k "$T/ed.jwk" -o "$T/ed.pub"
for i in $(seq 0 $((N - 1))); do
    mkdir -p "$T/i$i/keys" "$T/out$i"
    cp "$T/master.state" "$T/i$i/keys/lms.state"
    cp "$T/ed.jwk" "$T/i$i/keys/ed.jwk"
    cat >"$T/i$i/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "state_registry_dir": "hwm",
  "tenants": [{"name": "s", "tokens": [{"sha256": "$(h tok)"}], "keys": ["*"], "operations": ["sign"]}],
  "coordinator": {"etcd": $eps, "prefix": "/dsig-serve-test/$$/", "connect_timeout_ms": 300, "timeout_ms": 800}
}
JSON
done

start() { # I: start instance I, set PORTS[I]
    local i=$1
    : >"$T/i$i/serve.log"
    (cd "$T/i$i" && exec "$D" serve --config "$T/i$i/serve.json" 2>>"$T/i$i/serve.log") &
    PIDS[$i]=$!
    for _ in $(seq 150); do
        PORTS[$i]=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/i$i/serve.log")
        [ -n "${PORTS[$i]}" ] && return 0
        kill -0 "${PIDS[$i]}" 2>/dev/null || { cat "$T/i$i/serve.log" >&2; die "instance $i did not start"; }
        sleep 0.1
    done
    die "instance $i did not start"
}
sign() { # I KID TAG: sign "TAG" on instance I; prints the HTTP code; a 200's JWS in out<I>/TAG.jws
    local i=$1 kid=$2 tag=$3 code
    code=$(curl -s -m 10 -o "$T/out$i/$tag.body" -D "$T/out$i/$tag.hdr" -w '%{http_code}' \
        -H "Authorization: Bearer tok" --data-binary "$tag" "http://127.0.0.1:${PORTS[$i]}/v1/keys/$kid/sign" || true)
    if [ "$code" = 200 ] && [ "$kid" = lms ]; then
        tr -d '\n' <"$T/out$i/$tag.body" >"$T/out$i/$tag.jws"
    fi
    rm -f "$T/out$i/$tag.body"
    echo "$code"
}
load() { # I COUNT: COUNT signatures on instance I
    local i=$1 n
    for n in $(seq "$2"); do sign "$i" lms "i$i-n$n" >/dev/null; done
}

PORTS=()
for i in $(seq 0 $((N - 1))); do start "$i"; done

# --- 1. load on all three, instance 1 SIGKILLed mid-load ---------------------------------------
LOAD=100
LP=()
for i in $(seq 0 $((N - 1))); do load "$i" $LOAD & LP[$i]=$!; done
# SIGKILL instance 1 once it has released a quarter of its load: mid-range, requests in flight.
wait_until 60 bash -c "[ \$(ls '$T/out1' | grep -c '\.jws\$') -ge $((LOAD / 4)) ]" || die "instance 1 does not sign"
kill -9 "${PIDS[1]}"
for p in "${LP[@]}"; do wait "$p" || true; done
n1=$(find "$T/out1" -name '*.jws' | wc -l)
[ "$n1" -lt $LOAD ] || die "instance 1 finished its load before it was killed"
n02=$(find "$T/out0" "$T/out2" -name '*.jws' | wc -l)
[ "$n02" = $((2 * LOAD)) ] || die "only $n02 signatures from the two live instances (want $((2 * LOAD)))"
ok

# --- 2. a majority of etcd down ---------------------------------------------------------------
$DSIG_ETCD_CTL stop 0
$DSIG_ETCD_CTL stop 1
got503=0
for n in $(seq 400); do
    c=$(sign 0 lms "down-$n")
    if [ "$c" = 503 ]; then got503=$n; break; fi
    [ "$c" = 200 ] || die "majority down: lms sign answered $c"
done
[ "$got503" -gt 0 ] || die "majority down: the stateful key never stopped signing"
grep -qi '^Retry-After: 1' "$T/out0/down-$got503.hdr" || die "503 without Retry-After"
ok
c=$(sign 0 lms "down-again")
[ "$c" = 503 ] || die "majority down: second stateful request answered $c"
c=$(sign 0 ed "stateless")
[ "$c" = 200 ] || die "majority down: the stateless key answered $c"
ok

# --- 3. etcd back ---------------------------------------------------------------------------------
$DSIG_ETCD_CTL start 0
$DSIG_ETCD_CTL start 1
$DSIG_ETCD_CTL wait 2
back=0
for n in $(seq 100); do
    c=$(sign 0 lms "up-$n")
    if [ "$c" = 200 ]; then back=1; break; fi
    [ "$c" = 503 ] || die "etcd back: lms sign answered $c"
    sleep 0.2
done
[ $back = 1 ] || die "etcd back: the stateful key does not sign again"
start 1 # the killed instance, restarted on its state file
c=$(sign 1 lms "restarted")
[ "$c" = 200 ] || die "restarted instance: lms sign answered $c"
ok

# --- every released signature verifies, no index twice ---------------------------------------------
total=0
for f in "$T"/out*/*.jws; do
    tag=$(basename "$f" .jws)
    printf %s "$tag" >"$T/payload"
    "$D" verify -q -k "$T/lms.pub" -s "$f" "$T/payload" || die "$f does not verify"
    total=$((total + 1))
done
# The index of each (one LMS level: the signature's q, bytes 4..8 after Nspk = 0); one python3 for all.
python3 - "$T"/out*/*.jws >"$T/indices" <<'PY'
import base64, sys
for path in sys.argv[1:]:
    s = open(path).read().split(".")[2]
    b = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    assert int.from_bytes(b[0:4], "big") == 0, path + ": not a one-level HSS signature"
    print(int.from_bytes(b[4:8], "big"))
PY
[ "$(wc -l <"$T/indices")" = "$total" ] || die "not every signature has an index"
dups=$(sort -n "$T/indices" | uniq -d | head -3)
[ -z "$dups" ] || die "indices used twice: $dups"
ok
# The live instances stop cleanly (SIGTERM: exit 0, no sanitizer report).
for i in 0 1 2; do
    kill "${PIDS[$i]}"
    rc=0
    wait "${PIDS[$i]}" || rc=$?
    [ $rc = 0 ] || die "instance $i: exit status $rc"
    ! grep -Eq 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$T/i$i/serve.log" ||
        die "instance $i: sanitizer report"
done
PIDS=()
ok
echo "$total signatures from 3 instances (one SIGKILLed, etcd majority stopped and restarted) verified," \
     "all indices distinct (highest $(sort -n "$T/indices" | tail -1)); $PASSED checks passed"

#!/usr/bin/env bash
# bench/scale_bench.sh — signatures/s of one stateful key (HSS-LMS) through HTTP on 1, 2 and 3
# `dsig serve` instances sharing it through an etcd cluster, against one instance without a
# coordinator, in the same run (docs/scale.md "Measured").
#
#   bench/scale_bench.sh [DSIG_TOOL] [SECONDS] [ROUNDS] [CONNS]   (defaults: build/release/dsig, 3, 5, 4)
#
# Runs itself inside tests/coord/etcd_cluster.sh (a 3-member cluster on loopback) unless
# DSIG_ETCD_ENDPOINTS is set. Each round measures the four setups — "alone" (one instance, no
# "coordinator"), "etcd x1", "etcd x2", "etcd x3" — in an order rotated by one every round, so that
# none always runs first on a drifting shared machine. Each setup starts from a fresh key (HSS-LMS,
# two levels of H10/W4: 2^20 indices, so no run comes near the end), copied to each instance's key
# directory (own state file and high-water registry per instance, as on separate hosts), and one wrk
# (-t1 -cCONNS, 1 KiB bodies: the load generator of bench/serve_bench.sh) per instance for SECONDS, all
# at once. signatures/s: the instances' 200 answers to sign (their /metrics) over SECONDS; etcd
# requests per 10,000 signatures: the instances' dsig_serve_coordinator_requests_total over the same
# signatures. Printed: the median (min–max) of ROUNDS rounds per setup, and one row per round.
# Temporary files live in a private directory removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
D=${1:-build/release/dsig}
SECS=${2:-3}
ROUNDS=${3:-5}
CONNS=${4:-4}
[[ "$D" == /* ]] || D=$PWD/$D
if [ -z "${DSIG_ETCD_ENDPOINTS:-}" ]; then
    exec bash "$here/../tests/coord/etcd_cluster.sh" run bash "$0" "$D" "$SECS" "$ROUNDS" "$CONNS"
fi
for tool in wrk curl jq; do
    command -v $tool >/dev/null || { echo "$tool is needed (scripts/install-deps.sh)" >&2; exit 2; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-scale-bench.XXXXXX")
PIDS=()
stop_all() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PIDS=()
}
trap 'stop_all; rm -rf "$T"' EXIT
TOKEN=bench-token
H=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)
EPS=$(printf %s "$DSIG_ETCD_ENDPOINTS" | jq -R -c 'split(",")')
cat >"$T/post.lua" <<EOF
wrk.method = "POST"
wrk.body = string.rep("x", 1024)
wrk.headers["Authorization"] = "Bearer $TOKEN"
wrk.headers["Content-Type"] = "application/octet-stream"
EOF

# metric PORT NAME [LABELS]: the sum of the samples NAME{...LABELS...} of one instance.
metric() {
    curl -s -m 5 "http://127.0.0.1:$1/metrics" |
        awk -v n="$2" -v l="${3:-}" '($1 == n || index($1, n "{") == 1) && index($1, l) { s += $2 } END { printf "%d\n", s }'
}

# run SETUP K RUN: start K instances (coordinator unless SETUP is "alone") on a fresh key, load them
# all for SECS, stop them; prints "signatures/s etcd-requests-per-10000".
run() {
    local setup=$1 k=$2 id=$3 i port bad coord="" sigs=0 reqs=0 d=$T/$3
    mkdir -p "$d"
    DSIG_STATE_REGISTRY=$d/master-hwm "$D" keygen -q -a HSS-LMS \
        --param LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 -o "$d/lms.state"
    [ "$setup" = alone ] ||
        coord=", \"coordinator\": {\"etcd\": $EPS, \"prefix\": \"/dsig-scale-bench/$$/$id/\"}"
    local ports=()
    for i in $(seq 0 $((k - 1))); do
        mkdir -p "$d/i$i/keys"
        cp "$d/lms.state" "$d/i$i/keys/"
        cat >"$d/i$i/serve.json" <<EOF
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys", "state_registry_dir": "hwm",
 "tenants": [{"name": "bench", "tokens": [{"sha256": "$H"}], "keys": ["*"], "operations": ["sign"]}]$coord}
EOF
        : >"$d/i$i/log"
        (cd "$d/i$i" && exec "$D" serve --config serve.json 2>>log) &
        PIDS+=($!)
        port=""
        for _ in $(seq 150); do
            port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$d/i$i/log")
            [ -n "$port" ] && break
            sleep 0.1
        done
        [ -n "$port" ] || { cat "$d/i$i/log" >&2; echo "instance $i of $setup did not start" >&2; exit 1; }
        ports+=("$port")
    done
    local wp=()
    for port in "${ports[@]}"; do
        wrk -t1 -c"$CONNS" -d"${SECS}s" -s "$T/post.lua" "http://127.0.0.1:$port/v1/keys/lms/sign" >"$d/wrk.$port" &
        wp+=($!)
    done
    for i in "${wp[@]}"; do wait "$i"; done
    for port in "${ports[@]}"; do
        sigs=$((sigs + $(metric "$port" dsig_serve_requests_total 'endpoint="sign",code="200"')))
        reqs=$((reqs + $(metric "$port" dsig_serve_coordinator_requests_total)))
        bad=$(metric "$port" dsig_serve_requests_total 'endpoint="sign",code="503"')
        [ "$bad" = 0 ] || echo "warning: $setup: $bad answers 503 on port $port" >&2
    done
    stop_all
    rm -rf "$d"
    awk -v s=$sigs -v t="$SECS" -v r=$reqs 'BEGIN { printf "%.0f %.1f\n", s / t, s ? r * 10000 / s : 0 }'
}

# stats FILE: "median min max" of the numbers in FILE (one a line).
stats() {
    sort -g "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                             printf "%g %g %g\n", m, v[1], v[NR] }'
}

SETUPS=(alone "etcd x1" "etcd x2" "etcd x3")
KS=(1 1 2 3)
echo "HSS-LMS H10/H10 W4, wrk -t1 -c$CONNS per instance, ${SECS} s per run, $ROUNDS rounds; $(nproc) CPUs" \
     "shared by the client, the instances and etcd"
echo
echo "| round | $(printf "%s | " "${SETUPS[@]}" | sed "s/ $//")"
echo "|---:|---:|---:|---:|---:|"
for r in $(seq "$ROUNDS"); do
    row=()
    for j in 0 1 2 3; do
        s=$(((j + r - 1) % 4)) # rotated order
        read -r rate per < <(run "${SETUPS[$s]}" "${KS[$s]}" "r$r-s$s")
        echo "$rate" >>"$T/rate.$s"
        echo "$per" >>"$T/per.$s"
        row[$s]="$rate/s, $per etcd/10k"
    done
    echo "| $r | $(printf "%s | " "${row[@]}" | sed "s/ $//")"
done
echo
echo "| setup | instances | signatures/s, median (min–max) | etcd requests per 10,000 signatures, median (min–max) |"
echo "|---|---:|---:|---:|"
for s in 0 1 2 3; do
    read -r m lo hi < <(stats "$T/rate.$s")
    read -r pm plo phi < <(stats "$T/per.$s")
    echo "| ${SETUPS[$s]} | ${KS[$s]} | $m ($lo–$hi) | $pm ($plo–$phi) |"
done

#!/usr/bin/env bash
# bench/serve_bench.sh — `dsig serve` throughput against `dsig sign` on the same data in the same run,
# and 1 KiB request rates with wrk (two client threads).
#
#   bench/serve_bench.sh [DSIG_TOOL] [MIB] [SECONDS] [RUNS]   (defaults: build/release/dsig, 100, 5, 5)
#
# Upload table: for each audit-digest setting (BLAKE3 on the digest worker = the default; BLAKE3 on the
# signing thread = digest_threads 0; SHA-256 on the digest worker; none) and each algorithm (ES256,
# Ed25519, ML-DSA-65), RUNS runs of `dsig sign FILE` and RUNS uploads of the same file with
# `curl -T FILE` to POST /v1/keys/{kid}/sign on loopback, alternated (tool, service, tool, ...) so that
# both see the same machine load. Wall clock, client included: MiB/s as median (min–max); "ratio" is
# service median / tool median (target ≥ 0.80), "paired" the median of the per-pair ratios (each tool
# run against the service run right after it: robust to the load drifting on a shared machine).
# CPU columns (seconds per GiB): the tool process; the whole server process (every thread: MHD and
# digest worker) and its busiest thread per upload (/proc/PID/task/*/stat) — the busiest is the critical
# path that bounds the service's wall clock when a core is free for each thread.
# Environment: UPLOAD_BUFFER=BYTES sets limits.upload_buffer_bytes (default: the service's, 1 MiB);
# SETTINGS="blake3,worker none,-" and ALGS="ES256 Ed25519" restrict the table. TLS=1: the service uses
# its built-in TLS (configuration "tls", a self-signed EC P-256 certificate made with the openssl CLI;
# curl --cacert, https:// URLs) — compare with a run without it.
# Request table: wrk -t2 on 1 KiB sign requests, 2 and 16 connections: requests/s, p50, p99.
# Temporary files live in a private directory removed at the end.
set -euo pipefail
D=${1:-build/release/dsig}
MIB=${2:-100}
SECS=${3:-5}
RUNS=${4:-5}
command -v curl >/dev/null || { echo "curl is needed" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-serve-bench.XXXXXX")
SP=""
trap '[ -n "$SP" ] && kill $SP 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/keys"
"$D" keygen -q -a ES256 -o "$T/keys/ES256.jwk"
"$D" keygen -q -a Ed25519 -o "$T/keys/Ed25519.jwk"
"$D" keygen -q -a ML-DSA-65 -o "$T/keys/ML-DSA-65.jwk"
head -c $((MIB << 20)) /dev/urandom >"$T/payload"
TOKEN=bench-token
SCHEME=http TLSCFG="" CURL_TLS=()
if [ "${TLS:-0}" = 1 ]; then
    (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null)
    SCHEME=https TLSCFG=", \"tls\": {\"cert\": \"$T/cert.pem\", \"key\": \"$T/key.pem\"}" CURL_TLS=(--cacert "$T/cert.pem")
fi
H=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)

start_server() { # start_server DIGEST(sha256|blake3|none) [DIGEST_THREADS]
    local dt=""
    [ -n "${2:-}" ] && dt=", \"digest_threads\": $2"
    cat >"$T/serve.json" <<EOF
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "$T/keys",
 "audit": {"path": "$T/audit.log", "sync": "interval", "payload_digest": "$1"$dt},
 "limits": {"threads": 2, "max_connections": 64${UPLOAD_BUFFER:+, \"upload_buffer_bytes\": $UPLOAD_BUFFER}},
 "tenants": [{"name": "bench", "tokens": [{"sha256": "$H"}], "keys": ["*"], "operations": ["sign", "verify"]}]$TLSCFG}
EOF
    : >"$T/serve.log" # before the start: never read the previous server's port
    "$D" serve --config "$T/serve.json" 2>>"$T/serve.log" &
    SP=$!
    PORT=""
    for _ in $(seq 100); do
        PORT=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/serve.log")
        [ -n "$PORT" ] && break
        sleep 0.05
    done
    [ -n "$PORT" ] || { cat "$T/serve.log" >&2; exit 2; }
}
stop_server() { kill $SP; wait $SP || true; SP=""; }
now() { date +%s%N; }
TCK=$(getconf CLK_TCK)
# stats FILE: "median min max" of the numbers in FILE (one per line).
stats() { sort -g "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                                 printf "%.0f %.0f %.0f\n", m, v[1], v[NR] }'; }
# task_cpu: "tid ticks" for every thread of the server.
task_cpu() { for f in /proc/$SP/task/*/stat; do awk '{ print $1, $14 + $15 }' "$f" 2>/dev/null || true; done; }
# busiest BEFORE AFTER: "largest per-thread CPU increase, sum of the increases" in ns.
busiest() { awk -v t=$TCK 'NR == FNR { b[$1] = $2; next } { d = $2 - b[$1]; s += d; if (d > m) m = d }
                           END { printf "%d %d\n", m * 1e9 / t, s * 1e9 / t }' "$1" "$2"; }
mibs() { awk -v m=$MIB -v ns=$1 'BEGIN { printf "%.1f", m / (ns / 1e9) }'; }       # MiB/s from ns
spg() { awk -v n=$1 -v m=$MIB -v r=$RUNS 'BEGIN { printf "%.2f", n / r / 1e9 * 1024 / m }'; } # CPU s/GiB

echo "payload: $MIB MiB (random, page cache), loopback; $RUNS runs each, tool and service alternated;"
echo "MiB/s = wall clock (client included), median (min–max); ratio = service median / tool median;"
echo "paired = median of the ratios of adjacent (tool, service) runs."
echo "CPU s/GiB: the tool process; the whole server process (all threads); the server's busiest thread."
echo "limits.upload_buffer_bytes: ${UPLOAD_BUFFER:-default (1048576)}; transport: $SCHEME"
echo "Machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at start; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| algorithm | audit digest | dsig sign MiB/s | serve MiB/s (curl) | ratio | paired | tool CPU | serve CPU | busiest thread |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for setting in ${SETTINGS:-blake3,worker blake3,inline sha256,worker none,-}; do
    set -- ${setting/,/ }
    digest=$1 where=$2
    case $where in
        inline) start_server $digest 0; label="$digest, signing thread" ;;
        worker) start_server $digest; label="$digest, digest worker" ;;
        *) start_server $digest; label="none" ;;
    esac
    for alg in ${ALGS:-ES256 Ed25519 ML-DSA-65}; do
        : >"$T/tool.ns"; : >"$T/srv.ns"; : >"$T/pair"
        tcpu=0 scpu=0 bcpu=0
        for _ in $(seq $RUNS); do
            t0=$(now)
            /usr/bin/time -f '%U %S' -o "$T/time" "$D" sign -q -k "$T/keys/$alg.jwk" "$T/payload" >/dev/null
            t1=$(now)
            echo $((t1 - t0)) >>"$T/tool.ns"
            tns=$((t1 - t0))
            tcpu=$((tcpu + $(awk '{ printf "%d", ($1 + $2) * 1e9 }' "$T/time")))
            task_cpu >"$T/task0"
            t0=$(now)
            curl -sS -f -o /dev/null "${CURL_TLS[@]}" -X POST -H "Authorization: Bearer $TOKEN" -T "$T/payload" \
                "$SCHEME://127.0.0.1:$PORT/v1/keys/$alg/sign"
            t1=$(now)
            echo $((t1 - t0)) >>"$T/srv.ns"
            task_cpu >"$T/task1"
            read -r bns sns < <(busiest "$T/task0" "$T/task1")
            bcpu=$((bcpu + bns)) scpu=$((scpu + sns))
            awk -v a=$tns -v b=$((t1 - t0)) 'BEGIN { printf "%.6f\n", a / b }' >>"$T/pair"
        done
        read -r tmed tmin tmax < <(stats "$T/tool.ns")
        read -r smed smin smax < <(stats "$T/srv.ns")
        # min time = max MiB/s and vice versa
        echo "| $alg | $label | $(mibs $tmed) ($(mibs $tmax)–$(mibs $tmin)) | $(mibs $smed) ($(mibs $smax)–$(mibs $smin)) |" \
             "$(awk -v a=$tmed -v b=$smed 'BEGIN { printf "%.2f", a / b }') |" \
             "$(sort -g "$T/pair" | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }') |" \
             "$(spg $tcpu) | $(spg $scpu) | $(spg $bcpu) |"
    done
    stop_server
done

if command -v wrk >/dev/null; then
    start_server blake3
    cat >"$T/post.lua" <<EOF
wrk.method = "POST"
wrk.body = string.rep("x", 1024)
wrk.headers["Authorization"] = "Bearer $TOKEN"
wrk.headers["Content-Type"] = "application/octet-stream"
EOF
    echo
    echo "| 1 KiB sign requests (wrk -t2, ${SECS} s) | connections | requests/s | p50 | p99 |"
    echo "|---|---:|---:|---:|---:|"
    for alg in Ed25519 ES256 ML-DSA-65; do
        for c in 2 16; do
            out=$(wrk -t2 -c$c -d${SECS}s --latency -s "$T/post.lua" "$SCHEME://127.0.0.1:$PORT/v1/keys/$alg/sign")
            rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
            p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
            p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
            non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
            echo "| $alg | $c | $rps | $p50 | $p99 |${non2xx:+ non-2xx: $non2xx}"
        done
    done
    stop_server
else
    echo "(wrk not installed: no request-rate table)"
fi

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
# Request table: wrk -t2 on 1 KiB sign requests, 2 and 16 connections: requests/s, p50, p99
# (WRK_ALGS="ML-DSA-65" restricts it).
# COMPARE=OTHER_DSIG: a second server from another build (e.g. the base commit's) runs beside the first
# with the same configuration, and every run uploads to both (order alternated), so that the two
# builds are compared under the same machine load: extra columns "compare MiB/s", "compare ratio"
# (its service / tool), "this / compare" (median of the per-run ratios of the two services' MiB/s) and
# "compare CPU" (its whole server, s/GiB: on a loaded machine the CPU columns are the stable part); in
# the request table, wrk runs on each in turn, with each server's CPU per request (µs).
# TLOG_AB=1: the same in one run with the transparency log on and off — the compared server is this
# build with "audit.transparency_log": false (docs/serve.md "Transparency log"), so "this / compare" is
# the log's cost: uploads alternated with the log-off server, and in the request table WRK_ROUNDS
# rounds (default 3; order alternated) of wrk on each, requests/s as median (min–max) and "this /
# compare" the median of the per-round ratios.
# Temporary files live in a private directory removed at the end.
set -euo pipefail
D=${1:-build/release/dsig}
MIB=${2:-100}
SECS=${3:-5}
RUNS=${4:-5}
command -v curl >/dev/null || { echo "curl is needed" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-serve-bench.XXXXXX")
SP="" CP=""
trap '[ -n "$SP" ] && kill $SP 2>/dev/null; [ -n "$CP" ] && kill $CP 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
C=${COMPARE:-}
TLOG_OFF=""
if [ "${TLOG_AB:-0}" = 1 ]; then
    [ -z "$C" ] || { echo "TLOG_AB and COMPARE exclude each other" >&2; exit 2; }
    C=$D TLOG_OFF=', "transparency_log": false'
fi
WRK_ROUNDS=${WRK_ROUNDS:-$([ -n "$TLOG_OFF" ] && echo 3 || echo 1)}
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

# launch BIN NAME DIGEST [DIGEST_THREADS]: a server from BIN (audit log NAME.log); its pid in LPID,
# its port in LPORT.
launch() {
    local bin=$1 name=$2 dt=""
    [ -n "${4:-}" ] && dt=", \"digest_threads\": $4"
    [ "$name" = compare ] && dt="$dt$TLOG_OFF"
    cat >"$T/$name.json" <<EOF
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "$T/keys",
 "audit": {"path": "$T/$name.log", "sync": "interval", "payload_digest": "$3"$dt},
 "limits": {"threads": 2, "max_connections": 64${UPLOAD_BUFFER:+, \"upload_buffer_bytes\": $UPLOAD_BUFFER}},
 "tenants": [{"name": "bench", "tokens": [{"sha256": "$H"}], "keys": ["*"], "operations": ["sign", "verify"]}]$TLSCFG}
EOF
    : >"$T/$name.out" # before the start: never read the previous server's port
    "$bin" serve --config "$T/$name.json" 2>>"$T/$name.out" &
    LPID=$!
    LPORT=""
    for _ in $(seq 100); do
        LPORT=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/$name.out")
        [ -n "$LPORT" ] && break
        sleep 0.05
    done
    [ -n "$LPORT" ] || { cat "$T/$name.out" >&2; exit 2; }
}
start_server() { # start_server DIGEST(sha256|blake3|none) [DIGEST_THREADS]: SP/PORT (and CP/CPORT)
    launch "$D" serve "$@"
    SP=$LPID PORT=$LPORT
    if [ -n "$C" ]; then
        launch "$C" compare "$@"
        CP=$LPID CPORT=$LPORT
    fi
}
stop_server() {
    kill $SP
    wait $SP || true
    SP=""
    if [ -n "$CP" ]; then
        kill $CP
        wait $CP || true
        CP=""
    fi
}
now() { date +%s%N; }
TCK=$(getconf CLK_TCK)
# stats FILE: "median min max" of the numbers in FILE (one per line).
stats() { sort -g "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                                 printf "%.0f %.0f %.0f\n", m, v[1], v[NR] }'; }
# task_cpu [PID]: "tid ticks" for every thread of the server (default: this build's).
task_cpu() { for f in /proc/${1:-$SP}/task/*/stat; do awk '{ print $1, $14 + $15 }' "$f" 2>/dev/null || true; done; }
# busiest BEFORE AFTER: "largest per-thread CPU increase, sum of the increases" in ns.
busiest() { awk -v t=$TCK 'NR == FNR { b[$1] = $2; next } { d = $2 - b[$1]; s += d; if (d > m) m = d }
                           END { printf "%d %d\n", m * 1e9 / t, s * 1e9 / t }' "$1" "$2"; }
mibs() { awk -v m=$MIB -v ns=$1 'BEGIN { printf "%.1f", m / (ns / 1e9) }'; }       # MiB/s from ns
spg() { awk -v n=$1 -v m=$MIB -v r=$RUNS 'BEGIN { printf "%.2f", n / r / 1e9 * 1024 / m }'; } # CPU s/GiB
# upload PORT ALG: one upload of the payload; its wall clock in ns on stdout.
upload() {
    local t0 t1
    t0=$(now)
    curl -sS -f -o /dev/null "${CURL_TLS[@]}" -X POST -H "Authorization: Bearer $TOKEN" -T "$T/payload" \
        "$SCHEME://127.0.0.1:$1/v1/keys/$2/sign"
    t1=$(now)
    echo $((t1 - t0))
}
# median FILE: the median of the numbers in FILE, two decimals.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "payload: $MIB MiB (random, page cache), loopback; $RUNS runs each, tool and service alternated;"
echo "MiB/s = wall clock (client included), median (min–max); ratio = service median / tool median;"
echo "paired = median of the ratios of adjacent (tool, service) runs."
echo "CPU s/GiB: the tool process; the whole server process (all threads); the server's busiest thread."
echo "limits.upload_buffer_bytes: ${UPLOAD_BUFFER:-default (1048576)}; transport: $SCHEME"
echo "Machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at start; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
if [ -n "$TLOG_OFF" ]; then
    echo "compare: this build with the transparency log off (audit.transparency_log false); uploads alternated"
elif [ -n "$C" ]; then
    echo "compare: $C (a second server, same configuration; uploads alternated with this one's)"
fi
if [ -n "$C" ]; then
    echo "| algorithm | audit digest | dsig sign MiB/s | serve MiB/s (curl) | ratio | paired | tool CPU | serve CPU | busiest thread | compare MiB/s | compare ratio | this / compare | compare CPU |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
else
    echo "| algorithm | audit digest | dsig sign MiB/s | serve MiB/s (curl) | ratio | paired | tool CPU | serve CPU | busiest thread |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
fi
for setting in ${SETTINGS:-blake3,worker blake3,inline sha256,worker none,-}; do
    set -- ${setting/,/ }
    digest=$1 where=$2
    case $where in
        inline) start_server $digest 0; label="$digest, signing thread" ;;
        worker) start_server $digest; label="$digest, digest worker" ;;
        *) start_server $digest; label="none" ;;
    esac
    for alg in ${ALGS:-ES256 Ed25519 ML-DSA-65}; do
        : >"$T/tool.ns"; : >"$T/srv.ns"; : >"$T/pair"; : >"$T/cmp.ns"; : >"$T/ab"
        tcpu=0 scpu=0 bcpu=0 ccpu=0
        for run in $(seq $RUNS); do
            t0=$(now)
            /usr/bin/time -f '%U %S' -o "$T/time" "$D" sign -q -k "$T/keys/$alg.jwk" "$T/payload" >/dev/null
            t1=$(now)
            echo $((t1 - t0)) >>"$T/tool.ns"
            tns=$((t1 - t0))
            tcpu=$((tcpu + $(awk '{ printf "%d", ($1 + $2) * 1e9 }' "$T/time")))
            # cmp_upload: an upload to the compared server, with its CPU.
            cmp_upload() {
                task_cpu $CP >"$T/ctask0"
                cns=$(upload $CPORT $alg)
                task_cpu $CP >"$T/ctask1"
                read -r _ cs < <(busiest "$T/ctask0" "$T/ctask1")
                ccpu=$((ccpu + cs))
            }
            [ -n "$C" ] && [ $((run % 2)) = 0 ] && cmp_upload # the compared one first, every other run
            task_cpu >"$T/task0"
            sns1=$(upload $PORT $alg)
            echo $sns1 >>"$T/srv.ns"
            task_cpu >"$T/task1"
            read -r bns sns < <(busiest "$T/task0" "$T/task1")
            bcpu=$((bcpu + bns)) scpu=$((scpu + sns))
            awk -v a=$tns -v b=$sns1 'BEGIN { printf "%.6f\n", a / b }' >>"$T/pair"
            if [ -n "$C" ]; then
                [ $((run % 2)) = 1 ] && cmp_upload
                echo $cns >>"$T/cmp.ns"
                awk -v a=$cns -v b=$sns1 'BEGIN { printf "%.6f\n", a / b }' >>"$T/ab"
            fi
        done
        read -r tmed tmin tmax < <(stats "$T/tool.ns")
        read -r smed smin smax < <(stats "$T/srv.ns")
        # min time = max MiB/s and vice versa
        extra=""
        if [ -n "$C" ]; then
            read -r cmed cmin cmax < <(stats "$T/cmp.ns")
            extra=" $(mibs $cmed) ($(mibs $cmax)–$(mibs $cmin)) | $(awk -v a=$tmed -v b=$cmed 'BEGIN { printf "%.2f", a / b }') | $(median "$T/ab") | $(spg $ccpu) |"
        fi
        echo "| $alg | $label | $(mibs $tmed) ($(mibs $tmax)–$(mibs $tmin)) | $(mibs $smed) ($(mibs $smax)–$(mibs $smin)) |" \
             "$(awk -v a=$tmed -v b=$smed 'BEGIN { printf "%.2f", a / b }') |" \
             "$(median "$T/pair") |" \
             "$(spg $tcpu) | $(spg $scpu) | $(spg $bcpu) |$extra"
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
    # rate PORT PID ALG CONNS: "requests/s p50 p99 server-CPU-µs-per-request non-2xx" from one wrk run.
    rate() {
        local out n
        task_cpu $2 >"$T/wtask0"
        out=$(wrk -t2 -c$4 -d${SECS}s --latency -s "$T/post.lua" "$SCHEME://127.0.0.1:$1/v1/keys/$3/sign")
        task_cpu $2 >"$T/wtask1"
        read -r _ n < <(busiest "$T/wtask0" "$T/wtask1")
        echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '$1 == "50%" {print $2}')" \
             "$(echo "$out" | awk '$1 == "99%" {print $2}')" \
             "$(echo "$out" | awk -v n=$n '/^ *[0-9]+ requests in/ { printf "%.1f", n / 1000 / $1 }')" \
             "$(echo "$out" | awk '/Non-2xx/ {print $NF}')"
    }
    echo
    if [ -n "$C" ]; then
        [ "$WRK_ROUNDS" -gt 1 ] && echo "$WRK_ROUNDS rounds each, alternated: requests/s median (min–max); p50, p99, CPU of the last round; this / compare = median of the per-round ratios"
        echo "| 1 KiB sign requests (wrk -t2, ${SECS} s) | connections | requests/s | p50 | p99 | server CPU µs/req | compare requests/s | compare p50 | compare p99 | compare CPU µs/req | this / compare |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    else
        echo "| 1 KiB sign requests (wrk -t2, ${SECS} s) | connections | requests/s | p50 | p99 | server CPU µs/req |"
        echo "|---|---:|---:|---:|---:|---:|"
    fi
    for alg in ${WRK_ALGS:-Ed25519 ES256 ML-DSA-65}; do
        for c in 2 16; do
            : >"$T/wrps"; : >"$T/wcrps"; : >"$T/wab"
            for round in $(seq $WRK_ROUNDS); do
                # The compared server first every other round: neither always runs on a warmer machine.
                if [ -n "$C" ] && [ $((round % 2)) = 0 ]; then read -r crps cp50 cp99 ccpu_r _ < <(rate $CPORT $CP $alg $c); fi
                read -r rps p50 p99 cpu non2xx < <(rate $PORT $SP $alg $c)
                if [ -n "$C" ] && [ $((round % 2)) = 1 ]; then read -r crps cp50 cp99 ccpu_r _ < <(rate $CPORT $CP $alg $c); fi
                echo "$rps" >>"$T/wrps"
                if [ -n "$C" ]; then
                    echo "$crps" >>"$T/wcrps"
                    awk -v a=$rps -v b=$crps 'BEGIN { printf "%.6f\n", a / b }' >>"$T/wab"
                fi
            done
            extra="" shown=$rps
            if [ "$WRK_ROUNDS" -gt 1 ]; then
                # p50, p99 and CPU are of the last round; requests/s over all rounds.
                read -r m lo hi < <(stats "$T/wrps")
                shown="$m ($lo–$hi)"
                if [ -n "$C" ]; then
                    read -r m lo hi < <(stats "$T/wcrps")
                    crps="$m ($lo–$hi)"
                fi
            fi
            if [ -n "$C" ]; then
                extra=" $crps | $cp50 | $cp99 | $ccpu_r | $(median "$T/wab") |"
            fi
            echo "| $alg | $c | $shown | $p50 | $p99 | $cpu |$extra${non2xx:+ non-2xx: $non2xx}"
        done
    done
    stop_server
else
    echo "(wrk not installed: no request-rate table)"
fi

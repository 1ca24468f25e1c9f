# tests/coord/coord_lib.sh — the shared part of the coordinator fault tests (sourced after
# tests/serve/serve_lib.sh and serve_lib_init): N `dsig serve` instances sharing two stateful keys
# through an etcd cluster, each with its own copy of the state files and its own high-water registry
# (as on separate hosts), a load generator, and the final check of every released signature.
#
#   coord_setup N ENDPOINTS...   keys lms (HSS-LMS, one level H10/W4: 1024 indices), xmss
#                                (XMSS-SHA2_10_256: 1024) and ed (Ed25519, stateless) in $T/i<I>/keys
#                                for I in 0..N-1; ENDPOINTS: the "coordinator.etcd" of every instance
#                                (CLIENT[I], if set, is a command prefix such as `ip netns exec NS` the
#                                instance and its clients run under)
#   coord_endpoints I ENDPOINTS... instance I uses other endpoints (before its start)
#   coord_start I                start (or restart, on its state files) instance I: PIDS[I], PORTS[I]
#   coord_kill I                 SIGKILL instance I and wait for it
#   coord_sign I KID TAG         sign TAG with KID on instance I; prints "CODE ERROR" (ERROR: the JSON
#                                "error" of a failed answer, "-" otherwise); a 200's JWS is kept in
#                                $T/sig/KID/TAG.jws, a 503's headers in $T/i<I>/last503.KID.hdr
#   coord_worker I PACE          until $T/stop exists: sign with lms then xmss on instance I, sleep
#                                PACE; one line "EPOCH I KID CODE ERROR" per request in $T/load.log
#   coord_metric I NAME          the sum of the /metrics samples named NAME of instance I
#   coord_check                  every kept JWS verifies with `dsig verify`, and no index occurs twice
#                                per key; prints the counts
#   coord_stop_all               SIGTERM every instance: exit 0, no sanitizer report
PIDS=()
PORTS=()
CLIENT=()
coord_cleanup() {
    for p in "${PIDS[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
    serve_lib_cleanup
}
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

coord_setup() {
    local n=$1 i
    shift
    mkdir -p "$T/sig/lms" "$T/sig/xmss" "$T/sig/ed"
    DSIG_STATE_REGISTRY=$T/master-hwm "$D" keygen -q -a HSS-LMS --param LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 \
        -o "$T/lms.state" --pub "$T/lms.pub"
    DSIG_STATE_REGISTRY=$T/master-hwm "$D" keygen -q -a XMSS --param XMSS-SHA2_10_256 \
        -o "$T/xmss.state" --pub "$T/xmss.pub"
    "$D" keygen -q -a Ed25519 -o "$T/ed.jwk"
    "$D" pubkey -q -k "$T/ed.jwk" -o "$T/ed.pub"
    for i in $(seq 0 $((n - 1))); do
        mkdir -p "$T/i$i/keys"
        cp "$T/lms.state" "$T/xmss.state" "$T/ed.jwk" "$T/i$i/keys/"
        coord_endpoints "$i" "$@"
    done
    : >"$T/load.log"
}
coord_endpoints() {
    local i=$1 eps
    shift
    eps=$(printf '%s\n' "$@" | jq -R . | jq -s -c .)
    cat >"$T/i$i/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "state_registry_dir": "hwm",
  "tenants": [{"name": "s", "tokens": [{"sha256": "$(h tok)"}], "keys": ["*"], "operations": ["sign"]}],
  "coordinator": {"etcd": $eps, "prefix": "/dsig-serve-test/$$/", "connect_timeout_ms": 300, "timeout_ms": 800}
}
JSON
}

coord_start() {
    local i=$1 port
    : >"$T/i$i/serve.log"
    # shellcheck disable=SC2086 # CLIENT[i] is a command prefix
    (cd "$T/i$i" && exec ${CLIENT[$i]:-} "$D" serve --config "$T/i$i/serve.json" 2>>"$T/i$i/serve.log") &
    PIDS[$i]=$!
    rm -f "$T/i$i/port"
    for _ in $(seq 150); do
        port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/i$i/serve.log")
        if [ -n "$port" ]; then
            PORTS[$i]=$port
            echo "$port" >"$T/i$i/port" # for the workers, which outlive a restart
            return 0
        fi
        kill -0 "${PIDS[$i]}" 2>/dev/null || { cat "$T/i$i/serve.log" >&2; die "instance $i did not start"; }
        sleep 0.1
    done
    die "instance $i did not start"
}
coord_kill() {
    kill -9 "${PIDS[$1]}" 2>/dev/null || true
    wait "${PIDS[$1]}" 2>/dev/null || true
    PIDS[$1]=""
}

coord_sign() {
    local i=$1 kid=$2 tag=$3 port code err=- b=$T/i$1/$3
    port=$(cat "$T/i$i/port" 2>/dev/null || true)
    # shellcheck disable=SC2086
    code=$(${CLIENT[$i]:-} curl -s -m 10 -o "$b.body" -D "$b.hdr" -w '%{http_code}' -H "Authorization: Bearer tok" \
        --data-binary "$tag" "http://127.0.0.1:${port:-1}/v1/keys/$kid/sign" 2>/dev/null || true)
    [ -n "$code" ] || code=000
    if [ "$code" = 200 ]; then
        tr -d '\n' <"$b.body" >"$T/sig/$kid/$tag.jws"
    elif [ -s "$b.body" ]; then
        err=$(jq -r '.error // "-"' <"$b.body" 2>/dev/null || echo unparsable)
        [ "$code" = 503 ] && cp "$b.hdr" "$T/i$i/last503.$kid.hdr"
    fi
    rm -f "$b.body" "$b.hdr"
    echo "$code $err"
}
coord_worker() {
    local i=$1 pace=$2 n=0 kid r
    while [ ! -e "$T/stop" ]; do
        n=$((n + 1))
        for kid in lms xmss; do
            r=$(coord_sign "$i" "$kid" "w$i-$BASHPID-$kid-$n")
            echo "$EPOCHREALTIME $i $kid $r" >>"$T/load.log"
        done
        sleep "$pace"
    done
}

coord_metric() {
    local port
    port=$(cat "$T/i$1/port")
    # shellcheck disable=SC2086
    ${CLIENT[$1]:-} curl -s -m 5 "http://127.0.0.1:$port/metrics" |
        awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%d\n", s }'
}

coord_check() {
    local kid f tag total=0 nk
    for kid in lms xmss; do
        nk=0
        for f in "$T/sig/$kid"/*.jws; do
            [ -e "$f" ] || continue
            tag=$(basename "$f" .jws)
            printf %s "$tag" >"$T/payload"
            "$D" verify -q -k "$T/$kid.pub" -s "$f" "$T/payload" || die "$kid: $f does not verify"
            nk=$((nk + 1))
        done
        [ "$nk" -gt 0 ] || die "$kid: no signature was released"
        total=$((total + nk))
        # The index of each: HSS with one level, the LMS signature's q (bytes 4..8, after Nspk = 0);
        # XMSS, idx_sig (the first 4 bytes; RFC 8391 §4.1.8). One python3 for all.
        python3 - "$kid" "$T/sig/$kid"/*.jws >"$T/indices.$kid" <<'PY'
import base64, sys
kid = sys.argv[1]
for path in sys.argv[2:]:
    s = open(path).read().split(".")[2]
    b = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if kid == "lms":
        assert int.from_bytes(b[0:4], "big") == 0, path + ": not a one-level HSS signature"
        print(int.from_bytes(b[4:8], "big"))
    else:
        print(int.from_bytes(b[0:4], "big"))
PY
        [ "$(wc -l <"$T/indices.$kid")" = "$nk" ] || die "$kid: not every signature has an index"
        local dups
        dups=$(sort -n "$T/indices.$kid" | uniq -d | head -3 | tr '\n' ' ')
        [ -z "$dups" ] || die "$kid: indices used twice: $dups"
        echo "$kid: $nk signatures verified, indices distinct (highest $(sort -n "$T/indices.$kid" | tail -1))"
        ok
    done
}

coord_stop_all() {
    local i rc
    for i in "${!PIDS[@]}"; do
        [ -n "${PIDS[$i]}" ] || continue
        kill "${PIDS[$i]}"
        rc=0
        wait "${PIDS[$i]}" || rc=$?
        [ $rc = 0 ] || die "instance $i: exit status $rc"
        ! grep -Eq 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$T/i$i/serve.log" ||
            die "instance $i: sanitizer report"
        PIDS[$i]=""
    done
    ok
}

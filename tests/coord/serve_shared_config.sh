#!/usr/bin/env bash
# tests/coord/serve_shared_config.sh — two `dsig serve` instances sharing their configuration through
# etcd ("coordinator": {"shared_config": true}; run inside etcd_cluster.sh). Each has its own key
# directory, audit log and log key, as on separate hosts.
#   1. the first instance publishes the file's tenants; both apply them (readyz: published, revision);
#   2. a tenant deleted in etcd: its token gets 401 on both within 5 s; a tenant added: 200 on both;
#   3. malformed entries (not JSON, a bad token hash, a name that is not the key's) are refused with a
#      log line and the previous value kept; a valid change after them still applies (revocation is
#      never blocked by a bad entry); two tenants with one token: the update is refused as a whole;
#   4. a key version retired in etcd is retired on both; one retired through the admin endpoint of one
#      instance is published and retired on the other;
#   5. coordinator.max_stale_s: with a majority of etcd down the tokens are refused (503), and accepted
#      again once etcd is back;
#   6. each instance's checkpoint is at PREFIX checkpoints/<instance>: after a stop it is the log's last
#      one, and the log verifies (`dsig log verify`) with the note verifier key published beside it.
set -euo pipefail
. "$(dirname "$0")/../serve/serve_lib.sh"
serve_lib_init dsig-serve-shared curl jq base64
: "${DSIG_ETCD_ENDPOINTS:?run inside etcd_cluster.sh}" "${DSIG_ETCD_CTL:?run inside etcd_cluster.sh}"
PIDS=()
cleanup_all() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; serve_lib_cleanup; }
trap cleanup_all EXIT
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
b64() { printf %s "$1" | base64 -w0; }
eps=$(printf %s "$DSIG_ETCD_ENDPOINTS" | jq -R -c 'split(",")')
EP=${DSIG_ETCD_ENDPOINTS##*,} # the third member: it stays up in step 5
P=/dsig-shared-test/$$/
eput() { curl -sf -m 5 -X POST "$EP/v3/kv/put" -d "$(jq -nc --arg k "$(b64 "$P$1")" --arg v "$(b64 "$2")" \
    '{key: $k, value: $v}')" >/dev/null; }
edel() { curl -sf -m 5 -X POST "$EP/v3/kv/deleterange" -d "$(jq -nc --arg k "$(b64 "$P$1")" '{key: $k}')" >/dev/null; }
eget() { curl -sf -m 5 -X POST "$EP/v3/kv/range" -d "$(jq -nc --arg k "$(b64 "$P$1")" '{key: $k}')" |
    jq -r '.kvs[0].value // empty' | base64 -d; }
tenant() { # NAME TOKEN [OPS]: a tenant object
    jq -nc --arg n "$1" --arg h "$(h "$2")" --argjson ops "${3:-[\"sign\"]}" \
        '{name: $n, tokens: [{sha256: $h}], keys: ["*"], operations: $ops}'
}

"$D" keygen -q -a Ed25519 -o "$T/ed1.jwk"
"$D" keygen -q -a Ed25519 -o "$T/ed2.jwk"
"$D" keygen -q -a Ed25519 -o "$T/ed3.jwk"
for i in 0 1; do
    mkdir -p "$T/i$i/keys" "$T/i$i/log"
    cp "$T/ed1.jwk" "$T/i$i/keys/ed.jwk"
    cp "$T/ed2.jwk" "$T/i$i/keys/ed.v2.jwk"
    cp "$T/ed3.jwk" "$T/i$i/keys/ed.v3.jwk"
    cat >"$T/i$i/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "audit": {"path": "log/audit.log", "checkpoint_interval_ms": 100},
  "tenants": [$(tenant a ta), $(tenant b tb), $(tenant adm tadm '["sign","admin"]')],
  "coordinator": {"etcd": $eps, "prefix": "$P", "connect_timeout_ms": 300, "timeout_ms": 800,
                  "shared_config": true, "instance_id": "i$i", "max_stale_s": 3}
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
code() { # I TOKEN: the HTTP code of a signature on instance I
    curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $2" --data-binary x \
        "http://127.0.0.1:${PORTS[$1]}/v1/keys/ed/sign" || true
}
both() { # TOKEN CODE [SECONDS]: both instances answer CODE, within SECONDS (5)
    local i
    for i in 0 1; do
        wait_until "${3:-5}" bash -c "[ \"\$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $1' \
            --data-binary x http://127.0.0.1:${PORTS[$i]}/v1/keys/ed/sign)\" = $2 ]" ||
            die "instance $i: token $1 answers $(code "$i" "$1"), not $2, ${3:-5} s after the change"
    done
    ok
}
logged() { # I PATTERN: instance I's log has a line matching PATTERN (within 5 s)
    wait_until 5 grep -q "$2" "$T/i$1/serve.log" || die "instance $1: no log line matching '$2'"
}
PORTS=()
start 0
start 1

# --- 1. published once, applied by both ------------------------------------------------------------
[ -n "$(eget config/published)" ] || die "nothing published at ${P}config/published"
[ "$(eget config/tenants/a | jq -r .name)" = a ] || die "tenant a not published"
[ "$(cat "$T/i0/serve.log" "$T/i1/serve.log" | grep -c 'published the file')" = 1 ] ||
    die "the tenants were not published exactly once"
for i in 0 1; do
    r=$(curl -s "http://127.0.0.1:${PORTS[$i]}/readyz")
    [ "$(jq -r '.shared_config.published and .shared_config.connected and .shared_config.revision > 0' <<<"$r")" = true ] ||
        die "instance $i readyz: $r"
done
ok
both ta 200
both tb 200

# --- 2. revoke, add ----------------------------------------------------------------------------------
edel config/tenants/a
both ta 401
both tb 200
eput config/tenants/c "$(tenant c tc)"
both tc 200

# --- 3. malformed entries refused, previous value kept ---------------------------------------------
eput config/tenants/b '{"name": "b", "tokens": [{"sha256": "'"$(h tb)"'"}'   # not JSON
logged 0 'refused .*config/tenants/b.*keeping its previous value'
logged 1 'refused .*config/tenants/b.*keeping its previous value'
both tb 200
eput config/tenants/b "$(jq -c '.tokens[0].sha256 = "abcd"' <<<"$(tenant b tb)")"             # bad hash
logged 0 'refused .*config/tenants/b.*not 64 hexadecimal digits'
both tb 200
eput config/tenants/d "$(tenant x td)"                                                          # wrong name
logged 1 'refused .*config/tenants/d.*left out'
both td 401
edel config/tenants/c # a valid change after the malformed ones still applies
both tc 401
both tb 200
eput config/tenants/e "$(tenant e tb)" # tb is b's token too: the update as a whole is refused
logged 0 'shared configuration of etcd revision [0-9]* refused'
both tb 200
edel config/tenants/e
eput config/tenants/b "$(tenant b tb)"
both tb 200
for i in 0 1; do
    m=$(curl -s "http://127.0.0.1:${PORTS[$i]}/metrics")
    n=$(sed -n 's/^dsig_serve_shared_config_refused_total \([0-9]*\)$/\1/p' <<<"$m")
    [ "${n:-0}" -ge 3 ] || die "instance $i: dsig_serve_shared_config_refused_total is '$n'"
done
ok

# --- 4. key retirements --------------------------------------------------------------------------
eput config/keys/ed '{"retired": [1]}'
versions() { curl -s -H "Authorization: Bearer tadm" "http://127.0.0.1:${PORTS[$1]}/v1/keys/ed/versions"; }
for i in 0 1; do
    wait_until 5 bash -c "curl -s -H 'Authorization: Bearer tadm' http://127.0.0.1:${PORTS[$i]}/v1/keys/ed/versions |
        jq -e '.versions[0].state == \"retired\"' >/dev/null" || die "instance $i: version 1 not retired: $(versions $i)"
    [ -f "$T/i$i/keys/ed.v1.retired" ] || die "instance $i: no ed.v1.retired marker"
done
ok
c=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer tadm" \
    "http://127.0.0.1:${PORTS[0]}/v1/keys/ed/versions/2/retire")
[ "$c" = 200 ] || die "retire version 2 on instance 0: $c"
[ "$(eget config/keys/ed | jq -c .retired)" = "[1,2]" ] || die "etcd lists $(eget config/keys/ed)"
wait_until 5 bash -c "curl -s -H 'Authorization: Bearer tadm' http://127.0.0.1:${PORTS[1]}/v1/keys/ed/versions |
    jq -e '.versions[1].state == \"retired\"' >/dev/null" || die "instance 1: version 2 not retired: $(versions 1)"
ok
eput config/keys/ed '{"retired": "all"}'
logged 0 'refused .*config/keys/ed'
both tb 200

# --- 5. max_stale_s: a majority of etcd down ---------------------------------------------------------
$DSIG_ETCD_CTL stop 0
$DSIG_ETCD_CTL stop 1
both tb 503 10
for i in 0 1; do
    r=$(curl -s "http://127.0.0.1:${PORTS[$i]}/readyz")
    [ "$(jq -r '.ready == false and .shared_config.connected == false' <<<"$r")" = true ] || die "instance $i readyz: $r"
done
ok
$DSIG_ETCD_CTL start 0
$DSIG_ETCD_CTL start 1
$DSIG_ETCD_CTL wait 0
both tb 200 20
both ta 401

# --- 6. checkpoints in etcd ---------------------------------------------------------------------------
for i in 0 1; do
    wait_until 5 bash -c "[ -n \"\$(curl -sf -X POST $EP/v3/kv/range -d '{\"key\":\"$(b64 "${P}checkpoints/i$i")\"}' |
        jq -r '.kvs[0].value // empty')\" ]" || die "no checkpoint of instance $i in etcd"
done
ok
for i in 0 1; do
    kill "${PIDS[$i]}"
    rc=0
    wait "${PIDS[$i]}" || rc=$?
    [ $rc = 0 ] || die "instance $i: exit status $rc"
    ! grep -Eq 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$T/i$i/serve.log" ||
        die "instance $i: sanitizer report"
done
PIDS=()
for i in 0 1; do
    e=$(eget "checkpoints/i$i")
    [ "$(jq -r .instance <<<"$e")" = "i$i" ] || die "checkpoint entry of i$i: $e"
    jq -j .checkpoint <<<"$e" >"$T/ck$i"
    cmp -s "$T/ck$i" "$T/i$i/log/audit.log.checkpoint" || die "instance $i: etcd's checkpoint is not the log's last"
    vkey=$(jq -r .vkey <<<"$e")
    [ "$vkey" = "$("$D" log key "$T/i$i/log/audit.log.key")" ] || die "instance $i: vkey $vkey is not its log key's"
    "$D" log verify "$T/i$i/log/audit.log" --log-key "$vkey" >"$T/verify$i" || die "instance $i: log verify failed"
done
v0=$(eget checkpoints/i0 | jq -r .vkey)
v1=$(eget checkpoints/i1 | jq -r .vkey)
[ "$v0" != "$v1" ] || die "both instances have the same log key"
ok
echo "shared configuration: revocation, addition, malformed entries, retirements, staleness and checkpoints" \
     "on 2 instances; $PASSED checks passed"

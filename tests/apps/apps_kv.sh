#!/usr/bin/env bash
# The auditable Redis through the tool, on a real redis-server started here (--save "" --appendonly no,
# Unix sockets in a temporary directory): commands and replies; refused commands, an unknown client and
# a wrong server key, each with its message and exit 2; a receipt checked offline and refused once
# altered; redis-server killed and restarted while a client sends 1500 INCRs (every INCR executed exactly
# once: the server rebuilds Redis from its log); the log audited, replayed into an empty redis-server
# giving the same data set (DEBUG DIGEST), refused by a non-empty one; a tampered copy reported; a
# restarted server rebuilding Redis from the log. SKIP without redis-server.
set -u
D=${DSIG_TOOL:?DSIG_TOOL must point at the dsig tool}
for t in redis-server redis-cli python3; do
    command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (scripts/install-deps.sh)"; exit 0; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-apps-kv.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
PASSED=0
die() {
    echo "FAIL: $*" >&2
    [ -f "$T/serve.log" ] && sed 's/^/    server: /' "$T/serve.log" | tail -15 >&2
    echo "$PASSED passed, 1 failed"
    exit 1
}
ok() { PASSED=$((PASSED + 1)); }

# start_redis NAME: a redis-server on $T/NAME.sock; its pid in RPID.
start_redis() {
    redis-server --port 0 --unixsocket "$T/$1.sock" --unixsocketperm 700 --save "" --appendonly no \
        --dir "$T" --daemonize no --loglevel warning --enable-debug-command local >"$T/$1.out" 2>&1 &
    RPID=$!
    PIDS+=("$RPID")
    for _ in $(seq 200); do
        [ "$(redis-cli -s "$T/$1.sock" ping 2>/dev/null)" = PONG ] && return 0
        sleep 0.05
    done
    die "redis-server $1 did not start: $(cat "$T/$1.out")"
}
# start_server: dsig kv serve on $T/kv.sock over redis A; its pid in SP.
start_server() {
    rm -f "$T/kv.sock"
    "$D" kv serve --listen "unix:$T/kv.sock" --redis "unix:$T/a.sock" --key "$T/server.jwk" --keys "$T/keys" \
        --log "$T/kv.log" 2>>"$T/serve.log" &
    SP=$!
    PIDS+=("$SP")
    for _ in $(seq 400); do
        [ -S "$T/kv.sock" ] && return 0
        kill -0 "$SP" 2>/dev/null || die "dsig kv serve exited"
        sleep 0.05
    done
    die "dsig kv serve did not listen"
}

mkdir "$T/keys"
"$D" -q keygen -a DSig -o "$T/server.jwk" --pub "$T/server.pub.jwk" || die "server key"
for c in 1 2; do
    "$D" -q keygen -a DSig -o "$T/c$c.jwk" --pub "$T/keys/client-$c.jwk" || die "client key $c"
done
start_redis a
AP=$RPID
start_server
C1=("$D" kv --connect "unix:$T/kv.sock" --id 1 --key "$T/c1.jwk" --server-key "$T/server.pub.jwk")
C2=("$D" kv --connect "unix:$T/kv.sock" --id 2 --key "$T/c2.jwk" --server-key "$T/server.pub.jwk")

# commands and replies
[ "$("${C1[@]}" SET foo bar)" = OK ] || die "SET"
[ "$("${C2[@]}" GET foo)" = '"bar"' ] || die "GET from another client"
[ "$("${C1[@]}" GET nothing)" = '(nil)' ] || die "GET of a missing key"
[ "$("${C1[@]}" HSET h f1 v1 f2 v2)" = '(integer) 2' ] || die "HSET"
[ "$("${C1[@]}" INCRBY n -5)" = '(integer) -5' ] || die "INCRBY with a negative argument"
[ "$("${C1[@]}" RPUSH l a b c)" = '(integer) 3' ] || die "RPUSH"
[ "$("${C1[@]}" LRANGE l 0 -1)" = '["a", "b", "c"]' ] || die "LRANGE"
"${C1[@]}" HGET foo x | grep -q '^(error) WRONGTYPE' || die "a Redis error is a (signed) reply"
ok
printf 'SADD s x y\nSCARD s\n# a comment\n\nDEL l\n' | "${C2[@]}" - >"$T/lines" || die "commands from stdin"
[ "$(tr '\n' ' ' <"$T/lines")" = '(integer) 2 (integer) 2 (integer) 1 ' ] || die "stdin replies: $(cat "$T/lines")"
ok

# refused: not logged, exit 2, with the reason
out=$("${C1[@]}" FLUSHALL 2>&1) && die "FLUSHALL accepted"
echo "$out" | grep -q 'not allowed' || die "FLUSHALL message: $out"
out=$("${C1[@]}" SET onlykey 2>&1) && die "SET with one argument accepted"
echo "$out" | grep -q 'wrong number of arguments' || die "arity message: $out"
"$D" -q keygen -a DSig -o "$T/c9.jwk" || die "key 9"
out=$("$D" kv --connect "unix:$T/kv.sock" --id 9 --key "$T/c9.jwk" --server-key "$T/server.pub.jwk" GET foo 2>&1) &&
    die "unknown client accepted"
echo "$out" | grep -q 'not registered' || die "unknown client message: $out"
out=$("$D" kv --connect "unix:$T/kv.sock" --id 1 --key "$T/c1.jwk" --server-key "$T/keys/client-2.jwk" GET foo 2>&1) &&
    die "wrong server key accepted"
echo "$out" | grep -q 'does not hold the expected server key' || die "server key message: $out"
ok

# a receipt: verified offline with the server's public key, refused once altered
"${C1[@]}" --receipt "$T/r.bin" INCR n >/dev/null || die "INCR with --receipt"
"$D" audit receipt "$T/r.bin" --server-key "$T/server.pub.jwk" >"$T/rcpt" || die "receipt check"
grep -q 'client 1 request .* is log entry' "$T/rcpt" && grep -q 'result (integer) -4' "$T/rcpt" || die "receipt: $(cat "$T/rcpt")"
python3 -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[90]^=1; open(sys.argv[1],"wb").write(b)' "$T/r.bin"
"$D" audit receipt "$T/r.bin" --server-key "$T/server.pub.jwk" >/dev/null 2>&1
[ $? -eq 1 ] || die "an altered receipt must exit 1"
ok

# redis-server killed and restarted under load: every INCR executed exactly once
for _ in $(seq 1500); do echo "INCR counter"; done >"$T/incr"
"${C1[@]}" - <"$T/incr" >"$T/incr.out" 2>"$T/incr.err" &
CP=$!
for _ in $(seq 400); do
    [ "$(wc -l <"$T/incr.out")" -ge 300 ] && break
    sleep 0.02
done
kill -9 "$AP"
wait "$AP" 2>/dev/null
sleep 0.3
start_redis a
AP=$RPID
wait "$CP" || die "the client failed across the Redis restart: $(cat "$T/incr.err")"
[ "$(tail -1 "$T/incr.out")" = '(integer) 1500' ] || die "last INCR reply: $(tail -1 "$T/incr.out")"
[ "$(sort -u "$T/incr.out" | wc -l)" -eq 1500 ] || die "INCR replies not 1..1500"
[ "$("${C2[@]}" GET counter)" = '"1500"' ] || die "counter after the restart"
grep -q 'data set rebuilt from the log' "$T/serve.log" || die "no rebuild noted"
ok

# the log: audited with the public keys only, replayed into an empty redis-server: the same data set
"$D" audit verify "$T/kv.log" --keys "$T/keys" >"$T/audit" || die "audit verify: $(cat "$T/audit")"
grep -q ': OK: .* entries from 2 clients verified' "$T/audit" || die "audit output: $(cat "$T/audit")"
out=$("$D" audit verify -q "$T/kv.log" --keys "$T/keys" 2>&1) || die "audit verify -q: $out"
[ -z "$out" ] || die "audit verify -q printed: $out"     # as dsig verify -q: the exit status says it
start_redis b
"$D" -q audit replay "$T/kv.log" --keys "$T/keys" --redis "unix:$T/b.sock" >/dev/null || die "replay"
da=$(redis-cli -s "$T/a.sock" DEBUG DIGEST)
db=$(redis-cli -s "$T/b.sock" DEBUG DIGEST)
[ -n "$da" ] && [ "$da" = "$db" ] || die "data sets differ: $da vs $db"
[ "$(redis-cli -s "$T/a.sock" DBSIZE)" = "$(redis-cli -s "$T/b.sock" DBSIZE)" ] || die "DBSIZE differs"
out=$("$D" audit replay "$T/kv.log" --keys "$T/keys" --redis "unix:$T/b.sock" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q 'needs an empty one' || die "replay into a non-empty Redis: $out"
ok

# a tampered copy: the first bad entry, exit 1
python3 - "$T/kv.log" "$T/bad.log" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off = 0
for _ in range(9):   # to the 10th record
    off += struct.unpack(">I", b[off + 8:off + 12])[0]
b[off + 52 + 72 + 3] ^= 1   # a byte of its request body
open(sys.argv[2], "wb").write(b)
PY
out=$("$D" audit verify "$T/bad.log" --keys "$T/keys" 2>&1)
[ $? -eq 1 ] || die "a tampered log must exit 1"
echo "$out" | grep -q 'FAILED after 9 good entries: entry 10 at byte .*signature does not verify' || die "verdict: $out"
out=$("$D" -q audit verify "$T/bad.log" --keys "$T/keys" 2>&1)
[ $? -eq 1 ] && echo "$out" | grep -q 'FAILED after 9' || die "-q must not hide a failed audit: $out"
ok

# the server restarted: Redis rebuilt from the log
kill -TERM "$SP"
wait "$SP" 2>/dev/null
redis-cli -s "$T/a.sock" SET counter 7 >/dev/null
start_server
[ "$("${C2[@]}" GET counter)" = '"1500"' ] || die "counter after a server restart"
[ "$("${C2[@]}" GET foo)" = '"bar"' ] || die "foo after a server restart"
ok
echo "$PASSED passed"

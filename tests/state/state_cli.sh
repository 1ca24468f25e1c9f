#!/usr/bin/env bash
# state_cli.sh — the dsig tool with stateful keys (HSS-LMS): keygen writes a state file (0600, never
# replaced), sign -k FILE.state advances it, verify with the public JWK; JWK keys never sign; two
# concurrent signers on one key cannot both sign; a restored copy is refused; exhaustion is clear;
# `dsig sign` processes SIGKILLed at random moments never reuse an index.
source "${DSIG_SOURCE_DIR:?}/tests/cli/lib.sh"

if ! "$D" list --names | grep -qx HSS-LMS; then
    echo "HSS-LMS not registered: skipped"
    exit 0
fi
export DSIG_STATE_REGISTRY=$T/registry
P1="LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"
printf 'payload\n' >"$T/m"

# ---- keygen, sign, verify --------------------------------------------------------------------------
CASE=keygen
run 0 "$D" keygen -a HSS-LMS -o "$T/k.state" --pub "$T/k.jwk" --param "$P1"
check "state file mode 0600" [ "$(stat -c %a "$T/k.state")" = 600 ]
check "state file magic" [ "$(head -c 11 "$T/k.state")" = "dsig-state " ]
check "public JWK has no private member" bash -c "! grep -q priv '$T/k.jwk'"
reject "already exists|never replaced" "$D" keygen -a HSS-LMS -o "$T/k.state" --param "$P1"
reject "never replaced|state file" "$D" keygen -a HSS-LMS -o "$T/k.state" --force
reject "state file" "$D" keygen -a HSS-LMS
reject "state file" "$D" keygen -a HSS-LMS -o "$T/p.state" --pem
reject "unknown|LMS" "$D" keygen -a HSS-LMS -o "$T/bad.state" --param "LMS_NOPE/LMOTS_SHA256_N32_W8"
check "no state file after a refused keygen" [ ! -e "$T/bad.state" ]
reject "parameter sets|param" "$D" keygen -a Ed25519 --param X

CASE=sign
for i in 0 1 2; do
    run 0 "$D" sign -k "$T/k.state" --format raw -o "$T/s$i" "$T/m"
    run 0 "$D" verify -k "$T/k.jwk" -s "$T/s$i" --format raw -a HSS-LMS "$T/m"
    check "signature $i uses index $i" [ "$(od -An -tu4 --endian=big -j4 -N4 "$T/s$i" | tr -d ' ')" = "$i" ]
done
run 0 "$D" sign -k "$T/k.state" -o "$T/s.jws" "$T/m"
run 0 "$D" verify -k "$T/k.jwk" -s "$T/s.jws" "$T/m"
reject "only from its state file" "$D" sign -k "$T/k.jwk" "$T/m"
reject "same file" "$D" sign -k "$T/k.state" -o "$T/k.state" "$T/m"
check "state file still a state file" [ "$(head -c 11 "$T/k.state")" = "dsig-state " ]

# ---- two concurrent signers: the second is refused while the first holds the key ---------------------
CASE=concurrent
mkfifo "$T/fifo"
"$D" sign -k "$T/k.state" --format raw -o "$T/s-first" "$T/fifo" 2>"$T/first.err" &
first=$!
# Wait (without touching the lock) until the first signer has the key open: it opens the registry
# file right after locking the state file, then blocks opening the FIFO.
for _ in $(seq 200); do
    kill -0 "$first" 2>/dev/null || die "first signer exited early: $(cat "$T/first.err")"
    if ls -l "/proc/$first/fd" 2>/dev/null | grep -q "/registry/"; then break; fi
    sleep 0.05
done
reject "in use by another process" "$D" sign -k "$T/k.state" --format raw -o "$T/s-second" "$T/m"
check "second signer wrote nothing" [ ! -e "$T/s-second" ]
printf 'payload\n' >"$T/fifo"
wait "$first" || die "first signer failed: $(cat "$T/first.err")"
run 0 "$D" verify -k "$T/k.jwk" -s "$T/s-first" --format raw -a HSS-LMS "$T/m"

# ---- a restored copy is refused --------------------------------------------------------------------
CASE=rollback
cp -p "$T/k.state" "$T/backup.state"
run 0 "$D" sign -k "$T/k.state" --format raw -o "$T/s-new" "$T/m"
cp -p "$T/backup.state" "$T/k.state"
reject "key state file refused\): state file .* is older than the key's high-water mark" \
    "$D" sign -k "$T/k.state" --format raw -o "$T/s-x" "$T/m"
grep -q "context used in the wrong state" "$ERR" && die "a refused state file reported as a misused context"
check "no signature from the restored copy" [ ! -e "$T/s-x" ]
reject "chmod 600" bash -c "chmod 644 '$T/backup.state' && '$D' sign -k '$T/backup.state' '$T/m'"

# ---- exhaustion ------------------------------------------------------------------------------------
CASE=exhausted
run 0 "$D" keygen -q -a HSS-LMS -o "$T/small.state" --param "$P1"     # 32 signatures
DSIG_STATE_RESERVE=30 run 0 "$D" sign -k "$T/small.state" -o /dev/null "$T/m" # index 0; 1..29 lost
DSIG_STATE_RESERVE=8 run 0 "$D" sign -k "$T/small.state" -o /dev/null "$T/m"  # index 30 (window clipped)
reject "made all its 32 signatures" "$D" sign -k "$T/small.state" -o "$T/s-ex" "$T/m"
check "no signature from an exhausted key" [ ! -e "$T/s-ex" ]
reject "DSIG_STATE_RESERVE" env DSIG_STATE_RESERVE=0 "$D" sign -k "$T/small.state" "$T/m"

# ---- dsig sign processes SIGKILLed at random moments ---------------------------------------------------
CASE=kill
P2="LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4" # 1024, cheap loads
run 0 "$D" keygen -q -a HSS-LMS -o "$T/kk.state" --pub "$T/kk.jwk" --param "$P2"
SIGLEN=$((4 + 2348 + 56 + 2348)) # Nspk, LMS signature (q, W4 OTS, type, 5-node path), level-1 pub, ...
counter() { local n; n=$(stat -c %s "$1"); od -An -tu8 --endian=big -j $((n - 40)) -N8 "$1" | tr -d ' '; }
mkdir "$T/kill"
# Calibrate: kills land anywhere in [0, 1.3 x one uninterrupted run] (slower under sanitizers).
t0=$(date +%s%N)
run 0 "$D" sign -q -k "$T/kk.state" --format raw -o "$T/calib" "$T/m"
life_ms=$((($(date +%s%N) - t0) / 1000000 + 1))
RANDOM=4242
KILLS=${STATE_CLI_KILLS:-100}
killed=0
for i in $(seq "$KILLS"); do
    r=$((1 + RANDOM % 8))
    before=$(counter "$T/kk.state")
    DSIG_STATE_RESERVE=$r "$D" sign -q -k "$T/kk.state" --format raw -o "$T/kill/$i" "$T/m" 2>/dev/null &
    pid=$!
    ms=$(((RANDOM * 32768 + RANDOM) % (life_ms * 13 / 10 + 1)))
    sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
    kill -9 "$pid" 2>/dev/null && killed=$((killed + 1)) || true
    wait "$pid" 2>/dev/null || true
    after=$(counter "$T/kk.state")
    used=0
    if [ -e "$T/kill/$i" ] && [ "$(stat -c %s "$T/kill/$i")" -eq "$SIGLEN" ]; then used=1; fi
    lost=$((after - before - used))
    [ "$lost" -ge 0 ] && [ "$lost" -le "$r" ] ||
        die "run $i: counter $before -> $after with $used signature(s): more than the window of $r lost"
done
n=0
: >"$T/indices"
for f in "$T"/kill/*; do
    [ -e "$f" ] || continue
    [ "$(stat -c %s "$f")" -eq "$SIGLEN" ] || continue # torn by the kill: never released
    run 0 "$D" verify -q -k "$T/kk.jwk" -s "$f" --format raw -a HSS-LMS "$T/m"
    q0=$(od -An -tu4 --endian=big -j4 -N4 "$f" | tr -d ' ')
    q1=$(od -An -tu4 --endian=big -j $((4 + 2348 + 56)) -N4 "$f" | tr -d ' ')
    echo $((q0 * 32 + q1)) >>"$T/indices"
    n=$((n + 1))
done
dups=$(sort -n "$T/indices" | uniq -d | head -3)
check "no index used twice (duplicates: $dups)" [ -z "$dups" ]
check "some signatures survived" [ "$n" -gt 0 ]
echo "kill loop: $KILLS runs, $killed killed while running, $n signatures verified, final counter $(counter "$T/kk.state")"
finish

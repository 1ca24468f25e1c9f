#!/usr/bin/env bash
# `dsig bench sig` / `dsig bench stream` on the stateful schemes (HSS-LMS, XMSS, XMSSMT): every chosen
# parameter set gives its rows (sig: keygen, sign, verify, sign-r1), the parameter set and reserve are
# printed, and the private state-file directory is gone afterwards — also after SIGTERM mid-run.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export TMPDIR=$tmp/t
mkdir -p "$TMPDIR"
algs=HSS-LMS,XMSS,XMSSMT
left() { ls "$TMPDIR" | grep -q dsig-bench-state && fail "state directory left behind after $1: $(ls -R "$TMPDIR")"; }

"$tool" bench sig --quick --alg "$algs" --measure 5 --max-time 0.05 >"$tmp/sig" 2>"$tmp/sig.err" \
    || { cat "$tmp/sig.err"; fail "bench sig"; }
for set in 'XMSS-SHA2_10_256' 'XMSSMT-SHA2_20/4_256' 'HSS-LMS:2xH10/W4' 'HSS-LMS:H10/W4'; do
    for op in keygen sign verify sign-r1; do
        grep -q "^$set *| *[0-9]* | $op " "$tmp/sig" || fail "no $op row for $set: $(cat "$tmp/sig")"
    done
done
grep -q 'param LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4, reserve 1024' \
    "$tmp/sig.err" || fail "parameter set / reserve not printed: $(cat "$tmp/sig.err")"
grep -q 'Skipped: 0' "$tmp/sig" || fail "rows skipped: $(cat "$tmp/sig.err")"
left "bench sig"

# --reserve reaches the keys; JSON rows.
"$tool" bench sig --quick --alg XMSSMT --measure 3 --max-time 0.05 --reserve 7 --json >"$tmp/sj" \
    2>"$tmp/sj.err" || { cat "$tmp/sj.err"; fail "bench sig --reserve 7"; }
grep -q 'reserve 7' "$tmp/sj.err" || fail "--reserve not applied"
[ "$(grep -c '"alg":"XMSSMT-SHA2_20/4_256"' "$tmp/sj")" -eq 4 ] || fail "JSON rows: $(cat "$tmp/sj")"
"$tool" bench sig --reserve 0 >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--reserve 0 accepted"
grep -q 'valid:' "$tmp/err" || fail "--reserve message: $(cat "$tmp/err")"
left "bench sig --json"

"$tool" bench stream --quick --alg "$algs" --sizes 64K --warmup 0 --measure 2 --out "$tmp/o" \
    >"$tmp/st" 2>"$tmp/st.err" || { cat "$tmp/st.err"; fail "bench stream"; }
for set in 'XMSS-SHA2_10_256' 'XMSSMT-SHA2_20/4_256' 'HSS-LMS:2xH10/W4' 'HSS-LMS:H10/W4'; do
    grep -q "| $set *| 64 " "$tmp/st" || fail "no stream row for $set: $(cat "$tmp/st")"
    grep -q "^  $set: mean [0-9.]* ms over 1 keys" "$tmp/st" || fail "no keygen line for $set"
done
grep -q 'Skipped: 0' "$tmp/st" || fail "stream rows skipped: $(cat "$tmp/st.err")"
left "bench stream"

# SIGTERM while state files exist: the handler removes them.
"$tool" bench sig --alg XMSS --max-time 30 >/dev/null 2>"$tmp/k.err" &
pid=$!
for _ in $(seq 1 600); do
    ls "$TMPDIR"/dsig-bench-state-*/*.state >/dev/null 2>&1 && break
    sleep 0.05
done
ls "$TMPDIR"/dsig-bench-state-*/*.state >/dev/null 2>&1 || { kill $pid; fail "no state file appeared"; }
kill -TERM $pid
wait $pid
[ $? -eq 143 ] || fail "bench did not die of SIGTERM"
left "SIGTERM"
echo ok

#!/usr/bin/env bash
# bench/compare_liboqs.sh without liboqs: a stand-in speed_sig (fixed figures in speed_sig's table
# format) checks the script's option errors, its tables and ratios; where the machine has AVX-512 and
# CPUID faulting, bench/preload/noavx512.c must hide AVX-512 from dsig, and real crashes under it must
# still crash. No timing checks.
set -u
tool=${DSIG_TOOL:?DSIG_TOOL not set}
src=${DSIG_SOURCE_DIR:?DSIG_SOURCE_DIR not set}
script=$src/bench/compare_liboqs.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The stand-in: `--algs` lists names; `-d S ALG` prints the rows compare_liboqs.sh reads (mean µs in
# the fourth column); its CPU line comes from CPUID as the real one's does (here: from /proc/cpuinfo).
cat >"$tmp/speed_sig" <<'SH'
#!/usr/bin/env bash
if [ "$1" = --algs ]; then printf 'ML-DSA-44\nFalcon-512\n'; exit 0; fi
echo "OQS version:      0.0.0 (stand-in)"
echo "SHA-3:            stand-in"
echo "keypair | 100 | 1.000 | 40.000 | 1.0 | 1 | 1"
echo "sign    | 100 | 1.000 | 400.000 | 1.0 | 1 | 1"
echo "verify  | 100 | 1.000 | 80.000 | 1.0 | 1 | 1"
SH
chmod +x "$tmp/speed_sig"

st() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
[ "$(st bash "$script")" = 2 ] || fail "no speed_sig: status"
[ "$(st bash "$script" --dsig "$tool" --bogus "$tmp/speed_sig")" = 2 ] && grep -q 'unknown option --bogus' "$tmp/err" ||
    fail "unknown option: $(cat "$tmp/err")"
[ "$(st bash "$script" --dsig "$tool" "$tmp/nowhere")" = 2 ] && grep -q 'not an executable speed_sig' "$tmp/err" ||
    fail "missing speed_sig: $(cat "$tmp/err")"
[ "$(st bash "$script" --dsig "$tool" --algs SLH-DSA-SHA2-128f "$tmp/speed_sig")" = 2 ] &&
    grep -q 'no enabled liboqs algorithm' "$tmp/err" || fail "algorithm the build lacks: $(cat "$tmp/err")"
[ "$(st bash "$script" --dsig "$tool" --rounds 0 "$tmp/speed_sig")" = 2 ] || fail "--rounds 0 accepted"

# A real dsig run against the stand-in: one round, a short duration, both tables with a ratio per cell.
[ "$(st bash "$script" --dsig "$tool" --rounds 1 --duration 0.05 --clock wall --algs ML-DSA-44 --raw "$tmp/speed_sig")" = 0 ] ||
    fail "stand-in run: $(cat "$tmp/err")"
grep -q '^# liboqs: OQS version: *0.0.0 (stand-in)' "$tmp/out" || fail "liboqs header: $(cat "$tmp/out")"
[ "$(grep -c '^| ML-DSA-44 | [0-9.]* / 40.0 ([0-9.]*×) | [0-9.]* / 400.0 ([0-9.]*×) | [0-9.]* / 80.0 ([0-9.]*×) |$' "$tmp/out")" = 2 ] ||
    fail "tables: $(cat "$tmp/out")"
grep -q '^1 liboqs ML-DSA-44 sign 400.000$' "$tmp/out" || fail "raw rows"

# --no-avx512: only where there is something to hide and a way to hide it, and not under the
# sanitizers (their runtime must come first in the library list and owns SIGSEGV).
on() { case "${1:-}" in '' | OFF | off | 0 | FALSE | false | NO | no) return 1 ;; *) return 0 ;; esac; }
if on "${DSIG_SANITIZE:-}" || on "${DSIG_TSAN:-}"; then
    echo "noavx512 part skipped under sanitizers"; exit 0
fi
if ! grep -qw avx512f /proc/cpuinfo || ! grep -qw cpuid_fault /proc/cpuinfo; then
    echo "noavx512 part skipped: no AVX-512 or no CPUID faulting on this machine"; exit 0
fi
cc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/noavx512.so" "$src/bench/preload/noavx512.c" || fail "shim build"
"$tool" bench keccak --quick --runs 1 | head -1 | grep -q 'cpu: .*avx512' || fail "dsig sees no AVX-512 without the shim"
LD_PRELOAD=$tmp/noavx512.so "$tool" bench keccak --quick --runs 1 >"$tmp/k" || fail "dsig under the shim"
head -1 "$tmp/k" | grep -q '^keccak back-end: avx2 ' || fail "under the shim: $(head -1 "$tmp/k")"
head -1 "$tmp/k" | grep -q avx512 && fail "under the shim dsig still sees AVX-512: $(head -1 "$tmp/k")"
# A real fault and a SIGSEGV sent by a process still end the process with SIGSEGV (status 139).
printf 'int main(void) { *(volatile int *)0 = 1; return 0; }\n' >"$tmp/crash.c"
cc -O0 -o "$tmp/crash" "$tmp/crash.c" || fail "crash build"
crashes() { bash -c "$1" 2>/dev/null; [ $? = 139 ]; } # the inner shell reports the signal, not this one
crashes "LD_PRELOAD=$tmp/noavx512.so $tmp/crash; exit \$?" || fail "a NULL store under the shim did not crash"
crashes "LD_PRELOAD=$tmp/noavx512.so bash -c 'kill -SEGV \$\$'; exit \$?" || fail "kill -SEGV under the shim did not end the process"
# The script with the mask: its header shows dsig's AVX2 back-end.
[ "$(st bash "$script" --dsig "$tool" --no-avx512 --rounds 1 --duration 0.05 --algs ML-DSA-44 "$tmp/speed_sig")" = 0 ] ||
    fail "--no-avx512 run: $(cat "$tmp/err")"
grep -q '^# dsig keccak back-end: avx2 ' "$tmp/out" && grep -q '^# --no-avx512: CPUID shows no AVX-512' "$tmp/out" ||
    fail "--no-avx512 header: $(head -8 "$tmp/out")"
echo "ok"

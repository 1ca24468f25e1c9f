#!/usr/bin/env bash
# bench/compare_liboqs.sh — dsig against liboqs in the same run: key generation, signing and
# verification of the post-quantum signatures both implement, alternating the two tools.
#
#   bench/compare_liboqs.sh [options] SPEED_SIG
#     SPEED_SIG         liboqs' tests/speed_sig of a liboqs build (docs/benchmarks.md says how to build one)
#     --dsig PATH       the dsig tool (default: build/release/dsig next to this script)
#     --rounds N        rounds (default 3); the table shows the median of the rounds' figures
#     --duration S      seconds per operation and tool in each round (default 1: speed_sig -d S,
#                       dsig bench sig --max-time S)
#     --algs LIST       dsig algorithm names, comma-separated (default: ML-DSA-44,ML-DSA-65,ML-DSA-87,
#                       FALCON512,FALCON1024,SLH-DSA-SHA2-128f,SLH-DSA-SHAKE-128f)
#     --clock KIND      cpu (default): both tools time each operation by the CPU time of the thread —
#                       speed_sig through bench/preload/cputime.c (LD_PRELOAD, compiled with $CC or cc
#                       into a temporary directory), dsig with --clock cpu — so that time slices of other
#                       processes do not count; wall: both use the wall clock, as they do by default
#     --no-avx512       both tools run as on a CPU without AVX-512: bench/preload/noavx512.c
#                       (LD_PRELOAD, CPUID faulting) clears the AVX-512 bits of CPUID for both processes,
#                       GLIBC_TUNABLES and OPENSSL_ia32cap hide them from glibc and libcrypto. (Without it,
#                       DSIG_CPU_DISABLE=avx512 turns off dsig's AVX-512 code only: liboqs keeps its own.)
#                       Needs CPUID faulting (/proc/cpuinfo flag cpuid_fault); exits 2 where it is absent.
#     --raw             also print every round's figures
#
# Each round runs, for every algorithm, `speed_sig -d S ALG` and `dsig bench sig --alg ALG`, one after
# the other, liboqs first in odd rounds and dsig first in even ones, so both see the same machine load.
# dsig takes as many samples as fit in the duration, like speed_sig.
# speed_sig reports the mean time of an operation, dsig bench sig the median and the mean. The first
# table sets dsig's median against liboqs' mean (a mean is pulled up by the slow outliers of a loaded
# machine, so that table favours dsig), the second dsig's mean against liboqs' mean (like for like).
# Each cell is the median over the rounds of dsig's figure / liboqs' figure in µs, and their ratio
# (below 1: dsig is faster). DSIG_CPU_DISABLE in the environment applies to dsig (e.g. avx512). To
# pin both tools to one core, run the script under taskset (e.g. taskset -c 1 bench/compare_liboqs.sh).
# Only same-run ratios mean anything: rerun it on the machine you care about.
set -euo pipefail

usage() { sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//' >&2; exit 2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DSIG="$HERE/../build/release/dsig"
ROUNDS=3
DUR=1
ALGS="ML-DSA-44,ML-DSA-65,ML-DSA-87,FALCON512,FALCON1024,SLH-DSA-SHA2-128f,SLH-DSA-SHAKE-128f"
RAW=0
NOAVX512=0
CLOCK=cpu
SPEED=""
while [ $# -gt 0 ]; do
    case "$1" in
    --dsig) DSIG=${2:?--dsig needs a path}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --duration) DUR=${2:?--duration needs seconds}; shift 2 ;;
    --algs) ALGS=${2:?--algs needs a list}; shift 2 ;;
    --clock) CLOCK=${2:?--clock needs cpu or wall}; shift 2 ;;
    --raw) RAW=1; shift ;;
    --no-avx512) NOAVX512=1; shift ;;
    -h | --help) usage ;;
    -*) echo "compare_liboqs: unknown option $1" >&2; usage ;;
    *) [ -z "$SPEED" ] || usage; SPEED=$1; shift ;;
    esac
done
[ -n "$SPEED" ] || usage
[ -x "$SPEED" ] || { echo "compare_liboqs: $SPEED is not an executable speed_sig" >&2; exit 2; }
[ -x "$DSIG" ] || { echo "compare_liboqs: $DSIG is not an executable dsig tool (build it: make build)" >&2; exit 2; }
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "compare_liboqs: --rounds must be a positive integer" >&2; exit 2 ;; esac
case "$DUR" in '' | *[!0-9.]*) echo "compare_liboqs: --duration must be a number of seconds" >&2; exit 2 ;; esac
case "$CLOCK" in cpu | wall) ;; *) echo "compare_liboqs: --clock must be cpu or wall" >&2; exit 2 ;; esac

# liboqs' name of a dsig algorithm: ML-DSA-44 → ML-DSA-44, FALCON512 → Falcon-512,
# SLH-DSA-SHA2-128f → SLH_DSA_PURE_SHA2_128F; empty if liboqs has no such name.
oqs_name() {
    case "$1" in
    ML-DSA-*) echo "$1" ;;
    FALCON*) echo "Falcon-${1#FALCON}" ;;
    SLH-DSA-*) local r=${1#SLH-DSA-}; r=${r//-/_}; echo "SLH_DSA_PURE_${r^^}" ;;
    *) echo "" ;;
    esac
}

OQS_ALGS=$("$SPEED" --algs)
IFS=, read -r -a LIST <<<"$ALGS"
for a in "${LIST[@]}"; do
    o=$(oqs_name "$a")
    if [ -z "$o" ] || ! grep -qx -- "$o" <<<"$OQS_ALGS"; then
        echo "compare_liboqs: $a: no enabled liboqs algorithm ${o:-of that family} in $SPEED" >&2
        exit 2
    fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/dsig-compare-liboqs.XXXXXX")
trap 'rm -rf "$T"' EXIT
# $T/data: one line per measurement: round tool alg op microseconds
: >"$T/data"
# PRELOAD: the environment liboqs runs in; DSIG_ENV: the one dsig runs in (both: the CPU mask).
PRELOAD=(env)
DSIG_ENV=(env)
if [ "$CLOCK" = cpu ]; then
    "${CC:-cc}" -O2 -Wall -Wextra -Werror -shared -fPIC -o "$T/cputime.so" "$HERE/preload/cputime.c" ||
        { echo "compare_liboqs: cannot build $HERE/preload/cputime.c (set CC, or use --clock wall)" >&2; exit 2; }
    PRELOAD+=("LD_PRELOAD=$T/cputime.so")
fi
if [ "$NOAVX512" = 1 ]; then
    "${CC:-cc}" -O2 -Wall -Wextra -Werror -shared -fPIC -o "$T/noavx512.so" "$HERE/preload/noavx512.c" ||
        { echo "compare_liboqs: cannot build $HERE/preload/noavx512.c (set CC)" >&2; exit 2; }
    # glibc: its string functions' AVX-512 variants; libcrypto: the leaf-7 EBX AVX-512 bits (F, DQ,
    # IFMA, CD, BW, VL) of its second capability word.
    MASK=("GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD" "OPENSSL_ia32cap=:~0xD0230000")
    if [ "$CLOCK" = cpu ]; then PRELOAD=(env "LD_PRELOAD=$T/cputime.so $T/noavx512.so"); else PRELOAD=(env "LD_PRELOAD=$T/noavx512.so"); fi
    PRELOAD+=("${MASK[@]}")
    DSIG_ENV=(env "LD_PRELOAD=$T/noavx512.so" "${MASK[@]}")
    "${DSIG_ENV[@]}" true || { echo "compare_liboqs: --no-avx512: this machine cannot hide AVX-512 (no CPUID faulting)" >&2; exit 2; }
fi

run_oqs() { # round alg
    local o out
    o=$(oqs_name "$2")
    out=$("${PRELOAD[@]}" "$SPEED" -d "$DUR" "$o") || { echo "compare_liboqs: $SPEED -d $DUR $o failed" >&2; exit 1; }
    [ -s "$T/oqs_info" ] || grep -E '^(OQS version|Git commit|CPU exts active|SHA-3|SHA-2)' <<<"$out" >"$T/oqs_info" || true
    awk -F'|' -v r="$1" -v a="$2" '
        { gsub(/ /, "", $1) }
        $1 == "keypair" { op = "keygen" } $1 == "sign" { op = "sign" } $1 == "verify" { op = "verify" }
        ($1 == "keypair" || $1 == "sign" || $1 == "verify") { gsub(/ /, "", $4); print r, "liboqs", a, op, $4 }
    ' <<<"$out" >>"$T/data"
}

run_dsig() { # round alg
    local out
    out=$("${DSIG_ENV[@]}" "$DSIG" bench sig --alg "$2" --max-time "$DUR" --measure 1000000 --clock "$CLOCK" --json 2>/dev/null) ||
        { echo "compare_liboqs: $DSIG bench sig --alg $2 failed" >&2; exit 1; }
    # the median, and the mean (1 / ops_per_s: dsig counts the samples over their summed time)
    awk -v r="$1" -v a="$2" '
        match($0, /"op":"[a-z0-9-]+"/) { op = substr($0, RSTART + 6, RLENGTH - 7) }
        !(op == "keygen" || op == "sign" || op == "verify") { next }
        match($0, /"median_ns":[0-9.]+/) { printf "%s dsig %s %s %.3f\n", r, a, op, substr($0, RSTART + 12, RLENGTH - 12) / 1000 }
        match($0, /"ops_per_s":[0-9.]+/) { ops = substr($0, RSTART + 12, RLENGTH - 12)
            if (ops > 0) printf "%s dsig-mean %s %s %.3f\n", r, a, op, 1e6 / ops }
    ' <<<"$out" >>"$T/data"
}

for ((r = 1; r <= ROUNDS; r++)); do
    for a in "${LIST[@]}"; do
        echo "compare_liboqs: round $r/$ROUNDS: $a" >&2
        if ((r % 2)); then run_oqs "$r" "$a"; run_dsig "$r" "$a"; else run_dsig "$r" "$a"; run_oqs "$r" "$a"; fi
    done
done

echo "# dsig vs liboqs, same run: $ROUNDS rounds of ${DUR} s per operation, median of rounds; clock: $CLOCK"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')," \
    "$(nproc) CPUs for this run (of $(nproc --all)); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "# dsig: $("$DSIG" version 2>/dev/null | head -1); DSIG_CPU_DISABLE=${DSIG_CPU_DISABLE:-(unset)}"
echo "# dsig $("${DSIG_ENV[@]}" "$DSIG" bench keccak --quick --runs 1 2>/dev/null | head -1)"
[ "$NOAVX512" = 0 ] || echo "# --no-avx512: CPUID shows no AVX-512 to either tool (bench/preload/noavx512.c)"
sed 's/^/# liboqs: /' "$T/oqs_info"
# table DSIG_TOOL_COLUMN: the rows for dsig's figures of that kind against liboqs' means
table() {
    echo "| alg | keygen dsig / liboqs µs | sign | verify |"
    echo "|---|---|---|---|"
    for a in "${LIST[@]}"; do
        row="| $a"
        for op in keygen sign verify; do
            cell=$(awk -v a="$a" -v op="$op" -v mine="$1" '
                function median(v, n,   i, j, t) {
                    for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
                    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
                }
                $3 == a && $4 == op && $2 == mine { d[++nd] = $5 }
                $3 == a && $4 == op && $2 == "liboqs" { o[++no] = $5 }
                END {
                    if (!nd || !no) { print "–"; exit }
                    md = median(d, nd); mo = median(o, no)
                    fmt = md >= 1000 ? "%.0f / %.0f (%.2f×)" : "%.1f / %.1f (%.2f×)"
                    printf fmt, md, mo, md / mo
                }' "$T/data")
            row="$row | $cell"
        done
        echo "$row |"
    done
}
echo "# cells: dsig / liboqs µs (ratio; below 1: dsig is faster), each the median of the rounds' figures"
echo
echo "dsig median per operation / liboqs mean (speed_sig's figure):"
echo
table dsig
echo
echo "dsig mean per operation / liboqs mean (the same statistic on both sides):"
echo
table dsig-mean
if [ "$RAW" = 1 ]; then
    echo
    echo "# round tool alg op µs (tool dsig: median, dsig-mean: mean, liboqs: mean)"
    cat "$T/data"
fi

#!/usr/bin/env bash
# The installed tree works for a user, wherever it was installed: headers, libraries, the tool, and a
# relocatable dsig.pc — `cc prog.c $(pkg-config --cflags --libs dsig)` with nothing but
# PKG_CONFIG_PATH set, also after the tree was moved, and `pkg-config --static` linking the program
# against libdsig.a (no libdsig.so in the result).
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/dsig/dsig.h" || fail "header not installed"
test -x "$prefix/bin/dsig" || fail "tool not installed"
pc=$(find "$prefix" -name dsig.pc | head -n1)
test -n "$pc" || fail "dsig.pc not installed"
"$prefix/bin/dsig" --help >/dev/null 2>&1 || "$prefix/bin/dsig" help >/dev/null
printf 'hello\n' >"$work/msg"
passed=0

# Build examples/sign_file.c with the flags pkg-config gives for the tree at $1; run it on $work/msg.
build_example() {
    local root=$1 out=$2 static=${3:-}
    local pcdir
    pcdir=$(dirname "$(find "$root" -name dsig.pc | head -n1)")
    # No --define-variable: dsig.pc must find its own prefix.
    flags=$(PKG_CONFIG_PATH=$pcdir pkg-config $static --cflags --libs dsig) || fail "pkg-config $static"
    case $flags in *"$root"*) ;; *) fail "pkg-config flags do not point into $root: $flags" ;; esac
    cc -std=c11 -Wall -Wextra -Werror "$src/examples/sign_file.c" $flags -o "$out" ||
        fail "cc with \$(pkg-config $static --cflags --libs dsig) = $flags"
}
check_run() { # check_run PROGRAM LIBDIR
    local out
    out=$(LD_LIBRARY_PATH=${2:-} "$1" "$work/msg") || fail "$1 exits $?"
    printf '%s\n' "$out" | head -1 | grep -Eq '^Ed25519 [A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$' ||
        fail "unexpected signature line: $out"
    printf '%s\n' "$out" | grep -qx "verified: $work/msg" || fail "the example did not verify: $out"
    passed=$((passed + 1))
}
libdir() { dirname "$(find "$1" -name 'libdsig.so*' | head -n1)"; }

# 1. Shared: the installed prefix as it is.
build_example "$prefix" "$work/sign_file"
check_run "$work/sign_file" "$(libdir "$prefix")"
# 2. Relocated: the whole tree moved elsewhere still builds (dsig.pc carries no absolute path).
mv "$prefix" "$work/moved"
grep -q "$prefix" "$(find "$work/moved" -name dsig.pc)" && fail "dsig.pc names the install prefix"
build_example "$work/moved" "$work/sign_file2"
check_run "$work/sign_file2" "$(libdir "$work/moved")"
# 3. Static libdsig: with only libdsig.a in the tree, pkg-config --static links the program.
find "$work/moved" -name 'libdsig.so*' -delete
build_example "$work/moved" "$work/sign_file_static" --static
ldd "$work/sign_file_static" | grep -q libdsig && fail "the static build still needs libdsig.so"
check_run "$work/sign_file_static"
echo "$passed passed, 0 failed"

#!/usr/bin/env bash
# The installed tree works for a user, wherever it was installed: headers, libraries, the tool, and a
# relocatable dsig.pc — `cc prog.c $(pkg-config --cflags --libs dsig)` with nothing but
# PKG_CONFIG_PATH set, also after the tree was moved, and `pkg-config --static` linking the program
# against libdsig.a (no libdsig.so in the result). Each layer has its own library and .pc file:
# dsig-net.pc and dsig-serve.pc require dsig.pc; a program that only verifies a JWS links with
# `pkg-config dsig` alone and pulls in no HTTP server (no libmicrohttpd in its ldd).
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
pcdir0=$(dirname "$pc")
for lib in dsig-coord dsig-net dsig-serve; do
    test -f "$pcdir0/$lib.pc" || fail "$lib.pc not installed"
    find "$prefix" -name "lib$lib.so*" | grep -q . || fail "lib$lib.so not installed"
    find "$prefix" -name "lib$lib.a" | grep -q . || fail "lib$lib.a not installed"
    PKG_CONFIG_PATH=$pcdir0 pkg-config --print-requires "$lib" | grep -q '^dsig' ||
        fail "$lib.pc does not require dsig"
    PKG_CONFIG_PATH=$pcdir0 pkg-config --static --libs "$lib" >/dev/null || fail "pkg-config --static $lib"
done
test -f "$prefix/include/dsig/node.h" && test -f "$prefix/include/dsig/serve.h" || fail "upper headers"
ldd "$(find "$prefix" -name 'libdsig.so.0' | head -n1)" | grep -q microhttpd && fail "libdsig.so links libmicrohttpd"
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
# 3. A verify-only program with `pkg-config dsig` only (shared): no libmicrohttpd, no upper library.
"$work/moved/bin/dsig" keygen -a Ed25519 -o "$work/k.jwk" -q
"$work/moved/bin/dsig" pubkey -k "$work/k.jwk" -o "$work/pub.jwk" -q
"$work/moved/bin/dsig" sign -k "$work/k.jwk" --format compact -o "$work/msg.jws" -q "$work/msg"
libdir_shared=$(libdir "$work/moved")
vpc=$(dirname "$(find "$work/moved" -name dsig.pc | head -n1)")
vflags=$(PKG_CONFIG_PATH=$vpc pkg-config --cflags --libs dsig) || fail "pkg-config dsig"
cc -std=c11 -Wall -Wextra -Werror "$src/tests/install/verify_jws.c" $vflags -o "$work/verify_jws" ||
    fail "cc verify_jws.c with \$(pkg-config --cflags --libs dsig) = $vflags"
vlibs=$(LD_LIBRARY_PATH=$libdir_shared ldd "$work/verify_jws")
printf '%s\n' "$vlibs" | grep -q 'libdsig\.so' || fail "verify_jws does not use libdsig.so: $vlibs"
printf '%s\n' "$vlibs" | grep -Eq 'microhttpd|gnutls|curl|libdsig-coord|libdsig-net|libdsig-serve' &&
    fail "verify_jws pulls in an upper layer: $vlibs"
LD_LIBRARY_PATH=$libdir_shared "$work/verify_jws" "$work/pub.jwk" "$work/msg.jws" | grep -qx 'verified: hello' ||
    fail "verify_jws did not verify"
passed=$((passed + 1))
# 4. Static libdsig: with only libdsig.a in the tree, pkg-config --static links the program.
find "$work/moved" -name 'libdsig.so*' -delete
build_example "$work/moved" "$work/sign_file_static" --static
ldd "$work/sign_file_static" | grep -q libdsig && fail "the static build still needs libdsig.so"
check_run "$work/sign_file_static"

echo "$passed passed, 0 failed"

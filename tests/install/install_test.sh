#!/usr/bin/env bash
# The installed tree works for a user: headers, shared library, dsig.pc, the tool.
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/dsig/dsig.h" || { echo "FAIL: header not installed"; exit 1; }
test -x "$prefix/bin/dsig" || { echo "FAIL: tool not installed"; exit 1; }
pc=$(find "$prefix" -name dsig.pc | head -n1)
test -n "$pc" || { echo "FAIL: dsig.pc not installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$(dirname "$pc")
# dsig.pc carries the configured prefix; point it at the scratch prefix.
flags=$(pkg-config --define-variable=prefix="$prefix" --cflags --libs dsig)
cc -std=c11 -Wall -Wextra -Werror "$src/examples/sign_file.c" $flags -o "$prefix/sign_file"
out=$(echo "hello" | LD_LIBRARY_PATH="$libdir" "$prefix/sign_file")
echo "$out" | grep -Eq '^[A-Za-z0-9-]+ [A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$' || { echo "FAIL: unexpected output: $out"; exit 1; }
"$prefix/bin/dsig" --help >/dev/null 2>&1 || "$prefix/bin/dsig" help >/dev/null
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# Layers point down only (docs/architecture.md). Fails on
#   1. an #include from one area of src/ into an area it may not use (upward, or sideways between
#      areas of the same rank), including the public headers of an upper library (dsig/node.h, ...);
#   2. an object of an area that references (nm -u) a symbol defined in an area it may not use;
#   3. a static library that references a symbol defined only in a library above it or beside it
#      (libdsig.a -> libdsig-coord.a / libdsig-net.a / libdsig-serve.a, libdsig-coord.a -> libdsig-net.a /
#      libdsig-serve.a, libdsig-serve.a <-> libdsig-net.a);
#   4. a cycle in the graph of the edges actually found (tsort), whatever the table below allows.
#
#   scripts/check-layers.sh SOURCE_DIR BUILD_DIR      (CTest: layers)
#
# Who may use whom. libdsig:   core < hash < {mac, classic, pq} < hybrid < jose
#                   libdsig-coord: coord (the etcd client), on all of libdsig
#                   libdsig-net: net < node < bft, on all of libdsig; node and bft on coord
#                   libdsig-serve: serve, on all of libdsig and coord (not on libdsig-net)
#                   apps (not installed): on libdsig, libdsig-coord and libdsig-net
# The catalogue (core/registry.c, core/keytypes.c) lists every provider's descriptor: it may name any
# area of libdsig, and any area may look an algorithm or key type up in it. Its symbols and its
# references are the one exception to the order (they are tables and name lookups, not layering).
set -euo pipefail
src=${1:?usage: check-layers.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: check-layers.sh SOURCE_DIR BUILD_DIR}
CATALOGUE="core/registry.c core/keytypes.c"

declare -A ALLOWED=(
    [core]=""
    [hash]="core"
    [mac]="core hash"
    [classic]="core hash"
    [pq]="core hash"
    [hybrid]="core hash mac classic pq"
    [jose]="core hash mac classic pq hybrid"
    [coord]="core hash mac classic pq hybrid jose"
    [net]="core hash mac classic pq hybrid jose"
    [node]="core hash mac classic pq hybrid jose net coord"
    [bft]="core hash mac classic pq hybrid jose net node coord"
    [serve]="core hash mac classic pq hybrid jose coord"
    [apps]="core hash mac classic pq hybrid jose coord net node bft"
)
# Public headers owned by an upper library: including one is a use of that area.
declare -A PUBLIC_OWNER=([dsig/node.h]=node [dsig/bft.h]=bft [dsig/serve.h]=serve)

allowed() { # allowed FROM TO
    [ "$1" = "$2" ] && return 0
    case " ${ALLOWED[$1]-} " in *" $2 "*) return 0 ;; esac
    return 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
violation() { echo "LAYER VIOLATION: $*"; fail=1; }
: >"$work/edges"

# ---- 1. includes ---------------------------------------------------------------------------------
for dir in "$src"/src/*/; do
    area=$(basename "$dir")
    if [ -z "${ALLOWED[$area]+x}" ]; then
        violation "src/$area/ is in no layer of scripts/check-layers.sh"
        continue
    fi
    while IFS= read -r -d '' file; do
        rel=${file#"$src"/src/}
        while IFS=: read -r line inc; do
            target=
            case $inc in
                dsig/*) target=${PUBLIC_OWNER[$inc]-} ;;
                */*) target=${inc%%/*}; [ -d "$src/src/$target" ] || target= ;;
            esac
            [ -n "$target" ] || continue
            [ "$target" = "$area" ] && continue
            echo "$area $target" >>"$work/edges"
            allowed "$area" "$target" ||
                violation "src/$rel:$line includes \"$inc\": $area may not use $target"
        done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$file" |
                 sed -E 's/^([0-9]+):[^"<]*["<]([^">]*)[">].*/\1:\2/')
    done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) -print0)
done

# ---- 2. symbols per area (the objects the static libraries are made of) ----------------------------
# CMake keeps each object under <target>.dir/src/<area>/...; archive members carry only the base name.
mapfile -t objdirs < <(find "$build" -type d \( -name 'dsig_objects.dir' -o -name 'dsig_net_objects.dir' \
                        -o -name 'dsig_serve_objects.dir' -o -name 'dsig_coord_objects.dir' -o -name 'dsig_apps.dir' \) -path '*CMakeFiles*')
[ "${#objdirs[@]}" -ge 3 ] || { echo "FAIL: no object directories under $build (build first)"; exit 1; }
for d in "${objdirs[@]}"; do
    while IFS= read -r -d '' o; do
        rel=${o#"$d"/src/}
        area=${rel%%/*}
        file=${rel%.o}
        case " $CATALOGUE " in *" $file "*) area=catalogue ;; esac
        nm -g --defined-only "$o" | awk -v a="$area" -v f="$file" 'NF == 3 {print $3, a, f}' >>"$work/defs"
        nm -u "$o" | awk -v a="$area" -v f="$file" '{print $NF, a, f}' >>"$work/undefs"
    done < <(find "$d/src" -name '*.o' -print0 2>/dev/null)
done
sort -k1,1 -u "$work/defs" >"$work/defs.s"
sort -k1,1 "$work/undefs" >"$work/undefs.s"
# symbol user-area user-file def-area def-file
join "$work/undefs.s" "$work/defs.s" >"$work/uses"
while read -r sym ua uf da df; do
    [ "$ua" = "$da" ] && continue
    [ "$ua" = catalogue ] || [ "$da" = catalogue ] && continue
    echo "$ua $da" >>"$work/edges"
    allowed "$ua" "$da" || violation "src/$uf references $sym (defined in src/$df): $ua may not use $da"
done <"$work/uses"

# ---- 3. the static libraries -------------------------------------------------------------------
lib() { find "$build" -maxdepth 1 -name "lib$1.a" | head -n1; }
core_a=$(lib dsig) coord_a=$(lib dsig-coord) net_a=$(lib dsig-net) serve_a=$(lib dsig-serve)
for a in "$core_a" "$coord_a" "$net_a" "$serve_a"; do
    [ -n "$a" ] || { echo "FAIL: libdsig.a, libdsig-coord.a, libdsig-net.a and libdsig-serve.a must be built in $build"; exit 1; }
done
libdefs() { nm -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u; }
libundefs() { nm -u "$1" 2>/dev/null | awk 'NF >= 1 && $NF !~ /:$/ {print $NF}' | sort -u; }
libdefs "$core_a" >"$work/core.def"; libdefs "$coord_a" >"$work/coord.def"; libdefs "$net_a" >"$work/net.def"; libdefs "$serve_a" >"$work/serve.def"
check_lib() { # check_lib LIB.a NAME FORBIDDEN.def OWNER — LIB's unresolved uses of FORBIDDEN's symbols
    comm -23 <(libundefs "$1") <(libdefs "$1") | comm -12 - "$3" | comm -23 - "$work/core.def" >"$work/bad"
    while read -r sym; do
        violation "$2 references $sym, defined only in $4"
    done <"$work/bad"
}
check_lib "$core_a" libdsig.a "$work/coord.def" libdsig-coord.a
check_lib "$coord_a" libdsig-coord.a "$work/net.def" libdsig-net.a
check_lib "$coord_a" libdsig-coord.a "$work/serve.def" libdsig-serve.a
check_lib "$core_a" libdsig.a "$work/net.def" libdsig-net.a
check_lib "$core_a" libdsig.a "$work/serve.def" libdsig-serve.a
check_lib "$serve_a" libdsig-serve.a "$work/net.def" libdsig-net.a
check_lib "$net_a" libdsig-net.a "$work/serve.def" libdsig-serve.a

# ---- 4. cycles in what was found -------------------------------------------------------------------
sort -u "$work/edges" | awk '{print $2, $1}' >"$work/pairs"
if ! tsort "$work/pairs" >/dev/null 2>"$work/tsort"; then
    violation "cycle between areas: $(tr '\n' ' ' <"$work/tsort")"
fi

if [ "$fail" -ne 0 ]; then
    echo "FAIL: dependencies must point down (scripts/check-layers.sh, docs/architecture.md)"
    exit 1
fi
echo "layers: $(sort -u "$work/edges" | wc -l) area edges, all downward; no cycle"

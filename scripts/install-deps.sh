#!/usr/bin/env bash
# Install the Debian 12 packages dsig needs, if any are missing. As root: apt-get. Otherwise: print the
# exact command and stop (exit 1), so nothing is half-done.
set -euo pipefail
PKGS=(build-essential cmake pkg-config libssl-dev openssl libsodium-dev libjansson-dev libgcrypt20-dev
      libcmocka-dev liblzma-dev iproute2 valgrind libmicrohttpd-dev curl jq
      b3sum                   # the BLAKE3 team's tool: serve audit digests cross-checked (tests/serve)
      wrk                     # bench/serve_bench.sh request rates
      redis-server libhiredis-dev # the auditable key-value store (src/apps) on a real Redis; redis-cli comes along
      libengine-gost-openssl  # the OpenSSL GOST engine: tests/gost interop only (skipped without it)
      clang libclang-rt-14-dev # libFuzzer harnesses: clang 14 with the fuzzer and sanitizer runtimes
      etcd-server             # etcd 3.4 (/usr/bin/etcd): the shared index counter of stateful keys (tests/coord)
      libcurl4-openssl-dev)   # libcurl: src/serve/counter_etcd.c talks to etcd's v3 JSON gateway over HTTP
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "dsig: missing Debian packages: ${missing[*]}" >&2
  echo "run as root:  $cmd" >&2
  exit 1
fi
echo "dsig: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

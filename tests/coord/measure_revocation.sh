#!/usr/bin/env bash
# tests/coord/measure_revocation.sh — a measurement (not a test): how long a token revoked in etcd keeps
# working on `dsig serve` instances sharing their configuration (docs/scale.md "Shared configuration").
# Two instances on one 3-member loopback cluster; N times: put tenant r (token tr), wait until both
# accept it, then delete it in etcd and time, on each instance, from just before the delete request to
# the first 401 (a poller per instance signing one byte every ~2 ms on a kept-alive connection). Prints
# median, min and max per instance and for "both" (the later of the two).
#   bash tests/coord/etcd_cluster.sh run bash tests/coord/measure_revocation.sh [N]
# with DSIG_TOOL=path/to/dsig.
set -euo pipefail
. "$(dirname "$0")/../serve/serve_lib.sh"
serve_lib_init dsig-measure-revocation curl jq python3
: "${DSIG_ETCD_ENDPOINTS:?run inside etcd_cluster.sh}"
N=${1:-20}
PIDS=()
cleanup_all() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; serve_lib_cleanup; }
trap cleanup_all EXIT
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
eps=$(printf %s "$DSIG_ETCD_ENDPOINTS" | jq -R -c 'split(",")')
P=/dsig-measure/$$/
"$D" keygen -q -a Ed25519 -o "$T/ed.jwk"
PORTS=()
for i in 0 1; do
    mkdir -p "$T/i$i/keys"
    cp "$T/ed.jwk" "$T/i$i/keys/ed.jwk"
    cat >"$T/i$i/serve.json" <<JSON
{
  "listen": {"address": "127.0.0.1", "port": 0},
  "key_dir": "keys",
  "limits": {"auth_failures": {"per_second": 0}},
  "tenants": [{"name": "base", "tokens": [{"sha256": "$(h tbase)"}], "keys": ["*"], "operations": ["sign"]}],
  "coordinator": {"etcd": $eps, "prefix": "$P", "shared_config": true, "instance_id": "i$i"}
}
JSON
    (cd "$T/i$i" && exec "$D" serve --config "$T/i$i/serve.json" 2>"$T/i$i/serve.log") &
    PIDS[$i]=$!
    wait_until 15 grep -q 'listening on port' "$T/i$i/serve.log" || die "instance $i did not start"
    PORTS[$i]=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$T/i$i/serve.log")
done
python3 - "$N" "${DSIG_ETCD_ENDPOINTS%%,*}" "$P" "$(h tr)" "${PORTS[@]}" <<'PY'
import base64, http.client, json, statistics, sys, threading, time, urllib.request
n, ep, prefix, trhash, ports = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], [int(p) for p in sys.argv[5:]]
b64 = lambda s: base64.b64encode(s.encode()).decode()
def etcd(path, body):
    req = urllib.request.Request(ep + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)
key = prefix + "config/tenants/r"
tenant = json.dumps({"name": "r", "tokens": [{"sha256": trhash}], "keys": ["*"], "operations": ["sign"]})
def sign(conn):
    conn.request("POST", "/v1/keys/ed/sign", body=b"x", headers={"Authorization": "Bearer tr"})
    r = conn.getresponse()
    r.read()
    return r.status
res = {0: [], 1: []}
for rep in range(n):
    etcd("/v3/kv/put", {"key": b64(key), "value": b64(tenant)})
    conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=5) for p in ports]
    for c in conns: # both accept the tenant before the delete
        for _ in range(500):
            if sign(c) == 200:
                break
            time.sleep(0.01)
        else:
            sys.exit("an instance never accepted tenant r")
    first = [None, None]
    t0 = [0]
    go = threading.Event()
    def poll(i):
        go.wait()
        while True:
            s = sign(conns[i])
            if s == 401:
                first[i] = time.monotonic_ns()
                return
            if s != 200:
                sys.exit("instance %d answered %d" % (i, s))
            time.sleep(0.002)
    ths = [threading.Thread(target=poll, args=(i,)) for i in range(len(ports))]
    for t in ths: t.start()
    go.set()
    time.sleep(0.05)
    t0[0] = time.monotonic_ns()
    etcd("/v3/kv/deleterange", {"key": b64(key)})
    for t in ths: t.join(10)
    for i in range(len(ports)):
        if first[i] is None:
            sys.exit("instance %d still accepts the revoked token after 10 s" % i)
        res[i].append((first[i] - t0[0]) / 1e6)
    for c in conns: c.close()
both = [max(a, b) for a, b in zip(res[0], res[1])]
print("revocation: etcd delete -> first 401, N=%d, ms" % n)
print("| instance | median | min | max |")
print("|---|---|---|---|")
for name, v in (("instance 0", res[0]), ("instance 1", res[1]), ("both (the later)", both)):
    print("| %s | %.1f | %.1f | %.1f |" % (name, statistics.median(v), min(v), max(v)))
PY

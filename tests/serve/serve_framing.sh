#!/usr/bin/env bash
# tests/serve/serve_framing.sh — the request head against RFC 9112, with exact bytes on a raw socket
# (tests/serve/serve_probe.c): every case is the status the service answers and whether it closes the
# connection after it. Ambiguous framing (Content-Length with Transfer-Encoding, Content-Length
# repeated or not a number, a transfer coding other than chunked, chunked spelled as a list or with
# trailing whitespace, which libmicrohttpd would not dechunk) and malformed lines (bare LF or CR,
# NUL, obs-fold, a control character, whitespace before the colon, two Host or Authorization fields) get 400 (501 for
# "gzip, chunked") and a closed connection — nothing after them is read as another request. Paths are
# routed as sent: an encoded "/" or NUL names no endpoint. Well-formed variants (no space after the
# colon, trailing whitespace, an empty line before the request line, absolute-form) are served.
# (libmicrohttpd itself refuses trailing whitespace after a Content-Length value: 400.)
set -euo pipefail
. "$(dirname "$0")/serve_lib.sh"
serve_lib_init dsig-serve-framing jq sha256sum
P=${DSIG_SERVE_PROBE:?DSIG_SERVE_PROBE must point at serve_probe}
mkdir -p "$T/keys"
"$D" keygen -q -a Ed25519 -o "$T/keys/k.jwk"
cat >"$T/serve.json" <<EOF2
{"listen": {"address": "127.0.0.1", "port": 0}, "key_dir": "keys", "state_registry_dir": "",
 "audit": {"path": "audit.log", "sync": "none"},
 "limits": {"request_timeout_s": 5, "threads": 2},
 "tenants": [{"name": "t", "tokens": [{"sha256": "$(printf tok | sha256sum | cut -d' ' -f1)"}], "keys": ["*"],
              "operations": ["sign", "verify"]}]}
EOF2
serve_start
A='Authorization: Bearer tok\r\n'
S="POST /v1/keys/k/sign HTTP/1.1\r\nHost: t\r\n"
# case NAME WANT-STATUS WANT-CONNECTION BYTES
case_() {
    local name=$1 want="$2 $3" got
    got=$("$P" send "$PORT" "$4" | cut -d' ' -f1,2)
    [ "$got" = "$want" ] || die "$name: got '$got', want '$want'"
    ok
}
n=0
while IFS='|' read -r name st conn bytes; do
    [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
    case_ "$name" "$st" "$conn" "$(eval "printf %s \"$bytes\"")"
    n=$((n + 1))
done <<'CASES'
ok-content-length|200|open|${S}${A}Content-Length: 5\r\n\r\nhello
ok-chunked|200|open|${S}${A}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
ok-no-space|200|open|POST /v1/keys/k/sign HTTP/1.1\r\nHost:t\r\nAuthorization:Bearer tok\r\nContent-Length:5\r\n\r\nhello
ok-trailing-ws|200|open|${S}Authorization: Bearer tok \t\r\nContent-Length: 5\r\n\r\nhello
ok-empty-line-first|200|open|\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n
ok-absolute-form|200|open|GET http://t/healthz HTTP/1.1\r\nHost: t\r\n\r\n
ok-empty-value|200|open|GET /healthz HTTP/1.1\r\nHost: t\r\nX-Empty:\r\n\r\n
cl-and-te|400|closed|${S}${A}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n
te-and-cl|400|closed|${S}${A}Transfer-Encoding: chunked\r\nContent-Length: 44\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n
cl-twice-different|400|closed|${S}${A}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!
cl-twice-same|400|closed|${S}${A}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello
cl-list|400|closed|${S}${A}Content-Length: 5, 5\r\n\r\nhello
cl-plus|400|closed|${S}${A}Content-Length: +5\r\n\r\nhello
cl-negative|400|closed|${S}${A}Content-Length: -1\r\n\r\nhello
cl-hex|400|closed|${S}${A}Content-Length: 0x5\r\n\r\nhello
te-gzip|400|closed|${S}${A}Transfer-Encoding: gzip\r\n\r\nhello
te-xchunked|400|closed|${S}${A}Transfer-Encoding: xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-chunked-gzip|400|closed|${S}${A}Transfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-gzip-chunked|501|closed|${S}${A}Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-chunked-twice|400|closed|${S}${A}Transfer-Encoding: chunked, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-two-lines|400|closed|${S}${A}Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-trailing-ws|400|closed|${S}${A}Transfer-Encoding: chunked \r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-empty-element|400|closed|${S}${A}Transfer-Encoding: chunked,\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-leading-comma|400|closed|${S}${A}Transfer-Encoding: , chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
ok-te-case|200|open|${S}${A}Transfer-Encoding:  Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
te-http10|400|closed|POST /v1/keys/k/sign HTTP/1.0\r\nHost: t\r\n${A}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n
bare-lf-field|400|closed|${S}${A}Content-Length: 5\n\r\nhello
bare-lf-request-line|400|closed|POST /v1/keys/k/sign HTTP/1.1\nHost: t\r\n${A}Content-Length: 5\r\n\r\nhello
bare-lf-everywhere|400|closed|GET /healthz HTTP/1.1\nHost: t\n\n
bare-lf-end|400|closed|GET /healthz HTTP/1.1\r\nHost: t\r\n\n
bare-cr|400|closed|GET /healthz HTTP/1.1\r\nHost: t\rX-Injected: 1\r\n\r\n
nul-in-value|400|closed|GET /healthz HTTP/1.1\r\nHost: t\\0x\r\n\r\n
nul-in-token|400|closed|${S}Authorization: Bearer tok\\0junk\r\nContent-Length: 5\r\n\r\nhello
nul-in-target|400|closed|GET /healthz\\0x HTTP/1.1\r\nHost: t\r\n\r\n
obs-fold-authorization|400|closed|${S}Authorization: Bearer\r\n tok\r\nContent-Length: 5\r\n\r\nhello
obs-fold-other|400|closed|GET /healthz HTTP/1.1\r\nHost: t\r\nX-Folded: a\r\n\tb c\r\n\r\n
control-in-value|400|closed|GET /healthz HTTP/1.1\r\nHost: t\r\nX-Ctl: a\\x01b\r\n\r\n
del-in-value|400|closed|GET /healthz HTTP/1.1\r\nHost: t\r\nX-Del: a\\x7fb\r\n\r\n
space-before-colon|400|closed|GET /healthz HTTP/1.1\r\nHost: t\r\nX-Space : a\r\n\r\n
two-hosts|400|closed|GET /healthz HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n
two-authorizations|400|closed|${S}${A}Authorization: Bearer other\r\nContent-Length: 5\r\n\r\nhello
double-space-request-line|400|closed|GET  /healthz HTTP/1.1\r\nHost: t\r\n\r\n
encoded-slash|404|closed|POST /v1/keys/k%2fsign HTTP/1.1\r\nHost: t\r\n${A}Content-Length: 5\r\n\r\nhello
encoded-slash-upper|404|closed|POST /v1/keys/k%2Fsign HTTP/1.1\r\nHost: t\r\n${A}Content-Length: 5\r\n\r\nhello
encoded-nul|404|open|GET /healthz%00 HTTP/1.1\r\nHost: t\r\n\r\n
encoded-kid|404|closed|POST /v1/keys/%6b/sign HTTP/1.1\r\nHost: t\r\n${A}Content-Length: 5\r\n\r\nhello
encoded-dot-dot|404|open|GET /v1/keys/..%2fkeys HTTP/1.1\r\nHost: t\r\n${A}\r\n
CASES
[ $n -ge 47 ] || die "only $n cases ran"
# Nothing was signed but the well-formed requests (5 signatures: content-length, chunked, no-space,
# trailing whitespace, Chunked), and every refused one has its audit record.
serve_stop
[ "$(jq -s '[.[] | select(.op == "sign" and .code == 200)] | length' "$T/audit.log")" = 5 ] ||
    die "signatures: $(jq -c 'select(.op == "sign")' "$T/audit.log")"
[ "$(jq -s '[.[] | select(.result == "bad_request" and .code == 400)] | length' "$T/audit.log")" -ge 28 ] ||
    die "audit records of the refused requests"
[ "$(jq -s '[.[] | select(.result == "not_implemented" and .code == 501)] | length' "$T/audit.log")" = 1 ] ||
    die "audit record of the 501"
ok
echo "$PASSED passed, 0 failed ($n framing cases)"

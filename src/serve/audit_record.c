/*
 * src/serve/audit_record.c — the server's audit record: one JSON object per request (and a correction
 * when a signature could not be released after its record was written), e.g.
 *   {"index":41,"time":"2026-11-30T04:04:07.432Z","request_id":"5f3a9c0e12ab77d1","tenant":"ci",
 *    "kid":"release","alg":"Ed25519","thumbprint":"kPrK…","op":"sign","method":"POST",
 *    "bytes":536870912,"blake3":"9acc…","jws_sha256":"51d0…","code":200,"result":"ok",
 *    "duration_ms":2309.210,"queue_ms":0.000,"peer":"127.0.0.1"}
 * audit.c stores it and puts the "index" (the record's leaf in the log's Merkle tree) in front; this
 * file only says what it holds. "alg", "thumbprint" and "version" (of the key id) are there when
 * the request named a key it may use, "jws_sha256" (SHA-256 of the JWS, the response body without
 * its newline) when a signature was made. A sign-digest request's record also holds the hash name
 * and the digest it signed ("signed_hash", "signed_digest": hexadecimal); its "jws_sha256" is of that
 * response's JSON body.
 */
#include <stdio.h>

#include "serve_internal.h"

static void hex_n(const uint8_t *in, size_t n, char *hex)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = hx[in[i] >> 4];
        hex[2 * i + 1] = hx[in[i] & 15];
    }
    hex[2 * n] = '\0';
}

static void to_hex(const uint8_t in[32], char hex[65])
{
    hex_n(in, 32, hex);
}

/* The record as one JSON line (without its newline). */
size_t serve_audit_record(const struct serve_audit_rec *r, char out[SERVE_AUDIT_REC_MAX])
{
    char stamp[SERVE_STAMP_LEN], hex[65] = "-", key[160] = "", jws[96] = "";
    serve_utc_stamp(stamp);
    if (r->digest)
        to_hex(r->digest, hex);
    if (r->alg && r->thumbprint && r->version)
        snprintf(key, sizeof key, "\"alg\":\"%s\",\"thumbprint\":\"%s\",\"version\":%u,", r->alg, r->thumbprint,
                 r->version);
    else if (r->alg && r->thumbprint)
        snprintf(key, sizeof key, "\"alg\":\"%s\",\"thumbprint\":\"%s\",", r->alg, r->thumbprint);
    if (r->jws_sha256) {
        char h[65];
        to_hex(r->jws_sha256, h);
        snprintf(jws, sizeof jws, ",\"jws_sha256\":\"%s\"", h);
    }
    char signed_dg[200] = "";
    if (r->signed_hash && r->signed_digest_len <= 64) {
        char h[129];
        hex_n(r->signed_digest, r->signed_digest_len, h);
        snprintf(signed_dg, sizeof signed_dg, ",\"signed_hash\":\"%s\",\"signed_digest\":\"%s\"", r->signed_hash, h);
    }
    /* Every string here is from a fixed set or validated ([A-Za-z0-9._-], hexadecimal, numeric
     * addresses): no JSON escaping is needed. */
    int n = snprintf(out, SERVE_AUDIT_REC_MAX,
                     "{\"time\":\"%s\",\"request_id\":\"%s\",%s\"tenant\":\"%s\",\"kid\":\"%s\",%s\"op\":\"%s\","
                     "\"method\":\"%s\",\"bytes\":%llu,\"%s\":\"%s\"%s%s,\"code\":%u,\"result\":\"%s\","
                     "\"duration_ms\":%.3f,\"queue_ms\":%.3f,\"peer\":\"%s\"}",
                     stamp, r->request_id ? r->request_id : "-", r->correction ? "\"correction\":true," : "",
                     r->tenant ? r->tenant : "-", r->kid ? r->kid : "-", key, r->op, r->method ? r->method : "-",
                     (unsigned long long)r->bytes, r->digest_name ? r->digest_name : "sha256", hex, jws, signed_dg, r->code,
                     r->result, (double)r->duration_ns * 1e-6, (double)r->queue_ns * 1e-6,
                     r->peer ? r->peer : "-");
    return n > 0 && n < SERVE_AUDIT_REC_MAX ? (size_t)n : 0;
}

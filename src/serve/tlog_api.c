/*
 * src/serve/tlog_api.c — what the log endpoints answer (request.c routes and sends):
 *   GET /v1/log/checkpoint                 the latest signed checkpoint (text/plain, the signed note)
 *   GET /v1/log/proof?index=N              inclusion proof of record N against the latest checkpoint
 *   GET /v1/log/consistency?from=M&to=N    consistency proof between the trees of M and N records
 *                                          (N at most the latest checkpoint's size; default: it)
 * Hashes are lowercase hexadecimal; the checkpoint travels whole in the proofs, so that a client checks
 * the proof and the log key's signature from one answer. Proofs come from the tree's side file (tlog.c).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "core/internal.h"
#include "dsig/tlog.h"
#include "front.h"

static void to_hex(const uint8_t in[32], char out[65])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[in[i] >> 4];
        out[2 * i + 1] = hx[in[i] & 15];
    }
    out[64] = '\0';
}

static json_t *hex_array(const uint8_t (*h)[32], size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        char x[65];
        to_hex(h[i], x);
        json_array_append_new(a, json_string(x));
    }
    return a;
}

/* A decimal query parameter: 1 if present and valid (*v set). */
static int parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s || strlen(s) > 19 || (s[0] == '0' && s[1]))
        return 0;
    uint64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return 1;
}

static int fail_with(unsigned *code, char *msg, size_t n, unsigned c, const char *text)
{
    *code = c;
    snprintf(msg, n, "%s", text);
    return 0;
}

/* The latest checkpoint, or 0 with the status and reason. */
static int latest(struct dsig_server *s, char **note, size_t *len, uint64_t *size, uint8_t root[32], unsigned *code,
                  char *msg, size_t n)
{
    if (!s->ckpt)
        return fail_with(code, msg, n, 404, "this service has no transparency log (no audit log, or audit.transparency_log is false)");
    if (serve_ckpt_latest(s->ckpt, note, len, size, root) != DSIG_OK)
        return fail_with(code, msg, n, 503, "no checkpoint yet");
    return 1;
}

int serve_log_checkpoint(struct dsig_server *s, char **body, size_t *len, unsigned *code, char *msg, size_t n)
{
    uint64_t size;
    uint8_t root[32];
    return latest(s, body, len, &size, root, code, msg, n);
}

json_t *serve_log_proof(struct dsig_server *s, const char *index, unsigned *code, char *msg, size_t n)
{
    uint64_t idx, size;
    if (!parse_u64(index, &idx))
        return fail_with(code, msg, n, 400, "index: a record number (decimal) is required"), NULL;
    char *note = NULL;
    size_t len;
    uint8_t root[32];
    if (!latest(s, &note, &len, &size, root, code, msg, n))
        return NULL;
    json_t *doc = NULL;
    uint8_t proof[DSIG_TLOG_PROOF_MAX][32], leaf[32];
    size_t np = 0;
    if (idx >= size) {
        *code = 404;
        snprintf(msg, n, "record %llu is not in the latest checkpoint (%llu records); retry after the next one",
                 (unsigned long long)idx, (unsigned long long)size);
    } else if (serve_tlog_stored(s->tlog) < size || serve_tlog_fetch(s->tlog, 0, idx, leaf) != DSIG_OK ||
               dsig_tlog_inclusion_proof(serve_tlog_fetch, s->tlog, idx, size, proof, &np) != DSIG_OK) {
        *code = 503;
        snprintf(msg, n, "the proof cannot be read from the tree file: %s", dsig_last_error_detail());
    } else {
        char lh[65], rh[65];
        to_hex(leaf, lh);
        to_hex(root, rh);
        doc = json_pack("{s:I,s:I,s:s,s:s,s:o,s:s}", "index", (json_int_t)idx, "tree_size", (json_int_t)size,
                        "leaf_hash", lh, "root_hash", rh, "hashes", hex_array((const uint8_t(*)[32])proof, np),
                        "checkpoint", note);
        if (!doc) {
            *code = 500;
            snprintf(msg, n, "out of memory");
        }
    }
    dsig_free(note);
    return doc;
}

json_t *serve_log_consistency(struct dsig_server *s, const char *from, const char *to, unsigned *code, char *msg,
                              size_t n)
{
    uint64_t m, size, last;
    if (!parse_u64(from, &m) || m == 0)
        return fail_with(code, msg, n, 400, "from: a tree size (decimal, at least 1) is required"), NULL;
    char *note = NULL;
    size_t len;
    uint8_t root[32];
    if (!latest(s, &note, &len, &last, root, code, msg, n))
        return NULL;
    size = last;
    json_t *doc = NULL;
    if (to && !parse_u64(to, &size)) {
        *code = 400;
        snprintf(msg, n, "to: a tree size (decimal)");
    } else if (m > size || size > last) {
        *code = 400;
        snprintf(msg, n, "want 1 <= from <= to <= %llu (the latest checkpoint's size)", (unsigned long long)last);
    } else {
        uint8_t proof[DSIG_TLOG_PROOF_MAX][32], r1[32], r2[32];
        size_t np = 0;
        if (serve_tlog_stored(s->tlog) < size || dsig_tlog_subtree(serve_tlog_fetch, s->tlog, 0, m, r1) != DSIG_OK ||
            dsig_tlog_subtree(serve_tlog_fetch, s->tlog, 0, size, r2) != DSIG_OK ||
            dsig_tlog_consistency_proof(serve_tlog_fetch, s->tlog, m, size, proof, &np) != DSIG_OK) {
            *code = 503;
            snprintf(msg, n, "the proof cannot be read from the tree file: %s", dsig_last_error_detail());
        } else {
            char h1[65], h2[65];
            to_hex(r1, h1);
            to_hex(r2, h2);
            doc = json_pack("{s:I,s:I,s:s,s:s,s:o,s:s}", "from", (json_int_t)m, "to", (json_int_t)size, "from_root", h1,
                            "to_root", h2, "hashes", hex_array((const uint8_t(*)[32])proof, np), "checkpoint", note);
            if (!doc) {
                *code = 500;
                snprintf(msg, n, "out of memory");
            }
        }
    }
    dsig_free(note);
    return doc;
}

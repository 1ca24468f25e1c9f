/*
 * src/apps/audit.c — what anyone holding the clients' (or the server's) public keys can check offline:
 * a whole request log (apps_audit_verify), replays of a log into an empty store, and receipts. Every
 * signature is checked on the slow path: no cache, no batch received ahead, only public keys.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps_internal.h"
#include "core/internal.h"

/* ---- replay -------------------------------------------------------------------------------------- */

int apps_replay(const char *log_path, apps_backend *be, uint64_t upto, uint64_t *writes)
{
    *writes = 0;
    if (upto == 0)
        return DSIG_OK;
    apps_logrd rd;
    int rc = apps_logrd_open(&rd, log_path);
    if (rc != DSIG_OK)
        return rc == DSIG_E_IO ? DSIG_E_FORMAT : rc; /* not a store problem: retrying will not help */
    apps_buf out;
    apps_buf_init(&out, APPS_MAX_RESULT);
    apps_rec r;
    char what[256] = "";
    int torn = 0;
    while ((rc = apps_logrd_next(&rd, &r, what, sizeof what, &torn)) == 1 && r.index <= upto) {
        apps_req rq;
        if (apps_req_parse(r.req, r.req_len, &rq) != DSIG_OK) {
            rc = dsig_fail(DSIG_E_FORMAT, "replay: entry %llu: %s", (unsigned long long)r.index,
                           dsig_last_error_detail());
            break;
        }
        if (be->ops->writes(rq.body, rq.body_len)) {
            out.len = out.overflow = 0;
            if (be->ops->exec(be, r.index, r.client, rq.body, rq.body_len, &out) != APPS_EXEC_OK) {
                rc = dsig_fail(DSIG_E_IO, "replay: the store went away at entry %llu", (unsigned long long)r.index);
                break;
            }
            (*writes)++;
        }
        if (r.index == upto) {
            rc = 0;
            break;
        }
    }
    if (rc == DSIG_E_FORMAT && torn && upto == UINT64_MAX)
        rc = 0; /* a torn last record was never executed: the end of the log */
    else if (rc == DSIG_E_FORMAT && what[0])
        rc = dsig_fail(DSIG_E_FORMAT, "replay: bad record at byte %llu: %s", (unsigned long long)rd.rec_offset, what);
    apps_buf_free(&out);
    apps_logrd_close(&rd);
    return rc < 0 ? rc : DSIG_OK;
}

int apps_audit_replay_kv(const char *log_path, const char *redis, uint64_t *writes)
{
    *writes = 0;
    apps_backend *be;
    int rc = apps_kv_backend_new(&be, redis);
    if (rc != DSIG_OK)
        return rc;
    if ((rc = apps_kv_connect_empty(be)) == DSIG_OK)
        rc = apps_replay(log_path, be, UINT64_MAX, writes);
    be->ops->free(be);
    return rc;
}

/* apps_audit_replay_book's printer. */
static void print_order(void *arg, int buy, uint32_t price, uint32_t qty, uint64_t id, uint64_t owner)
{
    fprintf(arg, "%s price=%u qty=%u order=%llu client=%llu\n", buy ? "bid" : "ask", price, qty,
            (unsigned long long)id, (unsigned long long)owner);
}

int apps_audit_replay_book(const char *log_path, FILE *f, uint64_t *writes)
{
    *writes = 0;
    apps_backend *be;
    int rc = apps_book_backend_new(&be);
    if (rc != DSIG_OK)
        return rc;
    rc = apps_replay(log_path, be, UINT64_MAX, writes);
    if (rc == DSIG_OK)
        apps_book_each(apps_book_backend_book(be), print_order, f);
    be->ops->free(be);
    return rc;
}

/* ---- the auditor ------------------------------------------------------------------------------------- */

/* Where entry `want` is in the log, from byte `from` on: its offset, or UINT64_MAX if nowhere. */
static uint64_t find_entry(const char *path, uint64_t from, uint64_t want)
{
    apps_logrd rd;
    if (apps_logrd_open(&rd, path) != DSIG_OK)
        return UINT64_MAX;
    rd.offset = from;
    apps_rec r;
    char what[64];
    int torn;
    uint64_t at = UINT64_MAX;
    while (apps_logrd_next(&rd, &r, what, sizeof what, &torn) == 1)
        if (r.index == want) {
            at = rd.rec_offset;
            break;
        }
    apps_logrd_close(&rd);
    return at;
}

/* Record the verdict on the first bad entry; returns DSIG_E_VERIFY. */
__attribute__((format(printf, 4, 5))) static int bad(apps_audit_result *res, uint64_t entry, uint64_t offset,
                                                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->what, sizeof res->what, fmt, ap);
    va_end(ap);
    res->bad_entry = entry;
    res->bad_offset = offset;
    return DSIG_E_VERIFY;
}

int apps_audit_verify(const char *log_path, const apps_keyset *keys, apps_audit_result *res)
{
    memset(res, 0, sizeof *res);
    size_t nk = apps_keyset_count(keys);
    uint64_t *last_seq = calloc(nk ? nk : 1, sizeof *last_seq);
    uint64_t *last_entry = calloc(nk ? nk : 1, sizeof *last_entry);
    if (!last_seq || !last_entry) {
        free(last_seq);
        free(last_entry);
        return dsig_fail(DSIG_E_NOMEM, "audit: out of memory");
    }
    apps_logrd rd;
    int rc = apps_logrd_open(&rd, log_path);
    if (rc != DSIG_OK) {
        free(last_seq);
        free(last_entry);
        return rc;
    }
    uint8_t chain[32] = {0}, tag[APPS_TAG_BYTES];
    int have_tag = 0;
    uint64_t expected = 1;
    apps_rec r;
    char what[256];
    int torn;
    for (;;) {
        rc = apps_logrd_next(&rd, &r, what, sizeof what, &torn);
        if (rc == 0)
            break;
        uint64_t at = rd.rec_offset;
        if (rc == DSIG_E_FORMAT) {
            rc = bad(res, expected, at, "entry %llu at byte %llu: %s%s", (unsigned long long)expected,
                     (unsigned long long)at, what, torn ? " (the log ends inside it)" : "");
            break;
        }
        if (rc != 1)
            break; /* I/O error */
        rc = DSIG_OK;
        if (r.index != expected) {
            if (r.index > expected) {
                uint64_t later = find_entry(log_path, rd.offset, expected);
                if (later != UINT64_MAX)
                    rc = bad(res, expected, at,
                             "entry %llu is out of order: entry %llu stands in its place at byte %llu and entry %llu "
                             "comes later, at byte %llu",
                             (unsigned long long)expected, (unsigned long long)r.index, (unsigned long long)at,
                             (unsigned long long)expected, (unsigned long long)later);
                else
                    rc = bad(res, expected, at, "entry %llu is missing: the record at byte %llu is entry %llu",
                             (unsigned long long)expected, (unsigned long long)at, (unsigned long long)r.index);
            } else if (r.index == 0) {
                /* no entry is numbered 0: name the entry whose place it takes (bad_entry 0 means none) */
                rc = bad(res, expected, at, "entry %llu at byte %llu: the record there says it is entry 0 (entries are "
                         "numbered from 1)", (unsigned long long)expected, (unsigned long long)at);
            } else {
                rc = bad(res, r.index, at,
                         "entry %llu appears again (or out of order) at byte %llu, where entry %llu belongs",
                         (unsigned long long)r.index, (unsigned long long)at, (unsigned long long)expected);
            }
            break;
        }
        apps_req rq;
        if (apps_req_parse(r.req, r.req_len, &rq) != DSIG_OK) {
            rc = bad(res, r.index, at, "entry %llu at byte %llu: malformed request: %s", (unsigned long long)r.index,
                     (unsigned long long)at, dsig_last_error_detail());
            break;
        }
        if (rq.client != r.client || rq.seq != r.seq || rq.scheme != r.scheme || rq.app != r.app) {
            rc = bad(res, r.index, at,
                     "entry %llu at byte %llu: the record says client %llu request %llu (%s/%s) but the signed "
                     "request says client %llu request %llu (%s/%s)",
                     (unsigned long long)r.index, (unsigned long long)at, (unsigned long long)r.client,
                     (unsigned long long)r.seq, apps_app_name(r.app) ? apps_app_name(r.app) : "?",
                     apps_scheme_name(r.scheme) ? apps_scheme_name(r.scheme) : "?", (unsigned long long)rq.client,
                     (unsigned long long)rq.seq, apps_app_name(rq.app), apps_scheme_name(rq.scheme));
            break;
        }
        if (!have_tag) {
            memcpy(tag, rq.tag, sizeof tag);
            have_tag = 1;
        } else if (memcmp(tag, rq.tag, sizeof tag) != 0) {
            rc = bad(res, r.index, at, "entry %llu at byte %llu: the request is addressed to another server",
                     (unsigned long long)r.index, (unsigned long long)at);
            break;
        }
        if (r.scheme == APPS_SCHEME_NONE) {
            rc = bad(res, r.index, at, "entry %llu at byte %llu (client %llu request %llu): unsigned (scheme none): "
                     "cannot be audited", (unsigned long long)r.index, (unsigned long long)at,
                     (unsigned long long)r.client, (unsigned long long)r.seq);
            break;
        }
        size_t ci;
        if (!apps_keyset_index(keys, r.client, &ci)) {
            rc = bad(res, r.index, at, "entry %llu at byte %llu: client %llu has no public key in the keys directory",
                     (unsigned long long)r.index, (unsigned long long)at, (unsigned long long)r.client);
            break;
        }
        if (r.seq != last_seq[ci] + 1) {
            if (r.seq <= last_seq[ci])
                rc = bad(res, r.index, at,
                         "entry %llu at byte %llu: client %llu request %llu again or out of order (the client was "
                         "at request %llu, entry %llu)",
                         (unsigned long long)r.index, (unsigned long long)at, (unsigned long long)r.client,
                         (unsigned long long)r.seq, (unsigned long long)last_seq[ci],
                         (unsigned long long)last_entry[ci]);
            else {
                char gap[64];
                if (r.seq - last_seq[ci] == 2)
                    snprintf(gap, sizeof gap, "request %llu is", (unsigned long long)(last_seq[ci] + 1));
                else
                    snprintf(gap, sizeof gap, "requests %llu..%llu are", (unsigned long long)(last_seq[ci] + 1),
                             (unsigned long long)(r.seq - 1));
                rc = bad(res, r.index, at,
                         "entry %llu at byte %llu: client %llu's %s missing before it (it is request %llu; the "
                         "previous one, %llu, is entry %llu)",
                         (unsigned long long)r.index, (unsigned long long)at, (unsigned long long)r.client, gap,
                         (unsigned long long)r.seq, (unsigned long long)last_seq[ci],
                         (unsigned long long)last_entry[ci]);
            }
            break;
        }
        int vrc = apps_verify_offline(r.scheme, apps_keyset_find(keys, r.client), r.client, r.req, r.req_len, r.sig, r.sig_len);
        if (vrc != DSIG_OK) {
            rc = bad(res, r.index, at, "entry %llu at byte %llu (client %llu request %llu): signature does not verify "
                     "(%s)", (unsigned long long)r.index, (unsigned long long)at, (unsigned long long)r.client,
                     (unsigned long long)r.seq, dsig_strerror(vrc));
            break;
        }
        uint8_t ch[32];
        apps_rec_chain(chain, rd.buf, rd.rec_len - 32, ch);
        if (memcmp(ch, r.chain, 32) != 0) {
            rc = bad(res, r.index, at, "entry %llu at byte %llu: hash chain broken (the unsigned part of this record, "
                     "or its chain value, was altered)", (unsigned long long)r.index, (unsigned long long)at);
            break;
        }
        memcpy(chain, ch, 32);
        if (last_seq[ci] == 0)
            res->clients++;
        last_seq[ci] = r.seq;
        last_entry[ci] = r.index;
        res->by_scheme[r.scheme]++;
        res->entries++;
        expected++;
    }
    memcpy(res->head, chain, 32);
    apps_logrd_close(&rd);
    free(last_seq);
    free(last_entry);
    return rc;
}

/* ---- receipts ---------------------------------------------------------------------------------------- */

int apps_receipt_check(const uint8_t *receipt, size_t len, const dsig_key *server_pub, apps_receipt_info *info)
{
    const uint8_t *msg, *sig;
    size_t ml, sl;
    apps_rep rep;
    int rc = apps_signed_split(receipt, len, &msg, &ml, &sig, &sl);
    if (rc == DSIG_OK)
        rc = apps_rep_parse(msg, ml, &rep);
    if (rc != DSIG_OK)
        return dsig_fail(DSIG_E_FORMAT, "receipt: %s", dsig_last_error_detail());
    uint8_t tag[APPS_TAG_BYTES];
    if ((rc = apps_server_tag(server_pub, tag)) != DSIG_OK)
        return rc;
    if (memcmp(tag, rep.tag, sizeof tag) != 0)
        return dsig_fail(DSIG_E_VERIFY, "receipt: made for another server key");
    if ((rc = apps_verify_offline(rep.scheme, server_pub, 0, msg, ml, sig, sl)) != DSIG_OK)
        return rc == DSIG_E_UNSUPPORTED ? rc : dsig_fail(DSIG_E_VERIFY, "receipt: the server's signature does not verify");
    if (info) {
        info->app = rep.app;
        info->scheme = rep.scheme;
        info->client = rep.client;
        info->seq = rep.seq;
        info->index = rep.index;
        memcpy(info->request_hash, rep.req_hash, 32);
        memcpy(info->chain, rep.chain, 32);
        info->result = rep.result;
        info->result_len = rep.result_len;
    }
    return DSIG_OK;
}

/*
 * src/bft/wire.c — what every protocol core shares: the signed statement, domain-separated digests,
 * frame headers, a bounded reader and a capped writer, certificates and equivocation proofs.
 */
#include <stdlib.h>
#include <string.h>

#include "bft/bft.h"
#include "core/bytes.h"
#include "core/internal.h"
#include "hash/blake3.h"

/* ---- writer --------------------------------------------------------------------------------- */

void bb_init(bft_buf *b)
{
    memset(b, 0, sizeof *b);
}

void bb_free(bft_buf *b)
{
    dsig_xfree(b->p, 0);
    memset(b, 0, sizeof *b);
}

void bb_reset(bft_buf *b)
{
    b->len = 0;
    b->err = 0;
}

/* Room for n more bytes (geometric growth up to BFT_FRAME_MAX). */
static int bb_room(bft_buf *b, size_t n)
{
    if (b->err)
        return 0;
    if (n > BFT_FRAME_MAX || b->len > BFT_FRAME_MAX - n) {
        b->err = 1;
        return 0;
    }
    if (b->len + n <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
        cap *= 2;
    if (cap > BFT_FRAME_MAX)
        cap = BFT_FRAME_MAX;
    uint8_t *p = dsig_realloc(b->p, cap);
    if (!p) {
        b->err = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void bb_put(bft_buf *b, const void *p, size_t n)
{
    if (n && bb_room(b, n)) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    }
}

void bb_u8(bft_buf *b, uint8_t v)
{
    bb_put(b, &v, 1);
}

void bb_u16(bft_buf *b, uint16_t v)
{
    uint8_t t[2];
    dsig_store_be16(t, v);
    bb_put(b, t, 2);
}

void bb_u32(bft_buf *b, uint32_t v)
{
    uint8_t t[4];
    dsig_store_be32(t, v);
    bb_put(b, t, 4);
}

void bb_u64(bft_buf *b, uint64_t v)
{
    uint8_t t[8];
    dsig_store_be64(t, v);
    bb_put(b, t, 8);
}

void bb_blob16(bft_buf *b, const uint8_t *p, size_t n)
{
    if (n > 0xFFFFu) {
        b->err = 1;
        return;
    }
    bb_u16(b, (uint16_t)n);
    bb_put(b, p, n);
}

void bb_blob32(bft_buf *b, const uint8_t *p, size_t n)
{
    if (n > BFT_FRAME_MAX) {
        b->err = 1;
        return;
    }
    bb_u32(b, (uint32_t)n);
    bb_put(b, p, n);
}

/* ---- reader --------------------------------------------------------------------------------- */

void rd_init(bft_rd *r, const uint8_t *p, size_t n)
{
    r->p = p;
    r->n = n;
    r->off = 0;
    r->bad = 0;
}

const uint8_t *rd_take(bft_rd *r, size_t n)
{
    if (r->bad || n > r->n - r->off) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}

uint8_t rd_u8(bft_rd *r)
{
    const uint8_t *p = rd_take(r, 1);
    return p ? p[0] : 0;
}

uint16_t rd_u16(bft_rd *r)
{
    const uint8_t *p = rd_take(r, 2);
    return p ? (uint16_t)dsig_load_be16(p) : 0;
}

uint32_t rd_u32(bft_rd *r)
{
    const uint8_t *p = rd_take(r, 4);
    return p ? dsig_load_be32(p) : 0;
}

uint64_t rd_u64(bft_rd *r)
{
    const uint8_t *p = rd_take(r, 8);
    return p ? dsig_load_be64(p) : 0;
}

const uint8_t *rd_blob16(bft_rd *r, size_t lo, size_t hi, size_t *len)
{
    size_t n = rd_u16(r);
    if (r->bad || n < lo || n > hi) {
        r->bad = 1;
        *len = 0;
        return NULL;
    }
    *len = n;
    return rd_take(r, n);
}

const uint8_t *rd_blob32(bft_rd *r, size_t lo, size_t hi, size_t *len)
{
    size_t n = rd_u32(r);
    if (r->bad || n < lo || n > hi) {
        r->bad = 1;
        *len = 0;
        return NULL;
    }
    *len = n;
    return rd_take(r, n);
}

int rd_done(const bft_rd *r)
{
    return !r->bad && r->off == r->n;
}

/* ---- votes ---------------------------------------------------------------------------------- */

int bft_vote_set(bft_vote *v, uint64_t signer, const uint8_t *sig, size_t len)
{
    uint8_t *p = dsig_malloc(len ? len : 1);
    if (!p)
        return DSIG_E_NOMEM;
    if (len)
        memcpy(p, sig, len);
    dsig_xfree(v->sig, 0);
    v->sig = p;
    v->len = len;
    v->signer = signer;
    return DSIG_OK;
}

void bft_vote_clear(bft_vote *v)
{
    dsig_xfree(v->sig, 0);
    memset(v, 0, sizeof *v);
}

/* ---- core ----------------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int bft_core_init(bft_core *c, const bft_env *env, dsig_bft_stats *st, int cls, uint64_t session,
                  uint64_t self, const uint64_t *members, size_t n)
{
    memset(c, 0, sizeof *c);
    c->env = env;
    c->st = st;
    c->self = self;
    if (!members || n < 4 || n > DSIG_BFT_MAX_MEMBERS)
        return dsig_fail(DSIG_E_ARG, "bft: members: %zu given, 4..%u needed", n, DSIG_BFT_MAX_MEMBERS);
    memcpy(c->members, members, n * sizeof *members);
    qsort(c->members, n, sizeof *members, cmp_u64);
    for (size_t i = 0; i < n; i++) {
        if (c->members[i] == 0 || c->members[i] > DSIG_NODE_MAX_ID)
            return dsig_fail(DSIG_E_ARG, "bft: members: id %llu out of range",
                             (unsigned long long)c->members[i]);
        if (i && c->members[i] == c->members[i - 1])
            return dsig_fail(DSIG_E_ARG, "bft: members: id %llu listed twice",
                             (unsigned long long)c->members[i]);
    }
    c->n = n;
    c->f = (n - 1) / 3;
    c->self_idx = bft_index(c, self);
    if (env->sig_max > DSIG_BFT_MAX_SIG)
        return dsig_fail(DSIG_E_ARG, "bft: signatures of %zu bytes, at most %u", env->sig_max,
                         DSIG_BFT_MAX_SIG);
    /* session id = H(class ‖ session ‖ n ‖ members): a deployment with other members or another
     * protocol never accepts these frames or signatures */
    dsig_blake3_hasher h;
    dsig_blake3_init_derive_key(&h, "DSig-bft session id v1");
    uint8_t t[8];
    t[0] = (uint8_t)cls;
    dsig_blake3_update(&h, t, 1);
    dsig_store_be64(t, session);
    dsig_blake3_update(&h, t, 8);
    dsig_store_be64(t, (uint64_t)n);
    dsig_blake3_update(&h, t, 8);
    for (size_t i = 0; i < n; i++) {
        dsig_store_be64(t, c->members[i]);
        dsig_blake3_update(&h, t, 8);
    }
    dsig_blake3_finalize(&h, c->session, 32);
    bb_init(&c->out);
    return DSIG_OK;
}

void bft_core_free(bft_core *c)
{
    bb_free(&c->out);
}

int bft_index(const bft_core *c, uint64_t id)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->members[mid] == id)
            return (int)mid;
        if (c->members[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

size_t bft_q_echo(const bft_core *c)
{
    return (c->n + c->f + 2) / 2;
}

size_t bft_q_vote(const bft_core *c)
{
    return 2 * c->f + 1;
}

void bft_hash(const char *ctx, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint8_t out[32])
{
    dsig_blake3_hasher h;
    dsig_blake3_init_derive_key(&h, ctx);
    uint8_t t[8];
    dsig_store_be64(t, (uint64_t)alen);
    dsig_blake3_update(&h, t, 8);
    if (alen)
        dsig_blake3_update(&h, a, alen);
    if (b) {
        dsig_store_be64(t, (uint64_t)blen);
        dsig_blake3_update(&h, t, 8);
        if (blen)
            dsig_blake3_update(&h, b, blen);
    }
    dsig_blake3_finalize(&h, out, 32);
}

void bft_stmt(const bft_core *c, uint8_t out[BFT_STMT_BYTES], int kind, uint64_t signer, uint64_t a,
              uint64_t b, uint64_t cc, const uint8_t d[32])
{
    uint8_t *p = out;
    memcpy(p, BFT_LABEL, BFT_LABEL_BYTES);
    p += BFT_LABEL_BYTES;
    memcpy(p, c->session, 32);
    p += 32;
    *p++ = (uint8_t)kind;
    dsig_store_be64(p, signer);
    dsig_store_be64(p + 8, a);
    dsig_store_be64(p + 16, b);
    dsig_store_be64(p + 24, cc);
    p += 32;
    memcpy(p, d, BFT_DIGEST);
}

int bft_sign(bft_core *c, int kind, uint64_t a, uint64_t b, uint64_t cc, const uint8_t d[32], bft_vote *out)
{
    uint8_t stmt[BFT_STMT_BYTES];
    bft_stmt(c, stmt, kind, c->self, a, b, cc, d);
    uint8_t sig[DSIG_BFT_MAX_SIG];
    size_t len = 0;
    int rc = c->env->sign(c->env->ctx, stmt, sizeof stmt, sig, sizeof sig, &len);
    if (rc != DSIG_OK)
        return rc;
    c->st->signatures++;
    return bft_vote_set(out, c->self, sig, len);
}

int bft_verify(bft_core *c, uint64_t signer, int kind, uint64_t a, uint64_t b, uint64_t cc,
               const uint8_t d[32], const uint8_t *sig, size_t len)
{
    uint8_t stmt[BFT_STMT_BYTES];
    bft_stmt(c, stmt, kind, signer, a, b, cc, d);
    c->st->verifications++;
    return c->env->verify(c->env->ctx, signer, stmt, sizeof stmt, sig, len);
}

/* ---- frames --------------------------------------------------------------------------------- */

void bft_begin(bft_core *c, int type)
{
    bb_reset(&c->out);
    bb_put(&c->out, BFT_MAGIC, 4);
    bb_u8(&c->out, BFT_VERSION);
    bb_u8(&c->out, (uint8_t)type);
    bb_put(&c->out, c->session, 8);
}

int bft_open(const bft_core *c, const uint8_t *bytes, size_t len, int *type, bft_rd *r)
{
    if (!bytes || len < BFT_HDR_BYTES || memcmp(bytes, BFT_MAGIC, 4) != 0 || bytes[4] != BFT_VERSION ||
        memcmp(bytes + 6, c->session, 8) != 0)
        return 0;
    *type = bytes[5];
    rd_init(r, bytes + BFT_HDR_BYTES, len - BFT_HDR_BYTES);
    return 1;
}

void bft_send_frame(bft_core *c, uint64_t to, const uint8_t *f, size_t len)
{
    if (to == c->self)
        return;
    c->st->frames_out++;
    c->env->send(c->env->ctx, to, f, len);
}

void bft_send(bft_core *c, uint64_t to)
{
    if (!c->out.err)
        bft_send_frame(c, to, c->out.p, c->out.len);
}

void bft_send_all(bft_core *c)
{
    for (size_t i = 0; i < c->n; i++)
        bft_send(c, c->members[i]);
}

/* ---- certificates --------------------------------------------------------------------------- */

void bft_put_vote(bft_buf *b, const bft_vote *v)
{
    bb_u64(b, v->signer);
    bb_blob16(b, v->sig, v->len);
}

int bft_get_vote(const bft_core *c, bft_rd *r, bft_vref *v)
{
    v->signer = rd_u64(r);
    v->sig = rd_blob16(r, 0, c->env->sig_max, &v->len);
    return r->bad ? -1 : 0;
}

void bft_put_cert(bft_buf *b, const bft_vote *v, size_t n)
{
    bb_u8(b, (uint8_t)n);
    for (size_t i = 0; i < n; i++)
        bft_put_vote(b, &v[i]);
}

int bft_get_cert(const bft_core *c, bft_rd *r, bft_vref *v, size_t max, size_t *n)
{
    size_t k = rd_u8(r);
    if (r->bad || k > max || k > c->n) {
        r->bad = 1;
        return -1;
    }
    for (size_t i = 0; i < k; i++)
        if (bft_get_vote(c, r, &v[i]) != 0)
            return -1;
    *n = k;
    return 0;
}

int bft_cert_verify(bft_core *c, const bft_vref *v, size_t nv, size_t need, uint64_t exclude, int kind,
                    uint64_t a, uint64_t b, uint64_t cc, const uint8_t d[32], const bft_vote *own)
{
    uint64_t seen = 0;
    if (nv < need)
        return DSIG_E_FORMAT;
    for (size_t i = 0; i < nv; i++) {
        int idx = bft_index(c, v[i].signer);
        if (idx < 0 || (seen >> idx & 1) || (exclude >> idx & 1))
            return DSIG_E_FORMAT;
        seen |= UINT64_C(1) << idx;
    }
    for (size_t i = 0; i < nv; i++) {
        if (own && own->sig && v[i].signer == own->signer && v[i].len == own->len &&
            memcmp(v[i].sig, own->sig, own->len) == 0)
            continue; /* our own signature, byte for byte: nothing to learn from verifying it */
        if (bft_verify(c, v[i].signer, kind, a, b, cc, d, v[i].sig, v[i].len) != DSIG_OK)
            return DSIG_E_VERIFY;
    }
    return DSIG_OK;
}

void bft_count_refusal(bft_core *c, int rc)
{
    if (rc == DSIG_E_FORMAT)
        c->st->malformed++;
    else
        c->st->forged++;
}

/* ---- proofs --------------------------------------------------------------------------------- */

void bft_evidence(bft_core *c, int kind, uint64_t culprit, uint64_t a, uint64_t b, uint64_t cc,
                  const uint8_t d1[32], const uint8_t *s1, size_t l1, const uint8_t d2[32], const uint8_t *s2,
                  size_t l2, uint64_t view)
{
    bft_buf p;
    bb_init(&p);
    uint8_t stmt[BFT_STMT_BYTES];
    bft_stmt(c, stmt, kind, culprit, a, b, cc, d1);
    bb_put(&p, stmt, sizeof stmt);
    bb_blob16(&p, s1, l1);
    bft_stmt(c, stmt, kind, culprit, a, b, cc, d2);
    bb_put(&p, stmt, sizeof stmt);
    bb_blob16(&p, s2, l2);
    c->st->equivocations++;
    if (!p.err) {
        dsig_bft_event ev = {.kind = DSIG_BFT_EV_EVIDENCE, .origin = culprit, .instance = b, .view = view,
                             .proof = p.p, .proof_len = p.len};
        memcpy(ev.digest, d1, 32);
        c->env->event(c->env->ctx, &ev);
    }
    bb_free(&p);
}

int dsig_bft_proof_check(const uint8_t *proof, size_t len, dsig_bft_verify_fn verify, void *arg,
                         uint64_t *culprit)
{
    if (!proof || !verify)
        return dsig_fail(DSIG_E_ARG, "dsig_bft_proof_check: NULL argument");
    bft_rd r;
    rd_init(&r, proof, len);
    size_t l1, l2;
    const uint8_t *t1 = rd_take(&r, BFT_STMT_BYTES);
    const uint8_t *s1 = rd_blob16(&r, 0, DSIG_BFT_MAX_SIG, &l1);
    const uint8_t *t2 = rd_take(&r, BFT_STMT_BYTES);
    const uint8_t *s2 = rd_blob16(&r, 0, DSIG_BFT_MAX_SIG, &l2);
    if (!rd_done(&r))
        return dsig_fail(DSIG_E_FORMAT, "bft proof: not two statements with signatures");
    /* same label, session, kind, signer and instance fields; different digests */
    const size_t fixed = BFT_STMT_BYTES - BFT_DIGEST;
    if (memcmp(t1, BFT_LABEL, BFT_LABEL_BYTES) != 0 || memcmp(t1, t2, fixed) != 0 ||
        memcmp(t1 + fixed, t2 + fixed, BFT_DIGEST) == 0)
        return dsig_fail(DSIG_E_FORMAT, "bft proof: the statements do not conflict");
    uint64_t signer = dsig_load_be64(t1 + BFT_LABEL_BYTES + 32 + 1);
    if (verify(arg, signer, t1, BFT_STMT_BYTES, s1, l1) != DSIG_OK ||
        verify(arg, signer, t2, BFT_STMT_BYTES, s2, l2) != DSIG_OK)
        return dsig_fail(DSIG_E_VERIFY, "bft proof: a signature does not verify");
    if (culprit)
        *culprit = signer;
    return DSIG_OK;
}

int dsig_bft_is_frame(const uint8_t *bytes, size_t len)
{
    return bytes && len >= BFT_HDR_BYTES && memcmp(bytes, BFT_MAGIC, 4) == 0 && bytes[4] == BFT_VERSION;
}

/* ---- requests ------------------------------------------------------------------------------- */

void bft_request_digest(uint64_t client, uint64_t t, const uint8_t *op, size_t len, uint8_t out[32])
{
    uint8_t id[16];
    dsig_store_be64(id, client);
    dsig_store_be64(id + 8, t);
    bft_hash("DSig-bft request v1", id, sizeof id, op, len, out);
}

void bft_null_digest(uint8_t out[32])
{
    bft_hash("DSig-bft null request v1", NULL, 0, NULL, 0, out);
}

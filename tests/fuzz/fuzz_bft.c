/*
 * Fuzz target: the BFT protocol cores (src/bft, docs/bft.md) as a Byzantine network sees them — every
 * frame a member, replica or client reads — plus the equivocation proofs, the replicated store's
 * snapshots and the replica's log file. The input is
 *
 *   byte 0   bits 0-2: target (7 = 0) — 0 consistent-broadcast member, 1 reliable-broadcast member,
 *            2 replica, 3 replication client, 4 equivocation proof, 5 store snapshot, 6 log file;
 *            bit 4: strict signatures (below)
 *   rest     targets 0-3: frames, each `from` u8 (sender 1 + from % 5) ‖ length u16le ‖ bytes; a length
 *            of 0 is a timer tick after 100 × (from + 1) ms. Target 4: the proof; 5: the snapshot (then
 *            operations, each length u8 ‖ bytes); 6: the file image.
 *
 * Processes 1..4 are the members (replicas), 5 the client; the fuzzed core is member 2 (the client for
 * target 3, which submits the seed run's five operations in turn; as its request numbers start at a
 * clock value, the request number of a REPLY in the input counts from 1, its first). Signatures come from a fake environment: "lax" ones are one byte, the signer's id — so the
 * fuzzer can forge any process and reach quorums, certificates, view changes and state transfer;
 * "strict" ones are keyed BLAKE3 per process, which the fuzzer cannot forge: then the fuzzed core is
 * the only honest process it can drive, and the others are the honest processes of the seed run.
 *
 * Invariants (abort on violation): a frame is refused as "not ours" (DSIG_E_ARG) with nothing counted,
 * or processed (DSIG_OK); every frame the core sends is this session's, within DSIG_BFT_NODE_APP_BYTES,
 * to another known process; events carry consistent pointers. Strict signatures: a delivered value, an
 * executed operation and an accepted result are the seed run's (nobody else could sign them), and no
 * equivocation is ever proven (every signer is honest). Proofs: accepted ones name a signer. Snapshots:
 * an accepted snapshot re-encodes to the same bytes, and operations then give bounded results. The log:
 * what loads reloads the same (a torn tail is cut once), and appends after it.
 *
 * Seeds: the frames each process receives in a run of all five processes (member 1 and 3 broadcast;
 * the client submits five operations, enough for a checkpoint), in both signature modes.
 */
#include <string.h>
#include <unistd.h>

#include "bft/bft.h"
#include "bft/pbft.h"
#include "core/bytes.h"
#include "dsig/mem.h"
#include "fuzz_common.h"
#include "hash/blake3.h"

#define FB_MAX_INPUT 65536u
#define FB_STRICT 0x10u
#define FB_PROCS 5u
#define FB_CLIENT 5u
#define FB_SESSION_BCAST 7u
#define FB_SESSION_REPL 9u

static const uint64_t members[4] = {1, 2, 3, 4}, clients[1] = {FB_CLIENT};

enum { K_CBC, K_RBC, K_REPLICA, K_CLIENT };

typedef struct proc {
    uint64_t id;
    int strict;
    bft_env env;
    dsig_bft_stats st;
    int kind;
    void *core;
    int fuzzed;                  /* the fuzzed core: sent frames are checked, not delivered */
    uint64_t first_t;            /* a client: its first request number (they start at a clock value) */
} proc;

/* A client's request number in its REQUEST and in the REPLY frames it reads (after the 14-byte header;
 * REQUEST: 1 u8, client u64, t u64; REPLY: view u64, client u64, t u64). Replies in the input number
 * requests from 1 (the client's first): the harness adds the client's first number minus one. */
#define FB_REQ_T (BFT_HDR_BYTES + 9u)
#define FB_REPLY_T (BFT_HDR_BYTES + 16u)

static int frame_type(const uint8_t *f, size_t len)
{
    return len > 5 ? f[5] : -1;
}

static uint64_t now = 1000;
static proc procs[FB_PROCS + 1];

/* ---- the fake environment -------------------------------------------------------------------- */

/* A strict signature: a digest of the statement under a per-process secret the fuzzer cannot hash. */
static int mac(uint64_t id, const uint8_t *stmt, size_t len, uint8_t out[32])
{
    uint8_t k[32];
    memset(k, 0xA0 ^ (int)id, sizeof k);
    bft_hash("DSig-fuzz strict signature", k, sizeof k, stmt, len, out);
    return DSIG_OK;
}

static int env_sign(void *ctx, const uint8_t *stmt, size_t len, uint8_t *sig, size_t cap, size_t *sl)
{
    const proc *p = ctx;
    FUZZ_CHECK(len == BFT_STMT_BYTES && memcmp(stmt, BFT_LABEL, BFT_LABEL_BYTES) == 0, "signing a non-statement");
    FUZZ_CHECK(cap >= 32, "signature buffer of %zu bytes", cap);
    if (!p->strict) {
        sig[0] = (uint8_t)p->id;
        *sl = 1;
        return DSIG_OK;
    }
    *sl = 32;
    return mac(p->id, stmt, len, sig);
}

static int verify_as(int strict, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    if (!strict)
        return sl == 1 && sig[0] == (uint8_t)signer ? DSIG_OK : DSIG_E_VERIFY;
    /* Not memcmp: libFuzzer hooks memcmp and feeds the expected bytes back as mutations (it forged
     * strict signatures that way); OpenSSL's CRYPTO_memcmp behind dsig_ct_equal shows it nothing. */
    uint8_t want[32];
    mac(signer, stmt, len, want);
    return sl == 32 && dsig_ct_equal(want, sig, 32) ? DSIG_OK : DSIG_E_VERIFY;
}

static int env_verify(void *ctx, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    return verify_as(((proc *)ctx)->strict, signer, stmt, len, sig, sl);
}

static int proof_verify(void *arg, uint64_t signer, const uint8_t *stmt, size_t len, const uint8_t *sig, size_t sl)
{
    return verify_as(*(const int *)arg, signer, stmt, len, sig, sl);
}

static uint64_t env_now(void *ctx)
{
    (void)ctx;
    return now;
}

/* ---- the network of the seed run ---------------------------------------------------------------- */

typedef struct msg {
    uint64_t from, to;
    uint8_t *bytes;
    size_t len;
} msg;

static struct {
    msg *q;
    size_t n, cap, head;
} net;

/* What the seed run delivered, accepted or executed (the strict-mode references). */
#define FB_MAX_KNOWN 64u
static struct {
    uint8_t v[FB_MAX_KNOWN][DSIG_BFT_MAX_VALUE];
    size_t len[FB_MAX_KNOWN];
    int kind[FB_MAX_KNOWN];
    uint64_t origin[FB_MAX_KNOWN];
    size_t n;
} known[2]; /* [strict] */

static int recording = 1;        /* the seed run records what its events carry */

static int is_known(int strict, int kind, uint64_t origin, const uint8_t *v, size_t len)
{
    for (size_t i = 0; i < known[strict].n; i++)
        if (known[strict].kind[i] == kind && known[strict].origin[i] == origin && known[strict].len[i] == len &&
            memcmp(known[strict].v[i], v, len) == 0)
            return 1;
    return 0;
}

static void env_event(void *ctx, const dsig_bft_event *ev)
{
    const proc *p = ctx;
    FUZZ_CHECK(ev->kind >= DSIG_BFT_EV_DELIVER && ev->kind <= DSIG_BFT_EV_RECOVERED, "event kind %d", ev->kind);
    FUZZ_CHECK((!ev->value_len || ev->value) && (!ev->result_len || ev->result) && (!ev->proof_len || ev->proof),
               "event with a length but no bytes");
    if (ev->kind == DSIG_BFT_EV_EVIDENCE) {
        FUZZ_CHECK(!p->strict, "strict signatures: an honest process was proven to equivocate");
        static const int lax = 0;
        uint64_t who = 0;
        FUZZ_CHECK(dsig_bft_proof_check(ev->proof, ev->proof_len, proof_verify, (void *)&lax, &who) == DSIG_OK &&
                       who == ev->origin,
                   "an equivocation proof that does not check (culprit %llu)", (unsigned long long)ev->origin);
        return;
    }
    if (ev->kind != DSIG_BFT_EV_DELIVER && ev->kind != DSIG_BFT_EV_DECIDE && ev->kind != DSIG_BFT_EV_REPLY)
        return;
    if (ev->kind == DSIG_BFT_EV_DECIDE && ev->origin == 0)
        return; /* the null request */
    const uint8_t *v = ev->value;
    const size_t vl = ev->value_len;
    FUZZ_CHECK(vl <= DSIG_BFT_MAX_VALUE, "event value of %zu bytes", vl);
    if (recording) {
        int s = p->strict;
        if (known[s].n < FB_MAX_KNOWN && !is_known(s, ev->kind, ev->origin, v, vl)) {
            memcpy(known[s].v[known[s].n], v, vl);
            known[s].len[known[s].n] = vl;
            known[s].kind[known[s].n] = ev->kind;
            known[s].origin[known[s].n++] = ev->origin;
        }
    } else if (p->strict) {
        FUZZ_CHECK(is_known(1, ev->kind, ev->origin, v, vl),
                   "strict signatures: event %d of origin %llu carries a value no honest run produced", ev->kind,
                   (unsigned long long)ev->origin);
    }
}

static void core_receive(proc *p, uint64_t from, const uint8_t *b, size_t len);

static void env_send(void *ctx, uint64_t to, const uint8_t *frame, size_t len)
{
    proc *p = ctx;
    FUZZ_CHECK(to >= 1 && to <= FB_PROCS && to != p->id, "process %llu sends to %llu", (unsigned long long)p->id,
               (unsigned long long)to);
    FUZZ_CHECK(len >= BFT_HDR_BYTES && len <= BFT_FRAME_MAX, "a frame of %zu bytes", len);
    if (p->kind == K_CLIENT && !p->first_t && frame_type(frame, len) == BT_PB_REQUEST && len >= FB_REQ_T + 8)
        p->first_t = dsig_load_be64(frame + FB_REQ_T);
    if (p->fuzzed) {
        bft_core *c = NULL;
        switch (p->kind) {
        case K_CBC: c = bft_cbc_core(p->core); break;
        case K_RBC: c = bft_rbc_core(p->core); break;
        case K_REPLICA: c = bft_replica_core(p->core); break;
        default: c = bft_client_core(p->core); break;
        }
        int type;
        bft_rd r;
        FUZZ_CHECK(bft_open(c, frame, len, &type, &r), "a sent frame is not of the sender's session");
        return;
    }
    if (net.n == net.cap) {
        net.cap = net.cap ? 2 * net.cap : 256;
        net.q = realloc(net.q, net.cap * sizeof *net.q);
        FUZZ_CHECK(net.q != NULL, "out of memory");
    }
    net.q[net.n++] = (msg){.from = p->id, .to = to, .bytes = fuzz_dup(frame, len), .len = len};
}

/* ---- cores ------------------------------------------------------------------------------------ */

static void core_new(proc *p, uint64_t id, int kind, int strict)
{
    memset(p, 0, sizeof *p);
    p->id = id;
    p->strict = strict;
    p->kind = kind;
    p->env = (bft_env){.ctx = p, .send = env_send, .sign = env_sign, .verify = env_verify, .event = env_event,
                       .now_ms = env_now, .sig_max = 32};
    int rc;
    switch (kind) {
    case K_CBC:
        rc = bft_cbc_new((bft_cbc **)&p->core, &p->env, &p->st, FB_SESSION_BCAST, id, members, 4, 50);
        break;
    case K_RBC:
        rc = bft_rbc_new((bft_rbc **)&p->core, &p->env, &p->st, FB_SESSION_BCAST, id, members, 4, 50);
        break;
    case K_REPLICA: {
        const bft_replica_cfg cfg = {.session = FB_SESSION_REPL, .self = id, .members = members, .n = 4,
                                     .clients = clients, .n_clients = 1, .checkpoint_interval = 4};
        rc = bft_replica_new((bft_replica **)&p->core, &p->env, &p->st, &cfg);
        break;
    }
    default:
        rc = bft_client_new((bft_client **)&p->core, &p->env, &p->st, FB_SESSION_REPL, id, members, 4, 500);
        break;
    }
    FUZZ_CHECK(rc == DSIG_OK, "core %d of process %llu: %s", kind, (unsigned long long)id, dsig_last_error_detail());
}

static void core_free(proc *p)
{
    switch (p->kind) {
    case K_CBC: bft_cbc_free(p->core); break;
    case K_RBC: bft_rbc_free(p->core); break;
    case K_REPLICA: bft_replica_free(p->core); break;
    default: bft_client_free(p->core); break;
    }
    p->core = NULL;
}

static void core_receive(proc *p, uint64_t from, const uint8_t *b, size_t len)
{
    const uint64_t in = p->st.frames_in, refused = p->st.malformed + p->st.forged + p->st.replayed + p->st.future;
    int rc;
    switch (p->kind) {
    case K_CBC: rc = bft_cbc_receive(p->core, from, b, len); break;
    case K_RBC: rc = bft_rbc_receive(p->core, from, b, len); break;
    case K_REPLICA: rc = bft_replica_receive(p->core, from, b, len); break;
    default: rc = bft_client_receive(p->core, from, b, len); break;
    }
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_ARG, "receive: %d", rc);
    if (rc == DSIG_E_ARG)
        FUZZ_CHECK(p->st.frames_in == in &&
                       p->st.malformed + p->st.forged + p->st.replayed + p->st.future == refused,
                   "a frame refused as another session's was counted");
}

static void core_tick(proc *p)
{
    switch (p->kind) {
    case K_CBC: bft_cbc_tick(p->core); break;
    case K_RBC: bft_rbc_tick(p->core); break;
    case K_REPLICA: bft_replica_tick(p->core); break;
    default: bft_client_tick(p->core); break;
    }
}

/* Operation k of the client's run (the seed run's and the fuzzed client's: replies name the request). */
#define FB_OPS 5
static size_t client_op(int k, uint8_t op[64])
{
    const uint8_t key[2] = {'k', (uint8_t)('0' + k % 3)};
    const int kind = k == 3 ? DSIG_BFT_KV_DEL : k % 2 ? DSIG_BFT_KV_GET : DSIG_BFT_KV_PUT;
    return dsig_bft_kv_op(op, 64, kind, key, 2, (const uint8_t *)"value", kind == DSIG_BFT_KV_PUT ? 5 : 0);
}

/* The client submits its next operation once the previous one has its result: 1 if it did. */
static int client_next(proc *p, int k)
{
    uint8_t op[64];
    size_t ol = client_op(k, op);
    int rc = bft_client_submit(p->core, op, ol, NULL);
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_WOULD_BLOCK, "client submit: %s", dsig_last_error_detail());
    return rc == DSIG_OK;
}

/* ---- targets 0-3: frames into one core ---------------------------------------------------------- */

static void t_frames(int kind, int strict, const uint8_t *d, size_t n)
{
    proc *p = &procs[0];
    core_new(p, kind == K_CLIENT ? FB_CLIENT : 2, kind, strict);
    p->fuzzed = 1;
    now = 1000;
    int ops = kind == K_CLIENT ? client_next(p, 0) : 0;
    fuzz_in in = {d, n};
    while (in.n >= 3) {
        const uint8_t from = fuzz_u8(&in);
        const uint16_t len = fuzz_u16(&in);
        if (len == 0) {
            now += 100u * (from + 1u);
            core_tick(p);
            continue;
        }
        size_t got;
        const uint8_t *f = fuzz_take(&in, len, &got);
        uint8_t *copy = fuzz_dup(f, got);
        if (kind == K_CLIENT && frame_type(copy, got) == BT_PB_REPLY && got >= FB_REPLY_T + 8)
            dsig_store_be64(copy + FB_REPLY_T, dsig_load_be64(copy + FB_REPLY_T) + p->first_t - 1);
        core_receive(p, 1 + from % FB_PROCS, copy, got);
        free(copy);
        if (kind == K_CLIENT && ops < FB_OPS)
            ops += client_next(p, ops);
    }
    core_free(p);
}

/* ---- targets 4-6 ---------------------------------------------------------------------------------- */

static void t_proof(int strict, const uint8_t *d, size_t n)
{
    uint64_t who = 0;
    int rc = dsig_bft_proof_check(d, n, proof_verify, &strict, &who);
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_FORMAT || rc == DSIG_E_VERIFY, "proof verdict %d", rc);
    fuzz_check_detail(rc, "dsig_bft_proof_check");
    if (rc == DSIG_OK) {
        FUZZ_CHECK(who != 0, "an accepted proof names no culprit");
        FUZZ_CHECK(!strict, "strict signatures: an honest process was proven to equivocate");
    }
}

static void t_snapshot(const uint8_t *d, size_t n)
{
    static const uint64_t cl[2] = {5, 6};
    bft_kv kv;
    FUZZ_CHECK(kv_init(&kv, cl, 2) == DSIG_OK, "kv_init");
    fuzz_in in = {d, n};
    size_t sl;
    const uint8_t *snap = fuzz_take(&in, fuzz_u16(&in), &sl);
    uint8_t *copy = fuzz_dup(snap, sl);
    if (kv_restore(&kv, copy, sl) == 0) {
        bft_buf out;
        bb_init(&out);
        kv_snapshot(&kv, &out);
        FUZZ_CHECK(!out.err && out.len == sl && memcmp(out.p, copy, sl) == 0,
                   "an accepted snapshot re-encodes to other bytes");
        bb_free(&out);
    }
    free(copy);
    while (in.n) {
        size_t ol;
        const uint8_t *op = fuzz_take(&in, fuzz_u8(&in), &ol);
        uint8_t *o = fuzz_dup(op, ol), res[DSIG_BFT_MAX_RESULT];
        size_t rl = kv_apply(&kv, o, ol, res);
        FUZZ_CHECK(rl >= 1 && rl <= DSIG_BFT_MAX_RESULT, "result of %zu bytes", rl);
        free(o);
    }
    kv_free(&kv);
}

typedef struct recs {
    size_t n;
    uint8_t digest[32];          /* of the records' types, lengths and bytes */
    dsig_blake3_hasher h;
} recs;

static int collect(void *arg, int type, const uint8_t *p, size_t len)
{
    recs *r = arg;
    uint8_t hdr[12];
    dsig_store_le32(hdr, (uint32_t)type);
    dsig_store_le64(hdr + 4, len);
    dsig_blake3_update(&r->h, hdr, sizeof hdr);
    dsig_blake3_update(&r->h, p, len);
    r->n++;
    return 0;
}

/* Open and load a log: the load's verdict (an open that fails is one too); the store stays open in
 * *keep after a successful load when keep is not NULL. */
static int load(const char *path, const uint8_t sid[32], recs *r, bft_store **keep)
{
    bft_store *s;
    int rc = bft_store_open(&s, path, sid, 0);
    fuzz_check_detail(rc, "bft_store_open");
    if (rc != DSIG_OK)
        return rc;
    memset(r, 0, sizeof *r);
    dsig_blake3_init(&r->h);
    rc = bft_store_load(s, collect, r);
    fuzz_check_detail(rc, "bft_store_load");
    dsig_blake3_finalize(&r->h, r->digest, 32);
    if (keep && rc == DSIG_OK)
        *keep = s;
    else
        bft_store_close(s);
    return rc;
}

static void t_store(const uint8_t *d, size_t n)
{
    static char path[300];
    if (!path[0])
        snprintf(path, sizeof path, "%s/log", fuzz_tmpdir("bftstore"));
    static const uint8_t sid[32] = {7};
    unlink(path);
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f && fwrite(d, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
    recs a, b;
    bft_store *s = NULL;
    if (load(path, sid, &a, &s) != DSIG_OK)
        return;
    recs a2;
    bft_store_close(s);
    FUZZ_CHECK(load(path, sid, &a2, &s) == DSIG_OK, "a loaded log does not reload: %s", dsig_last_error_detail());
    FUZZ_CHECK(a2.n == a.n && memcmp(a2.digest, a.digest, 32) == 0, "a log reloads with other records");
    FUZZ_CHECK(bft_store_append(s, 3, (const uint8_t *)"after", 5) == DSIG_OK, "append after a load: %s",
               dsig_last_error_detail());
    bft_store_close(s);
    FUZZ_CHECK(load(path, sid, &b, NULL) == DSIG_OK, "a loaded log with one more record does not reload: %s",
               dsig_last_error_detail());
    FUZZ_CHECK(b.n == a.n + 1, "reloaded %zu records, %zu + 1 expected", b.n, a.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FB_MAX_INPUT)
        return 0;
    recording = 0;
    FUZZ_CHECK(dsig_init() == DSIG_OK, "dsig_init");
    const int target = (data[0] & 7) % 7, strict = (data[0] & FB_STRICT) != 0;
    uint8_t *d = fuzz_dup(data + 1, size - 1);
    const size_t n = size - 1;
    switch (target) {
    case 4: t_proof(strict, d, n); break;
    case 5: t_snapshot(d, n); break;
    case 6: t_store(d, n); break;
    default: t_frames(target, strict, d, n); break;
    }
    free(d);
    return 0;
}

/* ---- seeds: one honest run per protocol and signature mode --------------------------------------- */

/* Deliver everything queued (the seed run), writing what `watch` receives into the seed being built. */
static void run_network(uint64_t watch)
{
    for (size_t guard = 0; net.head < net.n && guard < 200000; guard++) {
        msg m = net.q[net.head++];
        core_receive(&procs[m.to], m.from, m.bytes, m.len);
        if (m.to == watch && m.len <= 0xFFFF) {
            uint8_t h[3] = {(uint8_t)(m.from - 1), (uint8_t)m.len, (uint8_t)(m.len >> 8)};
            if (watch == FB_CLIENT && frame_type(m.bytes, m.len) == BT_PB_REPLY && m.len >= FB_REPLY_T + 8)
                dsig_store_be64(m.bytes + FB_REPLY_T, dsig_load_be64(m.bytes + FB_REPLY_T) - procs[FB_CLIENT].first_t + 1);
            fuzz_seed_add(h, 3);
            fuzz_seed_add(m.bytes, m.len);
        }
        free(m.bytes);
    }
    net.n = net.head = 0;
}

static void seed_run(int kind, int strict)
{
    const uint64_t watch = kind == K_CLIENT ? FB_CLIENT : 2;
    const int member_kind = kind == K_CLIENT ? K_REPLICA : kind;
    for (uint64_t i = 1; i <= 4; i++)
        core_new(&procs[i], i, member_kind, strict);
    if (member_kind == K_REPLICA)
        core_new(&procs[FB_CLIENT], FB_CLIENT, K_CLIENT, strict);
    fuzz_seed_begin();
    const uint8_t head = (uint8_t)(kind | (strict ? FB_STRICT : 0));
    fuzz_seed_add(&head, 1);
    if (member_kind != K_REPLICA) {
        static const char *const values[] = {"value of member 1", "value of member 3"};
        for (int k = 0; k < 2; k++) {
            proc *o = &procs[k ? 3 : 1];
            const uint8_t *v = (const uint8_t *)values[k];
            int rc = kind == K_CBC ? bft_cbc_broadcast(o->core, v, strlen(values[k]), NULL)
                                   : bft_rbc_broadcast(o->core, v, strlen(values[k]), NULL);
            FUZZ_CHECK(rc == DSIG_OK, "broadcast: %s", dsig_last_error_detail());
            run_network(watch);
        }
    } else {
        for (int k = 0; k < FB_OPS; k++) {
            FUZZ_CHECK(client_next(&procs[FB_CLIENT], k), "the client of the seed run is still busy");
            run_network(watch);
        }
    }
    static const uint8_t tick[3] = {9, 0, 0};
    fuzz_seed_add(tick, sizeof tick);
    fuzz_seed_end();
    for (uint64_t i = 1; i <= FB_PROCS; i++)
        if (procs[i].core)
            core_free(&procs[i]);
}

/* The honest runs: their frames are the seeds of targets 0-3, and what they deliver, execute and accept
 * are the strict-mode references (made at start-up, whether or not seeds are written). */
static void honest_runs(void)
{
    recording = 1;
    for (int strict = 0; strict < 2; strict++)
        for (int kind = K_CBC; kind <= K_CLIENT; kind++)
            seed_run(kind, strict);
    recording = 0;
}

static void seeds(void)
{
    honest_runs();
    /* a proof: two conflicting statements of member 3 (lax signatures) */
    bft_core c;
    proc *p = &procs[0];
    core_new(p, 1, K_CBC, 0);
    FUZZ_CHECK(bft_core_init(&c, &p->env, &p->st, BFT_CLASS_CBC, FB_SESSION_BCAST, 1, members, 4) == DSIG_OK, "core");
    uint8_t d1[32] = {1}, d2[32] = {2}, t[BFT_STMT_BYTES], s = 3;
    fuzz_seed_begin();
    fuzz_seed_add("\x04", 1);
    bft_stmt(&c, t, BT_CBC_SEND, 3, 3, 9, 0, d1);
    fuzz_seed_add(t, sizeof t);
    fuzz_seed_add("\x00\x01", 2);
    fuzz_seed_add(&s, 1);
    bft_stmt(&c, t, BT_CBC_SEND, 3, 3, 9, 0, d2);
    fuzz_seed_add(t, sizeof t);
    fuzz_seed_add("\x00\x01", 2);
    fuzz_seed_add(&s, 1);
    fuzz_seed_end();
    bft_core_free(&c);
    core_free(p);
    /* a snapshot with two keys and the two clients, then operations */
    bft_kv kv;
    static const uint64_t cl[2] = {5, 6};
    FUZZ_CHECK(kv_init(&kv, cl, 2) == DSIG_OK, "kv_init");
    uint8_t op[64], res[DSIG_BFT_MAX_RESULT];
    size_t ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, (const uint8_t *)"a", 1, (const uint8_t *)"xyz", 3);
    kv_apply(&kv, op, ol, res);
    ol = dsig_bft_kv_op(op, sizeof op, DSIG_BFT_KV_PUT, (const uint8_t *)"bb", 2, (const uint8_t *)"1", 1);
    kv_apply(&kv, op, ol, res);
    kv_client_of(&kv, 6)->t = 42;
    bft_buf b;
    bb_init(&b);
    kv_snapshot(&kv, &b);
    fuzz_seed_begin();
    fuzz_seed_add("\x05", 1);
    fuzz_seed_u16((unsigned)b.len);
    fuzz_seed_add(b.p, b.len);
    const uint8_t l = (uint8_t)ol;
    fuzz_seed_add(&l, 1);
    fuzz_seed_add(op, ol);
    fuzz_seed_end();
    bb_free(&b);
    kv_free(&kv);
    /* a log file with three records and a torn fourth */
    static char path[300];
    snprintf(path, sizeof path, "%s/seedlog", fuzz_tmpdir("bftseed"));
    static const uint8_t sid[32] = {7};
    bft_store *st;
    recs r;
    FUZZ_CHECK(load(path, sid, &r, &st) == DSIG_OK, "store");
    for (int i = 1; i <= 3; i++)
        FUZZ_CHECK(bft_store_append(st, i, (const uint8_t *)"record bytes....", (size_t)(4 * i)) == DSIG_OK, "append");
    bft_store_close(st);
    FILE *f = fopen(path, "rb");
    uint8_t img[4096];
    size_t il = f ? fread(img, 1, sizeof img, f) : 0;
    FUZZ_CHECK(f && il > 0 && fclose(f) == 0, "read %s", path);
    fuzz_seed2("\x06", 1, img, il);
    memcpy(img + il, "\x00\x00\x01\x00\x02partial", 12);
    fuzz_seed2("\x06", 1, img, il + 12);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FUZZ_CHECK(dsig_init() == DSIG_OK, "dsig_init");
    fuzz_seeds_run(seeds);
    honest_runs(); /* fuzz_seed writes nothing without DSIG_FUZZ_SEEDS */
    return 0;
}

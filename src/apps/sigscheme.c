/*
 * src/apps/sigscheme.c — the applications' one adapter to the signing API of include/dsig/: key files,
 * the three schemes (none, a one-shot registry signature, DSig hybrid signatures) behind one signer and
 * one verifier type, offline slow-path verification for the auditor, and the hash of requests and of the
 * log chain. Nothing else in src/apps calls dsig_sign / dsig_verify / dsig_hybrid_*: a change of that API
 * touches this file only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apps/apps_internal.h"
#include "core/internal.h"
#include "hash/blake3.h"

#define DEFAULT_POOL 512u

/* ---- hashing ---------------------------------------------------------------------------------- */

void apps_hash(uint8_t out[32], const struct iovec *iov, int n)
{
    dsig_blake3_hasher h;
    dsig_blake3_init(&h);
    for (int i = 0; i < n; i++)
        dsig_blake3_update(&h, iov[i].iov_base, iov[i].iov_len);
    dsig_blake3_finalize(&h, out, 32);
}

/* ---- keys ------------------------------------------------------------------------------------- */

/* apps_key_load with open(2) flags (O_NOFOLLOW for the files of a keys directory). */
static int key_load(const char *path, int need_private, int flags, dsig_key **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "key file \"%s\": %s", path, strerror(errno));
    dsig_key *k = NULL;
    int rc = dsig_jwk_read_fd(fd, path, &k);
    close(fd);
    if (rc != DSIG_OK)
        return rc;
    if (need_private && !dsig_key_has_private(k)) {
        dsig_key_free(k);
        return dsig_fail(DSIG_E_NO_PRIVATE, "key file \"%s\": a private key is needed (this one is public)", path);
    }
    if (!need_private && dsig_key_has_private(k)) {
        dsig_key_free(k);
        return dsig_fail(DSIG_E_KEY, "key file \"%s\": holds a private key where a public one belongs", path);
    }
    *out = k;
    return DSIG_OK;
}

int apps_key_load(const char *path, int need_private, dsig_key **out)
{
    return key_load(path, need_private, 0, out);
}

struct apps_keyset {
    size_t n;
    uint64_t *ids;        /* ascending */
    dsig_key **keys;
};

/* "client-<ID>.jwk" with ID decimal 1..APPS_MAX_ID, no leading zero: 1 and *id, else 0. */
static int client_file_id(const char *name, uint64_t *id)
{
    if (strncmp(name, "client-", 7) != 0)
        return 0;
    const char *p = name + 7;
    uint64_t v = 0;
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (v > (APPS_MAX_ID - (uint64_t)(*p - '0')) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (!digits || (name[7] == '0') || strcmp(p, ".jwk") != 0 || v == 0)
        return 0;
    *id = v;
    return 1;
}

int apps_keyset_load(const char *dir, apps_keyset **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return dsig_fail(DSIG_E_IO, "keys directory \"%s\": %s", dir, strerror(errno));
    apps_keyset *ks = dsig_calloc(1, sizeof *ks);
    if (ks) {
        ks->ids = dsig_calloc(APPS_MAX_CLIENTS, sizeof *ks->ids);
        ks->keys = dsig_calloc(APPS_MAX_CLIENTS, sizeof *ks->keys);
    }
    int rc = ks && ks->ids && ks->keys ? DSIG_OK : dsig_fail(DSIG_E_NOMEM, "keys: out of memory");
    struct dirent *e;
    while (rc == DSIG_OK && (e = readdir(d)) != NULL) {
        uint64_t id;
        if (!client_file_id(e->d_name, &id))
            continue;
        if (ks->n == APPS_MAX_CLIENTS) {
            rc = dsig_fail(DSIG_E_TOO_LARGE, "keys directory \"%s\": more than %u clients", dir, APPS_MAX_CLIENTS);
            break;
        }
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
            rc = dsig_fail(DSIG_E_ARG, "keys directory \"%s\": path too long", dir);
            break;
        }
        dsig_key *k;
        if ((rc = key_load(path, 0, O_NOFOLLOW, &k)) != DSIG_OK) /* no symbolic links in the registry */
            break;
        if (apps_keyset_find(ks, id)) { /* "client-7.jwk" only once per directory, but be exact */
            dsig_key_free(k);
            rc = dsig_fail(DSIG_E_ARG, "keys directory \"%s\": client %llu twice", dir, (unsigned long long)id);
            break;
        }
        /* insertion in id order (at most APPS_MAX_CLIENTS entries) */
        size_t i = ks->n;
        while (i > 0 && ks->ids[i - 1] > id) {
            ks->ids[i] = ks->ids[i - 1];
            ks->keys[i] = ks->keys[i - 1];
            i--;
        }
        ks->ids[i] = id;
        ks->keys[i] = k;
        ks->n++;
    }
    closedir(d);
    if (rc != DSIG_OK) {
        apps_keyset_free(ks);
        return rc;
    }
    *out = ks;
    return DSIG_OK;
}

size_t apps_keyset_count(const apps_keyset *ks)
{
    return ks ? ks->n : 0;
}

uint64_t apps_keyset_id(const apps_keyset *ks, size_t i)
{
    return i < ks->n ? ks->ids[i] : 0;
}

int apps_keyset_index(const apps_keyset *ks, uint64_t id, size_t *pos)
{
    size_t lo = 0, hi = ks ? ks->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ks->ids[mid] == id) {
            *pos = mid;
            return 1;
        }
        if (ks->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

const dsig_key *apps_keyset_find(const apps_keyset *ks, uint64_t id)
{
    size_t i;
    return apps_keyset_index(ks, id, &i) ? ks->keys[i] : NULL;
}

void apps_keyset_free(apps_keyset *ks)
{
    if (!ks)
        return;
    for (size_t i = 0; ks->keys && i < ks->n; i++)
        dsig_key_free(ks->keys[i]);
    dsig_xfree(ks->ids, 0);
    dsig_xfree(ks->keys, 0);
    dsig_xfree(ks, 0);
}

int apps_server_tag(const dsig_key *server_key, uint8_t tag[APPS_TAG_BYTES])
{
    char tp[DSIG_THUMBPRINT_LEN];
    int rc = dsig_jwk_thumbprint(server_key, tp);
    if (rc != DSIG_OK)
        return rc;
    size_t n = 0;
    rc = dsig_b64url_decode(tp, strlen(tp), tag, APPS_TAG_BYTES, &n);
    if (rc != DSIG_OK || n != APPS_TAG_BYTES)
        return dsig_fail(DSIG_E_INTERNAL, "server tag: unexpected thumbprint length");
    return DSIG_OK;
}

size_t apps_batch_msg_bytes(void)
{
    return dsig_hybrid_params_batch_msg_bytes(dsig_hybrid_params_default());
}

/* ---- signer ----------------------------------------------------------------------------------- */

struct apps_signer {
    int scheme;
    const dsig_key *key;          /* SIG */
    const dsig_alg *alg;          /* SIG: the key's bound algorithm */
    dsig_hybrid_signer *hs;       /* DSIG */
    unsigned pool;
    apps_batch_fn on_batch;
    void *arg;
};

/* The hybrid signer's batch callback (background thread). */
static void signer_batch(void *arg, uint64_t signer_id, unsigned group, const uint8_t *msg, size_t len)
{
    (void)signer_id;
    (void)group;
    apps_signer *s = arg;
    if (s->on_batch)
        s->on_batch(s->arg, msg, len);
}

int apps_signer_new(apps_signer **out, int scheme, const dsig_key *key, uint64_t id, unsigned pool,
                    apps_batch_fn on_batch, void *arg)
{
    *out = NULL;
    apps_signer *s = dsig_calloc(1, sizeof *s);
    if (!s)
        return dsig_fail(DSIG_E_NOMEM, "signer: out of memory");
    s->scheme = scheme;
    s->key = key;
    s->pool = pool ? pool : DEFAULT_POOL;
    s->on_batch = on_batch;
    s->arg = arg;
    int rc = DSIG_OK;
    if (scheme == APPS_SCHEME_SIG) {
        s->alg = dsig_key_alg(key);
        if (!s->alg)
            rc = dsig_fail(DSIG_E_KEY, "scheme sig: the key names no algorithm (a JWK with \"alg\" is needed)");
        else if (!dsig_key_has_private(key))
            rc = dsig_fail(DSIG_E_NO_PRIVATE, "scheme sig: signing needs the private key");
        else
            rc = dsig_key_check_alg(key, s->alg);
    } else if (scheme == APPS_SCHEME_DSIG) {
        dsig_hybrid_signer_options so;
        dsig_hybrid_signer_options_default(&so);
        so.pool_target = s->pool;
        so.signer_id = id;
        so.on_batch = signer_batch;
        so.on_batch_arg = s;
        /* first_seq stays 0: the wall clock, so a client that reconnects under the same id starts past
         * every batch seq it used before (a verifier never accepts one twice from one id). */
        rc = dsig_hybrid_signer_new(&s->hs, key, NULL, &so);
    } else if (scheme != APPS_SCHEME_NONE) {
        rc = dsig_fail(DSIG_E_ARG, "signer: unknown scheme %d", scheme);
    }
    if (rc != DSIG_OK) {
        apps_signer_free(s);
        return rc;
    }
    *out = s;
    return DSIG_OK;
}

size_t apps_signer_sig_max(const apps_signer *s)
{
    switch (s->scheme) {
    case APPS_SCHEME_SIG:
        return dsig_alg_sig_max(s->alg);
    case APPS_SCHEME_DSIG:
        return dsig_hybrid_signer_sig_bytes(s->hs);
    default:
        return 0;
    }
}

int apps_sign(apps_signer *s, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    switch (s->scheme) {
    case APPS_SCHEME_SIG:
        return dsig_sign(s->alg, s->key, msg, len, sig, cap, sig_len);
    case APPS_SCHEME_DSIG:
        return dsig_hybrid_sign(s->hs, msg, len, sig, cap, sig_len);
    default:
        *sig_len = 0;
        return DSIG_OK;
    }
}

int apps_signer_wait_full(apps_signer *s)
{
    return s->scheme == APPS_SCHEME_DSIG ? dsig_hybrid_signer_wait_ready(s->hs, s->pool) : DSIG_OK;
}

void apps_signer_free(apps_signer *s)
{
    if (!s)
        return;
    dsig_hybrid_signer_free(s->hs);
    dsig_xfree(s, sizeof *s);
}

/* ---- verifier --------------------------------------------------------------------------------- */

struct apps_verifier {
    int scheme;
    dsig_hybrid_verifier *hv;     /* DSIG */
    pthread_mutex_t mu;           /* the registered ids */
    uint64_t *ids;
    unsigned n, max;
};

int apps_verifier_new(apps_verifier **out, int scheme, unsigned max_peers)
{
    *out = NULL;
    apps_verifier *v = dsig_calloc(1, sizeof *v);
    if (!v || !(v->ids = dsig_calloc(max_peers ? max_peers : 1, sizeof *v->ids))) {
        dsig_xfree(v, 0);
        return dsig_fail(DSIG_E_NOMEM, "verifier: out of memory");
    }
    v->scheme = scheme;
    v->max = max_peers;
    pthread_mutex_init(&v->mu, NULL);
    if (scheme == APPS_SCHEME_DSIG) {
        dsig_hybrid_verifier_options vo;
        dsig_hybrid_verifier_options_default(&vo);
        vo.max_signers = max_peers;
        int rc = dsig_hybrid_verifier_new(&v->hv, NULL, &vo);
        if (rc != DSIG_OK) {
            apps_verifier_free(v);
            return rc;
        }
    }
    *out = v;
    return DSIG_OK;
}

int apps_verifier_add(apps_verifier *v, uint64_t id, const dsig_key *pub)
{
    pthread_mutex_lock(&v->mu);
    int rc = DSIG_OK;
    for (unsigned i = 0; i < v->n; i++)
        if (v->ids[i] == id)
            goto out;
    if (v->n == v->max) {
        rc = dsig_fail(DSIG_E_TOO_LARGE, "verifier: more than %u peers", v->max);
        goto out;
    }
    if (v->scheme == APPS_SCHEME_DSIG && (rc = dsig_hybrid_verifier_add_signer(v->hv, id, pub)) != DSIG_OK)
        goto out;
    v->ids[v->n++] = id;
out:
    pthread_mutex_unlock(&v->mu);
    return rc;
}

int apps_verifier_batch(apps_verifier *v, uint64_t id, const uint8_t *msg, size_t len)
{
    if (v->scheme != APPS_SCHEME_DSIG)
        return dsig_fail(DSIG_E_STATE, "a batch message under scheme %s", apps_scheme_name(v->scheme));
    return dsig_hybrid_verifier_receive_batch(v->hv, id, msg, len);
}

void apps_verifier_flush(apps_verifier *v)
{
    if (v->hv)
        dsig_hybrid_verifier_flush(v->hv);
}

int apps_verify(apps_verifier *v, uint64_t id, const dsig_key *pub, const uint8_t *msg, size_t len,
                const uint8_t *sig, size_t sig_len, int *fast)
{
    if (fast)
        *fast = 0;
    switch (v->scheme) {
    case APPS_SCHEME_SIG: {
        const dsig_alg *alg = dsig_key_alg(pub);
        if (!alg)
            return dsig_fail(DSIG_E_KEY, "the peer's key names no algorithm");
        return dsig_verify(alg, pub, msg, len, sig, sig_len);
    }
    case APPS_SCHEME_DSIG: {
        int f = dsig_hybrid_can_verify_fast(v->hv, id, sig, sig_len);
        int rc = dsig_hybrid_verify(v->hv, id, msg, len, sig, sig_len);
        if (fast)
            *fast = f;
        return rc;
    }
    default:
        return sig_len == 0 ? DSIG_OK : dsig_fail(DSIG_E_VERIFY, "scheme none: a signature where none belongs");
    }
}

void apps_verifier_free(apps_verifier *v)
{
    if (!v)
        return;
    dsig_hybrid_verifier_free(v->hv);
    pthread_mutex_destroy(&v->mu);
    dsig_xfree(v->ids, 0);
    dsig_xfree(v, 0);
}

int apps_verify_offline(int scheme, const dsig_key *pub, uint64_t id, const uint8_t *msg, size_t len,
                        const uint8_t *sig, size_t sig_len)
{
    switch (scheme) {
    case APPS_SCHEME_SIG: {
        const dsig_alg *alg = dsig_key_alg(pub);
        if (!alg)
            return dsig_fail(DSIG_E_KEY, "the key names no algorithm");
        return dsig_verify(alg, pub, msg, len, sig, sig_len);
    }
    case APPS_SCHEME_DSIG:
        return dsig_hybrid_verify_slow(NULL, pub, id, msg, len, sig, sig_len);
    default:
        return dsig_fail(DSIG_E_UNSUPPORTED, "scheme none: unsigned, nothing to verify");
    }
}

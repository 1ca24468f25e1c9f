/*
 * src/serve/keys.c — the served keys: every *.jwk (private JWK bound to an algorithm) and *.state
 * (stateful key, dsig/state.h) file of the key directory; the key id is the file name without its
 * extension, the key id that name less a ".v<N>" suffix (the version: key_version.c). A key set is
 * immutable once loaded and reference counted, as is each key in it (but for its "retired" flag): a
 * reload or a rotation builds a new set and swaps the pointer, while requests in flight keep the key
 * they hold. A marker file <id>.v<N>.retired retires that version.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "serve/ranges.h"
#include "serve_internal.h"

#define MAX_KEYS 4096
#define LOAD_SKIPPED 1 /* load_one: the entry is not loaded (a symbolic link), not an error */

/* Take a reference. */
void serve_key_ref(struct serve_key *k)
{
    atomic_fetch_add(&k->refs, 1);
}

/* Drop a reference; the last one frees (and wipes) the key. */
void serve_key_unref(struct serve_key *k)
{
    if (!k || atomic_fetch_sub(&k->refs, 1) != 1)
        return;
    dsig_key_free(k->key);
    serve_ranges_free(k->ranges); /* after the key: its range source */
    serve_counter_free(k->counter);
    dsig_key_free(k->pub);
    dsig_free(k->jwk);
    dsig_xfree(k, 0);
}

/* Take a reference on a set. */
void serve_keyset_ref(struct serve_keyset *ks)
{
    atomic_fetch_add(&ks->refs, 1);
}

/* Drop a reference on a set; the last one drops its keys. */
void serve_keyset_unref(struct serve_keyset *ks)
{
    if (!ks || atomic_fetch_sub(&ks->refs, 1) != 1)
        return;
    for (size_t i = 0; i < ks->n; i++)
        serve_key_unref(ks->keys[i]);
    dsig_xfree(ks->keys, 0);
    dsig_xfree(ks, 0);
}

/* The first index whose (kid, version) is not below (kid, version): the set is sorted. */
static size_t lower_bound(const struct serve_keyset *ks, const char *kid, unsigned version)
{
    size_t lo = 0, hi = ks ? ks->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ks->keys[mid]->kid, kid);
        if (c < 0 || (c == 0 && ks->keys[mid]->version < version))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct serve_key *serve_keyset_find_version(const struct serve_keyset *ks, const char *kid, unsigned version)
{
    size_t i = lower_bound(ks, kid, version);
    if (ks && i < ks->n && strcmp(ks->keys[i]->kid, kid) == 0 && ks->keys[i]->version == version)
        return ks->keys[i];
    return NULL;
}

unsigned serve_keyset_max_version(const struct serve_keyset *ks, const char *kid)
{
    size_t end = lower_bound(ks, kid, UINT32_MAX); /* versions have 9 digits at most: all below */
    return end > 0 && strcmp(ks->keys[end - 1]->kid, kid) == 0 ? ks->keys[end - 1]->version : 0;
}

void serve_keyset_range(const struct serve_keyset *ks, const char *kid, size_t *lo, size_t *hi)
{
    *lo = lower_bound(ks, kid, 0);
    *hi = lower_bound(ks, kid, UINT32_MAX);
}

/* The newest version not retired. */
struct serve_key *serve_keyset_find(const struct serve_keyset *ks, const char *kid)
{
    size_t lo = lower_bound(ks, kid, 0), i = lower_bound(ks, kid, UINT32_MAX);
    while (i > lo) {
        struct serve_key *k = ks->keys[--i];
        if (!atomic_load(&k->retired))
            return k;
    }
    return NULL;
}

/* Fail with `code`, naming the file and keeping the library's detail (copied first: dsig_fail
 * rewrites the thread's detail buffer). */
static int fail_with_detail(int code, const char *what, const char *path)
{
    char detail[512];
    snprintf(detail, sizeof detail, "%s", dsig_last_error_detail());
    return dsig_fail(code, "%s \"%s\": %s", what, path, detail);
}

/* Build one served key from file `name` of the key directory (stem: its length without the
 * extension). */
static int load_one(const struct dsig_serve_config *cfg, const struct serve_keyset *prev, const char *name,
                    size_t stem, int is_state, serve_warn_fn warn, void *warn_arg, struct serve_key **out)
{
    char id[SERVE_NAME_MAX + 1];
    unsigned version = 1;
    (void)serve_key_stem_parse(name, stem, id, &version);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", cfg->key_dir, name) >= sizeof path)
        return dsig_fail(DSIG_E_ARG, "key file \"%s\": path too long", name);
    /* lstat, like the O_NOFOLLOW opens below (here and in dsig_state_open): a symbolic link is never
     * followed. It is skipped with a warning rather than failing the whole (re)load. */
    struct stat st;
    if (lstat(path, &st) != 0)
        return dsig_fail(DSIG_E_IO, "key file \"%s\": %s", path, strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        if (warn) {
            char msg[4200];
            snprintf(msg, sizeof msg, "key file \"%s\": a symbolic link, skipped (links are not followed)", path);
            warn(warn_arg, msg);
        }
        return LOAD_SKIPPED;
    }
    if (!S_ISREG(st.st_mode))
        return dsig_fail(DSIG_E_IO, "key file \"%s\": not a regular file", path);
    char kid[SERVE_NAME_MAX + 1];
    memcpy(kid, name, stem);
    kid[stem] = '\0';
    /* A state file is open and locked by the current set: share that key (a second open of the
     * same file would be refused by the lock, and its index counter must stay one). Matched by
     * path, not inode: the state layer replaces the file (rename) at every durable reservation. */
    if (is_state && prev) {
        struct serve_key *old = serve_keyset_find_version(prev, id, version);
        if (old && old->stateful && strcmp(old->vkid, kid) == 0) {
            serve_key_ref(old);
            *out = old;
            return DSIG_OK;
        }
    }
    struct serve_key *k = dsig_calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    atomic_init(&k->refs, 1);
    atomic_init(&k->retired, 0);
    memcpy(k->vkid, kid, stem + 1);
    memcpy(k->kid, id, strlen(id) + 1);
    k->version = version;
    k->dev = (uint64_t)st.st_dev;
    k->ino = (uint64_t)st.st_ino;
    int rc;
    if (is_state) {
        dsig_state_opts so = {0};
        so.registry_dir = cfg->state_registry;
        /* Shared through a coordinator (docs/scale.md): the key signs only inside index ranges that
         * the cluster's counter handed to this instance. Each key has its own counter client and
         * reservation, so that they live exactly as long as the key (a reload keeps both). */
        rc = DSIG_OK;
        if (cfg->coord_n) {
            struct serve_counter_etcd_config ec = {.endpoints = (const char *const *)cfg->coord_etcd,
                                                   .n_endpoints = cfg->coord_n, .prefix = cfg->coord_prefix,
                                                   .connect_timeout_ms = cfg->coord_connect_ms,
                                                   .timeout_ms = cfg->coord_timeout_ms};
            if ((rc = serve_counter_etcd_new(&k->counter, &ec)) == DSIG_OK &&
                (rc = serve_ranges_new(&k->ranges, k->counter, NULL)) == DSIG_OK)
                so.ranges = serve_ranges_source(k->ranges);
        }
        if (rc == DSIG_OK)
            rc = dsig_state_open(&k->key, path, &so);
        if (rc != DSIG_OK)
            rc = fail_with_detail(rc, "state file", path);
    } else {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat fst;
        if (fd < 0) {
            rc = dsig_fail(DSIG_E_IO, "key file \"%s\": %s", path, strerror(errno));
        } else if (fstat(fd, &fst) != 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
            /* the entry was replaced between lstat and open: the identity kept would be wrong */
            rc = dsig_fail(DSIG_E_IO, "key file \"%s\": replaced while being loaded (retry the reload)", path);
            close(fd);
        } else {
            rc = dsig_jwk_read_fd(fd, path, &k->key);
            close(fd);
        }
    }
    if (rc != DSIG_OK)
        goto fail;
    if (!dsig_key_has_private(k->key)) {
        rc = dsig_fail(DSIG_E_NO_PRIVATE, "key file \"%s\": a public key cannot sign (key_dir holds private "
                       "keys: keep public keys elsewhere or name them *.pub, which are ignored; a served "
                       "key's public JWK is at GET /v1/keys/%s)", path, id);
        goto fail;
    }
    if (!(k->alg = dsig_key_alg(k->key))) {
        rc = dsig_fail(DSIG_E_ARG, "key file \"%s\": the key is not bound to an algorithm (add \"alg\")", path);
        goto fail;
    }
    k->stateful = (dsig_alg_flags(k->alg) & DSIG_ALG_STATEFUL) != 0;
    if (k->stateful && !is_state) {
        rc = dsig_fail(DSIG_E_ARG, "key file \"%s\": %s is stateful: serve it from a state file (.state)", path,
                       dsig_alg_name(k->alg));
        goto fail;
    }
    size_t jl = 0;
    if ((rc = dsig_key_public(&k->pub, k->key)) != DSIG_OK ||
        (rc = dsig_jwk_export(k->key, 0, &k->jwk, &jl)) != DSIG_OK ||
        (rc = dsig_jwk_thumbprint(k->key, k->thumbprint)) != DSIG_OK) {
        rc = fail_with_detail(rc, "key file (MAC keys have no public part and are not served)", path);
        goto fail;
    }
    *out = k;
    return DSIG_OK;
fail:
    serve_key_unref(k);
    return rc;
}

/* Order of key ids, then versions. */
static int cmp_key(const void *a, const void *b)
{
    const struct serve_key *x = *(struct serve_key *const *)a, *y = *(struct serve_key *const *)b;
    int c = strcmp(x->kid, y->kid);
    return c ? c : x->version < y->version ? -1 : x->version > y->version;
}

/* What a directory entry is: 1 a key (*.jwk, *.state: *is_state, *stem), 2 a retirement marker
 * (*.retired), 0 anything else (README, *.pub: not keys). */
static int entry_kind(const char *name, int *is_state, size_t *stem)
{
    size_t len = strlen(name);
    if (name[0] == '.')
        return 0;
    if (len > 4 && strcmp(name + len - 4, ".jwk") == 0) {
        *is_state = 0;
        *stem = len - 4;
        return 1;
    }
    if (len > 6 && strcmp(name + len - 6, ".state") == 0) {
        *is_state = 1;
        *stem = len - 6;
        return 1;
    }
    if (len > 8 && strcmp(name + len - 8, ".retired") == 0) {
        *stem = len - 8;
        return 2;
    }
    return 0;
}

int serve_key_load(const struct dsig_serve_config *cfg, const char *name, struct serve_key **out)
{
    int is_state = 0;
    size_t stem = 0;
    if (entry_kind(name, &is_state, &stem) != 1 || !serve_valid_name(name, stem))
        return dsig_fail(DSIG_E_ARG, "key file \"%s\": not <key id>.jwk or .state", name);
    int rc = load_one(cfg, NULL, name, stem, is_state, NULL, NULL, out);
    return rc == LOAD_SKIPPED ? dsig_fail(DSIG_E_IO, "key file \"%s\": a symbolic link", name) : rc;
}

int serve_keyset_with(const struct serve_keyset *ks, struct serve_key *k, struct serve_keyset **out)
{
    *out = NULL;
    struct serve_keyset *n = dsig_calloc(1, sizeof *n);
    if (!n || !(n->keys = dsig_calloc(ks->n + 1, sizeof *n->keys))) {
        dsig_xfree(n, 0);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    atomic_init(&n->refs, 1);
    for (size_t i = 0; i < ks->n; i++)
        if (strcmp(ks->keys[i]->kid, k->kid) != 0 || ks->keys[i]->version != k->version) {
            serve_key_ref(ks->keys[i]);
            n->keys[n->n++] = ks->keys[i];
        }
    serve_key_ref(k);
    n->keys[n->n++] = k;
    qsort(n->keys, n->n, sizeof *n->keys, cmp_key);
    *out = n;
    return DSIG_OK;
}

/* One retirement marker: a version of a key id. */
struct marker {
    char id[SERVE_NAME_MAX + 1];
    unsigned version;
};

static int cmp_marker(const void *a, const void *b)
{
    const struct marker *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : x->version < y->version ? -1 : x->version > y->version;
}

/* Record marker `name` (stem bytes before ".retired"): it must name a version, <id>.v<N>. */
static int add_marker(const struct dsig_serve_config *cfg, const char *name, size_t stem, struct marker **m,
                      size_t *n, size_t *cap)
{
    struct marker one;
    if (!serve_valid_name(name, stem) || !serve_key_stem_parse(name, stem, one.id, &one.version))
        return dsig_fail(DSIG_E_ARG, "retirement marker \"%s/%s\": the name is not <key id>.v<N>.retired",
                         cfg->key_dir, name);
    if (*n == MAX_KEYS)
        return dsig_fail(DSIG_E_TOO_LARGE, "key directory \"%s\": more than %d retirement markers", cfg->key_dir,
                         MAX_KEYS);
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        struct marker *nm = dsig_realloc(*m, nc * sizeof *nm);
        if (!nm)
            return dsig_fail(DSIG_E_NOMEM, "out of memory");
        *m = nm;
        *cap = nc;
    }
    (*m)[(*n)++] = one;
    return DSIG_OK;
}

/* Load the whole key directory (all or nothing; symbolic links are skipped with a warning). */
int serve_keyset_load(const struct dsig_serve_config *cfg, const struct serve_keyset *prev,
                      serve_warn_fn warn, void *warn_arg, struct serve_keyset **out)
{
    *out = NULL;
    DIR *d = opendir(cfg->key_dir);
    if (!d)
        return dsig_fail(DSIG_E_IO, "key directory \"%s\": %s", cfg->key_dir, strerror(errno));
    struct serve_keyset *ks = dsig_calloc(1, sizeof *ks);
    size_t cap = 16;
    int rc = DSIG_OK;
    if (!ks || !(ks->keys = dsig_calloc(cap, sizeof *ks->keys))) {
        dsig_xfree(ks, 0);
        closedir(d);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    atomic_init(&ks->refs, 1);
    struct marker *markers = NULL;
    size_t nmarkers = 0, mcap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        int is_state = 0;
        size_t stem = 0;
        int kind = entry_kind(name, &is_state, &stem);
        if (kind == 2 && (rc = add_marker(cfg, name, stem, &markers, &nmarkers, &mcap)) != DSIG_OK)
            break;
        if (kind != 1)
            continue;
        if (!serve_valid_name(name, stem)) {
            rc = dsig_fail(DSIG_E_ARG, "key file \"%s/%s\": the name is not a key id ([A-Za-z0-9._-]{1,64})",
                           cfg->key_dir, name);
            break;
        }
        if (ks->n == MAX_KEYS) {
            rc = dsig_fail(DSIG_E_TOO_LARGE, "key directory \"%s\": more than %d keys", cfg->key_dir, MAX_KEYS);
            break;
        }
        if (ks->n == cap) {
            struct serve_key **nk = dsig_realloc(ks->keys, 2 * cap * sizeof *nk);
            if (!nk) {
                rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
                break;
            }
            ks->keys = nk;
            cap *= 2;
        }
        rc = load_one(cfg, prev, name, stem, is_state, warn, warn_arg, &ks->keys[ks->n]);
        if (rc == LOAD_SKIPPED) {
            rc = DSIG_OK;
            continue;
        }
        if (rc != DSIG_OK)
            break;
        ks->n++;
    }
    closedir(d);
    if (rc == DSIG_OK) {
        qsort(ks->keys, ks->n, sizeof *ks->keys, cmp_key);
        for (size_t i = 1; i < ks->n; i++)
            if (cmp_key(&ks->keys[i - 1], &ks->keys[i]) == 0) {
                rc = dsig_fail(DSIG_E_ARG, "key directory \"%s\": version %u of key id \"%s\" is in two files "
                               "(\"%s\" and \"%s\": a .jwk and a .state, or <id>.jwk and <id>.v1)", cfg->key_dir,
                               ks->keys[i]->version, ks->keys[i]->kid, ks->keys[i - 1]->vkid, ks->keys[i]->vkid);
                break;
            }
    }
    /* The markers: each key's state is set once (a state key shared with the running set never flips). */
    if (rc == DSIG_OK) {
        if (nmarkers) /* qsort(NULL, 0, ...) is undefined */
            qsort(markers, nmarkers, sizeof *markers, cmp_marker);
        for (size_t i = 0; i < ks->n; i++) {
            struct marker want;
            memcpy(want.id, ks->keys[i]->kid, sizeof want.id);
            want.version = ks->keys[i]->version;
            int gone = nmarkers && bsearch(&want, markers, nmarkers, sizeof *markers, cmp_marker) != NULL;
            atomic_store(&ks->keys[i]->retired, gone);
        }
    }
    dsig_xfree(markers, 0);
    if (rc != DSIG_OK) {
        serve_keyset_unref(ks);
        return rc;
    }
    *out = ks;
    return DSIG_OK;
}

/*
 * State files of stateful hash-based keys (LMS/HSS, XMSS/XMSS^MT; include/dsig/state.h, docs/state.md):
 * the API. The private key of a stateful scheme must never sign twice with one index. It therefore
 * lives only in a state file, which this file creates, locks, loads and advances; the byte format,
 * the high-water registry, the list of open keys and the durable writes are files of their own
 * (state_internal.h lists them).
 *
 * Indices are reserved in windows: when the window is used up, the next counter is made durable by
 * the key's store (by default: the state file is replaced, durable.c), then the high-water registry is
 * raised; only then is an index handed out. See docs/state.md for why this order never reuses an
 * index and never bricks a key.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ct.h"
#include "core/durable.h"
#include "core/state_internal.h"

#define STATE_DEFAULT_RESERVE 64u

/* The algorithm a test-only provider adds to the name lookup of dsig_state_open (tests/state). */
static const dsig_alg *state_test_alg;

/* Test hook: let dsig_state_open find `alg` (a provider compiled into a test, not the library). */
void dsig_state_set_test_alg(const dsig_alg *alg);
void dsig_state_set_test_alg(const dsig_alg *alg) { state_test_alg = alg; }

/* ---- small helpers -------------------------------------------------------------------------- */

/* Split `path` into an open directory descriptor and a newly allocated base name. */
static int open_dir_of(const char *path, int *dirfd, char **base)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    if (!*b)
        return dsig_fail(DSIG_E_ARG, "state file path '%s' names a directory", path);
    char *dir;
    if (!slash)
        dir = dsig_strdup(".");
    else if (slash == path)
        dir = dsig_strdup("/");
    else {
        dir = dsig_malloc((size_t)(slash - path) + 1);
        if (dir) {
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = '\0';
        }
    }
    *base = dsig_strdup(b);
    if (!dir || !*base) {
        dsig_xfree(dir, 0);
        dsig_xfree(*base, 0);
        *base = NULL;
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    *dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err = errno;
    if (*dirfd < 0) {
        int rc = dsig_fail(DSIG_E_IO, "state file directory '%s': %s", dir, strerror(err));
        dsig_xfree(dir, 0);
        dsig_xfree(*base, 0);
        *base = NULL;
        return rc;
    }
    dsig_xfree(dir, 0);
    return DSIG_OK;
}

/* The "pub" member of a key's public JWK export (the RFC public key encoding). */
static int export_pub(const struct dsig_key *key, uint8_t **pub, size_t *pub_len)
{
    const struct dsig_keytype *t = key->type;
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n = 0;
    *pub = NULL;
    if (!t->export_jwk)
        return dsig_fail(DSIG_E_INTERNAL, "stateful key type without export_jwk");
    int rc = t->export_jwk(key, 0, m, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && i < DSIG_JWK_MAX_MEMBERS; i++) {
        if (!*pub && t->pub_members && t->pub_members[i] && strcmp(t->pub_members[i], "pub") == 0 &&
            m[i].data) {
            *pub = m[i].data;
            *pub_len = m[i].len;
        } else {
            dsig_xfree(m[i].data, m[i].len);
        }
    }
    if (!*pub)
        return dsig_fail(DSIG_E_INTERNAL, "stateful key type exports no \"pub\" member");
    if (*pub_len == 0 || *pub_len > STATE_PUB_MAX) {
        dsig_xfree(*pub, *pub_len);
        *pub = NULL;
        return dsig_fail(DSIG_E_INTERNAL, "stateful public key of %zu bytes (1..%u)", *pub_len,
                         STATE_PUB_MAX);
    }
    return DSIG_OK;
}

/* ---- state file lifecycle ------------------------------------------------------------------ */

/* Free a state (closing descriptors releases both locks); the private copy is wiped. */
static void state_free(struct dsig_state_file *st)
{
    if (!st)
        return;
    state_claim_release(&st->claim);
    if (st->fd >= 0)
        close(st->fd);
    state_hwm_close(&st->hwm);
    if (st->dirfd >= 0)
        close(st->dirfd);
    dsig_xfree(st->priv, st->priv_len);
    dsig_xfree(st->pub, 0);
    dsig_xfree(st->base, 0);
    dsig_xfree(st->path, 0);
    pthread_mutex_destroy(&st->mu);
    dsig_xfree(st, sizeof *st);
}

/* A new, empty state (no descriptors yet). */
static struct dsig_state_file *state_new(const char *path, const dsig_state_opts *opts)
{
    struct dsig_state_file *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->fd = st->dirfd = -1;
    state_hwm_init(&st->hwm);
    pthread_mutex_init(&st->mu, NULL);
    st->reserve = opts && opts->reserve ? opts->reserve : STATE_DEFAULT_RESERVE;
    if (opts && opts->store)
        st->store = *opts->store;
    if (opts && opts->ranges)
        st->ranges = *opts->ranges;
    st->pid = getpid();
    st->path = dsig_strdup(path);
    st->claim.thumb = st->thumb;
    st->claim.path = st->path;
    if (!st->path) {
        state_free(st);
        return NULL;
    }
    return st;
}

/* The file image of the state with `counter` and window `w` (holds the private material:
 * dsig_xfree(*img, *len)). */
static int state_image(const struct dsig_state_file *st, uint64_t counter, const struct state_window *w,
                       uint8_t **img, size_t *len)
{
    return state_format_encode(st->alg->name, st->pub, st->pub_len, st->priv, st->priv_len, counter, w,
                               img, len);
}

/*
 * The default store: replace the state file by one holding the new image (durable.c: temporary file in
 * the same directory, fsync, lock it, rename over, fsync the directory). The lock moves to the new
 * inode before the rename, so the path never names an unlocked state.
 */
static int file_store_persist(struct dsig_state_file *st, const uint8_t *img, size_t len)
{
    const char *step = "create temporary file";
    int fd = -1;
    int err = dsig_durable_replace(st->dirfd, st->base, img, len, DSIG_DURABLE_LOCK, &fd, &step);
    if (fd >= 0) { /* the path names the new (locked) inode: keep its lock, drop the old one */
        close(st->fd);
        st->fd = fd;
    }
    if (!err)
        return DSIG_OK;
    if (strcmp(step, "remove the stale temporary file") == 0)
        return dsig_fail(DSIG_E_IO, "state file '%s': cannot remove the stale temporary file '%s.tmp': "
                                    "%s; no index was handed out", st->path, st->base, strerror(err));
    return dsig_fail(DSIG_E_IO, "state file '%s': %s failed: %s; no index was handed out", st->path, step,
                     strerror(err));
}

/*
 * @spec SP 800-208 §8.1 (the state must be updated in non-volatile memory before a signature is
 * released). Make `counter` durable through the key's store: the state file by default, else the
 * caller's persist callback (include/dsig/state.h). Nothing in memory changes here: the caller
 * advances the window only after this returned DSIG_OK.
 */
static int state_persist(struct dsig_state_file *st, uint64_t counter, const struct state_window *w)
{
    uint8_t *img;
    size_t len;
    int rc = state_image(st, counter, w, &img, &len);
    if (rc)
        return rc;
    if (!st->store.persist) {
        rc = file_store_persist(st, img, len);
    } else {
        dsig_clear_error();
        const dsig_state_update u = {.path = st->path, .image = img, .image_len = len, .counter = counter};
        rc = st->store.persist(st->store.ctx, &u);
        if (rc != DSIG_OK)
            rc = dsig_fail_prefix(rc < 0 ? rc : DSIG_E_IO, "state file '%s': the state store did not persist "
                                  "counter %llu (%d); no index was handed out", st->path,
                                  (unsigned long long)counter, rc);
    }
    dsig_xfree(img, len);
    return rc;
}

/* Bind a loaded or generated key to its state. */
static void state_attach(struct dsig_key *k, struct dsig_state_file *st, uint64_t counter)
{
    st->next = st->end = st->tried = counter;
    st->cap = k->type->stateful->capacity(k);
    k->state = st;
    k->has_private = 1;
    k->alg = st->alg;
}

int state_key_from_private(struct dsig_key **out, const dsig_alg *alg, const uint8_t *priv,
                           size_t priv_len, uint64_t next, const uint8_t *pub, size_t pub_len)
{
    struct dsig_key *k = dsig_key_new(alg->keytype);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    const struct dsig_stateful_ops *so = alg->keytype->stateful;
    int rc = so->check_private ? so->check_private(priv, priv_len, pub, pub_len) : DSIG_OK;
    if (!rc)
        rc = so->load_private(k, priv, priv_len, next);
    uint8_t *kp = NULL;
    size_t kl = 0;
    if (!rc)
        rc = export_pub(k, &kp, &kl);
    /* The public key the seeds give is public whatever it is (and compared with the stored one). */
    if (!rc)
        DSIG_CT_DECLASSIFY(kp, kl);
    if (!rc && (kl != pub_len || memcmp(kp, pub, kl) != 0))
        rc = dsig_fail(DSIG_E_KEY, "state file: the private material does not belong to the public key");
    dsig_xfree(kp, kl);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    *out = k;
    return DSIG_OK;
}

int dsig_state_create(dsig_key **key, const char *path, const dsig_alg *alg,
                      const dsig_keygen_params *params, const dsig_state_opts *opts)
{
    if (!key || !path || !alg)
        return dsig_fail(DSIG_E_ARG, "dsig_state_create: NULL argument");
    *key = NULL;
    if (!(alg->flags & DSIG_ALG_STATEFUL) || !alg->keytype->stateful)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s is not a stateful algorithm: its keys need no state file",
                         alg->name);
    if (strlen(alg->name) > STATE_NAME_MAX)
        return dsig_fail(DSIG_E_INTERNAL, "algorithm name too long for a state file");
    struct dsig_state_file *st = state_new(path, opts);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    st->alg = alg;
    struct dsig_key *k = NULL;
    int fd = -1, rc = open_dir_of(path, &st->dirfd, &st->base);
    if (!rc)
        rc = dsig_key_generate(&k, alg, params);
    if (!rc)
        rc = alg->keytype->stateful->save_private(k, &st->priv, &st->priv_len);
    if (!rc && (st->priv_len == 0 || st->priv_len > STATE_PRIV_MAX))
        rc = dsig_fail(DSIG_E_INTERNAL, "private material of %zu bytes (1..%u)", st->priv_len,
                       STATE_PRIV_MAX);
    if (!rc)
        rc = export_pub(k, &st->pub, &st->pub_len);
    if (!rc)
        rc = state_key_identity(k, st->thumb);
    if (!rc)
        rc = state_claim_take(&st->claim);
    uint64_t mark = 0;
    if (!rc)
        rc = state_hwm_open(&st->hwm, st->thumb, opts, &mark);
    /* The same key made again (same seed) continues after its recorded mark, never from 0. */
    if (!rc && mark > 0) {
        dsig_key_free(k);
        k = NULL;
        rc = state_key_from_private(&k, alg, st->priv, st->priv_len, mark, st->pub, st->pub_len);
    }
    if (!rc && mark > alg->keytype->stateful->capacity(k))
        rc = dsig_fail(DSIG_E_EXHAUSTED, "this key (%s) was already used up on this machine", st->thumb);
    uint8_t *img = NULL;
    size_t len = 0;
    if (!rc)
        rc = state_image(st, mark, NULL, &img, &len);
    if (!rc) {
        const char *step = "create";
        int err = dsig_durable_create(st->dirfd, st->base, img, len, DSIG_DURABLE_LOCK, &fd, &step);
        if (err && strcmp(step, "create") == 0)
            rc = err == EEXIST ? dsig_fail(DSIG_E_IO, "state file '%s' already exists: a state file is "
                                                      "never overwritten", path)
                               : dsig_fail(DSIG_E_IO, "state file '%s': %s", path, strerror(err));
        else if (err)
            rc = dsig_fail(DSIG_E_IO, "state file '%s': write failed: %s", path, strerror(err));
    }
    dsig_xfree(img, len);
    if (rc) {
        dsig_key_free(k);
        state_free(st);
        return rc;
    }
    st->fd = fd;
    state_attach(k, st, mark);
    *key = k;
    return DSIG_OK;
}

/* Look a stateful algorithm up by the name stored in a state file. */
static const dsig_alg *state_alg(const char *name)
{
    if (state_test_alg && strcmp(state_test_alg->name, name) == 0)
        return state_test_alg;
    const dsig_alg *a = dsig_alg_by_name(name);
    return a && (a->flags & DSIG_ALG_STATEFUL) && a->keytype->stateful ? a : NULL;
}

/* Open and lock the file, retrying if it was renamed over between open and lock. */
static int state_lock_open(struct dsig_state_file *st, struct stat *sb)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = openat(st->dirfd, st->base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return errno == ELOOP ? dsig_fail(DSIG_E_STATE, "state file '%s' is a symbolic link: it would "
                                                            "be replaced on update; use the file itself", st->path)
                                  : dsig_fail(DSIG_E_IO, "state file '%s': %s", st->path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            close(fd);
            return err == EWOULDBLOCK
                       ? dsig_fail(DSIG_E_STATE, "state file '%s' is in use by another process (or already "
                                                 "open in this one)", st->path)
                       : dsig_fail(DSIG_E_IO, "state file '%s': lock: %s", st->path, strerror(err));
        }
        struct stat now;
        if (fstat(fd, sb) != 0 || fstatat(st->dirfd, st->base, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
            now.st_ino != sb->st_ino || now.st_dev != sb->st_dev) {
            close(fd); /* we locked an inode that was just replaced: try the new one */
            continue;
        }
        st->fd = fd;
        return DSIG_OK;
    }
    return dsig_fail(DSIG_E_STATE, "state file '%s' keeps changing while being opened", st->path);
}

int dsig_state_open(dsig_key **key, const char *path, const dsig_state_opts *opts)
{
    if (!key || !path)
        return dsig_fail(DSIG_E_ARG, "dsig_state_open: NULL argument");
    *key = NULL;
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    struct dsig_state_file *st = state_new(path, opts);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    struct dsig_key *k = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    struct stat sb;
    struct state_fields f;
    rc = open_dir_of(path, &st->dirfd, &st->base);
    if (!rc)
        rc = state_lock_open(st, &sb);
    if (!rc && !S_ISREG(sb.st_mode))
        rc = dsig_fail(DSIG_E_STATE, "state file '%s' is not a regular file", path);
    if (!rc && (sb.st_mode & 077))
        rc = dsig_fail(DSIG_E_STATE, "state file '%s' is accessible by other users (mode %03o): it holds "
                                     "a private key; chmod 600 it", path, (unsigned)(sb.st_mode & 0777));
    if (!rc && (sb.st_size <= 0 || (uint64_t)sb.st_size > STATE_FILE_MAX))
        rc = dsig_fail(DSIG_E_FORMAT, "state file '%s' has an impossible size (%lld bytes)", path,
                       (long long)sb.st_size);
    if (!rc) {
        len = (size_t)sb.st_size;
        buf = dsig_malloc(len);
        if (!buf)
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        else if (dsig_pread_all(st->fd, buf, len, 0) != 0)
            rc = dsig_fail(DSIG_E_IO, "state file '%s': read failed", path);
    }
    if (!rc)
        rc = state_format_decode(buf, len, path, &f);
    if (!rc && !(st->alg = state_alg(f.name)))
        rc = dsig_fail(DSIG_E_UNSUPPORTED, "state file '%s': algorithm \"%s\" is not a stateful "
                                           "algorithm of this library", path, f.name);
    if (!rc) {
        st->pub = dsig_malloc(f.pub_len);
        st->priv = dsig_malloc(f.priv_len);
        if (!st->pub || !st->priv)
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    if (!rc) {
        memcpy(st->pub, f.pub, st->pub_len = f.pub_len);
        memcpy(st->priv, f.priv, st->priv_len = f.priv_len);
        rc = state_key_from_private(&k, st->alg, st->priv, st->priv_len, f.counter, st->pub, st->pub_len);
    }
    if (!rc && f.counter > st->alg->keytype->stateful->capacity(k))
        rc = dsig_fail(DSIG_E_FORMAT, "state file '%s': counter %llu beyond the key's capacity", path,
                       (unsigned long long)f.counter);
    if (!rc)
        rc = state_key_identity(k, st->thumb);
    if (!rc)
        rc = state_claim_take(&st->claim);
    uint64_t mark = 0;
    if (!rc)
        rc = state_hwm_open(&st->hwm, st->thumb, opts, &mark);
    if (!rc && f.counter < mark)
        rc = dsig_fail(DSIG_E_STATE, "state file '%s' is older than the key's high-water mark (counter "
                                     "%llu < %llu): a copy restored from a backup or an old copy; "
                                     "signing with it would reuse one-time keys", path,
                       (unsigned long long)f.counter, (unsigned long long)mark);
    dsig_xfree(buf, len);
    if (rc) {
        dsig_key_free(k);
        state_free(st);
        return rc;
    }
    state_attach(k, st, f.counter);
    st->win = f.window;
    *key = k;
    return DSIG_OK;
}

/* The caller of the state functions must be the process that opened the key. */
static int state_check_caller(const struct dsig_state_file *st)
{
    if (!st)
        return dsig_fail(DSIG_E_STATE, "a stateful key signs only from its state file (dsig_state_open, "
                                       "dsig -k FILE.state); keys generated in memory or imported from a "
                                       "JWK only verify");
    if (getpid() != st->pid)
        return dsig_fail(DSIG_E_STATE, "state file '%s' was opened by the parent process: a forked child "
                                       "must open it itself", st->path);
    return DSIG_OK;
}

/* The lowest index a new window may start at: the durable counter, or a higher one a failed write
 * may have left on the disk. */
static uint64_t state_floor(const struct dsig_state_file *st)
{
    return st->tried > st->end ? st->tried : st->end;
}

/*
 * Make counter `end` and window `w` durable, in this order (docs/state.md): the store (state file),
 * then the registry; only then may an index below `end` be handed out. Called with st->mu held.
 */
static int state_reserve(struct dsig_state_file *st, uint64_t end, const struct state_window *w)
{
    if (state_hwm_mark(&st->hwm) > st->end) /* cannot happen while we hold the registry lock */
        return dsig_fail(DSIG_E_STATE, "key %s: high-water mark moved ahead of '%s'", st->thumb, st->path);
    if (end > st->tried)
        st->tried = end;
    int rc = state_persist(st, end, w);
    if (rc == DSIG_OK)
        rc = state_hwm_write(&st->hwm, st->thumb, end);
    return rc;
}

/*
 * Start the window w (end of the durable counter <= w->lo): the first local reservation inside it goes
 * to the file with the window itself, in one durable write. On success the key signs from w->lo.
 */
static int state_enter_window(struct dsig_state_file *st, const struct state_window *w)
{
    uint64_t left = w->hi - w->lo;
    uint64_t end = w->lo + (left < st->reserve ? left : st->reserve);
    int rc = state_reserve(st, end, w);
    if (rc)
        return rc;
    st->win = *w;
    st->next = w->lo;
    st->end = end;
    return DSIG_OK;
}

/* Ask the range source for the next window (or take the one whose persist failed before) and enter
 * it. Called with st->mu held, when the window is used up (or the key has none yet). */
static int state_next_window(struct dsig_state_file *st)
{
    if (!st->pend.on) {
        if (!st->ranges.reserve)
            return dsig_fail(DSIG_E_RANGE, "the key in '%s' has used up its index range [%llu, %llu) and "
                                           "has no range source to reserve the next one", st->path,
                             (unsigned long long)st->win.lo, (unsigned long long)st->win.hi);
        const dsig_state_range_request req = {
            .path = st->path, .key_id = st->thumb, .next = state_floor(st), .capacity = st->cap};
        uint64_t lo = 0, hi = 0;
        dsig_clear_error();
        int rc = st->ranges.reserve(st->ranges.ctx, &req, &lo, &hi);
        if (rc != DSIG_OK)
            return dsig_fail_prefix(rc < 0 ? rc : DSIG_E_INTERNAL, "state file '%s': no index range",
                                    st->path);
        if (lo < state_floor(st) || lo >= hi || hi > st->cap)
            return dsig_fail(DSIG_E_INTERNAL, "state file '%s': the range source returned [%llu, %llu), "
                                              "not inside [%llu, %llu): nothing signed", st->path,
                             (unsigned long long)lo, (unsigned long long)hi,
                             (unsigned long long)state_floor(st), (unsigned long long)st->cap);
        st->pend = (struct state_window){.on = 1, .lo = lo, .hi = hi};
    }
    int rc = state_enter_window(st, &st->pend);
    if (rc == DSIG_OK)
        st->pend.on = 0;
    return rc;
}

int dsig_state_take_index(const struct dsig_key *key, uint64_t *index)
{
    if (!key || !index)
        return dsig_fail(DSIG_E_ARG, "dsig_state_take_index: NULL argument");
    struct dsig_state_file *st = key->state;
    int rc = state_check_caller(st);
    if (rc)
        return rc;
    pthread_mutex_lock(&st->mu);
    if (st->next >= st->end) {
        const int windowed = st->win.on || st->ranges.reserve;
        uint64_t limit = st->win.on ? st->win.hi : windowed ? st->next : st->cap;
        if (st->next >= st->cap) {
            rc = dsig_fail(DSIG_E_EXHAUSTED, "the key in '%s' has made all its %llu signatures: it can "
                                             "never sign again", st->path, (unsigned long long)st->cap);
            goto out;
        }
        if (st->next >= limit) { /* the window is used up (or there is none yet): the next one */
            if ((rc = state_next_window(st)) != DSIG_OK)
                goto out;
        } else {
            uint64_t left = limit - st->next;
            uint64_t end = st->next + (left < st->reserve ? left : st->reserve);
            if ((rc = state_reserve(st, end, &st->win)) != DSIG_OK)
                goto out;
            st->end = end;
        }
    }
    *index = st->next++;
out:
    pthread_mutex_unlock(&st->mu);
    return rc;
}

int dsig_state_set_window(dsig_key *key, uint64_t lo, uint64_t hi)
{
    if (!key)
        return dsig_fail(DSIG_E_ARG, "dsig_state_set_window: NULL key");
    struct dsig_state_file *st = key->state;
    int rc = state_check_caller(st);
    if (rc)
        return rc;
    pthread_mutex_lock(&st->mu);
    if (lo > hi || hi > st->cap)
        rc = dsig_fail(DSIG_E_ARG, "index window [%llu, %llu) is not inside the key's [0, %llu)",
                       (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)st->cap);
    else if (lo < state_floor(st))
        rc = dsig_fail(DSIG_E_STATE, "index window [%llu, %llu) starts below the durable counter %llu of "
                                     "'%s': indices below it may have been used; a window only moves "
                                     "forward", (unsigned long long)lo, (unsigned long long)hi,
                       (unsigned long long)state_floor(st), st->path);
    else {
        const struct state_window w = {.on = 1, .lo = lo, .hi = hi};
        rc = state_enter_window(st, &w);
        if (rc == DSIG_OK)
            st->pend.on = 0; /* a range the source gave before is behind us now: burned */
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

int dsig_state_query(const dsig_key *key, dsig_state_info *info)
{
    if (!key || !info)
        return dsig_fail(DSIG_E_ARG, "dsig_state_query: NULL argument");
    memset(info, 0, sizeof *info);
    struct dsig_state_file *st = key->state;
    if (!st)
        return dsig_fail(DSIG_E_STATE, "the key has no open state file");
    pthread_mutex_lock(&st->mu);
    info->next = st->next;
    info->counter = st->end;
    info->capacity = st->cap;
    info->windowed = st->win.on;
    info->window_lo = st->win.lo;
    info->window_hi = st->win.hi;
    pthread_mutex_unlock(&st->mu);
    return DSIG_OK;
}

int dsig_state_remaining(const dsig_key *key, uint64_t *remaining)
{
    if (!key || !remaining)
        return dsig_fail(DSIG_E_ARG, "dsig_state_remaining: NULL argument");
    *remaining = 0;
    struct dsig_state_file *st = key->state;
    if (!st)
        return dsig_fail(DSIG_E_STATE, "the key has no open state file");
    pthread_mutex_lock(&st->mu);
    /* capacity - durable counter + rest of the window = capacity - next */
    *remaining = st->cap - st->next;
    pthread_mutex_unlock(&st->mu);
    return DSIG_OK;
}

int dsig_state_is_state_file(const char *path)
{
    if (!path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    uint8_t b[STATE_PREFIX_LEN];
    struct stat sb;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && dsig_pread_all(fd, b, sizeof b, 0) == 0 &&
             memcmp(b, STATE_PREFIX, STATE_PREFIX_LEN) == 0;
    close(fd);
    return ok;
}

void dsig_state_close(struct dsig_key *key)
{
    if (!key || !key->state)
        return;
    state_free(key->state);
    key->state = NULL;
}

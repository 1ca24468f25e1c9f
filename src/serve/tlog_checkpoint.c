/*
 * src/serve/tlog_checkpoint.c — signed checkpoints of the audit log's tree (C2SP tlog-checkpoint, an
 * Ed25519 C2SP signed note: dsig/tlog.h), made by a thread of their own every checkpoint_interval_ms
 * when the tree grew, and once more at shutdown.
 *
 * Files beside the log:
 *   <log>.checkpoint   the latest checkpoint, replaced durably (temporary file, fsync, rename, fsync of
 *                      the directory): after a crash it is the old one or the new one, whole
 *   <log>.checkpoints  every checkpoint, appended (and fdatasync'ed) before the latest is replaced: what
 *                      `dsig log verify` checks the log against
 *   <log>.key          the log key when the configuration names none: an Ed25519 JWK made at the first
 *                      start (mode 0600)
 * A checkpoint covers durable records only, so that a crash never loses a record a checkpoint signed.
 * At start the latest checkpoint must verify with the log key and match the tree rebuilt from the log
 * (same root at its size); otherwise the log was changed while the service was down, and the service
 * refuses to start rather than sign on top of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "dsig/jwk.h"
#include "dsig/tlog.h"
#include "serve_internal.h"

struct serve_ckpt {
    struct serve_audit *audit;
    struct serve_tlog *tlog;
    dsig_key *key;
    uint8_t pub[32];
    char origin[DSIG_TLOG_ORIGIN_MAX + 1];
    char *vkey;                /* the public note verifier key text */
    char *latest_path, *history_path;
    unsigned interval_ms;
    pthread_mutex_t mu;        /* guards what follows */
    pthread_cond_t wake;
    int stop;
    char *note;                /* the latest checkpoint (NULL: none yet) */
    size_t note_len;
    uint64_t size;
    uint8_t root[32];
    uint64_t made, failures;
    char why[256];             /* the last failure */
    pthread_t thread;
    int have_thread;
};

static char *path_with(const char *base, const char *suffix)
{
    size_t a = strlen(base), b = strlen(suffix);
    char *p = dsig_malloc(a + b + 1);
    if (p) {
        memcpy(p, base, a);
        memcpy(p + a, suffix, b + 1);
    }
    return p;
}

/* fsync the directory holding path (best effort: some file systems refuse). */
static void sync_dir_of(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Replace path with data durably: a temporary file beside it, fsync, rename, fsync of the directory.
 * `excl`: refuse to replace an existing file (a new key). */
static int write_durable(const char *path, const void *data, size_t len, int excl)
{
    char *tmp = path_with(path, ".tmp");
    if (!tmp)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    int rc = DSIG_OK, e = 0;
    (void)unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || (e = dsig_write_all(fd, data, len, NULL)) != 0 || fsync(fd) != 0)
        rc = dsig_fail(DSIG_E_IO, "\"%s\": %s", tmp, strerror(e ? e : errno));
    if (fd >= 0)
        close(fd);
    if (rc == DSIG_OK && excl && link(tmp, path) != 0)
        rc = dsig_fail(DSIG_E_IO, "\"%s\": %s", path, strerror(errno));
    else if (rc == DSIG_OK && !excl && rename(tmp, path) != 0)
        rc = dsig_fail(DSIG_E_IO, "\"%s\": %s", path, strerror(errno));
    (void)unlink(tmp);
    if (rc == DSIG_OK)
        sync_dir_of(path);
    dsig_xfree(tmp, 0);
    return rc;
}

/* The log key: the configured file, else "<log>.key", made (Ed25519) if it does not exist. */
static int load_key(struct serve_ckpt *c, const char *log_path, const char *key_path, serve_warn_fn warn, void *warn_arg)
{
    char *def = key_path ? NULL : path_with(log_path, ".key");
    const char *path = key_path ? key_path : def;
    if (!path)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    int rc;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && !key_path) {
        const dsig_alg *ed = dsig_alg_by_name("Ed25519");
        char *json = NULL;
        size_t len = 0;
        rc = dsig_key_generate(&c->key, ed, NULL);
        if (rc == DSIG_OK)
            rc = dsig_jwk_export(c->key, 1, &json, &len);
        if (rc == DSIG_OK)
            rc = write_durable(path, json, len, 1);
        if (json) {
            dsig_memzero(json, len);
            dsig_free(json);
        }
        if (rc == DSIG_OK && warn) {
            char msg[4200];
            snprintf(msg, sizeof msg, "transparency log: made a new log key \"%s\"", path);
            warn(warn_arg, msg);
        }
    } else if (fd < 0) {
        rc = dsig_fail(DSIG_E_IO, "audit.log_key \"%s\": %s", path, strerror(errno));
    } else {
        rc = dsig_jwk_read_fd(fd, path, &c->key);
        close(fd);
    }
    if (rc == DSIG_OK && !dsig_key_has_private(c->key))
        rc = dsig_fail(DSIG_E_KEY, "audit.log_key \"%s\": a public key cannot sign checkpoints", path);
    if (rc == DSIG_OK)
        rc = dsig_tlog_ed25519_public(c->key, c->pub);
    dsig_xfree(def, 0);
    return rc;
}

/* Sign a checkpoint of (size, root), append it to the history, replace the latest, publish. */
static int make_checkpoint(struct serve_ckpt *c, uint64_t size, const uint8_t root[32])
{
    char *body = NULL, *note = NULL;
    size_t len = 0;
    int rc = dsig_tlog_checkpoint_body(c->origin, size, root, &body);
    if (rc == DSIG_OK)
        rc = dsig_tlog_note_sign(body, strlen(body), c->origin, c->key, &note, &len);
    dsig_free(body);
    if (rc == DSIG_OK) {
        int fd = open(c->history_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        int e = fd < 0 ? errno : dsig_write_all(fd, note, len, NULL);
        if (!e && fdatasync(fd) != 0)
            e = errno;
        if (fd >= 0)
            close(fd);
        rc = e ? dsig_fail(DSIG_E_IO, "checkpoints \"%s\": %s", c->history_path, strerror(e))
               : write_durable(c->latest_path, note, len, 0);
    }
    pthread_mutex_lock(&c->mu);
    if (rc == DSIG_OK) {
        dsig_free(c->note);
        c->note = note;
        c->note_len = len;
        c->size = size;
        memcpy(c->root, root, 32);
        c->made++;
        note = NULL;
    } else {
        c->failures++;
        snprintf(c->why, sizeof c->why, "%s", dsig_last_error_detail());
    }
    pthread_mutex_unlock(&c->mu);
    dsig_free(note);
    return rc;
}

/* A checkpoint when the tree grew (or there is none yet). */
static int checkpoint_now(struct serve_ckpt *c)
{
    uint64_t size;
    uint8_t root[32];
    serve_audit_tree_head(c->audit, &size, root);
    pthread_mutex_lock(&c->mu);
    int same = c->note && c->size == size;
    pthread_mutex_unlock(&c->mu);
    return same ? DSIG_OK : make_checkpoint(c, size, root);
}

static void *ckpt_thread(void *arg)
{
    struct serve_ckpt *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        struct timespec ts = serve_abstime_ms(c->interval_ms);
        pthread_cond_timedwait(&c->wake, &c->mu, &ts);
        if (c->stop)
            break;
        pthread_mutex_unlock(&c->mu);
        (void)checkpoint_now(c);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* The latest checkpoint on disk against the key and the rebuilt tree (see the file comment). */
static int check_latest(struct serve_ckpt *c, const char *log_path)
{
    int fd = open(c->latest_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? DSIG_OK : dsig_fail(DSIG_E_IO, "checkpoint \"%s\": %s", c->latest_path, strerror(errno));
    char *text = NULL;
    size_t len = 0, tl = 0;
    int rc = dsig_read_whole_fd(fd, "checkpoint", 64u << 10, &text, &len);
    close(fd);
    if (rc != DSIG_OK)
        return rc;
    char origin[DSIG_TLOG_ORIGIN_MAX + 1];
    uint64_t size = 0, tsize = 0;
    uint8_t root[32], mine[32];
    if ((rc = dsig_tlog_note_verify(text, len, c->origin, c->pub, &tl)) != DSIG_OK) {
        rc = dsig_fail(DSIG_E_VERIFY, "the last checkpoint \"%s\" is not signed by the log key as \"%s\" (%s): "
                       "a changed key or origin needs a new log", c->latest_path, c->origin, dsig_last_error_detail());
    } else if ((rc = dsig_tlog_checkpoint_parse(text, tl, origin, &size, root)) != DSIG_OK) {
        ;
    } else {
        serve_audit_tree_head(c->audit, &tsize, mine);
        if (size > tsize)
            rc = dsig_fail(DSIG_E_VERIFY, "the audit log \"%s\" holds %llu records, its last checkpoint signed %llu: "
                           "records were removed", log_path, (unsigned long long)tsize, (unsigned long long)size);
        else if (size > 0 && (rc = dsig_tlog_subtree(serve_tlog_fetch, c->tlog, 0, size, mine)) != DSIG_OK)
            ;
        else if (size > 0 && memcmp(mine, root, 32) != 0)
            rc = dsig_fail(DSIG_E_VERIFY, "the first %llu records of the audit log \"%s\" are not those its last "
                           "checkpoint signed: the log was changed (dsig log verify finds where)",
                           (unsigned long long)size, log_path);
    }
    if (rc == DSIG_OK) {
        c->note = text;
        c->note_len = len;
        c->size = size;
        memcpy(c->root, root, 32);
        text = NULL;
    }
    dsig_xfree(text, len + 1);
    return rc;
}

void serve_ckpt_free(struct serve_ckpt *c)
{
    if (!c)
        return;
    dsig_key_free(c->key);
    dsig_free(c->vkey);
    dsig_free(c->note);
    dsig_xfree(c->latest_path, 0);
    dsig_xfree(c->history_path, 0);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->mu);
    dsig_xfree(c, 0);
}

int serve_ckpt_start(struct serve_ckpt **out, struct serve_audit *audit, struct serve_tlog *tlog,
                     const struct dsig_serve_config *cfg, serve_warn_fn warn, void *warn_arg)
{
    *out = NULL;
    struct serve_ckpt *c = dsig_calloc(1, sizeof *c);
    if (!c)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->wake, NULL);
    c->audit = audit;
    c->tlog = tlog;
    c->interval_ms = cfg->checkpoint_interval_ms ? cfg->checkpoint_interval_ms : 1000;
    int rc = DSIG_OK;
    if (!(c->latest_path = path_with(cfg->audit_path, ".checkpoint")) ||
        !(c->history_path = path_with(cfg->audit_path, ".checkpoints")))
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    if (rc == DSIG_OK)
        rc = load_key(c, cfg->audit_path, cfg->log_key, warn, warn_arg);
    if (rc == DSIG_OK) {
        if (cfg->log_origin) {
            snprintf(c->origin, sizeof c->origin, "%s", cfg->log_origin);
        } else {
            char tp[DSIG_THUMBPRINT_LEN];
            if ((rc = dsig_jwk_thumbprint(c->key, tp)) == DSIG_OK)
                snprintf(c->origin, sizeof c->origin, "dsig-serve/%s", tp);
        }
    }
    if (rc == DSIG_OK)
        rc = dsig_tlog_vkey_format(c->origin, c->pub, &c->vkey);
    if (rc == DSIG_OK)
        rc = check_latest(c, cfg->audit_path);
    if (rc == DSIG_OK)
        rc = checkpoint_now(c);
    if (rc == DSIG_OK) {
        if (pthread_create(&c->thread, NULL, ckpt_thread, c) != 0)
            rc = dsig_fail(DSIG_E_INTERNAL, "cannot start the checkpoint thread");
        else
            c->have_thread = 1;
    }
    if (rc != DSIG_OK) {
        serve_ckpt_free(c);
        return rc;
    }
    *out = c;
    return DSIG_OK;
}

void serve_ckpt_stop(struct serve_ckpt *c)
{
    if (!c)
        return;
    if (c->have_thread) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
        c->have_thread = 0;
    }
    serve_audit_settle(c->audit); /* the records written so far are durable: the last checkpoint covers them */
    (void)checkpoint_now(c);
}

const char *serve_ckpt_vkey(const struct serve_ckpt *c)
{
    return c ? c->vkey : NULL;
}

const char *serve_ckpt_origin(const struct serve_ckpt *c)
{
    return c ? c->origin : NULL;
}

int serve_ckpt_latest(struct serve_ckpt *c, char **note, size_t *len, uint64_t *size, uint8_t root[32])
{
    *note = NULL;
    *len = 0;
    *size = 0;
    if (!c)
        return dsig_fail(DSIG_E_STATE, "the audit log is not a transparency log here");
    pthread_mutex_lock(&c->mu);
    int rc = DSIG_OK;
    if (!c->note) {
        rc = dsig_fail(DSIG_E_STATE, "no checkpoint yet");
    } else if (!(*note = dsig_malloc(c->note_len + 1))) {
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    } else {
        memcpy(*note, c->note, c->note_len);
        (*note)[c->note_len] = '\0';
        *len = c->note_len;
        *size = c->size;
        memcpy(root, c->root, 32);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

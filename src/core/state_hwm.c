/*
 * The high-water registry: one small file per stateful key, outside its state file, named by the key's
 * identity (state_identity.c), recording the highest counter ever made durable for it. A state file
 * whose counter is below the mark is an old copy (restored from a backup) and is refused.
 *
 * A registry file is two 32-byte slots, each "dsighwm1" || u64be mark || 16-byte check (SHA-256 over
 * magic, mark and identity); a write replaces the slot that does not hold the maximum, so a torn
 * write damages one slot at most.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/durable.h"
#include "core/state_internal.h"

#define HWM_MAGIC "dsighwm1"
#define HWM_SLOT 32
#define HWM_FILE (2 * HWM_SLOT)

void state_hwm_init(struct state_hwm *h)
{
    h->fd = -1;
    h->slot_ok[0] = h->slot_ok[1] = 0;
    h->slot_val[0] = h->slot_val[1] = 0;
}

void state_hwm_close(struct state_hwm *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}

/* The 16-byte check of a registry slot: binds the mark to this key's identity. */
static int hwm_check(uint8_t out[16], const char *thumb, uint64_t mark)
{
    uint8_t in[8 + 8 + DSIG_THUMBPRINT_LEN], h[32];
    size_t tl = strlen(thumb);
    memcpy(in, HWM_MAGIC, 8);
    dsig_store_be64(in + 8, mark);
    memcpy(in + 16, thumb, tl);
    int rc = state_sha256(h, in, 16 + tl);
    memcpy(out, h, 16);
    return rc;
}

/* Registry directory from opts / environment; *dir = NULL means "no registry". */
static int hwm_dir(const dsig_state_opts *opts, char **dir)
{
    *dir = NULL;
    const char *d = opts ? opts->registry_dir : NULL;
    if (d && !*d)
        return DSIG_OK; /* explicitly none (tests) */
    char buf[4096];
    if (!d) {
        const char *env = getenv("DSIG_STATE_REGISTRY");
        const char *xdg = getenv("XDG_STATE_HOME");
        const char *home = getenv("HOME");
        if (env && *env)
            d = env;
        else if (xdg && *xdg == '/' && (size_t)snprintf(buf, sizeof buf, "%s/dsig/hwm", xdg) < sizeof buf)
            d = buf;
        else if (home && *home == '/' &&
                 (size_t)snprintf(buf, sizeof buf, "%s/.local/state/dsig/hwm", home) < sizeof buf)
            d = buf;
        else
            return dsig_fail(DSIG_E_STATE, "no high-water registry directory: set DSIG_STATE_REGISTRY "
                                           "(or XDG_STATE_HOME / HOME)");
    }
    *dir = dsig_strdup(d);
    return *dir ? DSIG_OK : dsig_fail(DSIG_E_NOMEM, "out of memory");
}

/* fsync the directory holding the just-created directory dir[0..end): without it a crash can lose the
 * new entry, and with it the registry files later written below it. */
static int fsync_parent(char *dir, char *end)
{
    char saved = *end;
    *end = '\0';
    int err = dsig_durable_sync_parent(dir);
    int rc = err ? dsig_fail(DSIG_E_IO, "high-water registry directory '%s': fsync of the parent "
                                        "directory: %s", dir, strerror(err))
                 : DSIG_OK;
    *end = saved;
    return rc;
}

/* mkdir -p with mode 0700 for the components that do not exist; each new directory's parent is
 * fsync'ed so that the creation is durable before anything is stored in it. */
static int mkdir_p(char *dir)
{
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            int r = mkdir(dir, 0700);
            int err = errno;
            *p = c;
            if (r != 0 && err != EEXIST)
                return dsig_fail(DSIG_E_IO, "high-water registry directory '%s': %s", dir, strerror(err));
            if (r == 0) {
                int rc = fsync_parent(dir, p);
                if (rc)
                    return rc;
            }
            if (!c)
                return DSIG_OK;
        }
    }
}

/* Open and lock this key's registry file, reading its mark (0 for a new file). */
int state_hwm_open(struct state_hwm *h, const char *thumb, const dsig_state_opts *opts, uint64_t *mark)
{
    *mark = 0;
    char *dir;
    int rc = hwm_dir(opts, &dir);
    if (rc || !dir)
        return rc;
    rc = mkdir_p(dir);
    int dfd = rc ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!rc && dfd < 0)
        rc = dsig_fail(DSIG_E_IO, "high-water registry directory '%s': %s", dir, strerror(errno));
    if (rc) {
        dsig_xfree(dir, 0);
        return rc;
    }
    int created = 1;
    int fd = openat(dfd, thumb, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = openat(dfd, thumb, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        rc = dsig_fail(DSIG_E_IO, "high-water registry '%s/%s': %s", dir, thumb, strerror(errno));
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK
                 ? dsig_fail(DSIG_E_STATE, "key %s is in use by another process (another state file "
                                           "of the same key is open)", thumb)
                 : dsig_fail(DSIG_E_IO, "high-water registry lock: %s", strerror(errno));
        goto out;
    }
    /* Other users must not be able to lower the mark (a restored copy would then sign again), nor
     * swap the file: the directory and the file belong to us and only we can write them. */
    struct stat sb, db;
    if (fstat(dfd, &db) != 0 || db.st_uid != geteuid() || (db.st_mode & 022)) {
        rc = dsig_fail(DSIG_E_STATE, "high-water registry directory '%s' is not owned by this user or "
                                     "is writable by others: chmod 700 it (or choose another with "
                                     "DSIG_STATE_REGISTRY)", dir);
        goto out;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is not a regular file", dir, thumb);
        goto out;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is not owned by this user or is "
                                     "accessible by others (mode %03o): chmod 600 it", dir, thumb,
                       (unsigned)(sb.st_mode & 0777));
        goto out;
    }
    /* A new file gets both slots (mark 0) at once, so that its size is always 0 or HWM_FILE. An
     * empty file is one whose creation was interrupted (crash, failed write) before any mark was
     * recorded: it is initialized the same way, or the first slot write would leave a 32-byte
     * file that every later open refuses as damaged. */
    if (created || sb.st_size == 0) {
        uint8_t init[HWM_FILE];
        for (int s = 0; s < 2; s++) {
            memcpy(init + s * HWM_SLOT, HWM_MAGIC, 8);
            dsig_store_be64(init + s * HWM_SLOT + 8, 0);
            if ((rc = hwm_check(init + s * HWM_SLOT + 16, thumb, 0)) != DSIG_OK)
                goto out;
        }
        ssize_t w;
        do
            w = pwrite(fd, init, HWM_FILE, 0);
        while (w < 0 && errno == EINTR);
        if (w != HWM_FILE || fdatasync(fd) != 0) {
            rc = dsig_fail(DSIG_E_IO, "high-water registry '%s/%s': write failed", dir, thumb);
            goto out;
        }
        /* the new name must survive a crash before any mark is recorded in it */
        int err = dsig_durable_sync_dirfd(dfd);
        if (err) {
            rc = dsig_fail(DSIG_E_IO, "high-water registry '%s': fsync: %s", dir, strerror(err));
            goto out;
        }
        sb.st_size = HWM_FILE;
    }
    if (sb.st_size != 0) {
        uint8_t buf[HWM_FILE];
        if (sb.st_size != HWM_FILE || dsig_pread_all(fd, buf, HWM_FILE, 0) != 0) {
            rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is damaged (size %lld); refusing "
                                         "to guess the key's mark", dir, thumb, (long long)sb.st_size);
            goto out;
        }
        for (int s = 0; s < 2; s++) {
            const uint8_t *slot = buf + s * HWM_SLOT;
            uint8_t chk[16];
            uint64_t v = dsig_load_be64(slot + 8);
            if ((rc = hwm_check(chk, thumb, v)) != DSIG_OK)
                goto out;
            h->slot_ok[s] = memcmp(slot, HWM_MAGIC, 8) == 0 && memcmp(slot + 16, chk, 16) == 0;
            h->slot_val[s] = h->slot_ok[s] ? v : 0;
        }
        /* A torn write damages one slot at most; both bad means the file was tampered with. */
        if (!h->slot_ok[0] && !h->slot_ok[1]) {
            rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is damaged (no valid slot)", dir,
                           thumb);
            goto out;
        }
        *mark = h->slot_val[0] > h->slot_val[1] ? h->slot_val[0] : h->slot_val[1];
    }
    h->fd = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    close(dfd);
    dsig_xfree(dir, 0);
    return rc;
}

/* Durably record `mark`, overwriting the slot that does not hold the current maximum. */
int state_hwm_write(struct state_hwm *h, const char *thumb, uint64_t mark)
{
    if (h->fd < 0)
        return DSIG_OK;
    int s = h->slot_ok[0] && (!h->slot_ok[1] || h->slot_val[0] >= h->slot_val[1]) ? 1 : 0;
    uint8_t slot[HWM_SLOT];
    memcpy(slot, HWM_MAGIC, 8);
    dsig_store_be64(slot + 8, mark);
    int rc = hwm_check(slot + 16, thumb, mark);
    if (rc)
        return rc;
    ssize_t w;
    do
        w = pwrite(h->fd, slot, HWM_SLOT, (off_t)s * HWM_SLOT);
    while (w < 0 && errno == EINTR);
    if (w != HWM_SLOT || fdatasync(h->fd) != 0)
        return dsig_fail(DSIG_E_IO, "high-water registry of key %s: write failed: %s", thumb,
                         w < 0 || w == HWM_SLOT ? strerror(errno) : "short write");
    h->slot_ok[s] = 1;
    h->slot_val[s] = mark;
    return DSIG_OK;
}

/* The registry's current mark (0 without a registry). */
uint64_t state_hwm_mark(const struct state_hwm *h)
{
    if (h->fd < 0)
        return 0;
    return h->slot_val[0] > h->slot_val[1] ? h->slot_val[0] : h->slot_val[1];
}

/*
 * src/bft/store.c — the replica's log file: append-only records, each checked by a BLAKE3 tag, made
 * durable with fdatasync before any message that depends on them leaves (pbft.c holds those frames
 * until bft_store_sync). Compaction at a stable checkpoint writes the live records to a new file and
 * renames it over the log (the old or the new file is complete at every instant).
 *
 *   file   = "DSig-bft-log-v1\n" ‖ session id (32) ‖ record*
 *   record = length u32 (of type ‖ payload) ‖ type u8 ‖ payload ‖ tag (16)
 *   tag    = BLAKE3 derive-key "DSig-bft log record v1" over length ‖ type ‖ payload
 *
 * A crash can cut only the last record (each is one write, synced before it matters): a bad record at
 * the very end is dropped. A bad record followed by more bytes is damage, and loading fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bft/pbft.h"
#include "core/bytes.h"
#include "core/durable.h"
#include "core/internal.h"
#include "hash/blake3.h"

#define LOG_MAGIC "DSig-bft-log-v1\n"
#define LOG_HDR (16u + 32u)
#define TAG 16u
#define REC_MAX (8u * 1024u * 1024u)
#define LOG_MAX (512u * 1024u * 1024u)

struct bft_store {
    char *path, *tmp;
    int fd, tfd;
    int durable, dirty;
    uint8_t session[32];
    uint64_t records, syncs;
};

static void tag_of(const uint8_t *rec, size_t len, uint8_t out[TAG])
{
    dsig_blake3_hasher h;
    dsig_blake3_init_derive_key(&h, "DSig-bft log record v1");
    dsig_blake3_update(&h, rec, len);
    dsig_blake3_finalize(&h, out, TAG);
}

/* fsync the directory of `path` (a new or renamed entry survives a crash); a file system that cannot
 * sync directories (EINVAL) is accepted. */
static int sync_dir(const char *path)
{
    int err = dsig_durable_sync_parent(path);
    if (err == ENOMEM)
        return DSIG_E_NOMEM;
    return err == 0 || err == EINVAL ? DSIG_OK
                                     : dsig_fail(DSIG_E_IO, "bft log %s: directory fsync: %s", path,
                                                 strerror(err));
}

/* Create `path` with the header (mode 0600, never through a symlink). */
static int create_file(const char *path, const uint8_t session[32], int flags)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
    if (fd < 0)
        return -1;
    uint8_t hdr[LOG_HDR];
    memcpy(hdr, LOG_MAGIC, 16);
    memcpy(hdr + 16, session, 32);
    if (dsig_write_all(fd, hdr, sizeof hdr, NULL) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int bft_store_open(bft_store **out, const char *path, const uint8_t session[32], int durable)
{
    bft_store *s = dsig_calloc(1, sizeof *s);
    if (!s)
        return DSIG_E_NOMEM;
    s->fd = s->tfd = -1;
    s->durable = durable;
    memcpy(s->session, session, 32);
    size_t pl = strlen(path);
    s->path = dsig_strdup(path);
    s->tmp = dsig_malloc(pl + 5);
    if (!s->path || !s->tmp) {
        bft_store_close(s);
        return DSIG_E_NOMEM;
    }
    memcpy(s->tmp, path, pl);
    memcpy(s->tmp + pl, ".tmp", 5);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = create_file(path, session, O_EXCL);
        if (fd >= 0 && durable && (fdatasync(fd) != 0 || sync_dir(path) != DSIG_OK)) {
            close(fd);
            fd = -1;
        }
        if (fd >= 0) {
            close(fd);
            fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        }
    }
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        bft_store_close(s);
        return dsig_fail(DSIG_E_IO, "bft log %s: %s", path, fd < 0 ? strerror(e) : "not a regular file");
    }
    s->fd = fd;
    *out = s;
    return DSIG_OK;
}

int bft_store_load(bft_store *s, int (*fn)(void *arg, int type, const uint8_t *p, size_t len), void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    if (lseek(s->fd, 0, SEEK_SET) != 0)
        return dsig_fail(DSIG_E_IO, "bft log %s: %s", s->path, strerror(errno));
    int rc = dsig_read_whole_fd(s->fd, "bft log", LOG_MAX, &buf, &len);
    if (rc != DSIG_OK)
        return rc;
    const uint8_t *p = (const uint8_t *)buf;
    if (len < LOG_HDR || memcmp(p, LOG_MAGIC, 16) != 0) {
        dsig_xfree(buf, len + 1);
        return dsig_fail(DSIG_E_FORMAT, "bft log %s: not a DSig BFT log", s->path);
    }
    if (memcmp(p + 16, s->session, 32) != 0) {
        dsig_xfree(buf, len + 1);
        return dsig_fail(DSIG_E_FORMAT, "bft log %s: the log of another deployment (session, members)", s->path);
    }
    size_t off = LOG_HDR;
    while (off < len) {
        size_t left = len - off;
        uint32_t rl = left >= 4 ? dsig_load_be32(p + off) : 0;
        int whole = left >= 4 && rl >= 1 && rl <= REC_MAX && (size_t)rl + 4 + TAG <= left;
        uint8_t tag[TAG];
        if (whole)
            tag_of(p + off, 4 + (size_t)rl, tag);
        if (!whole || memcmp(tag, p + off + 4 + rl, TAG) != 0) {
            /* the end cut by a crash, or damage in the middle */
            if (whole && off + 4 + rl + TAG < len) {
                dsig_xfree(buf, len + 1);
                return dsig_fail(DSIG_E_FORMAT, "bft log %s: damaged record at byte %zu", s->path, off);
            }
            if (ftruncate(s->fd, (off_t)off) != 0) {
                dsig_xfree(buf, len + 1);
                return dsig_fail(DSIG_E_IO, "bft log %s: truncate: %s", s->path, strerror(errno));
            }
            break;
        }
        rc = fn(arg, p[off + 4], p + off + 5, rl - 1);
        if (rc != 0) {
            dsig_xfree(buf, len + 1);
            return rc < 0 ? rc : dsig_fail(DSIG_E_FORMAT, "bft log %s: bad record at byte %zu", s->path, off);
        }
        off += 4 + (size_t)rl + TAG;
    }
    dsig_xfree(buf, len + 1);
    if (lseek(s->fd, 0, SEEK_END) < 0)
        return dsig_fail(DSIG_E_IO, "bft log %s: %s", s->path, strerror(errno));
    return DSIG_OK;
}

/* One record to fd. */
static int put_record(bft_store *s, int fd, int type, const uint8_t *p, size_t len)
{
    if (len + 1 > REC_MAX)
        return dsig_fail(DSIG_E_TOO_LARGE, "bft log: record of %zu bytes", len);
    uint8_t *rec = dsig_malloc(4 + 1 + len + TAG);
    if (!rec)
        return DSIG_E_NOMEM;
    dsig_store_be32(rec, (uint32_t)(len + 1));
    rec[4] = (uint8_t)type;
    if (len)
        memcpy(rec + 5, p, len);
    tag_of(rec, 5 + len, rec + 5 + len);
    int rc = dsig_write_all(fd, rec, 5 + len + TAG, NULL) == 0 ? DSIG_OK
                                                      : dsig_fail(DSIG_E_IO, "bft log %s: write: %s", s->path,
                                                                  strerror(errno));
    dsig_xfree(rec, 0);
    if (rc == DSIG_OK)
        s->records++;
    return rc;
}

int bft_store_append(bft_store *s, int type, const uint8_t *p, size_t len)
{
    int rc = put_record(s, s->fd, type, p, len);
    if (rc == DSIG_OK)
        s->dirty = 1;
    return rc;
}

int bft_store_sync(bft_store *s)
{
    if (!s->dirty)
        return DSIG_OK;
    s->dirty = 0;
    if (!s->durable)
        return DSIG_OK;
    s->syncs++;
    if (fdatasync(s->fd) != 0)
        return dsig_fail(DSIG_E_IO, "bft log %s: fdatasync: %s", s->path, strerror(errno));
    return DSIG_OK;
}

int bft_store_rewrite_begin(bft_store *s)
{
    if (s->tfd >= 0)
        close(s->tfd);
    (void)unlink(s->tmp); /* a leftover of a crash during compaction (never a symlink target: NOFOLLOW) */
    s->tfd = create_file(s->tmp, s->session, O_TRUNC);
    return s->tfd >= 0 ? DSIG_OK : dsig_fail(DSIG_E_IO, "bft log %s: %s", s->tmp, strerror(errno));
}

int bft_store_rewrite_add(bft_store *s, int type, const uint8_t *p, size_t len)
{
    return s->tfd >= 0 ? put_record(s, s->tfd, type, p, len) : DSIG_E_STATE;
}

int bft_store_rewrite_commit(bft_store *s)
{
    if (s->tfd < 0)
        return DSIG_E_STATE;
    int rc = DSIG_OK;
    if (s->durable && fdatasync(s->tfd) != 0)
        rc = dsig_fail(DSIG_E_IO, "bft log %s: fdatasync: %s", s->tmp, strerror(errno));
    close(s->tfd);
    s->tfd = -1;
    if (rc == DSIG_OK && rename(s->tmp, s->path) != 0)
        rc = dsig_fail(DSIG_E_IO, "bft log %s: rename: %s", s->path, strerror(errno));
    if (rc == DSIG_OK && s->durable) {
        s->syncs++;
        rc = sync_dir(s->path);
    }
    if (rc != DSIG_OK) {
        (void)unlink(s->tmp);
        return rc;
    }
    int fd = open(s->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return dsig_fail(DSIG_E_IO, "bft log %s: reopen: %s", s->path, strerror(errno));
    close(s->fd);
    s->fd = fd;
    s->dirty = 0;
    return DSIG_OK;
}

void bft_store_close(bft_store *s)
{
    if (!s)
        return;
    if (s->fd >= 0) {
        if (s->durable && s->dirty)
            (void)fdatasync(s->fd);
        close(s->fd);
    }
    if (s->tfd >= 0) {
        close(s->tfd);
        (void)unlink(s->tmp);
    }
    dsig_xfree(s->path, 0);
    dsig_xfree(s->tmp, 0);
    dsig_xfree(s, 0);
}

uint64_t bft_store_records(const bft_store *s)
{
    return s ? s->records : 0;
}

uint64_t bft_store_syncs(const bft_store *s)
{
    return s ? s->syncs : 0;
}

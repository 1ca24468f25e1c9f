/*
 * src/serve/counter_file.c — the single-host shared counter (ranges.h): DIR/NAME holds the counter as
 * decimal text ("123\n"); a compare-and-swap takes an open-file-description lock on DIR/NAME.lock
 * (F_OFD_SETLKW: it excludes other threads of this process as well as other processes, and is released
 * when the holder dies), reads, compares, and replaces the file durably (temporary file, fsync,
 * rename, fsync of the directory) before it unlocks. A reader needs no lock: the rename is atomic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/durable.h"
#include "core/internal.h"
#include "serve/ranges.h"

#define NAME_MAX_LEN SERVE_COUNTER_NAME_MAX

struct file_counter {
    int dirfd;
    char *dir;
};

/* Read DIR/name: *value (0 when the file does not exist). SERVE_COUNTER_OK or _UNAVAILABLE. */
static int read_value(const struct file_counter *f, const char *name, uint64_t *value)
{
    *value = 0;
    int fd = openat(f->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return SERVE_COUNTER_OK;
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter '%s/%s': %s", f->dir, name, strerror(errno));
        return SERVE_COUNTER_UNAVAILABLE;
    }
    char buf[32];
    ssize_t n;
    do
        n = pread(fd, buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    int err = errno;
    close(fd);
    if (n < 0) {
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter '%s/%s': read: %s", f->dir, name, strerror(err));
        return SERVE_COUNTER_UNAVAILABLE;
    }
    buf[n] = '\0';
    /* Exactly digits and one newline; anything else is a damaged file, never guessed at. */
    uint64_t v = 0;
    if (n < 2 || buf[n - 1] != '\n' || !serve_counter_parse(buf, (size_t)n - 1, &v)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter '%s/%s' is damaged (not one decimal number): "
                                      "refusing to guess it", f->dir, name);
        return SERVE_COUNTER_UNAVAILABLE;
    }
    *value = v;
    return SERVE_COUNTER_OK;
}

static int file_get(void *ctx, const char *name, uint64_t *value)
{
    struct file_counter *f = ctx;
    if (!serve_counter_name_ok(name)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter: bad name");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    return read_value(f, name, value);
}

static int file_cas(void *ctx, const char *name, uint64_t expected, uint64_t desired, uint64_t *observed)
{
    struct file_counter *f = ctx;
    if (!serve_counter_name_ok(name)) {
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter: bad name");
        return SERVE_COUNTER_UNAVAILABLE;
    }
    char lockname[NAME_MAX_LEN + 8];
    snprintf(lockname, sizeof lockname, "%s.lock", name);
    int lfd = openat(f->dirfd, lockname, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lfd < 0) {
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter '%s/%s': %s", f->dir, lockname, strerror(errno));
        return SERVE_COUNTER_UNAVAILABLE;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    int r;
    do
        r = fcntl(lfd, F_OFD_SETLKW, &fl);
    while (r != 0 && errno == EINTR);
    if (r != 0) {
        dsig_fail(DSIG_E_UNAVAILABLE, "index counter '%s/%s': lock: %s", f->dir, lockname, strerror(errno));
        close(lfd);
        return SERVE_COUNTER_UNAVAILABLE;
    }
    uint64_t cur;
    int st = read_value(f, name, &cur);
    if (st == SERVE_COUNTER_OK && cur != expected) {
        *observed = cur;
        st = SERVE_COUNTER_CONFLICT;
    } else if (st == SERVE_COUNTER_OK) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)desired);
        const char *step = "write";
        int err = dsig_durable_replace(f->dirfd, name, buf, (size_t)len, 0, NULL, &step);
        if (err) {
            dsig_fail(DSIG_E_UNAVAILABLE, "index counter '%s/%s': %s: %s", f->dir, name, step, strerror(err));
            st = SERVE_COUNTER_UNAVAILABLE;
        }
    }
    close(lfd); /* releases the lock */
    return st;
}

static void file_destroy(void *ctx)
{
    struct file_counter *f = ctx;
    if (!f)
        return;
    if (f->dirfd >= 0)
        close(f->dirfd);
    dsig_xfree(f->dir, 0);
    dsig_xfree(f, sizeof *f);
}

static const struct serve_counter_ops file_ops = {
    .name = "file", .get = file_get, .cas = file_cas, .destroy = file_destroy};

int serve_counter_file_new(struct serve_counter **out, const char *dir)
{
    if (!out || !dir || !*dir)
        return dsig_fail(DSIG_E_ARG, "serve_counter_file_new: NULL argument");
    *out = NULL;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return dsig_fail(DSIG_E_IO, "index counter directory '%s': %s", dir, strerror(errno));
    struct file_counter *f = dsig_calloc(1, sizeof *f);
    struct serve_counter *c = dsig_calloc(1, sizeof *c);
    if (f)
        f->dirfd = -1;
    if (!f || !c || !(f->dir = dsig_strdup(dir))) {
        file_destroy(f);
        dsig_xfree(c, 0);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (f->dirfd < 0) {
        int rc = dsig_fail(DSIG_E_IO, "index counter directory '%s': %s", dir, strerror(errno));
        file_destroy(f);
        dsig_xfree(c, 0);
        return rc;
    }
    c->ops = &file_ops;
    c->ctx = f;
    *out = c;
    return DSIG_OK;
}

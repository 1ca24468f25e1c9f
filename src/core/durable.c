/* Durable POSIX file updates (durable.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/durable.h"
#include "core/internal.h"
#include "core/layer_api.h"

DSIG_LAYER_API int dsig_durable_sync_dirfd(int dirfd)
{
    return fsync(dirfd) == 0 ? 0 : errno ? errno : EIO;
}

DSIG_LAYER_API int dsig_durable_sync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash)
        dir = dsig_strdup(".");
    else if (slash == path)
        dir = dsig_strdup("/");
    else if ((dir = dsig_malloc((size_t)(slash - path) + 1)) != NULL) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    if (!dir)
        return ENOMEM;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err = dfd < 0 ? errno : dsig_durable_sync_dirfd(dfd);
    if (dfd >= 0)
        close(dfd);
    dsig_xfree(dir, 0);
    return err;
}

/* Write, fsync and (flags) lock an open new file. */
static int fill(int fd, const void *buf, size_t len, unsigned flags, const char **step)
{
    int err;
    if ((err = dsig_write_all(fd, buf, len, NULL)) != 0)
        return *step = "write", err;
    if (fsync(fd) != 0)
        return *step = "fsync", errno;
    if ((flags & DSIG_DURABLE_LOCK) && flock(fd, LOCK_EX | LOCK_NB) != 0)
        return *step = "lock", errno;
    return 0;
}

DSIG_LAYER_API int dsig_durable_replace(int dirfd, const char *name, const void *buf, size_t len,
                                        unsigned flags, int *fd_out, const char **step)
{
    const char *ignored;
    if (!step)
        step = &ignored;
    if (fd_out)
        *fd_out = -1;
    size_t tl = strlen(name) + 5;
    char *tmp = dsig_malloc(tl);
    if (!tmp)
        return *step = "create temporary file", ENOMEM;
    snprintf(tmp, tl, "%s.tmp", name);
    int fd = -1, err = 0;
    /* A leftover temporary name (a crash before the rename, or planted) is removed, and the file is
     * created anew (O_EXCL): opening an existing one would write into whatever inode it is, e.g. a
     * hard link whose other name keeps a copy. */
    if (unlinkat(dirfd, tmp, 0) != 0 && errno != ENOENT) {
        err = errno, *step = "remove the stale temporary file";
        goto out;
    }
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        err = errno, *step = "create temporary file";
        goto out;
    }
    if (fchmod(fd, 0600) != 0)
        err = errno, *step = "chmod";
    if (!err)
        err = fill(fd, buf, len, flags, step);
    if (!err && renameat(dirfd, tmp, dirfd, name) != 0)
        err = errno, *step = "rename";
    if (err) {
        close(fd);
        unlinkat(dirfd, tmp, 0);
        goto out;
    }
    /* The name is the new file now: whatever the directory fsync says, the caller holds it. */
    if ((err = dsig_durable_sync_dirfd(dirfd)) != 0)
        *step = "fsync of the directory";
    if (fd_out)
        *fd_out = fd;
    else
        close(fd);
out:
    dsig_xfree(tmp, 0);
    return err;
}

DSIG_LAYER_API int dsig_durable_create(int dirfd, const char *name, const void *buf, size_t len,
                                       unsigned flags, int *fd_out, const char **step)
{
    const char *ignored;
    if (!step)
        step = &ignored;
    *fd_out = -1;
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return *step = "create", errno;
    /* Locked before the first byte: no other opener ever sees the file unlocked. */
    int err = 0;
    if ((flags & DSIG_DURABLE_LOCK) && flock(fd, LOCK_EX | LOCK_NB) != 0)
        err = errno, *step = "lock";
    if (!err)
        err = fill(fd, buf, len, 0, step);
    if (!err && (err = dsig_durable_sync_dirfd(dirfd)) != 0)
        *step = "fsync of the directory";
    if (err) {
        close(fd);
        unlinkat(dirfd, name, 0);
        return err;
    }
    *fd_out = fd;
    return 0;
}

/*
 * tests/serve/fail_sync.c — an LD_PRELOAD shim for the `dsig serve` failure tests: fdatasync() on a file
 * whose path contains $DSIG_FAIL_SYNC_MATCH fails with EIO while the file $DSIG_FAIL_SYNC_FLAG exists
 * (the test creates and removes it to break and mend the "disk" of a running server), and sleeps
 * $DSIG_SYNC_DELAY_MS milliseconds first (a slow disk). Other files sync normally.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int fdatasync(int fd);

/* 1 if fd names a file whose path contains $DSIG_FAIL_SYNC_MATCH. */
static int matches(int fd)
{
    const char *m = getenv("DSIG_FAIL_SYNC_MATCH");
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (!m || n <= 0)
        return 0;
    path[n] = '\0';
    return strstr(path, m) != NULL;
}

int fdatasync(int fd)
{
    if (matches(fd)) {
        const char *d = getenv("DSIG_SYNC_DELAY_MS"), *flag = getenv("DSIG_FAIL_SYNC_FLAG");
        long ms = d ? atol(d) : 0;
        if (ms > 0) {
            struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (flag && access(flag, F_OK) == 0) {
            errno = EIO;
            return -1;
        }
    }
    return (int)syscall(SYS_fdatasync, fd);
}

/*
 * Outputs: signatures and keys are small and held in memory until complete, so an output file is
 * created only when there is something correct to write — a failed command leaves no partial file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* write() everything, retrying on EINTR and short writes; 0 or errno. */
static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Write data and the optional newline to an open descriptor; 0 or errno. */
static int write_payload(int fd, const void *data, size_t len, int newline)
{
    int e = write_all(fd, data, len);
    if (!e && newline)
        e = write_all(fd, "\n", 1);
    return e;
}

/* Write to stdout or create/truncate a file; see cli.h. */
int output_write(const char *path, const void *data, size_t len, int newline, mode_t mode,
                 int private_mode, const char *what)
{
    if (input_is_stdin(path)) {
        int e = write_payload(STDOUT_FILENO, data, len, newline);
        if (e) {
            cli_err_sys(e, "cannot write %s to <stdout>", what);
            return -1;
        }
        return 0;
    }
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOCTTY, mode);
    if (fd < 0) {
        cli_err_sys(errno, "cannot create %s '%s'", what, path);
        return -1;
    }
    /* An existing file keeps its old mode under O_CREAT: a private key must not stay readable. */
    if (private_mode && fchmod(fd, 0600) != 0) {
        int e = errno;
        close(fd);
        unlink(path);
        cli_err_sys(e, "cannot restrict the mode of %s '%s' to 0600", what, path);
        return -1;
    }
    int e = write_payload(fd, data, len, newline);
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        unlink(path);
        cli_err_sys(e, "cannot write %s '%s'", what, path);
        return -1;
    }
    return 0;
}

/* Replace a private file atomically: a crash leaves either the old or the new content. */
int output_replace_private(const char *path, const void *data, size_t len, const char *what)
{
    size_t n = strlen(path);
    char *tmpl = malloc(n + 16);
    char *dircopy = strdup(path);
    if (!tmpl || !dircopy) {
        free(tmpl);
        free(dircopy);
        cli_err_sys(ENOMEM, "cannot update %s '%s'", what, path);
        return -1;
    }
    snprintf(tmpl, n + 16, "%s.new-XXXXXX", path);
    int rc = -1;
    int fd = mkstemp(tmpl); /* created 0600 */
    if (fd < 0) {
        cli_err_sys(errno, "cannot update %s '%s'", what, path);
        goto out;
    }
    int e = write_payload(fd, data, len, 0);
    if (!e && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmpl, path) != 0)
        e = errno;
    if (e) {
        unlink(tmpl);
        cli_err_sys(e, "cannot update %s '%s'", what, path);
        goto out;
    }
    /* Make the rename itself durable. */
    int dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    rc = 0;
out:
    free(tmpl);
    free(dircopy);
    return rc;
}

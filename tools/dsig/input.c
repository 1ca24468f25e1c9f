/*
 * Inputs: the payload (a file, "-" or stdin; its size when known, for the progress bar) and whole
 * small files (keys, signatures), bounded so that a wrong argument cannot exhaust memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* NULL and "-" both mean standard input. */
int input_is_stdin(const char *path)
{
    return path == NULL || strcmp(path, "-") == 0;
}

/* Open `path` (or take stdin) and refuse what cannot be a payload (directories). */
int input_open(struct cli_input *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    if (input_is_stdin(path)) {
        in->fd = STDIN_FILENO;
        in->name = "<stdin>";
    } else {
        in->name = path;
        in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (in->fd < 0) {
            cli_err_sys(errno, "cannot open '%s'", path);
            return -1;
        }
        in->owned = 1;
    }
    struct stat st;
    if (fstat(in->fd, &st) != 0) {
        cli_err_sys(errno, "cannot stat '%s'", in->name);
        input_close(in);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        cli_err_sys(EISDIR, "cannot read '%s'", in->name);
        input_close(in);
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        in->size_known = 1;
        in->size = (uint64_t)st.st_size;
        in->dev = st.st_dev;
        in->ino = st.st_ino;
    }
    return 0;
}

/* A payload: as input_open, but a terminal on standard input is never read without being asked
 * for — waiting silently for typing looks like a hang. */
int input_open_payload(struct cli_input *in, const char *path, const char *cmd)
{
    if (input_is_stdin(path) && isatty(STDIN_FILENO)) {
        if (!path) {
            memset(in, 0, sizeof *in);
            in->fd = -1;
            cli_usage_error(cmd, "no payload: give FILE ('-' reads standard input, here the terminal)");
            return -1;
        }
        cli_note("dsig %s: reading the payload from the terminal; end it with Ctrl-D", cmd);
    }
    return input_open(in, path);
}

/* Close an input opened by input_open (stdin stays open). */
void input_close(struct cli_input *in)
{
    if (in->owned && in->fd >= 0)
        close(in->fd);
    in->fd = -1;
    in->owned = 0;
}

/* Read a whole bounded file into memory, NUL-terminated. */
int input_read_all(const char *path, size_t max, const char *what, char **buf, size_t *len,
                   struct cli_fileid *id)
{
    *buf = NULL;
    *len = 0;
    struct cli_input in;
    if (input_open(&in, path) != 0)
        return -1;
    if (id)
        fileid_from_fd(id, in.fd, what, in.name);
    if (in.size_known && in.size > max) {
        cli_err("%s '%s': %s: %llu bytes, larger than the %zu-byte limit", what,
                in.name, dsig_strerror(DSIG_E_TOO_LARGE), (unsigned long long)in.size, max);
        input_close(&in);
        return -1;
    }
    /* Start with the exact size of a regular file; grow geometrically for pipes. */
    size_t cap = in.size_known ? (size_t)in.size + 1 : 4096;
    char *b = malloc(cap);
    size_t n = 0;
    int rc = -1;
    if (!b) {
        cli_err_sys(ENOMEM, "%s '%s'", what, in.name);
        goto out;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max + 1) {
                cli_err("%s '%s': %s: larger than the %zu-byte limit", what, in.name,
                        dsig_strerror(DSIG_E_TOO_LARGE), max);
                goto out;
            }
            size_t ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
            char *nb = malloc(ncap);
            if (!nb) {
                cli_err_sys(ENOMEM, "%s '%s'", what, in.name);
                goto out;
            }
            memcpy(nb, b, n);
            cli_free_secret(b, cap); /* may hold key material */
            b = nb;
            cap = ncap;
        }
        ssize_t r = read(in.fd, b + n, cap - 1 - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            cli_err_sys(errno, "cannot read %s '%s'", what, in.name);
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > max) {
            cli_err("%s '%s': %s: larger than the %zu-byte limit", what, in.name,
                    dsig_strerror(DSIG_E_TOO_LARGE), max);
            goto out;
        }
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    b = NULL;
    rc = 0;
out:
    cli_free_secret(b, cap);
    input_close(&in);
    return rc;
}

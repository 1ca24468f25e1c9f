/*
 * Outputs: signatures and keys are small and held in memory until complete, so an output file is
 * created only when there is something correct to write — a failed command leaves no partial file.
 *
 * Outputs never destroy what the user has: an output that is the same file as an input (the key,
 * the payload — through a symlink or a hard link too) is refused before anything is truncated; a
 * private key never replaces an existing file or writes through a symlink unless --force (and then
 * by an atomic rename that replaces the link itself); a failure removes only a file we created.
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

/* Record a regular file's identity from its stat (nothing for devices, pipes, directories). */
static void fileid_from_stat(struct cli_fileid *id, const struct stat *st, const char *what,
                             const char *name)
{
    memset(id, 0, sizeof *id);
    id->what = what;
    id->name = name;
    if (S_ISREG(st->st_mode)) {
        id->set = 1;
        id->dev = st->st_dev;
        id->ino = st->st_ino;
        id->mode = st->st_mode & 07777;
    }
}

/* See cli.h. */
void fileid_from_fd(struct cli_fileid *id, int fd, const char *what, const char *name)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (fstat(fd, &st) == 0)
        fileid_from_stat(id, &st, what, name);
}

/* See cli.h. */
void fileid_from_path(struct cli_fileid *id, const char *path, const char *what)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (path && stat(path, &st) == 0)
        fileid_from_stat(id, &st, what, path);
}

/* Report and return 1 when the file `st` (the output `what` at `path`) is one of `avoid`. */
static int is_avoided(const struct stat *st, const char *path, const char *what,
                      const struct cli_fileid *avoid, size_t n)
{
    if (!S_ISREG(st->st_mode))
        return 0; /* /dev/null, a pipe...: writing there destroys nothing */
    for (size_t i = 0; i < n; i++) {
        if (avoid[i].set && avoid[i].dev == st->st_dev && avoid[i].ino == st->st_ino) {
            cli_err("%s '%s': %s: it is the same file as the %s '%s'; refusing to "
                            "overwrite it",
                    what, path, dsig_strerror(DSIG_E_ARG), avoid[i].what, avoid[i].name);
            return 1;
        }
    }
    return 0;
}

/* See cli.h. */
int output_check_distinct(const char *path, const char *what, const struct cli_fileid *avoid, size_t n)
{
    struct stat st;
    if (input_is_stdin(path) || stat(path, &st) != 0)
        return 0; /* stdout, or not there yet: the open will tell */
    return is_avoided(&st, path, what, avoid, n) ? -1 : 0;
}

/* Write to stdout or create/replace a file; see cli.h. */
int output_write(const char *path, const void *data, size_t len, int newline, mode_t mode,
                 const char *what, const struct cli_fileid *avoid, size_t n)
{
    if (input_is_stdin(path)) {
        int e = write_payload(STDOUT_FILENO, data, len, newline);
        if (e) {
            cli_err_sys(e, "cannot write %s to <stdout>", what);
            return -1;
        }
        return 0;
    }
    /* Create exclusively first, so that we know whether the file is ours to remove on failure;
     * an existing file is opened without O_TRUNC and truncated only once it proved not to be an
     * input. */
    int created = 1;
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOCTTY, mode);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    }
    if (fd < 0) {
        cli_err_sys(errno, "cannot create %s '%s'", what, path);
        return -1;
    }
    int e = 0;
    if (!created) {
        struct stat st;
        if (fstat(fd, &st) != 0) {
            e = errno;
        } else if (is_avoided(&st, path, what, avoid, n)) {
            close(fd);
            return -1;
        } else if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) {
            e = errno;
        }
    }
    if (!e)
        e = write_payload(fd, data, len, newline);
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        if (created)
            unlink(path); /* never the user's existing file */
        cli_err_sys(e, "cannot write %s '%s'", what, path);
        return -1;
    }
    return 0;
}

/* Write, restrict to 0600 and optionally fsync a private file we just created; 0 or errno. */
static int write_private_fd(int fd, const void *data, size_t len, int newline, int sync)
{
    /* The creation mode is 0600 already (minus the umask); make it exactly 0600. */
    int e = fchmod(fd, 0600) != 0 ? errno : 0;
    if (!e)
        e = write_payload(fd, data, len, newline);
    if (!e && sync && fsync(fd) != 0)
        e = errno;
    return e;
}

/* See cli.h. */
int output_private_begin(struct cli_private_out *o, const char *path, int force, const void *data,
                         size_t len, int newline, const char *what)
{
    memset(o, 0, sizeof *o);
    if (input_is_stdin(path)) {
        int e = write_payload(STDOUT_FILENO, data, len, newline);
        if (e) {
            cli_err_sys(e, "cannot write %s to <stdout>", what);
            return -1;
        }
        fileid_from_fd(&o->id, STDOUT_FILENO, what, "<stdout>");
        return 0;
    }
    o->path = path;
    int fd;
    if (force) {
        size_t n = strlen(path) + 16;
        if (!(o->tmp = malloc(n))) {
            cli_err_sys(ENOMEM, "cannot create %s '%s'", what, path);
            return -1;
        }
        snprintf(o->tmp, n, "%s.new-XXXXXX", path);
        fd = mkstemp(o->tmp); /* O_EXCL, mode 0600 */
        if (fd < 0) {
            cli_err_sys(errno, "cannot create %s '%s'", what, path);
            free(o->tmp);
            o->tmp = NULL;
            return -1;
        }
    } else {
        /* O_EXCL: never replace an existing key (or anything else); it also refuses a symlink,
         * dangling or not, and O_NOFOLLOW says so explicitly. */
        fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0) {
            if (errno == EEXIST || errno == ELOOP)
                cli_err("cannot create %s '%s': %s: the file already exists (or is a "
                                "symbolic link); it is not replaced unless --force is given",
                        what, path, dsig_strerror(DSIG_E_IO));
            else
                cli_err_sys(errno, "cannot create %s '%s'", what, path);
            return -1;
        }
        o->created = 1;
    }
    fileid_from_fd(&o->id, fd, what, path);
    int e = write_private_fd(fd, data, len, newline, force);
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        cli_err_sys(e, "cannot write %s '%s'", what, path);
        output_private_abort(o);
        return -1;
    }
    return 0;
}

/* See cli.h. */
int output_private_commit(struct cli_private_out *o, const char *what)
{
    if (!o->tmp) {
        o->created = 0; /* final: no longer ours to remove */
        return 0;
    }
    if (rename(o->tmp, o->path) != 0) {
        cli_err_sys(errno, "cannot replace %s '%s'", what, o->path);
        output_private_abort(o);
        return -1;
    }
    free(o->tmp);
    o->tmp = NULL;
    /* Make the rename itself durable. */
    char *dircopy = strdup(o->path);
    if (dircopy) {
        int dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dircopy);
    }
    return 0;
}

/* See cli.h. */
void output_private_abort(struct cli_private_out *o)
{
    if (o->tmp) {
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
    if (o->created) {
        unlink(o->path); /* created by output_private_begin with O_EXCL: ours */
        o->created = 0;
    }
}

/* Replace a private file atomically: a crash leaves either the old or the new content. */
int output_replace_private(const char *path, const void *data, size_t len, const char *what)
{
    struct cli_private_out o;
    if (output_private_begin(&o, path, 1, data, len, 0, what) != 0)
        return -1;
    return output_private_commit(&o, what);
}

/*
 * Durable POSIX file updates: the one place that knows the order "write a temporary file, fsync it,
 * rename it over the old name, fsync the directory" and the directory fsync that makes a new name
 * survive a crash. Used by the state files (statefile.c, state_hwm.c), the application logs
 * (applog.c) and the BFT replica log (bft/store.c).
 *
 * The functions return 0 or an errno value and set no error detail: the caller knows what the file
 * is and words the message; *step (when the caller passes one) names the step that failed.
 */
#ifndef DSIG_CORE_DURABLE_H
#define DSIG_CORE_DURABLE_H

#include <stddef.h>
#include <sys/types.h>

/* flags of dsig_durable_replace / dsig_durable_create */
#define DSIG_DURABLE_LOCK 1u /* flock(LOCK_EX | LOCK_NB) the new file before its name appears */

/* fsync an open directory: its new, renamed or removed entries survive a crash.
 * @retval 0      synced
 * @retval errno  fsync failed (EINVAL: a file system that cannot sync directories) */
int dsig_durable_sync_dirfd(int dirfd);

/* fsync the directory that holds `path` ("." for a bare name, "/" for "/name").
 * @retval 0      synced
 * @retval errno  the directory could not be opened (ENOMEM: no memory for its name) or synced */
int dsig_durable_sync_parent(const char *path);

/* Replace dirfd/name by a file holding buf[0..len), mode 0600, so that after a crash the name holds
 * either the old or the new bytes, never a mix: "name.tmp" (a stale one removed first, then created
 * O_EXCL | O_NOFOLLOW: never another inode the old name might share), write, fsync, optional lock,
 * rename over name, fsync of the directory.
 * On success *fd (if fd is not NULL) is the new file, open for writing; otherwise it is closed. Once
 * the rename happened *fd is set even if the directory fsync then fails: the name already is the new
 * file (and holds its lock).
 * @retval 0      the new bytes are durable under `name`
 * @retval errno  *step: "remove the stale temporary file", "create temporary file", "chmod", "write",
 *                "fsync", "lock", "rename" (the old file is untouched, the temporary removed) or
 *                "fsync of the directory" (renamed, not known durable) */
int dsig_durable_replace(int dirfd, const char *name, const void *buf, size_t len, unsigned flags,
                         int *fd, const char **step);

/* Create dirfd/name (O_EXCL | O_NOFOLLOW, mode 0600) holding buf[0..len): optional lock, write,
 * fsync, fsync of the directory. On failure after the creation the file is removed again.
 * On success *fd is the new file (open for writing).
 * @retval 0       created and durable
 * @retval EEXIST  the name exists: nothing was touched (*step "create")
 * @retval errno   *step: "create", "lock", "write", "fsync", "fsync of the directory" */
int dsig_durable_create(int dirfd, const char *name, const void *buf, size_t len, unsigned flags, int *fd,
                        const char **step);

/* The read side of the same files: exactly len bytes from offset off (io.c).
 * @retval 0      read
 * @retval EIO    the file ends first
 * @retval errno  pread failed */
int dsig_pread_all(int fd, void *buf, size_t len, off_t off);

#endif

/*
 * Fault injection into the state-file layer (src/core/statefile.c), against its rule: a
 * one-time index must never be released unless it is durable, and no crash, failed
 * write, stale file or hostile file around the state may reuse an index or brick a key.
 *
 * The test executable interposes write, fsync, fdatasync, renameat and flock (the library is linked
 * into it, so its calls resolve here); each interposer forwards to the raw system call unless the
 * test armed a failure (an errno, or SIGKILL to model a crash at exactly that point).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hash/sha256.h"
#include "testutil.h"
#include "toy.h"

/* ---- interposed system calls ------------------------------------------------------------------ */

enum { F_WRITE, F_FSYNC, F_FDATASYNC, F_RENAMEAT, F_NCALLS };

/* Per call: fail the n-th call after arming (0 = never) with `err` (or SIGKILL when err < 0). */
static struct {
    int countdown;
    int err;
} arm[F_NCALLS];
static int flock_always_ok; /* model POSIX-lock (NFS) semantics: the same process never conflicts */

/* Arm call `c` to fail on its n-th use with errno `err` (-1: the process is SIGKILLed there). */
static void arm_fail(int c, int n, int err)
{
    arm[c].countdown = n;
    arm[c].err = err;
}

/* Clear every armed failure. */
static void disarm(void)
{
    memset(arm, 0, sizeof arm);
    flock_always_ok = 0;
}

/* 1 if call `c` must fail now (errno set), 0 to pass through. */
static int tripped(int c)
{
    if (arm[c].countdown <= 0 || --arm[c].countdown > 0)
        return 0;
    if (arm[c].err < 0)
        kill(getpid(), SIGKILL); /* a crash at exactly this point */
    errno = arm[c].err;
    return 1;
}

/* Interposers: forward to the raw system call unless armed. */
ssize_t write(int fd, const void *buf, size_t len)
{
    if (tripped(F_WRITE))
        return -1;
    return syscall(SYS_write, fd, buf, len);
}
int fsync(int fd)
{
    return tripped(F_FSYNC) ? -1 : (int)syscall(SYS_fsync, fd);
}
int fdatasync(int fd)
{
    return tripped(F_FDATASYNC) ? -1 : (int)syscall(SYS_fdatasync, fd);
}
int renameat(int od, const char *o, int nd, const char *n)
{
    return tripped(F_RENAMEAT) ? -1 : (int)syscall(SYS_renameat, od, o, nd, n);
}
int flock(int fd, int op)
{
    return flock_always_ok ? 0 : (int)syscall(SYS_flock, fd, op);
}

/* ---- helpers ------------------------------------------------------------------------------------ */

static char dir[256];    /* per-run temporary directory */
static char regdir[300]; /* its high-water registry */

/* Path of a file in the temporary directory. */
static const char *tpath(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

/* The counter stored in state file `path` (8 bytes before the 32-byte checksum). */
static uint64_t file_counter(const char *path)
{
    uint8_t b[4096];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    assert_true(n > 40);
    uint64_t v = 0;
    for (ssize_t i = n - 40; i < n - 32; i++)
        v = v << 8 | b[i];
    return v;
}

/* Registry options of this run. */
static dsig_state_opts opts(uint32_t reserve)
{
    dsig_state_opts o = {.reserve = reserve, .registry_dir = regdir};
    return o;
}

/* Sign a short message; DSIG_OK and the index, or the error (no signature). */
static int sign_one(const dsig_key *key, uint64_t *q)
{
    uint8_t sig[TOY_SIG_LEN];
    size_t len = 0;
    int rc = dsig_sign(&toy_alg, key, "msg", 3, sig, sizeof sig, &len);
    if (rc == DSIG_OK) {
        assert_int_equal(len, TOY_SIG_LEN);
        *q = toy_sig_index(sig);
    }
    return rc;
}

/* A new toy key (capacity 100) in state file `name`. */
static dsig_key *make(const char *name, uint32_t reserve)
{
    char p[512];
    dsig_key *k = NULL;
    dsig_keygen_params kp = {.bits = 100};
    dsig_state_opts o = opts(reserve);
    assert_int_equal(dsig_state_create(&k, tpath(p, sizeof p, name), &toy_alg, &kp, &o), DSIG_OK);
    return k;
}

/* Open state file `name` with the run's registry. */
static int reopen(const char *name, uint32_t reserve, dsig_key **k)
{
    char p[512];
    dsig_state_opts o = opts(reserve);
    return dsig_state_open(k, tpath(p, sizeof p, name), &o);
}

/* The registry file of the key in `name` (its thumbprint names it). */
static void registry_path(const dsig_key *k, char *out, size_t cap)
{
    char thumb[DSIG_THUMBPRINT_LEN];
    assert_int_equal(dsig_jwk_thumbprint(k, thumb), DSIG_OK);
    snprintf(out, cap, "%s/%s", regdir, thumb);
}

/* ---- tests -------------------------------------------------------------------------------------- */

/* fsync of the temporary file, then fsync of the directory, fail: no signature either time, the
 * durable counter never goes backwards, and the next signature uses a fresh index. */
static void test_fsync_failure(void **state)
{
    (void)state;
    char p[512];
    tpath(p, sizeof p, "fs.state");
    dsig_key *k = make("fs.state", 1);
    uint64_t q = 99;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 0);
    arm_fail(F_FSYNC, 1, EIO); /* the temporary file */
    assert_int_equal(sign_one(k, &q), DSIG_E_IO);
    assert_non_null(strstr(dsig_last_error_detail(), "fsync"));
    assert_int_equal(file_counter(p), 1);
    arm_fail(F_FSYNC, 2, EIO); /* the directory, after the rename */
    assert_int_equal(sign_one(k, &q), DSIG_E_IO);
    disarm();
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 1); /* index 1 was never released before */
    dsig_key_free(k);
    assert_int_equal(reopen("fs.state", 1, &k), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 2);
    dsig_key_free(k);
}

/* A full disk (ENOSPC on write, also after a short write) and a failed rename release nothing and
 * leave no temporary file holding the private key behind. */
static void test_enospc_and_rename(void **state)
{
    (void)state;
    char p[512], t[512];
    tpath(p, sizeof p, "ns.state");
    tpath(t, sizeof t, "ns.state.tmp");
    dsig_key *k = make("ns.state", 1);
    uint64_t q;
    arm_fail(F_WRITE, 1, ENOSPC);
    assert_int_equal(sign_one(k, &q), DSIG_E_IO);
    assert_non_null(strstr(dsig_last_error_detail(), "No space"));
    assert_int_equal(access(t, F_OK), -1);
    arm_fail(F_RENAMEAT, 1, EIO);
    assert_int_equal(sign_one(k, &q), DSIG_E_IO);
    assert_int_equal(access(t, F_OK), -1);
    assert_int_equal(file_counter(p), 0);
    disarm();
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 0);
    dsig_key_free(k);
}

/* The registry write fails after the state file was advanced: no signature; the key still opens
 * (file ahead of the registry) and continues after everything the file reserved. */
static void test_registry_write_failure(void **state)
{
    (void)state;
    dsig_key *k = make("rw.state", 3);
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK); /* window [0,3) */
    assert_int_equal(q, 0);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    arm_fail(F_FDATASYNC, 1, EIO);
    assert_int_equal(sign_one(k, &q), DSIG_E_IO);
    disarm();
    dsig_key_free(k);
    assert_int_equal(reopen("rw.state", 3, &k), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 6);
    dsig_key_free(k);
}

/* A child process signs and is killed at a chosen durable step; the parent then opens the key
 * (never bricked) and its next index is above every index the child could have released. */
static void crash_at(const char *name, int call, int nth)
{
    dsig_key *k = make(name, 1);
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 0);
    dsig_key_free(k);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dsig_key *c = NULL;
        if (reopen(name, 1, &c) != DSIG_OK)
            _exit(2);
        arm_fail(call, nth, -1);
        uint64_t cq;
        sign_one(c, &cq);
        _exit(3); /* not reached: killed inside the reservation */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(reopen(name, 1, &k), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_true(q >= 1);
    dsig_key_free(k);
}

/* Crashes between the rename and the registry update, between the rename and the directory
 * fsync, and inside the registry write. */
static void test_kill_between_writes(void **state)
{
    (void)state;
    crash_at("k1.state", F_FSYNC, 2);     /* renamed, directory not yet synced */
    crash_at("k2.state", F_FDATASYNC, 1); /* state file durable, registry slot written, not synced */
    crash_at("k3.state", F_FSYNC, 1);     /* temporary file written, not renamed */
}

/* Crash after the registry file was created but before its first write (an empty registry file):
 * the key must keep working, not be refused as "damaged" after its next signature. */
static void test_empty_registry_file(void **state)
{
    (void)state;
    char rf[700];
    dsig_key *k = make("er.state", 2);
    registry_path(k, rf, sizeof rf);
    dsig_key_free(k);
    assert_int_equal(truncate(rf, 0), 0);
    assert_int_equal(reopen("er.state", 2, &k), DSIG_OK);
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 0);
    dsig_key_free(k);
    struct stat sb;
    assert_int_equal(stat(rf, &sb), 0);
    assert_int_equal(sb.st_size, 64);
    assert_int_equal(reopen("er.state", 2, &k), DSIG_OK);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 2);
    dsig_key_free(k);
}

/* A stale "FILE.tmp" that is a hard link to another file, or a symbolic link: an update must not
 * write the private key through it (the other name would keep a copy) and must still succeed. */
static void test_stale_tmp_links(void **state)
{
    (void)state;
    char p[512], t[512], v[512], w[512];
    tpath(t, sizeof t, "hl.state.tmp");
    tpath(v, sizeof v, "victim");
    tpath(w, sizeof w, "victim2");
    dsig_key *k = make("hl.state", 1);
    int fd = open(v, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello", 5), 5);
    close(fd);
    assert_int_equal(link(v, t), 0);
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    char buf[64] = "";
    fd = open(v, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof buf - 1), 5);
    close(fd);
    assert_string_equal(buf, "hello"); /* no private key went into the other file */
    struct stat sb;
    assert_int_equal(stat(v, &sb), 0);
    assert_int_equal(sb.st_nlink, 1);
    /* A symbolic link left at the temporary name: replaced, its target untouched. */
    assert_int_equal(symlink(w, t), 0);
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(access(w, F_OK), -1);
    dsig_key_free(k);
    assert_int_equal(dsig_state_open(&k, tpath(p, sizeof p, "hl.state"), &(dsig_state_opts){
                                         .reserve = 1, .registry_dir = regdir}),
                     DSIG_OK);
    dsig_key_free(k);
}

/* A registry file or directory that other users can write would let them lower the mark (and then
 * a restored copy of the state would sign again): refused. */
static void test_registry_permissions(void **state)
{
    (void)state;
    char rf[700];
    dsig_key *k = make("rp.state", 2);
    registry_path(k, rf, sizeof rf);
    dsig_key_free(k);
    assert_int_equal(chmod(rf, 0666), 0);
    assert_int_equal(reopen("rp.state", 2, &k), DSIG_E_STATE);
    assert_null(k);
    assert_non_null(strstr(dsig_last_error_detail(), "registry"));
    assert_int_equal(chmod(rf, 0600), 0);
    assert_int_equal(chmod(regdir, 0777), 0);
    assert_int_equal(reopen("rp.state", 2, &k), DSIG_E_STATE);
    assert_null(k);
    assert_int_equal(chmod(regdir, 0700), 0);
    assert_int_equal(reopen("rp.state", 2, &k), DSIG_OK);
    dsig_key_free(k);
}

/* Where flock is emulated with POSIX record locks (NFS), a process never conflicts with itself: a
 * second open of the same key in one process must still be refused, or both would hand out the
 * same indices. */
static void test_same_process_without_exclusive_flock(void **state)
{
    (void)state;
    char p[512], c[512];
    dsig_key *k = make("nfs.state", 4);
    flock_always_ok = 1;
    dsig_key *k2 = NULL;
    assert_int_equal(reopen("nfs.state", 4, &k2), DSIG_E_STATE);
    assert_null(k2);
    /* ... also a copy of the file in this process, even without a registry. */
    tpath(p, sizeof p, "nfs.state");
    tpath(c, sizeof c, "nfs-copy.state");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s'", p, c);
    assert_int_equal(system(cmd), 0);
    dsig_state_opts none = {.reserve = 4, .registry_dir = ""};
    assert_int_equal(dsig_state_open(&k2, c, &none), DSIG_E_STATE);
    assert_null(k2);
    disarm();
    uint64_t q;
    assert_int_equal(sign_one(k, &q), DSIG_OK);
    assert_int_equal(q, 0);
    dsig_key_free(k);
    assert_int_equal(reopen("nfs.state", 4, &k2), DSIG_OK); /* released on free */
    dsig_key_free(k2);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/dsig-statef-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(regdir, sizeof regdir, "%s/registry", dir);
    toy_register();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    disarm();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fsync_failure),
        cmocka_unit_test(test_enospc_and_rename),
        cmocka_unit_test(test_registry_write_failure),
        cmocka_unit_test(test_kill_between_writes),
        cmocka_unit_test(test_empty_registry_file),
        cmocka_unit_test(test_stale_tmp_links),
        cmocka_unit_test(test_registry_permissions),
        cmocka_unit_test(test_same_process_without_exclusive_flock),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * tests/serve/test_serve_audit.c — the audit log writer's contract: a record is released (serve_audit_wait
 * returns DSIG_OK) only once the fdatasync that covers it succeeded, under any interleaving of failed
 * syncs; a failed or short write leaves no fragment; a deleted, renamed or replaced log stops the log
 * until it is back; records kept in memory while stopped reach the file whole, once, in order; group
 * commit shares syncs and has no timer on its path; "always", "interval" and "none" keep their promise;
 * the file is 0600 and never a symbolic link.
 *
 * The hooks: this executable defines fdatasync(), ftruncate() and write(), which the library's calls
 * resolve to (static link). They act on the test's log file only (by inode) and keep a model of the
 * disk with the behaviour that makes a retried fsync a lie (Linux, "fsyncgate"): bytes written are
 * dirty; a successful fdatasync copies the dirty bytes to the disk model; a *failed* one drops them
 * (marks them clean without writing them), so a later successful sync does not bring them back. A
 * record counts as durable only if it is whole in that model when its writer is told so.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "core/internal.h"
#include "serve/serve_internal.h"

#define MODEL_MAX (8u << 20)

static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static ino_t hook_ino;             /* the log file the hooks act on (0: none) */
static unsigned char *disk;        /* the disk model: what completed syncs wrote */
static size_t disk_len;
static unsigned char *dirty;       /* 1: written since the last sync (of either outcome) */
static unsigned char *cache;       /* what was written (the page cache; the log is open write-only) */
static unsigned long nsyncs;       /* fdatasync calls on the log */
static int sync_fail;              /* 0: none, 1: every sync fails, 2: pseudo-random 1 in 3, 3: the next
                                    * sync to finish fails, once */
static unsigned rnd = 12345;
static int write_short;            /* the next write to the log writes half, then ... */
static int write_enospc;           /* ... this many writes fail with ENOSPC */
static _Atomic long sync_delay_ns = 2 * 1000 * 1000; /* a slow disk: writers pile up into batches */
static _Atomic unsigned long syncs_entered; /* fdatasync calls begun (on any file) */

/* 1 if fd is the test's log file (size in *size). */
static int is_log(int fd, off_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    *size = st.st_size;
    return hook_ino && st.st_ino == hook_ino;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    off_t size;
    pthread_mutex_lock(&hook_mu);
    if (!is_log(fd, &size)) {
        pthread_mutex_unlock(&hook_mu);
        return (ssize_t)syscall(SYS_write, fd, buf, n);
    }
    if (write_short && n > 1) {
        write_short = 0;
        n /= 2;
    } else if (write_enospc > 0) {
        write_enospc--;
        pthread_mutex_unlock(&hook_mu);
        errno = ENOSPC;
        return -1;
    }
    ssize_t w = (ssize_t)syscall(SYS_write, fd, buf, n);
    if (w > 0 && (size_t)size + (size_t)w <= MODEL_MAX) { /* O_APPEND: at the end */
        memcpy(cache + size, buf, (size_t)w);
        memset(dirty + size, 1, (size_t)w);
    }
    pthread_mutex_unlock(&hook_mu);
    return w;
}

int ftruncate(int fd, off_t len)
{
    off_t size;
    pthread_mutex_lock(&hook_mu);
    int log = is_log(fd, &size);
    int rc = (int)syscall(SYS_ftruncate, fd, len);
    if (log && rc == 0 && len < size && (size_t)size <= MODEL_MAX)
        memset(dirty + len, 0, (size_t)(size - len));
    pthread_mutex_unlock(&hook_mu);
    return rc;
}

int fdatasync(int fd)
{
    long delay = atomic_load(&sync_delay_ns); /* read at entry: a sync begun slow stays slow */
    atomic_fetch_add(&syncs_entered, 1);
    struct timespec ts = {delay / 1000000000L, delay % 1000000000L};
    if (delay)
        nanosleep(&ts, NULL);
    off_t size;
    pthread_mutex_lock(&hook_mu);
    if (!is_log(fd, &size)) {
        pthread_mutex_unlock(&hook_mu);
        return (int)syscall(SYS_fdatasync, fd);
    }
    nsyncs++;
    int fail = sync_fail == 1 || sync_fail == 3 ||
               (sync_fail == 2 && (rnd = rnd * 1103515245u + 12345u) >> 16 < 65536u / 3);
    if (sync_fail == 3)
        sync_fail = 0;
    if ((size_t)size > MODEL_MAX)
        fail = 1;
    if (fail) {
        memset(dirty, 0, MODEL_MAX); /* the kernel dropped the dirty pages: they never reach the disk */
        pthread_mutex_unlock(&hook_mu);
        errno = EIO;
        return -1;
    }
    for (off_t i = 0; i < size; i++)
        if (dirty[i]) {
            disk[i] = cache[i];
            dirty[i] = 0;
        }
    disk_len = (size_t)size;
    pthread_mutex_unlock(&hook_mu);
    return (int)syscall(SYS_fdatasync, fd);
}

/* Hook state for a fresh log at path (call after serve_audit_open created it). */
static void hook_attach(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    pthread_mutex_lock(&hook_mu);
    if (!disk) {
        disk = calloc(MODEL_MAX, 1);
        dirty = calloc(MODEL_MAX, 1);
        cache = calloc(MODEL_MAX, 1);
    }
    /* What is in the file already counts as on disk (written before the hooks knew the file). */
    memset(disk, 0, MODEL_MAX);
    memset(dirty, 0, MODEL_MAX);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    disk_len = fread(disk, 1, MODEL_MAX, f);
    fclose(f);
    memcpy(cache, disk, disk_len);
    hook_ino = st.st_ino;
    nsyncs = 0;
    sync_fail = 0;
    write_short = write_enospc = 0;
    pthread_mutex_unlock(&hook_mu);
}

static void set_sync_fail(int mode)
{
    pthread_mutex_lock(&hook_mu);
    sync_fail = mode;
    pthread_mutex_unlock(&hook_mu);
}

/* 1 if the whole line {…"kid":"<kid>"…}\n is in the disk model. */
static int on_disk(const char *kid)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"kid\":\"%s\"", kid);
    pthread_mutex_lock(&hook_mu);
    const unsigned char *p = memmem(disk, disk_len, needle, strlen(needle));
    int ok = 0;
    if (p) {
        const unsigned char *b = p, *e = p;
        while (b > disk && b[-1] != '\n')
            b--;
        while (e < disk + disk_len && *e != '\n')
            e++;
        ok = *b == '{' && e < disk + disk_len && e[-1] == '}' && !memchr(b, 0, (size_t)(e - b));
    }
    pthread_mutex_unlock(&hook_mu);
    return ok;
}

/* Times the text occurs in the file (the file, not the model). */
static int count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[MODEL_MAX];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int c = 0;
    for (const char *p = buf; (p = memmem(p, n - (size_t)(p - buf), needle, strlen(needle))); p++)
        c++;
    return c;
}

/* Every line of the file is one record: starts with '{', ends with "}\n", no NUL. */
static void assert_whole_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        assert_true(n >= 3 && line[0] == '{' && line[n - 1] == '\n' && line[n - 2] == '}');
    }
    assert_true(feof(f));
    fclose(f);
}

/* A record naming kid: what the server writes, in the same format. */
static size_t rec(char *out, const char *kid)
{
    struct serve_audit_rec r = {.request_id = "0123456789abcdef", .tenant = "t", .kid = kid, .op = "sign",
                                .method = "POST", .bytes = 1, .code = 200, .result = "ok", .peer = "127.0.0.1"};
    size_t n = serve_audit_record(&r, out);
    assert_true(n > 0);
    return n;
}

/* Append one record and wait for it as the server does before releasing a signature. */
static int append_wait(struct serve_audit *a, const char *kid, uint64_t *seq)
{
    char line[SERVE_AUDIT_REC_MAX];
    size_t n = rec(line, kid);
    uint64_t s = 0;
    int rc = serve_audit_append(a, line, n, &s);
    if (seq)
        *seq = s;
    return rc == DSIG_OK ? serve_audit_wait(a, s) : rc;
}

/* Wait up to 5 s for the log to be running. */
static int wait_ready(struct serve_audit *a)
{
    for (int i = 0; i < 500; i++) {
        if (serve_audit_ready(a, NULL, 0))
            return 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

#define THREADS 8
#define LINES 40

struct writer {
    struct serve_audit *a;
    int id, lines;
    int released, refused;
    int unsafe;                /* released while not whole in the disk model */
};

/* One writer: every record released must be whole in the disk model at that moment. */
static void *writer_main(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < w->lines; i++) {
        char kid[32];
        snprintf(kid, sizeof kid, "w%d-%d", w->id, i);
        if (append_wait(w->a, kid, NULL) != DSIG_OK) {
            w->refused++;
            continue;
        }
        w->released++;
        if (!on_disk(kid))
            w->unsafe++;
    }
    return NULL;
}

/* Run THREADS writers of `lines` records; totals in *released / *refused; asserts nothing unsafe. */
static void run_writers(struct serve_audit *a, int lines, int *released, int *refused)
{
    pthread_t th[THREADS];
    struct writer w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct writer){.a = a, .id = i, .lines = lines};
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
    }
    *released = *refused = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].unsafe, 0);
        *released += w[i].released;
        *refused += w[i].refused;
    }
}

/* Every record of the writers (THREADS × lines) is in the file exactly once, and whole on disk. */
static void assert_writers_once(const char *path, int lines)
{
    char needle[32];
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < lines; j++) {
            snprintf(needle, sizeof needle, "\"kid\":\"w%d-%d\"", i, j);
            assert_int_equal(count_in_file(path, needle), 1);
            snprintf(needle, sizeof needle, "w%d-%d", i, j);
            assert_true(on_disk(needle));
        }
}

/* A fresh temporary directory and the log path in it. */
static void tmp_log(char dir[64], char path[128])
{
    strcpy(dir, "/tmp/dsig-audit.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, 128, "%s/audit.log", dir);
}

/* Remove the log (and its rotated copies) and the directory. */
static void tmp_clean(const char *dir, const char *path)
{
    char p[160];
    unlink(path);
    snprintf(p, sizeof p, "%s.1", path);
    unlink(p);
    snprintf(p, sizeof p, "%s/other", dir);
    unlink(p);
    rmdir(dir);
    pthread_mutex_lock(&hook_mu);
    hook_ino = 0;
    pthread_mutex_unlock(&hook_mu);
}

static struct serve_audit *open_log(const char *path, enum serve_audit_sync mode, unsigned interval_ms)
{
    struct serve_audit *a = NULL;
    assert_int_equal(serve_audit_open(&a, path, mode, interval_ms), DSIG_OK);
    hook_attach(path);
    return a;
}

/* Group commit (the default): 8 concurrent writers; nothing released before it is on disk; the
 * writers share fdatasyncs (fewer syncs than records). */
static void test_group_commit_never_releases_unsynced(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    int released, refused;
    run_writers(a, LINES, &released, &refused);
    assert_int_equal(released, THREADS * LINES);
    assert_int_equal(refused, 0);
    struct serve_audit_stats st;
    serve_audit_stats(a, &st);
    assert_int_equal(st.records, THREADS * LINES);
    assert_int_equal(st.durable, THREADS * LINES);
    assert_true(st.syncs >= 1 && st.syncs < THREADS * LINES); /* group commit: one sync per batch */
    serve_audit_close(a);
    assert_whole_lines(path);
    tmp_clean(dir, path);
}

/* Every fdatasync fails: not one record may be released — whatever the order in which the writers
 * wake (a writer that slept through several failed syncs must not judge itself by the last one). */
static void test_failing_syncs_release_nothing(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    long saved = atomic_exchange(&sync_delay_ns, 0); /* failing syncs return at once: the syncer runs
                                                        * ahead of the writers it wakes */
    set_sync_fail(1);
    int released, refused;
    run_writers(a, 50, &released, &refused);
    assert_int_equal(released, 0);
    assert_int_equal(refused, THREADS * 50);
    assert_false(serve_audit_ready(a, NULL, 0));
    struct serve_audit_stats st;
    serve_audit_stats(a, &st);
    assert_true(st.sync_failures >= 1);
    /* The disk comes back: the recovery writes every record kept in memory, once, whole. */
    set_sync_fail(0);
    assert_true(wait_ready(a));
    assert_writers_once(path, 50);
    assert_true(count_in_file(path, "\"event\":\"audit_recovered\"") >= 1);
    atomic_store(&sync_delay_ns, saved);
    serve_audit_close(a);
    assert_whole_lines(path);
    tmp_clean(dir, path);
}

/* One sync in three fails, at random: every released record is on disk when released, and in the end
 * every record is in the file exactly once. */
static void test_random_sync_failures(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    long saved = atomic_exchange(&sync_delay_ns, 200 * 1000);
    set_sync_fail(2);
    int released, refused;
    run_writers(a, 30, &released, &refused);
    assert_int_equal(released + refused, THREADS * 30);
    set_sync_fail(0);
    assert_true(wait_ready(a));
    serve_audit_close(a);
    assert_writers_once(path, 30);
    assert_whole_lines(path);
    atomic_store(&sync_delay_ns, saved);
    tmp_clean(dir, path);
}

/* A short write that cannot be completed (the disk is full) is cut back at once: no fragment, the next
 * record is not glued to it; the record waits in memory and is written whole once there is room. */
static void test_short_write_and_full_disk(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    assert_int_equal(append_wait(a, "before", NULL), DSIG_OK);
    struct stat st0, st1;
    assert_int_equal(stat(path, &st0), 0);
    pthread_mutex_lock(&hook_mu);
    write_short = 1;
    write_enospc = 1000000; /* full until told otherwise */
    pthread_mutex_unlock(&hook_mu);
    uint64_t seq = 0;
    assert_int_not_equal(append_wait(a, "cut", &seq), DSIG_OK);
    assert_true(seq != 0); /* kept */
    assert_int_equal(stat(path, &st1), 0);
    assert_int_equal(st1.st_size, st0.st_size); /* the half record was cut back */
    assert_false(serve_audit_ready(a, NULL, 0));
    assert_int_not_equal(append_wait(a, "while-full", NULL), DSIG_OK);
    assert_int_equal(count_in_file(path, "\"kid\":\"cut\""), 0);
    pthread_mutex_lock(&hook_mu);
    write_enospc = 0; /* room again */
    pthread_mutex_unlock(&hook_mu);
    assert_true(wait_ready(a));
    assert_int_equal(count_in_file(path, "\"kid\":\"cut\""), 1);
    assert_int_equal(count_in_file(path, "\"kid\":\"while-full\""), 1);
    assert_true(on_disk("cut") && on_disk("while-full"));
    assert_int_equal(append_wait(a, "after", NULL), DSIG_OK);
    serve_audit_close(a);
    assert_whole_lines(path);
    tmp_clean(dir, path);
}

/* The log renamed away stops it (nothing released into a file nobody will look at) until it is renamed
 * back; deleted, it stops until a reopen creates it again; replaced, until a reopen switches to the new
 * file. The records in between reach the file that is at the path in the end. */
static void test_deleted_renamed_replaced(void **state)
{
    (void)state;
    char dir[64], path[128], moved[160], other[160];
    tmp_log(dir, path);
    snprintf(moved, sizeof moved, "%s.1", path);
    snprintf(other, sizeof other, "%s/other", dir);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    assert_int_equal(append_wait(a, "r0", NULL), DSIG_OK);
    char why[256];

    assert_int_equal(rename(path, moved), 0);
    assert_int_not_equal(append_wait(a, "r1", NULL), DSIG_OK);
    assert_false(serve_audit_ready(a, why, sizeof why));
    assert_non_null(strstr(why, "renamed or deleted"));
    assert_int_equal(rename(moved, path), 0); /* back: the log recovers by itself */
    assert_true(wait_ready(a));
    assert_int_equal(count_in_file(path, "\"kid\":\"r1\""), 1);
    assert_int_equal(append_wait(a, "r2", NULL), DSIG_OK);

    assert_int_equal(unlink(path), 0);
    assert_int_not_equal(append_wait(a, "d1", NULL), DSIG_OK);
    assert_false(serve_audit_ready(a, why, sizeof why));
    assert_int_equal(serve_audit_reopen(a), DSIG_OK); /* creates the file again: d1 goes there */
    hook_attach(path);
    assert_true(wait_ready(a));
    assert_int_equal(count_in_file(path, "\"kid\":\"d1\""), 1);
    assert_int_equal(append_wait(a, "d2", NULL), DSIG_OK);

    int fd = open(other, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(link(path, moved), 0);   /* the log keeps a name elsewhere, ... */
    assert_int_equal(rename(other, path), 0); /* ... and another file now has its name */
    assert_int_not_equal(append_wait(a, "x1", NULL), DSIG_OK);
    assert_false(serve_audit_ready(a, why, sizeof why));
    assert_non_null(strstr(why, "replaced"));
    assert_int_equal(serve_audit_reopen(a), DSIG_OK);
    hook_attach(path);
    assert_true(wait_ready(a));
    /* x1's sync succeeded into the file now named `moved`: it stays there, not written a second time
     * into the new file (its writer was not released: the path named another file by then). */
    assert_int_equal(count_in_file(moved, "\"kid\":\"x1\""), 1);
    assert_int_equal(count_in_file(path, "\"kid\":\"x1\""), 0);
    assert_int_equal(append_wait(a, "x2", NULL), DSIG_OK);
    assert_true(on_disk("x2"));
    serve_audit_close(a);
    assert_whole_lines(path);
    tmp_clean(dir, path);
}

struct victim {
    struct serve_audit *a;
    int rc;
    int unsafe;                /* released while not whole in the disk model */
};

static void *victim_main(void *arg)
{
    struct victim *v = arg;
    v->rc = append_wait(v->a, "victim", NULL);
    v->unsafe = v->rc == DSIG_OK && !on_disk("victim");
    return NULL;
}

/* Two syncs must never overlap. The log thread's group sync of record "victim" is slow (2 s); meanwhile
 * the log runs 4 MiB behind, so an append syncs under the lock, and that sync fails — dropping the dirty
 * pages, "victim" included. Had it run beside the slow one, that one would then succeed over pages that
 * were dropped (on Linux the error is reported to one of two overlapping syncs only) and credit
 * "victim": released, dropped from memory, never rewritten. Serialized, the second sync waits for the
 * first; whichever fails, "victim" ends up on disk. */
static void test_overlapping_syncs(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    long saved = atomic_exchange(&sync_delay_ns, 2000L * 1000 * 1000);
    unsigned long entered = atomic_load(&syncs_entered);
    struct victim v = {.a = a};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, victim_main, &v), 0);
    while (atomic_load(&syncs_entered) == entered) { /* the slow sync of "victim" has begun */
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&sync_delay_ns, 0);
    set_sync_fail(3); /* the next sync to finish fails */
    char line[SERVE_AUDIT_REC_MAX];
    size_t n = rec(line, "filler");
    for (size_t i = 0; i <= SERVE_AUDIT_MEM_MAX / (n + 1); i++) { /* past the bound: a sync under the lock */
        uint64_t s;
        (void)serve_audit_append(a, line, n, &s);
    }
    pthread_join(th, NULL);
    assert_int_equal(v.unsafe, 0);
    set_sync_fail(0);
    assert_true(wait_ready(a));
    assert_true(on_disk("victim"));
    assert_int_equal(count_in_file(path, "\"kid\":\"victim\""), 1);
    serve_audit_close(a);
    assert_whole_lines(path);
    atomic_store(&sync_delay_ns, saved);
    tmp_clean(dir, path);
}

/* Rotation: rename, then reopen: later records go to the new file, none is lost or doubled — also a
 * record written but still being synced (a slow disk) when the file is renamed and reopened: it is in
 * the old file once, and not written again into the new one. */
static void test_rotation(void **state)
{
    (void)state;
    char dir[64], path[128], moved[160];
    tmp_log(dir, path);
    snprintf(moved, sizeof moved, "%s.1", path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    assert_int_equal(append_wait(a, "old", NULL), DSIG_OK);
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(serve_audit_reopen(a), DSIG_OK);
    hook_attach(path);
    assert_true(wait_ready(a));
    assert_int_equal(append_wait(a, "new", NULL), DSIG_OK);
    serve_audit_close(a);
    assert_int_equal(count_in_file(moved, "\"kid\":\"old\""), 1);
    assert_int_equal(count_in_file(path, "\"kid\":\"old\""), 0);
    assert_int_equal(count_in_file(path, "\"kid\":\"new\""), 1);
    tmp_clean(dir, path);

    tmp_log(dir, path);
    snprintf(moved, sizeof moved, "%s.1", path);
    a = open_log(path, SERVE_SYNC_GROUP, 200);
    long saved = atomic_exchange(&sync_delay_ns, 300L * 1000 * 1000);
    char line[SERVE_AUDIT_REC_MAX];
    uint64_t seq = 0;
    assert_int_equal(serve_audit_append(a, line, rec(line, "inflight"), &seq), DSIG_OK);
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(serve_audit_reopen(a), DSIG_OK);
    (void)serve_audit_wait(a, seq); /* released or not, depending on which sync covered it */
    atomic_store(&sync_delay_ns, saved);
    hook_attach(path);
    assert_true(wait_ready(a));
    assert_int_equal(append_wait(a, "new", NULL), DSIG_OK);
    serve_audit_close(a);
    assert_int_equal(count_in_file(moved, "\"kid\":\"inflight\""), 1);
    assert_int_equal(count_in_file(path, "\"kid\":\"inflight\""), 0);
    assert_int_equal(count_in_file(path, "\"kid\":\"new\""), 1);
    tmp_clean(dir, path);
}

/* While stopped, records are kept up to SERVE_AUDIT_MEM_MAX bytes, then lost (seq 0) — and the
 * recovery event says how many. */
static void test_memory_bound(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 200);
    set_sync_fail(1);
    assert_int_not_equal(append_wait(a, "first", NULL), DSIG_OK);
    char line[SERVE_AUDIT_REC_MAX];
    size_t n = rec(line, "filler"), kept = 0, lost = 0;
    for (size_t i = 0; i < SERVE_AUDIT_MEM_MAX / n + 100; i++) {
        uint64_t s = 0;
        assert_int_not_equal(serve_audit_append(a, line, n, &s), DSIG_OK);
        if (s)
            kept++;
        else
            lost++;
    }
    assert_true(kept > 0 && lost >= 100);
    set_sync_fail(0);
    assert_true(wait_ready(a));
    char needle[64];
    snprintf(needle, sizeof needle, "\"lost\":%zu}", lost);
    assert_int_equal(count_in_file(path, needle), 1);
    serve_audit_close(a);
    tmp_clean(dir, path);
}

/* One writer alone waits for one sync, not for a timer: interval_ms (10 s here) is not on the path. */
static void test_group_commit_no_timer(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_GROUP, 10000);
    uint64_t t0 = serve_now_ns();
    for (int i = 0; i < 5; i++)
        assert_int_equal(append_wait(a, "t", NULL), DSIG_OK);
    uint64_t dt = serve_now_ns() - t0;
    assert_true(dt < 5ull * 1000 * 1000 * 1000); /* 5 syncs of ~2 ms, nowhere near 5 × 10 s */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(disk_len, st.st_size);
    pthread_mutex_unlock(&hook_mu);
    serve_audit_close(a);
    tmp_clean(dir, path);
}

/* "always": the writer syncs its own record; "none": no sync until close; "interval": written at
 * once, synced by the thread; none of them releases while the log is stopped. */
static void test_always_interval_none(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    struct serve_audit *a = open_log(path, SERVE_SYNC_ALWAYS, 0);
    assert_int_equal(append_wait(a, "al", NULL), DSIG_OK);
    assert_true(on_disk("al"));
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(nsyncs, 1);
    pthread_mutex_unlock(&hook_mu);
    set_sync_fail(1);
    assert_int_not_equal(append_wait(a, "al2", NULL), DSIG_OK);
    set_sync_fail(0);
    assert_true(wait_ready(a));
    serve_audit_close(a);
    tmp_clean(dir, path);

    tmp_log(dir, path);
    a = open_log(path, SERVE_SYNC_NONE, 0);
    assert_int_equal(append_wait(a, "no", NULL), DSIG_OK);
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(nsyncs, 0);
    pthread_mutex_unlock(&hook_mu);
    serve_audit_close(a); /* flushed on close */
    pthread_mutex_lock(&hook_mu);
    assert_int_equal(nsyncs, 1);
    pthread_mutex_unlock(&hook_mu);
    tmp_clean(dir, path);

    tmp_log(dir, path);
    a = open_log(path, SERVE_SYNC_INTERVAL, 20);
    assert_int_equal(append_wait(a, "iv", NULL), DSIG_OK);
    for (int i = 0; i < 200 && !on_disk("iv"); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(on_disk("iv"));
    char moved[160];
    snprintf(moved, sizeof moved, "%s.1", path);
    assert_int_equal(rename(path, moved), 0); /* found by the next flush: then nothing is released */
    int refused = 0;
    for (int i = 0; i < 300 && !refused; i++) {
        refused = append_wait(a, "iv2", NULL) != DSIG_OK;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(refused);
    assert_int_equal(rename(moved, path), 0);
    assert_true(wait_ready(a));
    serve_audit_close(a);
    tmp_clean(dir, path);
}

/* An existing log readable by others is tightened to 0600 at open and at reopen; a symlink is refused. */
static void test_mode_and_symlink(void **state)
{
    (void)state;
    char dir[64], path[128];
    tmp_log(dir, path);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);
    struct serve_audit *a = NULL;
    assert_int_equal(serve_audit_open(&a, path, SERVE_SYNC_GROUP, 0), DSIG_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(chmod(path, 0666), 0); /* rotation tooling left a wide mode */
    assert_int_equal(serve_audit_reopen(a), DSIG_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    serve_audit_close(a);

    char link[160];
    snprintf(link, sizeof link, "%s/link.log", dir);
    assert_int_equal(symlink(path, link), 0);
    a = NULL;
    assert_int_not_equal(serve_audit_open(&a, link, SERVE_SYNC_GROUP, 0), DSIG_OK);
    assert_null(a);
    assert_non_null(strstr(dsig_last_error_detail(), "link.log"));
    unlink(link);
    tmp_clean(dir, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_commit_never_releases_unsynced),
        cmocka_unit_test(test_failing_syncs_release_nothing),
        cmocka_unit_test(test_random_sync_failures),
        cmocka_unit_test(test_overlapping_syncs),
        cmocka_unit_test(test_short_write_and_full_disk),
        cmocka_unit_test(test_deleted_renamed_replaced),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_group_commit_no_timer),
        cmocka_unit_test(test_always_interval_none),
        cmocka_unit_test(test_mode_and_symlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

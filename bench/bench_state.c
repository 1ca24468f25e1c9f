/*
 * bench/bench_state.c — state-file keys for the benchmarks (bench_state.h).
 *
 * Layout of the private directory (mkdtemp in $TMPDIR or /tmp, mode 0700):
 *   DIR/kN.state   one state file per benchmark key (N = a per-process counter)
 *   DIR/hwm/       the high-water registry of those keys (one file per key, named by its thumbprint)
 * The registry is a real one (not registry_dir = ""), so a reservation costs what it costs users:
 * the state file's write + fsync + rename + directory fsync, then the registry's fdatasync.
 *
 * Cleanup: every path is recorded when it is made, in fixed arrays, so the signal handler can unlink
 * them with async-signal-safe calls only (unlink, rmdir); atexit and bench_state_end do the same and
 * also sweep the directories with readdir for anything the library made that was not recorded.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_internal.h"
#include "bench_state.h"
#include "dsig/jwk.h"

/* The parameter sets of the "main parameter sets", spelled out (the implicit default of
 * HSS-LMS is two levels of H10/W4; it is passed explicitly so the row says what it measured). */
static const bench_pset sets_hss[] = {
    {"HSS-LMS", "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4",
     "HSS-LMS:2xH10/W4"},
    {"HSS-LMS", "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4", "HSS-LMS:H10/W4"},
};
static const bench_pset sets_xmss[] = {{"XMSS", "XMSS-SHA2_10_256", "XMSS-SHA2_10_256"}};
static const bench_pset sets_xmssmt[] = {{"XMSSMT", "XMSSMT-SHA2_20/4_256", "XMSSMT-SHA2_20/4_256"}};

/* Parameter sets of a stateful algorithm, by registry name. */
size_t bench_state_sets(const dsig_alg *alg, const bench_pset **sets)
{
    const char *name = dsig_alg_name(alg);
    *sets = NULL;
    if (strcmp(name, "HSS-LMS") == 0)
        *sets = sets_hss;
    else if (strcmp(name, "XMSS") == 0)
        *sets = sets_xmss;
    else if (strcmp(name, "XMSSMT") == 0)
        *sets = sets_xmssmt;
    if (*sets == sets_hss)
        return sizeof sets_hss / sizeof sets_hss[0];
    return *sets ? 1 : 0;
}

#define MAX_FILES 256
#define PATH_CAP 512

/* Everything the cleanup needs, in static storage (readable from a signal handler). */
static char g_dir[PATH_CAP], g_hwm[PATH_CAP + 8];
static char g_files[MAX_FILES][PATH_CAP + 64];
static volatile sig_atomic_t g_nfiles;
static uint64_t g_next_key;
static int g_hooks;

/* Remember a path to unlink at the end (silently not recorded past MAX_FILES: the sweep gets it). */
static void record(const char *path)
{
    if (g_nfiles < MAX_FILES && strlen(path) < sizeof g_files[0]) {
        memcpy(g_files[g_nfiles], path, strlen(path) + 1);
        g_nfiles++;
    }
}

/* Unlink the recorded files and remove the directories: async-signal-safe calls only. */
static void remove_recorded(void)
{
    for (sig_atomic_t i = 0; i < g_nfiles; i++)
        unlink(g_files[i]);
    if (g_hwm[0])
        rmdir(g_hwm);
    if (g_dir[0])
        rmdir(g_dir);
}

/* Unlink every entry of a directory (not recursive: both directories are flat). */
static void sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[PATH_CAP + 256];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "hwm") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

void bench_state_end(void)
{
    if (!g_dir[0])
        return;
    remove_recorded();
    sweep(g_hwm);
    sweep(g_dir);
    rmdir(g_hwm);
    rmdir(g_dir);
    g_dir[0] = g_hwm[0] = '\0';
    g_nfiles = 0;
}

/* SIGINT/SIGTERM/SIGHUP: remove the files, then die of the same signal (default action). */
static void on_signal(int sig)
{
    remove_recorded();
    signal(sig, SIG_DFL);
    raise(sig);
}

int bench_state_begin(char *err, size_t len)
{
    if (g_dir[0])
        return 0;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > PATH_CAP - 64)
        tmp = "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/dsig-bench-state-XXXXXX", tmp);
    if (!mkdtemp(g_dir)) {
        int e = errno;
        g_dir[0] = '\0';
        return bench_fail(err, len, "cannot create a private directory for state files in %s: %s", tmp,
                          strerror(e));
    }
    snprintf(g_hwm, sizeof g_hwm, "%s/hwm", g_dir);
    if (mkdir(g_hwm, 0700) != 0) {
        int e = errno;
        g_hwm[0] = '\0';
        bench_state_end();
        return bench_fail(err, len, "cannot create %s/hwm: %s", g_dir, strerror(e));
    }
    if (!g_hooks) {
        g_hooks = 1;
        atexit(bench_state_end);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            struct sigaction old;
            /* Do not override a handler the embedding program installed (or an ignored signal). */
            if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
                sigaction(sigs[i], &sa, NULL);
        }
    }
    return 0;
}

const char *bench_state_dir(void) { return g_dir; }

int bench_state_key(const dsig_alg *alg, const bench_pset *ps, uint64_t seed, uint64_t counter,
                    uint32_t reserve, dsig_key **sign_key, dsig_key **verify_key, double *keygen_ms)
{
    char path[PATH_CAP + 32], tmp[PATH_CAP + 40], err[256];
    *sign_key = *verify_key = NULL;
    if (bench_state_begin(err, sizeof err) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        return DSIG_E_IO;
    }
    snprintf(path, sizeof path, "%s/k%llu.state", g_dir, (unsigned long long)g_next_key++);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    record(path);
    record(tmp); /* an update interrupted by a signal leaves FILE.tmp */
    uint8_t ks[32];
    bench_key_seed(ks, seed, counter);
    dsig_keygen_params params = {.seed = ks, .seed_len = sizeof ks, .param = ps->param};
    dsig_state_opts so = {.reserve = reserve, .registry_dir = g_hwm};
    /* The key's high-water file is named after its thumbprint, known only once the key exists: hold
     * the cleanup signals until it is recorded, or one arriving in between leaves that file (and so
     * the directory) behind. */
    sigset_t block, prev;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &prev);
    double t0 = bench_now_ms();
    int rc = dsig_state_create(sign_key, path, alg, &params, &so);
    double t1 = bench_now_ms();
    dsig_memzero(ks, sizeof ks);
    if (keygen_ms)
        *keygen_ms = t1 - t0;
    char thumb[DSIG_THUMBPRINT_LEN];
    if (rc == DSIG_OK && dsig_jwk_thumbprint(*sign_key, thumb) == DSIG_OK) {
        char reg[PATH_CAP + 8 + DSIG_THUMBPRINT_LEN + 2];
        snprintf(reg, sizeof reg, "%s/%s", g_hwm, thumb);
        record(reg);
    }
    sigprocmask(SIG_SETMASK, &prev, NULL);
    if (rc)
        return rc;
    rc = dsig_key_public(verify_key, *sign_key);
    if (rc) {
        dsig_key_free(*sign_key);
        *sign_key = NULL;
    }
    return rc;
}

uint64_t bench_state_remaining(const dsig_key *sign_key)
{
    uint64_t r = 0;
    return dsig_state_remaining(sign_key, &r) == DSIG_OK ? r : 0;
}

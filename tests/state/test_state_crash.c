/*
 * Crash test of the state file with the real HSS-LMS provider: signer processes are
 * SIGKILLed at random moments hundreds of times; every signature they ever wrote is collected and
 * the test proves
 *   (a) no index was used twice (q parsed from each HSS signature, RFC 8554 §6.2 / §4.7 / §5.4),
 *   (b) every complete signature verifies,
 *   (c) at most the reserved window was lost per crash (counter after - counter before - signatures
 *       made <= reserve), and the next process starts exactly where the file says;
 * plus: two concurrent signers on one key cannot both sign.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* Three levels of H5: capacity 32768, cheap loads (the provider rebuilds 3 small trees per open). */
#define PARAM "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4," \
              "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4"
#define MAX_SIGS_PER_CHILD 24
#ifdef __SANITIZE_ADDRESS__
#define KILLS 200 /* ASan is ~3x slower: stay well under a minute */
#else
#define KILLS 300
#endif

static char dir[256], statepath[300], regdir[300];
static const dsig_alg *hss;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The leaf index of an HSS signature (RFC 8554 §6.2: Nspk, then per level an LMS signature
 * q || LM-OTS signature || type || path, and the next level's public key): the q of every level
 * combined, ((q0 * 2^h1) + q1) * 2^h2 + q2 ... SHA-256/M32/N32 sets only. Returns -1 if the
 * bytes do not have that structure (a torn record).
 */
static int64_t hss_index(const uint8_t *sig, size_t len)
{
    static const unsigned ots_p[5] = {0, 265, 133, 67, 34};   /* typecodes 1..4: W1, W2, W4, W8 */
    static const unsigned lms_h[10] = {0, 0, 0, 0, 0, 5, 10, 15, 20, 25}; /* typecodes 5..9 */
    if (len < 4)
        return -1;
    uint32_t levels = be32(sig) + 1;
    size_t off = 4;
    int64_t idx = 0;
    for (uint32_t i = 0; i < levels; i++) {
        if (off + 8 > len)
            return -1;
        uint32_t q = be32(sig + off), ot = be32(sig + off + 4);
        if (ot < 1 || ot > 4)
            return -1;
        size_t ots_len = 4 + 32 + (size_t)ots_p[ot] * 32;
        if (off + 4 + ots_len + 4 > len)
            return -1;
        uint32_t lt = be32(sig + off + 4 + ots_len);
        if (lt < 5 || lt > 9)
            return -1;
        unsigned h = lms_h[lt];
        if (q >= (1u << h))
            return -1;
        idx = (idx << h) | q;
        off += 4 + ots_len + 4 + (size_t)h * 32;
        if (i + 1 < levels)
            off += 24 + 32;
    }
    return off == len ? idx : -1;
}

/* Counter field of the state file (docs/state.md: the 8 bytes before the 32-byte checksum). */
static uint64_t file_counter(void)
{
    int fd = open(statepath, O_RDONLY);
    assert_true(fd >= 0);
    uint8_t b[4096];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    assert_true(n > 40);
    uint64_t v = 0;
    for (ssize_t i = n - 40; i < n - 32; i++)
        v = v << 8 | b[i];
    return v;
}

/* Child: open the state with `reserve`, sign up to MAX_SIGS_PER_CHILD messages, append each
 * signature to `out` with one write() (what a crash can leave: whole records and one torn one). */
static void child_sign(uint32_t reserve, const char *out, int iter)
{
    dsig_state_opts o = {.reserve = reserve, .registry_dir = regdir};
    dsig_key *k = NULL;
    if (dsig_state_open(&k, statepath, &o) != DSIG_OK)
        _exit(3);
    int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0)
        _exit(4);
    uint8_t sig[16384];
    for (int i = 0; i < MAX_SIGS_PER_CHILD; i++) {
        char msg[64];
        int ml = snprintf(msg, sizeof msg, "message %d/%d", iter, i);
        size_t sl;
        int rc = dsig_sign(hss, k, msg, (size_t)ml, sig, sizeof sig, &sl);
        if (rc != DSIG_OK)
            _exit(rc == DSIG_E_EXHAUSTED ? 5 : 6);
        if (write(fd, sig, sl) != (ssize_t)sl)
            _exit(7);
    }
    _exit(0);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Fork a signer; kill it after delay_ns (0 = let it finish). Returns its wait status. */
static int run_child(uint32_t reserve, const char *out, int iter, uint64_t delay_ns)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_sign(reserve, out, iter);
    if (delay_ns) {
        struct timespec ts = {(time_t)(delay_ns / 1000000000u), (long)(delay_ns % 1000000000u)};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_crash(void **state)
{
    (void)state;
    dsig_keygen_params kp = {.param = PARAM};
    dsig_state_opts o = {.registry_dir = regdir};
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_state_create(&k, statepath, hss, &kp, &o), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    uint64_t cap;
    assert_int_equal(dsig_state_remaining(k, &cap), DSIG_OK);
    assert_int_equal(cap, 32768);
    dsig_key_free(k);

    /* Calibrate: the fastest of three uninterrupted children (one slow outlier on a loaded machine
     * would stretch every delay past the children's lives); kills then land anywhere in
     * [0, 1.3 x that lifetime]. */
    char out[400];
    snprintf(out, sizeof out, "%s/calib.sigs", dir);
    uint64_t life = UINT64_MAX;
    int st;
    for (int c = 0; c < 3; c++) {
        uint64_t t0 = now_ns();
        st = run_child(8, out, -1, 0);
        uint64_t l = now_ns() - t0;
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        life = l < life ? l : life;
        unlink(out); /* its indices are counted by the counter below */
    }

    size_t max_sigs = (size_t)KILLS * MAX_SIGS_PER_CHILD;
    int64_t *seen = malloc(max_sigs * sizeof *seen);
    size_t nseen = 0, torn = 0, killed = 0, lost_total = 0;
    uint8_t *buf = malloc(MAX_SIGS_PER_CHILD * 16384);
    srand(12345);
    for (int iter = 0; iter < KILLS; iter++) {
        uint32_t reserve = 1 + (uint32_t)(rand() % 8);
        uint64_t before = file_counter();
        uint64_t delay = 1 + (uint64_t)((double)rand() / RAND_MAX * 1.3 * (double)life);
        snprintf(out, sizeof out, "%s/%d.sigs", dir, iter);
        st = run_child(reserve, out, iter, delay);
        if (WIFSIGNALED(st))
            killed++;
        else
            assert_int_equal(WEXITSTATUS(st), 0);
        uint64_t after = file_counter();
        /* Collect every record this child wrote. */
        size_t n = 0, used = 0;
        int fd = open(out, O_RDONLY);
        if (fd >= 0) {
            ssize_t r;
            while ((r = read(fd, buf + n, MAX_SIGS_PER_CHILD * 16384 - n)) > 0)
                n += (size_t)r;
            close(fd);
        }
        size_t siglen = 0;
        for (size_t off = 0; off < n;) {
            /* Records are back to back and of one length: find it from the first one. */
            if (!siglen) {
                for (size_t l = 4; l <= n; l++)
                    if (hss_index(buf, l) >= 0) {
                        siglen = l;
                        break;
                    }
                if (!siglen) {
                    torn++;
                    break;
                }
            }
            if (off + siglen > n) {
                torn++; /* the record being written at the kill */
                break;
            }
            int64_t q = hss_index(buf + off, siglen);
            assert_true(q >= 0);
            /* (c) the child signs only inside [before, after): what the file had reserved. */
            assert_true((uint64_t)q >= before && (uint64_t)q < after);
            char msg[64];
            int ml = snprintf(msg, sizeof msg, "message %d/%zu", iter, used);
            /* (b) every complete signature verifies (over the message of its position). */
            assert_int_equal(dsig_verify(hss, pub, msg, (size_t)ml, buf + off, siglen), DSIG_OK);
            seen[nseen++] = q;
            used++;
            off += siglen;
        }
        /* (c) at most one window lost by this crash. */
        assert_true(after >= before + used);
        size_t lost = (size_t)(after - before - used);
        if (lost > reserve)
            fail_msg("iteration %d: %zu indices lost with a window of %u (counter %llu -> %llu, %zu "
                     "signatures)", iter, lost, reserve, (unsigned long long)before,
                     (unsigned long long)after, used);
        lost_total += lost;
        unlink(out);
    }
    /* (a) no index twice. */
    qsort(seen, nseen, sizeof *seen, cmp_i64);
    for (size_t i = 1; i < nseen; i++)
        if (seen[i] == seen[i - 1])
            fail_msg("index %lld used twice", (long long)seen[i]);
    print_message("%d runs, %zu killed, %zu signatures collected and verified, %zu torn records, "
                  "%zu indices lost in windows; final counter %llu\n", KILLS, killed, nseen, torn,
                  lost_total, (unsigned long long)file_counter());
    /* The kills really landed while signing: about 1/1.3 of them when the calibration holds; a
     * quarter leaves room for a machine whose speed changes during the test. */
    assert_true(killed >= KILLS / 4);
    free(seen);
    free(buf);
    dsig_key_free(pub);
}

/* Two signers on one key: the second (another process) cannot open it while the first holds it. */
static void test_concurrent_signers(void **state)
{
    (void)state;
    dsig_state_opts o = {.reserve = 4, .registry_dir = regdir};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_open(&k, statepath, &o), DSIG_OK);
    uint8_t sig[16384];
    size_t sl;
    assert_int_equal(dsig_sign(hss, k, "a", 1, sig, sizeof sig, &sl), DSIG_OK);
    pid_t pid = fork();
    if (pid == 0) {
        dsig_key *c = NULL;
        int rc = dsig_state_open(&c, statepath, &o);
        _exit(rc == DSIG_E_STATE && strstr(dsig_last_error_detail(), "in use") ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* The same in this process. */
    dsig_key *k2 = NULL;
    assert_int_equal(dsig_state_open(&k2, statepath, &o), DSIG_E_STATE);
    dsig_key_free(k);
    /* A key generated in memory (or read from its JWK) verifies but never signs. */
    dsig_keygen_params kp = {.param = "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"};
    assert_int_equal(dsig_key_generate(&k, hss, &kp), DSIG_OK);
    assert_int_equal(dsig_sign(hss, k, "a", 1, sig, sizeof sig, &sl), DSIG_E_STATE);
    dsig_key_free(k);
}

static int setup(void **state)
{
    (void)state;
    hss = dsig_alg_by_name("HSS-LMS");
    if (!hss) {
        print_message("HSS-LMS is not registered: skipped\n");
        return 0;
    }
    snprintf(dir, sizeof dir, "%s/dsig-crash-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(statepath, sizeof statepath, "%s/k.state", dir);
    snprintf(regdir, sizeof regdir, "%s/registry", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!hss)
        return 0;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crash),
        cmocka_unit_test(test_concurrent_signers),
    };
    if (!dsig_alg_by_name("HSS-LMS")) {
        printf("HSS-LMS is not registered: skipped\n");
        return 0;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}

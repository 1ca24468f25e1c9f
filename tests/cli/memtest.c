/*
 * cli_memtest — the tool's memory does not grow with the payload: `dsig sign` and `dsig verify` are
 * run on 1 GiB fed through a pipe in 64 KiB writes, and each child's peak RSS (wait4 ru_maxrss) must
 * stay under 16 MiB. Ed25519 (one pass) and ES256. Keys come from the library, in a mkdtemp dir.
 * Labelled "no-asan": AddressSanitizer's shadow memory would inflate RSS.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define FEED_CHUNK (64u * 1024u)
#define FEED_TOTAL (1024ull * 1024ull * 1024ull)
#define RSS_LIMIT_KIB (16l * 1024l)

/* Write a whole buffer to a new file. */
static void write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

/* Run the tool with 1 GiB on its stdin; return its exit status and peak RSS in KiB. */
static int run_fed(char *const argv[], long *maxrss_kib)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[0], STDIN_FILENO);
        close(p[0]);
        close(p[1]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[0]);
    static uint8_t block[FEED_CHUNK];
    tu_fill(block, sizeof block, 42);
    int write_failed = 0;
    for (uint64_t sent = 0; sent < FEED_TOTAL && !write_failed; sent += FEED_CHUNK) {
        memcpy(block, &sent, sizeof sent); /* every block differs */
        size_t off = 0;
        while (off < FEED_CHUNK) {
            ssize_t w = write(p[1], block + off, FEED_CHUNK - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                write_failed = 1; /* the child died early: its status tells why */
                break;
            }
            off += (size_t)w;
        }
    }
    close(p[1]);
    int status = 0;
    struct rusage ru;
    assert_int_equal(wait4(pid, &status, 0, &ru), pid);
    *maxrss_kib = ru.ru_maxrss;
    assert_false(write_failed);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Sign then verify 1 GiB with a fresh key for `name`, checking peak RSS of both runs. */
static void check_alg(const char *name)
{
#ifdef DSIG_MEMTEST_SANITIZED
    skip(); /* sanitizers inflate RSS; `make check-asan` excludes the "no-asan" label anyway */
#endif
    const char *tool = getenv("DSIG_TOOL");
    if (!tool || access(tool, X_OK) != 0) {
        print_message("DSIG_TOOL is not set to an executable\n");
        fail();
    }
    const dsig_alg *alg = dsig_alg_by_name(name);
    if (!alg) {
        print_message("%s is not registered: skipped\n", name);
        skip();
    }
    char dir[] = "/tmp/dsig-memtest.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char key_path[64], pub_path[64], sig_path[64];
    snprintf(key_path, sizeof key_path, "%s/key.jwk", dir);
    snprintf(pub_path, sizeof pub_path, "%s/pub.jwk", dir);
    snprintf(sig_path, sizeof sig_path, "%s/sig.jws", dir);

    dsig_key *key = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&key, alg, NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, key), DSIG_OK);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(dsig_jwk_export(key, 1, &text, &len), DSIG_OK);
    write_file(key_path, text, len);
    dsig_free(text);
    assert_int_equal(dsig_jwk_export(pub, 0, &text, &len), DSIG_OK);
    write_file(pub_path, text, len);
    dsig_free(text);
    dsig_key_free(pub);
    dsig_key_free(key);

    long rss = 0;
    char *sign_argv[] = {(char *)tool, "sign", "--quiet", "-k", key_path, "-o", sig_path, NULL};
    assert_int_equal(run_fed(sign_argv, &rss), 0);
    print_message("%s sign of 1 GiB from a pipe: peak RSS %ld KiB\n", name, rss);
    assert_true(rss < RSS_LIMIT_KIB);

    char *verify_argv[] = {(char *)tool, "verify", "--quiet", "-k", pub_path, "-s", sig_path, "-", NULL};
    assert_int_equal(run_fed(verify_argv, &rss), 0);
    print_message("%s verify of 1 GiB from a pipe: peak RSS %ld KiB\n", name, rss);
    assert_true(rss < RSS_LIMIT_KIB);

    unlink(key_path);
    unlink(pub_path);
    unlink(sig_path);
    rmdir(dir);
}

static void test_ed25519(void **state)
{
    (void)state;
    check_alg("Ed25519");
}

static void test_es256(void **state)
{
    (void)state;
    check_alg("ES256");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a child that exits early must show up as a status, not kill us */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ed25519),
        cmocka_unit_test(test_es256),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

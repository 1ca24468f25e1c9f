/*
 * Fuzz target: state files of stateful keys (src/core/statefile.c: magic, algorithm name, public key,
 * the provider's private material, counter, SHA-256 checksum; then the LMS/HSS or XMSS provider's
 * check_private and load_private). The input is
 *
 *   byte 0   flags: bit 0 = recompute the checksum over the mutated image (else a mutation almost always
 *            stops at the checksum, and the length fields and providers' parsers would go unfuzzed),
 *            bit 1 = sign one message after opening, bit 2 = reopen after closing
 *   rest     the file image, written to a private temporary directory with mode 0600
 *
 * Invariants (abort on violation): a refused file says why; a file that opens reports signatures
 * remaining; its signature (which reserves an index durably: the file is rewritten) verifies under its
 * public key; the rewritten file reopens, with fewer signatures remaining, and never hands out the index
 * already used (the second signature differs from the first).
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "fuzz_common.h"

#define FSF_MAX_INPUT 65536u

static char path[300];

static void setup(void)
{
    if (!path[0])
        snprintf(path, sizeof path, "%s/key.state", fuzz_tmpdir("statefile"));
}

static void write_file(const uint8_t *d, size_t n)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    FUZZ_CHECK(fd >= 0 && write(fd, d, n) == (ssize_t)n && close(fd) == 0, "cannot write %s", path);
}

/* Sign "state" with an open stateful key; the signature must verify under the public part. */
static void sign_check(const dsig_key *k, uint8_t *sig, size_t cap, size_t *sl)
{
    const dsig_alg *a = dsig_key_alg(k);
    FUZZ_CHECK(a != NULL, "an opened state file has no algorithm");
    int rc = dsig_sign(a, k, "state", 5, sig, cap, sl);
    if (rc == DSIG_E_EXHAUSTED)
        return;
    FUZZ_CHECK(rc == DSIG_OK, "an opened state file cannot sign: %d (%s)", rc, dsig_last_error_detail());
    dsig_key *pub;
    FUZZ_CHECK(dsig_key_public(&pub, k) == DSIG_OK, "public part");
    rc = dsig_verify(a, pub, "state", 5, sig, *sl);
    FUZZ_CHECK(rc == DSIG_OK, "the signature of an opened state file does not verify: %d (%s)", rc,
               dsig_last_error_detail());
    dsig_key_free(pub);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FSF_MAX_INPUT)
        return 0;
    setup();
    const unsigned flags = data[0];
    uint8_t *img = fuzz_dup(data + 1, size - 1);
    size_t n = size - 1;
    if ((flags & 1) && n > 32)
        SHA256(img, n - 32, img + n - 32);
    write_file(img, n);
    (void)dsig_state_is_state_file(path);
    const dsig_state_opts so = {.registry_dir = "", .reserve = 1 + (flags >> 4)};
    dsig_key *k = NULL;
    int rc = dsig_state_open(&k, path, &so);
    if (rc) {
        fuzz_check_detail(rc, "dsig_state_open");
    } else {
        uint64_t left = 0, left2 = 0;
        FUZZ_CHECK(dsig_state_remaining(k, &left) == DSIG_OK, "remaining of an open state file");
        uint8_t *s1 = NULL, *s2 = NULL;
        size_t l1 = 0, l2 = 0, cap = dsig_alg_sig_max(dsig_key_alg(k));
        if (flags & 2) {
            s1 = malloc(cap);
            FUZZ_CHECK(s1 != NULL, "out of memory");
            sign_check(k, s1, cap, &l1);
        }
        const dsig_alg *a = dsig_key_alg(k);
        dsig_key_free(k);
        if ((flags & 4) && l1) {
            rc = dsig_state_open(&k, path, &so);
            FUZZ_CHECK(rc == DSIG_OK, "a state file rewritten by its own reservation does not reopen: %s",
                       dsig_last_error_detail());
            FUZZ_CHECK(dsig_state_remaining(k, &left2) == DSIG_OK && left2 < left,
                       "remaining after a signature: %llu, before %llu", (unsigned long long)left2,
                       (unsigned long long)left);
            FUZZ_CHECK(dsig_key_alg(k) == a, "the reopened state file has another algorithm");
            s2 = malloc(cap);
            FUZZ_CHECK(s2 != NULL, "out of memory");
            sign_check(k, s2, cap, &l2);
            FUZZ_CHECK(!l2 || l1 != l2 || memcmp(s1, s2, l1) != 0, "the same signature (one-time key) twice");
            dsig_key_free(k);
        }
        free(s1);
        free(s2);
    }
    free(img);
    return 0;
}

/* Seeds: a fresh state file of each stateful algorithm that has a parameter set opening in
 * milliseconds (HSS-LMS H5/W1: 32 leaves), and the same file after one signature (counter and
 * reservation moved). XMSS and XMSS^MT have none — their smallest trees take 0.3 s (XMSSMT-SHA2_20/4)
 * and 1.5 s (XMSS-SHA2_10) to rebuild under ASan at every open, which would make every mutant that
 * passes the checksum cost that much; the dictionary's names and OIDs lead the fuzzer to their
 * private-material parsers (check_private refuses inconsistent material before any rebuild). */
static void seeds(void)
{
    setup();
    static const char *const params[] = {"H5/W1"};
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (!(dsig_alg_flags(a) & DSIG_ALG_STATEFUL))
            continue;
        for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
            static const uint8_t seed[32] = "dsig fuzz state-file seed......";
            dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed, .param = params[p]};
            const dsig_state_opts so = {.registry_dir = ""};
            dsig_key *k;
            unlink(path);
            if (dsig_state_create(&k, path, a, &kp, &so) != DSIG_OK)
                continue;
            for (int signed_once = 0; signed_once < 2; signed_once++) {
                if (signed_once) {
                    static uint8_t sig[65536];
                    size_t sl;
                    if (dsig_sign(a, k, "seed", 4, sig, sizeof sig, &sl) != DSIG_OK)
                        break;
                }
                static uint8_t img[FSF_MAX_INPUT];
                int fd = open(path, O_RDONLY);
                ssize_t r = fd >= 0 ? read(fd, img, sizeof img) : -1;
                if (fd >= 0)
                    close(fd);
                if (r <= 0)
                    break;
                const uint8_t fl = (uint8_t)(signed_once ? 7 : 1);
                fuzz_seed2(&fl, 1, img, (size_t)r);
            }
            dsig_key_free(k);
            break;
        }
    }
}

FUZZ_SEED_GENERATOR(seeds)

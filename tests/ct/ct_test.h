/*
 * tests/ct/ct_test.h — what the ctgrind tests share: the secret base64url decode at which private key
 * material enters them, and the self-check: a deliberate branch on bytes that must
 * be secret (derived from a marked key), which memcheck must report. A test's `--self-check` probes
 * the outputs of every path it checks, before they are declassified: if the secrecy of the key got
 * lost on the way (a back-end memcheck does not track, a copy through an unmarked buffer), the probe
 * is not reported and the test would prove nothing about that path.
 */
#ifndef DSIG_TESTS_CT_TEST_H
#define DSIG_TESTS_CT_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "core/ct.h"
#include "core/internal.h"

/* Private key bytes as a JWK member carries them: raw is encoded to base64url, the text marked secret
 * and decoded into out (the decoder sees the secret characters, as a JWK import does); raw is wiped.
 * 0 on success. */
static inline int ct_secret_from_b64(uint8_t *raw, size_t n, uint8_t *out, size_t cap)
{
    char b64[256];
    if (dsig_b64url_encoded_len(n) >= sizeof b64)
        return 1;
    dsig_b64url_encode(b64, raw, n);
    dsig_memzero(raw, n);
    const size_t b64_len = strlen(b64); /* public */
    DSIG_CT_SECRET(b64, b64_len);
    size_t got = 0;
    int rc = dsig_b64url_decode(b64, b64_len, out, cap, &got);
    DSIG_CT_DECLASSIFY(&rc, sizeof rc);
    DSIG_CT_DECLASSIFY(&got, sizeof got);
    return rc != DSIG_OK || got != n;
}

static unsigned ct_probes, ct_probes_reported;

/* Branch on p[0]; counts whether memcheck reported it (VALGRIND_COUNT_ERRORS went up). */
static inline void ct_probe(const void *p, const char *what)
{
    unsigned before = VALGRIND_COUNT_ERRORS;
    volatile int r = 0;
    if (((const volatile uint8_t *)p)[0] & 1) /* a secret-dependent branch, on purpose */
        r = 1;
    (void)r;
    ct_probes++;
    if (VALGRIND_COUNT_ERRORS > before)
        ct_probes_reported++;
    else
        fprintf(stderr, "ct self-check: the branch on %s was NOT reported (its secrecy was lost)\n", what);
}

/* The line expect_leak.sh looks for: printed only when every probe was reported. */
static inline int ct_probe_summary(void)
{
    if (ct_probes && ct_probes == ct_probes_reported)
        printf("ct self-check: all %u probes reported\n", ct_probes);
    return ct_probes && ct_probes == ct_probes_reported ? 0 : 3;
}

#endif

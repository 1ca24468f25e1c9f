/*
 * tests/ct/ct_probe.h — the self-check of the ctgrind tests: a deliberate branch on bytes that must
 * be secret (derived from a marked key), which memcheck must report. A test's `--self-check` probes
 * the outputs of every path it checks, before they are declassified: if the secrecy of the key got
 * lost on the way (a back-end memcheck does not track, a copy through an unmarked buffer), the probe
 * is not reported and the test would prove nothing about that path.
 */
#ifndef DSIG_TESTS_CT_PROBE_H
#define DSIG_TESTS_CT_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <valgrind/memcheck.h>

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

/*
 * tests/hybrid/test_hb_wipe.c — review regression test: key generation's lock-step chain walk must not
 * leave secret chain values on the stack. After a walk over known level-0 secrets, a later stack frame
 * that reuses the same memory is scanned for any non-top chain level (every level below w−1 is secret:
 * revealing level j of chain i lets anyone sign digit values ≥ j on it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/hb_internal.h"
#include "testutil.h"

#define PROBE 16384

/* Walk every chain of a W-OTS+ key from level 0 to w−1, filling the level table (keygen mode). */
__attribute__((noinline)) static void walk(const dsig_hb_params *p, const uint8_t pk_seed[16], uint8_t *table)
{
    uint16_t ids[HB_MAX_WOTS_CHAINS];
    uint8_t start[HB_MAX_WOTS_CHAINS], stop[HB_MAX_WOTS_CHAINS];
    uint8_t vals[HB_MAX_WOTS_CHAINS * DSIG_HB_WOTS_N];
    for (unsigned i = 0; i < p->chains; i++) {
        ids[i] = (uint16_t)i;
        start[i] = 0;
        stop[i] = (uint8_t)(p->w - 1);
        memcpy(vals + i * p->n, table + (size_t)i * p->w * p->n, p->n);
    }
    hb_chains_walk(p, pk_seed, HB_DOM_WOTS, ids, start, stop, vals, p->chains, table);
    /* this test's own copy of the level-0 values is not what is under test */
    memset(vals, 0, sizeof vals);
    __asm__ __volatile__("" : : "r"(vals) : "memory");
}

/* Copy out the stack memory that the walk's frames used (indeterminate bytes of a fresh frame). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((noinline)) static void grab(uint8_t *dst)
{
    volatile uint8_t probe[PROBE]; /* deliberately read uninitialised: what earlier frames left */
    for (size_t i = 0; i < PROBE; i++)
        dst[i] = probe[i];
}
#pragma GCC diagnostic pop

/* Count the secret (level < w−1) chain values found in buf. */
static int count_secrets(const dsig_hb_params *p, const uint8_t *table, const uint8_t *buf)
{
    int found = 0;
    for (unsigned c = 0; c < p->chains; c++)
        for (unsigned j = 1; j + 1 < p->w; j++) { /* levels 1..w−2: produced inside the walk */
            const uint8_t *v = table + ((size_t)c * p->w + j) * p->n;
            for (size_t o = 0; o + p->n <= PROBE; o++)
                if (buf[o] == v[0] && memcmp(buf + o, v, p->n) == 0) {
                    found++;
                    break;
                }
        }
    return found;
}

static void run(const dsig_hb_params *p)
{
    uint8_t pk_seed[16];
    uint8_t *table = calloc(p->table_bytes, 1), *buf = malloc(PROBE);
    assert_non_null(table);
    assert_non_null(buf);
    for (size_t i = 0; i < 16; i++) pk_seed[i] = (uint8_t)(0xA0 + i);
    for (unsigned c = 0; c < p->chains; c++)
        for (unsigned b = 0; b < p->n; b++) table[(size_t)c * p->w * p->n + b] = (uint8_t)(c * 31 + b * 7 + 1);
    walk(p, pk_seed, table);
    grab(buf);
    int found = count_secrets(p, table, buf);
    if (found) fprintf(stderr, "%s: %d secret chain values left on the stack\n", p->name, found);
    assert_int_equal(found, 0);
    free(table);
    free(buf);
}

static void test_walk_wipes_haraka(void **state)
{
    (void)state;
    run(&dsig_hb_wots16_haraka);
}

static void test_walk_wipes_sha256(void **state)
{
    (void)state;
    run(&dsig_hb_wots4_sha256);
}

static void test_walk_wipes_blake3(void **state)
{
    (void)state;
    run(&dsig_hb_wots4_blake3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_wipes_haraka),
        cmocka_unit_test(test_walk_wipes_sha256),
        cmocka_unit_test(test_walk_wipes_blake3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Haraka v2: the paper's Appendix B known answers (vectors/haraka/haraka_v2.json) on every back-end
 * this CPU has (portable, AES-NI, VAES, and whatever the dispatcher picked), multi-lane forms equal to
 * single calls, portable == AES-NI on 10k random inputs, in-place use, and the back-end name.
 */
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "hash/haraka.h"
#include "hash/haraka_impl.h"
#include "testutil.h"

/* One back-end's entry points, as the tests see them. */
struct backend {
    const char *name;
    unsigned need; /* DSIG_HARAKA_HAVE_* bits required */
    void (*h256)(uint8_t *, const uint8_t *);
    void (*h512)(uint8_t *, const uint8_t *);
    void (*h256_x4)(uint8_t *, const uint8_t *);
    void (*h512_x4)(uint8_t *, const uint8_t *);
    void (*h512_x8)(uint8_t *, const uint8_t *);
};

static const struct backend backends[] = {
    {"portable", DSIG_HARAKA_HAVE_PORTABLE, dsig_haraka256_portable, dsig_haraka512_portable,
     dsig_haraka256_x4_portable, dsig_haraka512_x4_portable, dsig_haraka512_x8_portable},
#if defined(__x86_64__) || defined(__i386__)
    {"aesni", DSIG_HARAKA_HAVE_AESNI, dsig_haraka256_aesni, dsig_haraka512_aesni,
     dsig_haraka256_x4_aesni, dsig_haraka512_x4_aesni, dsig_haraka512_x8_aesni},
    {"vaes", DSIG_HARAKA_HAVE_VAES, dsig_haraka256_aesni, dsig_haraka512_aesni, dsig_haraka256_x4_aesni,
     dsig_haraka512_x4_vaes, dsig_haraka512_x8_vaes},
    {"vaes512", DSIG_HARAKA_HAVE_VAES512, dsig_haraka256_aesni, dsig_haraka512_aesni, dsig_haraka256_x4_aesni,
     dsig_haraka512_x4_vaes512, dsig_haraka512_x8_vaes512},
#endif
    {"dispatch", DSIG_HARAKA_HAVE_PORTABLE, dsig_haraka256, dsig_haraka512, dsig_haraka256_x4,
     dsig_haraka512_x4, dsig_haraka512_x8},
};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

/* Whether back-end b can run on this CPU (honouring DSIG_CPU_DISABLE). */
static int usable(const struct backend *b)
{
    return (dsig_haraka_backends() & b->need) == b->need;
}

/* Check one known answer in every lane position of the multi-lane forms, other lanes random. */
static void check_kat(const struct backend *b, int is512, const uint8_t *in, const uint8_t *want)
{
    size_t inlen = is512 ? 64 : 32;
    uint8_t out[32];
    memset(out, 0, sizeof out);
    (is512 ? b->h512 : b->h256)(out, in);
    if (memcmp(out, want, 32) != 0)
        fail_msg("%s: Haraka-%d known answer mismatch", b->name, is512 ? 512 : 256);

    int lanes_max = is512 ? 8 : 4;
    for (int lanes = 4; lanes <= lanes_max; lanes += 4) {
        void (*multi)(uint8_t *, const uint8_t *) =
            !is512 ? b->h256_x4 : lanes == 4 ? b->h512_x4 : b->h512_x8;
        for (int pos = 0; pos < lanes; pos++) {
            uint8_t batch[8 * 64], outs[8 * 32];
            tu_fill(batch, sizeof batch, 1000 + (uint64_t)pos);
            memcpy(batch + inlen * (size_t)pos, in, inlen);
            multi(outs, batch);
            if (memcmp(outs + 32 * pos, want, 32) != 0)
                fail_msg("%s: Haraka-%d x%d known answer mismatch in lane %d", b->name, is512 ? 512 : 256,
                         lanes, pos);
        }
    }
}

/* @spec Haraka v2 Appendix B: the published outputs, on every usable back-end. */
static void test_haraka_kat(void **state)
{
    (void)state;
    json_t *j = tu_load_json("haraka/haraka_v2.json");
    json_t *tests = json_object_get(j, "tests");
    assert_true(json_array_size(tests) >= 2);
    int seen256 = 0, seen512 = 0, ran = 0;
    size_t i;
    json_t *t;
    json_array_foreach(tests, i, t)
    {
        const char *fn = tu_str(t, "function");
        int is512 = strcmp(fn, "Haraka-512") == 0;
        if (!is512 && strcmp(fn, "Haraka-256") != 0)
            fail_msg("unknown function %s", fn);
        size_t inlen, outlen;
        uint8_t *in = tu_hex(tu_str(t, "input"), &inlen);
        uint8_t *want = tu_hex(tu_str(t, "output"), &outlen);
        assert_int_equal(inlen, is512 ? 64 : 32);
        assert_int_equal(outlen, 32);
        for (size_t k = 0; k < N_BACKENDS; k++)
            if (usable(&backends[k])) {
                check_kat(&backends[k], is512, in, want);
                ran++;
            }
        seen256 += !is512;
        seen512 += is512;
        free(in);
        free(want);
    }
    assert_true(seen256 > 0 && seen512 > 0);
    assert_true(ran >= 4); /* at least portable and dispatch, for both functions */
    json_decref(j);
}

/* Multi-lane forms equal single calls (same back-end and portable) on random inputs. */
static void test_haraka_lanes_random(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_BACKENDS; k++) {
        const struct backend *b = &backends[k];
        if (!usable(b))
            continue;
        int iters = strcmp(b->name, "portable") == 0 ? 4 : 200;
        for (int it = 0; it < iters; it++) {
            uint8_t in[8 * 64], out[8 * 32], one[32];
            tu_fill(in, sizeof in, 7000 + (uint64_t)it);

            b->h256_x4(out, in);
            for (int l = 0; l < 4; l++) {
                b->h256(one, in + 32 * l);
                if (memcmp(one, out + 32 * l, 32) != 0)
                    fail_msg("%s: haraka256_x4 lane %d differs from haraka256", b->name, l);
            }
            b->h512_x4(out, in);
            for (int l = 0; l < 4; l++) {
                b->h512(one, in + 64 * l);
                if (memcmp(one, out + 32 * l, 32) != 0)
                    fail_msg("%s: haraka512_x4 lane %d differs from haraka512", b->name, l);
            }
            b->h512_x8(out, in);
            for (int l = 0; l < 8; l++) {
                b->h512(one, in + 64 * l);
                if (memcmp(one, out + 32 * l, 32) != 0)
                    fail_msg("%s: haraka512_x8 lane %d differs from haraka512", b->name, l);
            }
            if (it < 4) { /* and against the portable reference */
                dsig_haraka512_portable(one, in + 64 * 7);
                assert_memory_equal(one, out + 32 * 7, 32);
            }
        }
    }
}

/* Portable == AES-NI on 10,000 random inputs of each function (chained: each output feeds the next
 * input, so the inputs cover far more than the seed pattern). */
static void test_haraka_portable_vs_aesni(void **state)
{
    (void)state;
#if defined(__x86_64__) || defined(__i386__)
    if (!(dsig_haraka_backends() & DSIG_HARAKA_HAVE_AESNI))
        skip();
    uint8_t in[64], a[32], p[32];
    tu_fill(in, sizeof in, 42);
    for (int i = 0; i < 10000; i++) {
        dsig_haraka256_aesni(a, in);
        dsig_haraka256_portable(p, in);
        if (memcmp(a, p, 32) != 0)
            fail_msg("haraka256 portable != aesni at input %d", i);
        dsig_haraka512_aesni(a, in);
        dsig_haraka512_portable(p, in);
        if (memcmp(a, p, 32) != 0)
            fail_msg("haraka512 portable != aesni at input %d", i);
        /* Next input: fresh pattern in one half, previous output in the other. */
        memcpy(in + (i & 1) * 32, a, 32);
        in[(i * 7) & 63] ^= (uint8_t)i;
    }
#else
    skip();
#endif
}

/* out == in is allowed for every function (chains hash in place). */
static void test_haraka_in_place(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_BACKENDS; k++) {
        const struct backend *b = &backends[k];
        if (!usable(b))
            continue;
        uint8_t in[8 * 64], buf[8 * 64], want[8 * 32];
        tu_fill(in, sizeof in, 99);

        b->h256(want, in);
        memcpy(buf, in, 32);
        b->h256(buf, buf);
        assert_memory_equal(buf, want, 32);

        b->h512(want, in);
        memcpy(buf, in, 64);
        b->h512(buf, buf);
        assert_memory_equal(buf, want, 32);

        b->h256_x4(want, in);
        memcpy(buf, in, 4 * 32);
        b->h256_x4(buf, buf);
        assert_memory_equal(buf, want, 4 * 32);

        b->h512_x4(want, in);
        memcpy(buf, in, 4 * 64);
        b->h512_x4(buf, buf);
        assert_memory_equal(buf, want, 4 * 32);

        b->h512_x8(want, in);
        memcpy(buf, in, 8 * 64);
        b->h512_x8(buf, buf);
        if (memcmp(buf, want, 8 * 32) != 0)
            fail_msg("%s: haraka512_x8 in place differs", b->name);
    }
}

/* The reported back-end matches the CPU features (and DSIG_CPU_DISABLE). */
static void test_haraka_impl_name(void **state)
{
    (void)state;
    const char *name = dsig_haraka_impl();
    unsigned have = dsig_haraka_backends();
    const char *want = (have & DSIG_HARAKA_HAVE_VAES512) ? "aesni+vaes512"
                       : (have & DSIG_HARAKA_HAVE_VAES)  ? "aesni+vaes"
                       : (have & DSIG_HARAKA_HAVE_AESNI) ? "aesni"
                                                         : "portable";
    assert_string_equal(name, want);
    const char *off = getenv("DSIG_CPU_DISABLE");
    if (off && strstr(off, "all"))
        assert_string_equal(name, "portable");
    print_message("haraka back-end: %s (cpu: %s)\n", name, dsig_cpu_describe());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_haraka_kat),       cmocka_unit_test(test_haraka_lanes_random),
        cmocka_unit_test(test_haraka_portable_vs_aesni), cmocka_unit_test(test_haraka_in_place),
        cmocka_unit_test(test_haraka_impl_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

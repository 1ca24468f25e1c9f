/*
 * The tool's wiping allocator for jansson (tools/dsig/jsonalloc.c, compiled here with a test hook
 * that sees every block after its wipe): once installed, every block jansson frees — including
 * those that held a private JWK's members as text — is all zeros before it goes back to malloc.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "testutil.h"

static size_t n_blocks, n_dirty, n_bytes;

/* CLI_JSONALLOC_TEST_HOOK: count the wiped blocks and the ones with any byte left. */
void cli_test_wiped_block(const void *block, size_t len);
void cli_test_wiped_block(const void *block, size_t len)
{
    const unsigned char *p = block;
    unsigned char acc = 0;
    for (size_t i = 0; i < len; i++)
        acc |= p[i];
    n_blocks++;
    n_bytes += len;
    if (acc)
        n_dirty++;
}

static void reset(void)
{
    n_blocks = n_dirty = n_bytes = 0;
}

/* Installed: jansson's functions are ours, blocks are aligned, absurd sizes fail cleanly. */
static void test_installed(void **state)
{
    (void)state;
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    assert_true(m != malloc);
    assert_true(f != free);
    for (size_t n = 0; n < 40; n++) {
        void *p = m(n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
        memset(p, 0xA5, n);
        reset();
        f(p);
        assert_int_equal(n_blocks, 1);
        assert_int_equal(n_dirty, 0);
        assert_true(n_bytes >= n);
    }
    assert_null(m(SIZE_MAX));
    assert_null(m(SIZE_MAX - 8));
    f(NULL);
}

/* A private JWK parsed by jansson directly and through the library: nothing freed unwiped. */
static void test_private_jwk_wiped(void **state)
{
    (void)state;
    static const char jwk[] =
        "{\"kty\":\"oct\",\"k\":\"U0VDUkVULVNFQ1JFVC1TRUNSRVQtU0VDUkVULVNFQ1JFVC0xMjM0NTY3ODkw\","
        "\"alg\":\"HS256\"}";
    reset();
    json_error_t err;
    json_t *j = json_loads(jwk, JSON_REJECT_DUPLICATES, &err);
    assert_non_null(j);
    json_decref(j);
    assert_true(n_blocks > 0);
    assert_int_equal(n_dirty, 0);

    if (!dsig_alg_by_name("HS256"))
        skip();
    reset();
    dsig_key *key = NULL;
    assert_int_equal(dsig_jwk_import(&key, jwk, strlen(jwk)), DSIG_OK);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(dsig_jwk_export(key, 1, &text, &len), DSIG_OK);
    assert_non_null(strstr(text, "\"k\":\"U0VDUkVU"));
    dsig_free(text);
    dsig_key_free(key);
    assert_true(n_blocks > 0); /* the library's jansson calls go through it too */
    assert_int_equal(n_dirty, 0);
}

int main(void)
{
    /* Before any jansson allocation, as the tool's main does. */
    cli_json_wiping_allocator_install();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_installed),
        cmocka_unit_test(test_private_jwk_wiped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

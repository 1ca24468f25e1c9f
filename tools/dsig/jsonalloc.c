/*
 * A wiping allocator for jansson. jansson copies every string it parses through its lexer buffers
 * and string values — for a private JWK that is the base64url text of "d", "p", "q", "k"... — and
 * frees them without clearing them, so key material stays in freed heap memory. The library cannot
 * change jansson's process-wide allocator (it would change it for the whole application); the tool
 * owns its process and can: every block gets a size prefix and is wiped before it is freed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

/* The size prefix, padded so that the block handed to jansson keeps malloc's alignment. */
typedef union block_head {
    size_t size;
    max_align_t align;
} block_head;

#ifdef CLI_JSONALLOC_TEST_HOOK
/* Tests only: sees every block right after it was wiped, before free. */
void CLI_JSONALLOC_TEST_HOOK(const void *block, size_t len);
#endif

/* malloc with a size prefix (jansson's free callback is not told the size). */
static void *wiping_malloc(size_t size)
{
    if (size > SIZE_MAX - sizeof(block_head))
        return NULL;
    block_head *h = malloc(sizeof *h + size);
    if (!h)
        return NULL;
    h->size = size;
    return h + 1;
}

/* Wipe the whole block (prefix included) with a store the compiler may not elide, then free. */
static void wiping_free(void *ptr)
{
    if (!ptr)
        return;
    block_head *h = (block_head *)ptr - 1;
    size_t len = sizeof *h + h->size;
    explicit_bzero(h, len);
#ifdef CLI_JSONALLOC_TEST_HOOK
    CLI_JSONALLOC_TEST_HOOK(h, len);
#endif
    free(h);
}

/* See cli.h. */
void cli_json_wiping_allocator_install(void)
{
    json_set_alloc_funcs(wiping_malloc, wiping_free);
}

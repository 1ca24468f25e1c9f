/*
 * Fuzz target: JWS parsing and verification. Byte 0 picks the declared format and whether the
 * embedded one-shot path is used; the rest is the JWS text. Must never crash, leak or over-read;
 * must never accept (nothing here can forge a signature except by the input being a valid JWS).
 * Invariant checked (abort on violation): the streaming, detached API never accepts a JWS that
 * carries its payload — that would let an empty detached payload "verify" the embedded one.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int fuzz_jws_one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const fuzz_keys *fk = fuzz_get_keys();
    uint8_t mode = data[0];
    /* Copy into an exact-size heap buffer so that ASan catches any read past the end. */
    size_t n = size - 1;
    char *text = malloc(n ? n : 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, n);
    (void)dsig_jws_detect_format(text, n);
    int embedded = dsig_jws_has_embedded_payload(text, n);
    dsig_jws_verify_opts o = {.format = (dsig_format)(mode % 5), .allowed = fk->allowed};
    for (size_t i = 0; i < fk->n; i++) {
        if (mode & 0x80) {
            uint8_t *p = NULL;
            size_t pl = 0;
            if (dsig_jws_verify_compact(fk->key[i], text, n, &o, &p, &pl) == DSIG_OK)
                dsig_free(p);
            continue;
        }
        dsig_jws_verify_ctx *c;
        if (dsig_jws_verify_init(&c, fk->key[i], text, n, &o) != DSIG_OK)
            continue;
        if (embedded == 1 && o.format != DSIG_FMT_RAW)
            abort(); /* a JWS carrying its payload got into the detached API */
        (void)dsig_jws_verify_alg(c);
        if (mode & 0x40)
            (void)dsig_jws_verify_update(c, "$.02", 4);
        if (mode & 0x20)
            (void)dsig_jws_verify_update(c, "", 0);
        int rc = dsig_jws_verify_final(c); /* valid seeds do verify; mutants must only not crash */
        (void)rc;
    }
    free(text);
    return 0;
}

#ifndef DSIG_FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_jws_one(data, size);
}

static void seeds(void)
{
    fuzz_jose_seeds(fuzz_seed_cb, &(unsigned){0});
}

FUZZ_SEED_GENERATOR(seeds)
#endif

/*
 * Key-type lookup for JWK and PEM import (by kty + crv, or kty + alg). The key types are those the
 * registered algorithms name (struct dsig_alg.keytype and .keytypes): a family adds its key types by
 * adding its descriptors to the registry, with no list here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keytype.h"
#include "core/provider.h"

/* Far above the ~35 key types of today; collect() stops the process if the registry outgrows it
 * (every test would fail at once, so it cannot ship). */
#define KEYTYPES_MAX 128

static const struct dsig_keytype *types[KEYTYPES_MAX + 1]; /* NULL-terminated */
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

/* Append t unless it is already listed. */
static void add_type(size_t *n, const struct dsig_keytype *t)
{
    for (size_t i = 0; i < *n; i++)
        if (types[i] == t)
            return;
    if (*n == KEYTYPES_MAX) {
        fprintf(stderr, "dsig: more than %d key types in the registry: raise KEYTYPES_MAX in %s\n",
                KEYTYPES_MAX, __FILE__);
        abort();
    }
    types[(*n)++] = t;
}

/* The distinct key types of the registry, in registry order. */
static void collect(void)
{
    size_t n = 0;
    for (size_t i = 0, count = dsig_alg_count(); i < count; i++) {
        const dsig_alg *a = dsig_alg_at(i);
        add_type(&n, a->keytype);
        for (const struct dsig_keytype *const *t = a->keytypes; t && *t; t++)
            add_type(&n, *t);
    }
    types[n] = NULL;
}

const struct dsig_keytype *const *dsig_keytype_list(void)
{
    pthread_once(&types_once, collect);
    return types;
}

/* Does type t answer to (kty, crv, alg)? A type named by "alg" needs that exact "alg". */
static int type_matches(const struct dsig_keytype *t, const char *kty, const char *crv, const char *alg)
{
    if (strcmp(t->kty, kty) != 0)
        return 0;
    if (t->alg)
        return crv == NULL && alg && strcmp(t->alg, alg) == 0;
    if (t->crv == NULL && crv == NULL)
        return 1;
    return t->crv && crv && strcmp(t->crv, crv) == 0;
}

const struct dsig_keytype *dsig_keytype_find_jwk(const char *kty, const char *crv, const char *alg)
{
    for (const struct dsig_keytype *const *t = dsig_keytype_list(); *t; t++)
        if (type_matches(*t, kty, crv, alg))
            return *t;
    return NULL;
}

const struct dsig_keytype *dsig_keytype_find(const char *kty, const char *crv)
{
    return dsig_keytype_find_jwk(kty, crv, NULL);
}

int dsig_keytype_kty_needs_alg(const char *kty)
{
    for (const struct dsig_keytype *const *t = dsig_keytype_list(); *t; t++)
        if ((*t)->alg && strcmp((*t)->kty, kty) == 0)
            return 1;
    return 0;
}

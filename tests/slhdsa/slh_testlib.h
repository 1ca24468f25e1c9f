/*
 * tests/slhdsa/slh_testlib.h — shared by the SLH-DSA tests: ACVP JSON access (hex members, group /
 * test lookup by id) and the BoringSSL "key: hex" record files. Header-only (static functions).
 */
#ifndef SLH_TESTLIB_H
#define SLH_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pq/slhdsa/slhdsa.h"
#include "testutil.h"

/* Hex member of a JSON object, decoded (free()). */
static inline uint8_t *slh_jhex(const json_t *obj, const char *key, size_t *len)
{
    return tu_hex(tu_str(obj, key), len);
}

/* The test with tcId `id` in an expectedResults group. */
static inline json_t *slh_find_tc(json_t *tests, json_int_t id)
{
    size_t i;
    json_t *t;
    json_array_foreach(tests, i, t) {
        if (json_integer_value(json_object_get(t, "tcId")) == id)
            return t;
    }
    fail_msg("tcId %lld not found", (long long)id);
    return NULL;
}

/* The parameter set named by an ACVP group (fails the test if unknown). */
static inline const dsig_slhdsa_params *slh_group_params(const json_t *group)
{
    const dsig_slhdsa_params *p = dsig_slhdsa_params_by_name(tu_str(group, "parameterSet"));
    assert_non_null(p);
    return p;
}

/* One BoringSSL record: up to 8 "key: value" fields (values point into the file buffer). */
typedef struct slh_record {
    const char *key[8];
    char *val[8];
    int n;
} slh_record;

/* Field of a record, or NULL. */
static inline char *slh_field(const slh_record *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->key[i], key) == 0)
            return r->val[i];
    return NULL;
}

/* Parse the next blank-line separated record from *cursor (modifies the buffer); 0 at the end. */
static inline int slh_next_record(char **cursor, slh_record *r)
{
    r->n = 0;
    char *s = *cursor;
    while (s != NULL && *s != '\0') {
        char *eol = strchr(s, '\n');
        if (eol != NULL)
            *eol = '\0';
        char *next = eol != NULL ? eol + 1 : NULL;
        if (s[0] == '\0' || s[0] == '\r') {
            if (r->n > 0) {
                *cursor = next;
                return 1;
            }
        } else if (s[0] != '#') {
            char *colon = strstr(s, ": ");
            if (colon != NULL && r->n < 8) {
                *colon = '\0';
                r->key[r->n] = s;
                r->val[r->n] = colon + 2;
                size_t l = strlen(r->val[r->n]);
                if (l > 0 && r->val[r->n][l - 1] == '\r')
                    r->val[r->n][l - 1] = '\0';
                r->n++;
            } else if (strchr(s, ':') != NULL && r->n < 8) { /* "key:" with empty value */
                *strchr(s, ':') = '\0';
                r->key[r->n] = s;
                r->val[r->n] = s + strlen(s);
                r->n++;
            }
        }
        s = next;
    }
    *cursor = NULL;
    return r->n > 0;
}

/* Wall-clock seconds (progress notes in test output). */
static inline double slh_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif

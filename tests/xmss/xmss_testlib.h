/*
 * tests/xmss/xmss_testlib.h — helpers shared by the XMSS tests: .rsp / .vec record parsing and
 * sampling under the sanitizers (DSIG_XMSS_SAMPLE=1: fewer signing known answers).
 */
#ifndef XMSS_TESTLIB_H
#define XMSS_TESTLIB_H

#include <stdlib.h>
#include <string.h>

#include "pq/xmss/xmss.h"
#include "testutil.h"

/* 1 when the test should sample the expensive known answers (ASan builds). */
static inline int xt_sample(void)
{
    const char *e = getenv("DSIG_XMSS_SAMPLE");
    return e && *e == '1';
}

/* Value of "key = value" in a text record starting at *pos (NULL if the next key differs); the
 * value is returned NUL-terminated in a malloc'd string. Records are scanned line by line. */
static inline char *xt_field(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l;) {
        if (strncmp(l, key, kl) == 0 && (l[kl] == ' ' || l[kl] == '=')) {
            const char *v = strchr(l, '=');
            v = v ? v + 1 : l + kl;
            while (*v == ' ')
                v++;
            const char *e = v;
            while (*e && *e != '\n' && *e != '\r')
                e++;
            char *out = malloc((size_t)(e - v) + 1);
            memcpy(out, v, (size_t)(e - v));
            out[e - v] = 0;
            return out;
        }
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    return NULL;
}

/* Hex to bytes allowing the empty string. */
static inline uint8_t *xt_hex(const char *hex, size_t *len)
{
    if (!hex || !*hex) {
        *len = 0;
        return calloc(1, 1);
    }
    return tu_hex(hex, len);
}

#endif

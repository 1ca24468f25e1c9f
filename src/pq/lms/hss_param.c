/*
 * src/pq/lms/hss_param.c — HSS parameter strings: "LMS_x/LMOTS_y" pairs (or the "Hh/Ww" shorthand for
 * SHA-256 M32), one per level, comma-separated.
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "pq/lms/lms.h"

/* One "LMS_x/LMOTS_y" or "Hh/Ww" pair of s[0..len). */
static int parse_pair(const char *s, size_t len, uint32_t *lt, uint32_t *ot)
{
    const char *slash = memchr(s, '/', len);
    if (!slash)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter \"%.*s\": expected LMS/LMOTS (e.g. "
                                     "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 or H10/W4)", (int)len, s);
    size_t a = (size_t)(slash - s), b = len - a - 1;
    const dsig_lms_params *lp = dsig_lms_params_by_name(s, a);
    const dsig_lmots_params *op = dsig_lmots_params_by_name(slash + 1, b);
    char buf[40];
    if (!lp && a >= 2 && a <= 3 && s[0] == 'H') { /* shorthand: SHA-256, M32 */
        snprintf(buf, sizeof buf, "LMS_SHA256_M32_%.*s", (int)a, s);
        lp = dsig_lms_params_by_name(buf, strlen(buf));
    }
    if (!op && b == 2 && slash[1] == 'W') {
        snprintf(buf, sizeof buf, "LMOTS_SHA256_N32_%.*s", (int)b, slash + 1);
        op = dsig_lmots_params_by_name(buf, strlen(buf));
    }
    if (!lp || !op)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter \"%.*s\": unknown %s set", (int)len, s,
                         lp ? "LM-OTS" : "LMS");
    if (!dsig_lms_pair_ok(lp, op))
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter \"%.*s\": %s and %s use different hashes or "
                                     "lengths", (int)len, s, lp->name, op->name);
    *lt = lp->type;
    *ot = op->type;
    return DSIG_OK;
}

int dsig_hss_parse_param(const char *s, unsigned *L, uint32_t *lms_types, uint32_t *ots_types)
{
    unsigned n = 0;
    if (!s || !*s)
        return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter string is empty");
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (n == DSIG_HSS_L_MAX)
            return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter string: more than 8 levels");
        int rc = parse_pair(s, len, &lms_types[n], &ots_types[n]);
        if (rc)
            return rc;
        n++;
        s += len;
        if (*s == ',' && !*++s)
            return dsig_fail(DSIG_E_ARG, "HSS-LMS parameter string ends with ','");
    }
    *L = n;
    return DSIG_OK;
}

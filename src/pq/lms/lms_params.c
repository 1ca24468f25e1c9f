/*
 * src/pq/lms/lms_params.c — the LMS and LM-OTS parameter sets: RFC 8554 §4.1 Table 1 / §5.1 Table 2
 * (SHA-256, n = m = 32) and NIST SP 800-208 §4.2-4.4 (SHA-256/192, SHAKE256/256, SHAKE256/192), with
 * their IANA typecodes.
 */
#include <string.h>

#include "pq/lms/lms.h"

#define LMS(nm, t, mm, hh, sh) static const dsig_lms_params nm = {#nm, t, mm, hh, sh}
/* p and ls per RFC 8554 Appendix B: u = ceil(8n/w), v = floor(log2((2^w - 1) u) / w) + 1, p = u + v,
 * ls = 16 - v w (values precomputed here; tests recompute them). */
#define OTS(nm, t, nn, ww, pp, l, sh) static const dsig_lmots_params nm = {#nm, t, nn, ww, pp, l, sh}

LMS(LMS_SHA256_M32_H5, 0x05, 32, 5, 0);
LMS(LMS_SHA256_M32_H10, 0x06, 32, 10, 0);
LMS(LMS_SHA256_M32_H15, 0x07, 32, 15, 0);
LMS(LMS_SHA256_M32_H20, 0x08, 32, 20, 0);
LMS(LMS_SHA256_M32_H25, 0x09, 32, 25, 0);
LMS(LMS_SHA256_M24_H5, 0x0a, 24, 5, 0);
LMS(LMS_SHA256_M24_H10, 0x0b, 24, 10, 0);
LMS(LMS_SHA256_M24_H15, 0x0c, 24, 15, 0);
LMS(LMS_SHA256_M24_H20, 0x0d, 24, 20, 0);
LMS(LMS_SHA256_M24_H25, 0x0e, 24, 25, 0);
LMS(LMS_SHAKE_M32_H5, 0x0f, 32, 5, 1);
LMS(LMS_SHAKE_M32_H10, 0x10, 32, 10, 1);
LMS(LMS_SHAKE_M32_H15, 0x11, 32, 15, 1);
LMS(LMS_SHAKE_M32_H20, 0x12, 32, 20, 1);
LMS(LMS_SHAKE_M32_H25, 0x13, 32, 25, 1);
LMS(LMS_SHAKE_M24_H5, 0x14, 24, 5, 1);
LMS(LMS_SHAKE_M24_H10, 0x15, 24, 10, 1);
LMS(LMS_SHAKE_M24_H15, 0x16, 24, 15, 1);
LMS(LMS_SHAKE_M24_H20, 0x17, 24, 20, 1);
LMS(LMS_SHAKE_M24_H25, 0x18, 24, 25, 1);

OTS(LMOTS_SHA256_N32_W1, 0x01, 32, 1, 265, 7, 0);
OTS(LMOTS_SHA256_N32_W2, 0x02, 32, 2, 133, 6, 0);
OTS(LMOTS_SHA256_N32_W4, 0x03, 32, 4, 67, 4, 0);
OTS(LMOTS_SHA256_N32_W8, 0x04, 32, 8, 34, 0, 0);
OTS(LMOTS_SHA256_N24_W1, 0x05, 24, 1, 200, 8, 0);
OTS(LMOTS_SHA256_N24_W2, 0x06, 24, 2, 101, 6, 0);
OTS(LMOTS_SHA256_N24_W4, 0x07, 24, 4, 51, 4, 0);
OTS(LMOTS_SHA256_N24_W8, 0x08, 24, 8, 26, 0, 0);
OTS(LMOTS_SHAKE_N32_W1, 0x09, 32, 1, 265, 7, 1);
OTS(LMOTS_SHAKE_N32_W2, 0x0a, 32, 2, 133, 6, 1);
OTS(LMOTS_SHAKE_N32_W4, 0x0b, 32, 4, 67, 4, 1);
OTS(LMOTS_SHAKE_N32_W8, 0x0c, 32, 8, 34, 0, 1);
OTS(LMOTS_SHAKE_N24_W1, 0x0d, 24, 1, 200, 8, 1);
OTS(LMOTS_SHAKE_N24_W2, 0x0e, 24, 2, 101, 6, 1);
OTS(LMOTS_SHAKE_N24_W4, 0x0f, 24, 4, 51, 4, 1);
OTS(LMOTS_SHAKE_N24_W8, 0x10, 24, 8, 26, 0, 1);

const dsig_lms_params *const dsig_lms_all[] = {
    &LMS_SHA256_M32_H5, &LMS_SHA256_M32_H10, &LMS_SHA256_M32_H15, &LMS_SHA256_M32_H20,
    &LMS_SHA256_M32_H25, &LMS_SHA256_M24_H5, &LMS_SHA256_M24_H10, &LMS_SHA256_M24_H15,
    &LMS_SHA256_M24_H20, &LMS_SHA256_M24_H25, &LMS_SHAKE_M32_H5,  &LMS_SHAKE_M32_H10,
    &LMS_SHAKE_M32_H15,  &LMS_SHAKE_M32_H20,  &LMS_SHAKE_M32_H25,  &LMS_SHAKE_M24_H5,
    &LMS_SHAKE_M24_H10,  &LMS_SHAKE_M24_H15,  &LMS_SHAKE_M24_H20,  &LMS_SHAKE_M24_H25,
    NULL,
};

const dsig_lmots_params *const dsig_lmots_all[] = {
    &LMOTS_SHA256_N32_W1, &LMOTS_SHA256_N32_W2, &LMOTS_SHA256_N32_W4, &LMOTS_SHA256_N32_W8,
    &LMOTS_SHA256_N24_W1, &LMOTS_SHA256_N24_W2, &LMOTS_SHA256_N24_W4, &LMOTS_SHA256_N24_W8,
    &LMOTS_SHAKE_N32_W1,  &LMOTS_SHAKE_N32_W2,  &LMOTS_SHAKE_N32_W4,  &LMOTS_SHAKE_N32_W8,
    &LMOTS_SHAKE_N24_W1,  &LMOTS_SHAKE_N24_W2,  &LMOTS_SHAKE_N24_W4,  &LMOTS_SHAKE_N24_W8,
    NULL,
};

/* The LMS set with IANA typecode `type`, or NULL. */
const dsig_lms_params *dsig_lms_params_by_type(uint32_t type)
{
    for (const dsig_lms_params *const *p = dsig_lms_all; *p; p++)
        if ((*p)->type == type)
            return *p;
    return NULL;
}

/* The LMS set named name[0..len) (exact, case-sensitive), or NULL. */
const dsig_lms_params *dsig_lms_params_by_name(const char *name, size_t len)
{
    for (const dsig_lms_params *const *p = dsig_lms_all; *p; p++)
        if (strlen((*p)->name) == len && memcmp((*p)->name, name, len) == 0)
            return *p;
    return NULL;
}

/* The LM-OTS set with IANA typecode `type`, or NULL. */
const dsig_lmots_params *dsig_lmots_params_by_type(uint32_t type)
{
    for (const dsig_lmots_params *const *p = dsig_lmots_all; *p; p++)
        if ((*p)->type == type)
            return *p;
    return NULL;
}

/* The LM-OTS set named name[0..len), or NULL. */
const dsig_lmots_params *dsig_lmots_params_by_name(const char *name, size_t len)
{
    for (const dsig_lmots_params *const *p = dsig_lmots_all; *p; p++)
        if (strlen((*p)->name) == len && memcmp((*p)->name, name, len) == 0)
            return *p;
    return NULL;
}

/* @spec RFC 8554 §5.4: u32 q ‖ LM-OTS signature (4 + n + p n) ‖ u32 type ‖ h m-byte path nodes. */
size_t dsig_lms_sig_len(const dsig_lms_params *lp, const dsig_lmots_params *op)
{
    return 4 + (4 + (size_t)op->n * (op->p + 1)) + 4 + (size_t)lp->h * lp->m;
}

/* @spec RFC 8554 §5.3: u32 type ‖ u32 otstype ‖ I ‖ T[1]. */
size_t dsig_lms_pub_len(const dsig_lms_params *lp)
{
    return 8 + DSIG_LMS_I_LEN + lp->m;
}

/* @spec SP 800-208 §4: an LMS tree and its one-time keys use the same hash function and length. */
int dsig_lms_pair_ok(const dsig_lms_params *lp, const dsig_lmots_params *op)
{
    return lp && op && lp->shake == op->shake && lp->m == op->n;
}

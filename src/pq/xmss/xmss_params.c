/*
 * src/pq/xmss/xmss_params.c — the XMSS and XMSS^MT parameter sets of RFC 8391 §5.3/§5.4 (typecodes
 * 0x01-0x0c and 0x01-0x20) and NIST SP 800-208 §5 (SHA-256/192, SHAKE256/256, SHAKE256/192:
 * XMSS 0x0d-0x15, XMSS^MT 0x21-0x38). w = 16 everywhere.
 */
#include <stdio.h>
#include <string.h>

#include "pq/xmss/xmss.h"

/* sig = idx ‖ r ‖ d × (WOTS+ sig ‖ auth path) (RFC 8391 §4.1.8, §4.2.4). */
#define SIGB(mt, n, h, d) ((size_t)((mt) ? ((h) + 7) / 8 : 4) + (n) + ((size_t)(d) * (2 * (n) + 3) + (h)) * (n))

#define XP(nm, o, mt, hs, n, pl, h, d)                                                              \
    static const dsig_xmss_params nm##_p = {#nm, o, mt, hs, n, pl, h, d, (h) / (d), 2 * (n),         \
                                            2 * (n) + 3, (mt) ? ((h) + 7) / 8 : 4,                   \
                                            SIGB(mt, n, h, d), 4 + 2 * (size_t)(n)};

/* Identifiers are the names with '-' '/' mapped; the printable name is rebuilt in the table below. */
#define XMSS_FAM(tag, base, hs, n, pl)                                                              \
    XP(tag##_10, (base) + 0, 0, hs, n, pl, 10, 1)                                                    \
    XP(tag##_16, (base) + 1, 0, hs, n, pl, 16, 1)                                                    \
    XP(tag##_20, (base) + 2, 0, hs, n, pl, 20, 1)

#define MT_FAM(tag, base, hs, n, pl)                                                                \
    XP(tag##_20_2, (base) + 0, 1, hs, n, pl, 20, 2)                                                  \
    XP(tag##_20_4, (base) + 1, 1, hs, n, pl, 20, 4)                                                  \
    XP(tag##_40_2, (base) + 2, 1, hs, n, pl, 40, 2)                                                  \
    XP(tag##_40_4, (base) + 3, 1, hs, n, pl, 40, 4)                                                  \
    XP(tag##_40_8, (base) + 4, 1, hs, n, pl, 40, 8)                                                  \
    XP(tag##_60_3, (base) + 5, 1, hs, n, pl, 60, 3)                                                  \
    XP(tag##_60_6, (base) + 6, 1, hs, n, pl, 60, 6)                                                  \
    XP(tag##_60_12, (base) + 7, 1, hs, n, pl, 60, 12)

XMSS_FAM(x_sha2_256, 0x01, XMSS_SHA256, 32, 32)
XMSS_FAM(x_sha2_512, 0x04, XMSS_SHA512, 64, 64)
XMSS_FAM(x_shake_256, 0x07, XMSS_SHAKE128, 32, 32)
XMSS_FAM(x_shake_512, 0x0a, XMSS_SHAKE256, 64, 64)
XMSS_FAM(x_sha2_192, 0x0d, XMSS_SHA256, 24, 4)
XMSS_FAM(x_shake256_256, 0x10, XMSS_SHAKE256, 32, 32)
XMSS_FAM(x_shake256_192, 0x13, XMSS_SHAKE256, 24, 4)
MT_FAM(m_sha2_256, 0x01, XMSS_SHA256, 32, 32)
MT_FAM(m_sha2_512, 0x09, XMSS_SHA512, 64, 64)
MT_FAM(m_shake_256, 0x11, XMSS_SHAKE128, 32, 32)
MT_FAM(m_shake_512, 0x19, XMSS_SHAKE256, 64, 64)
MT_FAM(m_sha2_192, 0x21, XMSS_SHA256, 24, 4)
MT_FAM(m_shake256_256, 0x29, XMSS_SHAKE256, 32, 32)
MT_FAM(m_shake256_192, 0x31, XMSS_SHAKE256, 24, 4)

#define XL(tag) &tag##_10_p, &tag##_16_p, &tag##_20_p
#define ML(tag)                                                                                     \
    &tag##_20_2_p, &tag##_20_4_p, &tag##_40_2_p, &tag##_40_4_p, &tag##_40_8_p, &tag##_60_3_p,        \
        &tag##_60_6_p, &tag##_60_12_p

const dsig_xmss_params *const dsig_xmss_all_params[] = {
    XL(x_sha2_256),  XL(x_sha2_512),  XL(x_shake_256),  XL(x_shake_512),  XL(x_sha2_192),
    XL(x_shake256_256), XL(x_shake256_192),
    ML(m_sha2_256),  ML(m_sha2_512),  ML(m_shake_256),  ML(m_shake_512),  ML(m_sha2_192),
    ML(m_shake256_256), ML(m_shake256_192), NULL,
};

/* Family part of the RFC name for a set: "SHA2", "SHAKE" (RFC 8391) or "SHAKE256" (SP 800-208). */
static const char *family_name(const dsig_xmss_params *p)
{
    if (p->hash == XMSS_SHA256 || p->hash == XMSS_SHA512)
        return "SHA2";
    if (p->hash == XMSS_SHAKE128 || p->n == 64)
        return "SHAKE";
    return "SHAKE256";
}

/* The RFC 8391 / SP 800-208 name of a set, e.g. "XMSS-SHA2_10_256", "XMSSMT-SHAKE256_20/4_192". */
static void rfc_name(const dsig_xmss_params *p, char *out, size_t cap)
{
    if (p->mt)
        snprintf(out, cap, "XMSSMT-%s_%u/%u_%u", family_name(p), p->h, p->d, p->n * 8);
    else
        snprintf(out, cap, "XMSS-%s_%u_%u", family_name(p), p->h, p->n * 8);
}

/* Find a set by (XMSS or XMSS^MT, typecode). */
const dsig_xmss_params *dsig_xmss_params_by_oid(int mt, uint32_t oid)
{
    for (const dsig_xmss_params *const *p = dsig_xmss_all_params; *p; p++)
        if ((*p)->mt == !!mt && (*p)->oid == oid)
            return *p;
    return NULL;
}

/* Find a set by its RFC name ("XMSS-SHA2_10_256", "XMSSMT-SHA2_20/2_256"; '-' accepted for '/'). */
const dsig_xmss_params *dsig_xmss_params_by_name(const char *name)
{
    char want[48], buf[48];
    if (!name || strlen(name) >= sizeof want)
        return NULL;
    strcpy(want, name);
    /* liboqs file names write 20-2 for 20/2: accept both after the family part */
    char *u = strchr(want, '_');
    for (char *s = u; s && *s; s++)
        if (*s == '-')
            *s = '/';
    for (const dsig_xmss_params *const *p = dsig_xmss_all_params; *p; p++) {
        rfc_name(*p, buf, sizeof buf);
        if (strcmp(buf, want) == 0)
            return *p;
    }
    return NULL;
}

/* The RFC name of a set into out (48 bytes are enough). */
void dsig_xmss_params_name(const dsig_xmss_params *p, char *out, size_t cap)
{
    rfc_name(p, out, cap);
}

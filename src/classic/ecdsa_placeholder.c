/* PLACEHOLDER — replaced by the ECDSA provider. */
#include "core/internal.h"
static const char *const ec_pub[] = {"x", "y", NULL};
static const char *const ec_priv[] = {"d", NULL};
const struct dsig_keytype dsig_keytype_p256 = {.kty = "EC", .crv = "P-256", .pub_members = ec_pub, .priv_members = ec_priv, .has_public = 1};
const struct dsig_keytype dsig_keytype_p384 = {.kty = "EC", .crv = "P-384", .pub_members = ec_pub, .priv_members = ec_priv, .has_public = 1};
const struct dsig_keytype dsig_keytype_p521 = {.kty = "EC", .crv = "P-521", .pub_members = ec_pub, .priv_members = ec_priv, .has_public = 1};
const dsig_alg *const dsig_ecdsa_algs[] = {NULL};

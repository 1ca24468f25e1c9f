/* PLACEHOLDER — replaced by the RSA provider. */
#include "core/internal.h"
static const char *const rsa_pub[] = {"e", "n", NULL};
static const char *const rsa_priv[] = {"d", "p", "q", "dp", "dq", "qi", NULL};
const struct dsig_keytype dsig_keytype_rsa = {.kty = "RSA", .pub_members = rsa_pub, .priv_members = rsa_priv, .has_public = 1};
const dsig_alg *const dsig_rsa_algs[] = {NULL};

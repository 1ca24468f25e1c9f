/* PLACEHOLDER — replaced by the EdDSA provider. */
#include "core/internal.h"
static const char *const okp_pub[] = {"x", NULL};
static const char *const okp_priv[] = {"d", NULL};
const struct dsig_keytype dsig_keytype_ed25519 = {.kty = "OKP", .crv = "Ed25519", .pub_members = okp_pub, .priv_members = okp_priv, .has_public = 1};
const struct dsig_keytype dsig_keytype_ed448 = {.kty = "OKP", .crv = "Ed448", .pub_members = okp_pub, .priv_members = okp_priv, .has_public = 1};
const dsig_alg *const dsig_eddsa_algs[] = {NULL};

/* PLACEHOLDER — replaced by the MAC provider (src/mac/). */
#include "core/internal.h"
static const char *const oct_pub[] = {NULL};
static const char *const oct_priv[] = {"k", NULL};
const struct dsig_keytype dsig_keytype_oct = {.kty = "oct", .pub_members = oct_pub, .priv_members = oct_priv};
const dsig_alg *const dsig_mac_algs[] = {NULL};

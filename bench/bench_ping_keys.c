/*
 * bench/bench_ping_keys.c — the keys of one `dsig ping` end, through the public API: the membership
 * file is the node's own (dsig_node_config_load, the same checks as `dsig node`), the private key a JWK
 * (dsig_jwk_import), matched to this node's configured key by RFC 7638 thumbprint. The libsodium
 * baseline signs with the raw bytes of the same key pair; the public API gives a key's bytes only as its
 * JWK export, so they are read from there (ed25519_raw).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench_internal.h"
#include "bench_ping_internal.h"
#include "dsig/jwk.h"
#include "dsig/key.h"
#include "dsig/mem.h"

/* Decode a 32-byte base64url member of a JWK object. 0 or -1. */
static int b64_32(json_t *obj, const char *name, uint8_t out[32])
{
    const char *s = json_string_value(json_object_get(obj, name));
    size_t n = 0;
    if (!s || sodium_base642bin(out, 32, s, strlen(s), NULL, &n, NULL,
                                sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 || n != 32)
        return -1;
    return 0;
}

/* The raw Ed25519 public key (and, when seed is not NULL, the private seed) of an OKP Ed25519 key, read
 * from its JWK export ("x", "d"). 0 or -1. */
static int ed25519_raw(const dsig_key *key, uint8_t pk[32], uint8_t *seed)
{
    char *text = NULL;
    size_t len = 0;
    if (dsig_jwk_export(key, seed != NULL, &text, &len) != DSIG_OK)
        return -1;
    json_t *jwk = json_loadb(text, len, 0, NULL);
    dsig_memzero(text, len);
    dsig_free(text);
    int rc = jwk && b64_32(jwk, "x", pk) == 0 && (!seed || b64_32(jwk, "d", seed) == 0) ? 0 : -1;
    /* jansson holds "d" as text: the tool's wiping allocator erases it on free. */
    json_decref(jwk);
    return rc;
}

/* Free keys (the secret is wiped). */
void ping_keys_free(ping_keys *k)
{
    dsig_key_free(k->ed_sk);
    dsig_key_free(k->peer_ed_pk);
    dsig_memzero(k->sk, sizeof k->sk);
    memset(k, 0, sizeof *k);
}

/* The libsodium form of this end's key pair (seed ‖ public key) and of the peer's public key. */
static int sodium_forms(ping_keys *k)
{
    uint8_t seed[32], pk[32];
    int rc = ed25519_raw(k->ed_sk, pk, seed) == 0 && ed25519_raw(k->peer_ed_pk, k->peer_pk, NULL) == 0 ? 0 : -1;
    if (rc == 0)
        crypto_sign_seed_keypair(pk, k->sk, seed);
    dsig_memzero(seed, sizeof seed);
    return rc;
}

/* Self-contained mode: fresh DSig key pairs for both ends. */
int ping_keys_generate(ping_keys *ini, ping_keys *rsp, char *why, size_t whylen)
{
    memset(ini, 0, sizeof *ini);
    memset(rsp, 0, sizeof *rsp);
    ini->self_id = rsp->peer_id = 1;
    ini->peer_id = rsp->self_id = 2;
    const dsig_alg *alg = dsig_alg_by_name("DSig");
    if (!alg || dsig_key_generate(&ini->ed_sk, alg, NULL) != DSIG_OK ||
        dsig_key_generate(&rsp->ed_sk, alg, NULL) != DSIG_OK ||
        dsig_key_public(&ini->peer_ed_pk, rsp->ed_sk) != DSIG_OK ||
        dsig_key_public(&rsp->peer_ed_pk, ini->ed_sk) != DSIG_OK || sodium_forms(ini) != 0 ||
        sodium_forms(rsp) != 0) {
        snprintf(why, whylen, "key generation: %s", alg ? dsig_last_error_detail() : "no DSig algorithm");
        ping_keys_free(ini);
        ping_keys_free(rsp);
        return -1;
    }
    return 0;
}

/* The other end: o->peer, else the only node of cfg other than o->id. 0, or -1 with why set. */
static int find_peer(const ping_opts *o, const dsig_node_config *cfg, dsig_node_member *peer, char *why,
                     size_t whylen)
{
    if (o->peer) {
        if (dsig_node_config_find(cfg, o->peer, peer) == DSIG_OK)
            return 0;
        snprintf(why, whylen, "%s: no node with the --peer given", o->config);
        return -1;
    }
    size_t others = 0;
    for (size_t i = 0; i < dsig_node_config_node_count(cfg); i++) {
        dsig_node_member m;
        if (dsig_node_config_node(cfg, i, &m) == DSIG_OK && m.id != o->id && ++others == 1)
            *peer = m;
    }
    if (others == 1)
        return 0;
    snprintf(why, whylen, "%s: %s", o->config,
             others ? "more than two nodes: name the other end with --peer" : "no node with the --peer given");
    return -1;
}

/* Config mode: this node's private key and the peer's public key. */
int ping_keys_from_config(const ping_opts *o, const dsig_node_config *cfg, ping_keys *k, char *why,
                          size_t whylen)
{
    memset(k, 0, sizeof *k);
    dsig_node_member self, peer;
    if (dsig_node_config_find(cfg, o->id, &self) != DSIG_OK) {
        snprintf(why, whylen, "%s: no node with the --id given", o->config);
        return -1;
    }
    /* with etcd the peer's entry comes from there (ping_keys_set_peer, once it joined) */
    if (!o->etcd && find_peer(o, cfg, &peer, why, whylen) != 0)
        return -1;
    k->self_id = o->id;
    k->peer_id = o->etcd ? o->peer : peer.id;
    char *text = NULL;
    size_t len = 0;
    if (bench_read_file(o->key, DSIG_JWK_MAX_BYTES, &text, &len) != 0) {
        snprintf(why, whylen, "%s: %s", o->key, strerror(errno));
        return -1;
    }
    int rc = dsig_jwk_import(&k->ed_sk, text, len);
    dsig_memzero(text, len);
    free(text);
    const char *crv = rc == DSIG_OK ? dsig_key_curve(k->ed_sk) : NULL;
    const dsig_alg *kalg = rc == DSIG_OK ? dsig_key_alg(k->ed_sk) : NULL;
    char mine[DSIG_THUMBPRINT_LEN], theirs[DSIG_THUMBPRINT_LEN];
    if (!crv || strcmp(crv, "Ed25519") != 0 || !dsig_key_has_private(k->ed_sk)) {
        snprintf(why, whylen, "%s: not an Ed25519 private JWK (with \"d\")", o->key);
    } else if (!kalg || strcmp(dsig_alg_name(kalg), "DSig") != 0) {
        /* The node signs with it: a key made for DSig, never one that also signs plain Ed25519. */
        snprintf(why, whylen, "%s: not a DSig key (\"alg\":\"DSig\"): make one with `dsig keygen -a DSig`",
                 o->key);
    } else if (dsig_jwk_thumbprint(k->ed_sk, mine) != DSIG_OK ||
               dsig_jwk_thumbprint(self.public_key, theirs) != DSIG_OK || strcmp(mine, theirs) != 0) {
        snprintf(why, whylen, "%s is not the key of node %" PRIu64 " in %s", o->key, o->id, o->config);
    } else if (o->etcd) {
        return 0;
    } else if (dsig_key_public(&k->peer_ed_pk, peer.public_key) != DSIG_OK || sodium_forms(k) != 0) {
        snprintf(why, whylen, "key import: %s", dsig_last_error_detail());
    } else {
        return 0;
    }
    ping_keys_free(k);
    return -1;
}

/* The peer's public key, learned after the keys were made (etcd). */
int ping_keys_set_peer(ping_keys *k, const dsig_key *peer_pk, char *why, size_t whylen)
{
    dsig_key_free(k->peer_ed_pk);
    k->peer_ed_pk = NULL;
    if (dsig_key_public(&k->peer_ed_pk, peer_pk) != DSIG_OK || sodium_forms(k) != 0) {
        snprintf(why, whylen, "key import: %s", dsig_last_error_detail());
        return -1;
    }
    return 0;
}

/* The membership of the self-contained mode, from the keys' own JWK exports. */
dsig_node_config *ping_local_config(const ping_keys *ini, const ping_keys *rsp, const unsigned port[2])
{
    char *x1 = NULL, *x2 = NULL, text[2048];
    size_t l1 = 0, l2 = 0;
    dsig_node_config *cfg = NULL;
    if (dsig_jwk_export(ini->ed_sk, 0, &x1, &l1) == DSIG_OK && dsig_jwk_export(rsp->ed_sk, 0, &x2, &l2) == DSIG_OK) {
        int n = snprintf(text, sizeof text,
                         "{\"nodes\":["
                         "{\"id\":1,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":%s,\"groups\":[\"ping\"]},"
                         "{\"id\":2,\"address\":\"tcp:127.0.0.1:%u\",\"public_key\":%s,\"groups\":[\"ping\"]}],"
                         "\"groups\":{\"ping\":{\"params\":\"wots4-haraka-b128\"}}}",
                         port[0], x1, port[1], x2);
        if (n <= 0 || (size_t)n >= sizeof text || dsig_node_config_parse(text, (size_t)n, &cfg) != DSIG_OK)
            cfg = NULL;
    }
    dsig_free(x1);
    dsig_free(x2);
    return cfg;
}

/*
 * bench/bench_dsig_baseline.c — the Ed25519 baselines of `dsig bench dsig`: libsodium and OpenSSL
 * sign / verify of the same message with keys from one seed, as latency and throughput rows.
 */
#include <stdio.h>
#include <string.h>

#include "bench_dsig_internal.h"

/* libsodium crypto_sign_detached. */
static int sodium_sign_call(void *p, unsigned i)
{
    ed_ctx *c = p;
    (void)i;
    return crypto_sign_detached(c->sig, NULL, c->msg, c->len, c->sk) == 0 ? 0 : DSIG_E_INTERNAL;
}

/* libsodium crypto_sign_verify_detached of a valid signature: must accept. */
static int sodium_verify_call(void *p, unsigned i)
{
    ed_ctx *c = p;
    (void)i;
    return crypto_sign_verify_detached(c->sig, c->msg, c->len, c->pk) == 0 ? 0 : DSIG_E_VERIFY;
}

/* OpenSSL one-shot EVP_DigestSign with the reused EVP_PKEY. */
static int ossl_sign_call(void *p, unsigned i)
{
    ed_ctx *c = p;
    size_t siglen = sizeof c->sig;
    (void)i;
    if (EVP_DigestSignInit(c->mctx, NULL, NULL, NULL, c->pkey) != 1 ||
        EVP_DigestSign(c->mctx, c->sig, &siglen, c->msg, c->len) != 1 || siglen != sizeof c->sig)
        return DSIG_E_INTERNAL;
    return 0;
}

/* OpenSSL one-shot EVP_DigestVerify of a valid signature: must accept. */
static int ossl_verify_call(void *p, unsigned i)
{
    ed_ctx *c = p;
    (void)i;
    if (EVP_DigestVerifyInit(c->mctx, NULL, NULL, NULL, c->pub) != 1)
        return DSIG_E_INTERNAL;
    return EVP_DigestVerify(c->mctx, c->sig, sizeof c->sig, c->msg, c->len) == 1 ? 0 : DSIG_E_VERIFY;
}

/* Keys from the seed; fails unless both libraries produce the same signature (RFC 8032 is
 * deterministic), so the two baselines provably compute the same thing. */
int bd_ed_open(ed_ctx *c, uint64_t seed, const uint8_t *msg, char *why, size_t whylen)
{
    uint8_t ks[32], s2[crypto_sign_BYTES];
    memset(c, 0, sizeof *c);
    bench_key_seed(ks, seed, 25519);
    int ok = crypto_sign_seed_keypair(c->pk, c->sk, ks) == 0;
    c->pkey = ok ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, ks, sizeof ks) : NULL;
    c->pub = ok ? EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, c->pk, sizeof c->pk) : NULL;
    c->mctx = EVP_MD_CTX_new();
    dsig_memzero(ks, sizeof ks);
    if (!ok || !c->pkey || !c->pub || !c->mctx) {
        snprintf(why, whylen, "Ed25519 baseline keys could not be created");
        return DSIG_E_INTERNAL;
    }
    c->msg = msg;
    c->len = 8;
    if (sodium_sign_call(c, 0) != 0)
        return DSIG_E_INTERNAL;
    memcpy(s2, c->sig, sizeof s2);
    if (ossl_sign_call(c, 0) != 0 || memcmp(s2, c->sig, sizeof s2) != 0) {
        snprintf(why, whylen, "libsodium and OpenSSL Ed25519 signatures differ for the same key");
        return DSIG_E_INTERNAL;
    }
    return 0;
}

/* Free the baseline keys (the libsodium secret key is wiped). */
void bd_ed_close(ed_ctx *c)
{
    EVP_MD_CTX_free(c->mctx);
    EVP_PKEY_free(c->pkey);
    EVP_PKEY_free(c->pub);
    dsig_memzero(c->sk, sizeof c->sk);
}
/* Latency row of a baseline call. */
static int baseline_latency(run *R, const char *scheme, const char *op, int (*call)(void *, unsigned),
                            ed_ctx *c)
{
    lat_job j = {.call = call, .ctx = c};
    unsigned warm = R->o->count < 64 ? R->o->count : 64;
    int rc = bd_measure_latency(&j, warm, R->o->count, R->overhead, R->ns);
    if (rc)
        return rc;
    bench_dsig_row r = bd_row_of(scheme, op, "latency", c->len, crypto_sign_BYTES, NULL);
    bench_dsig_fill_stats(&r, R->ns, R->o->count);
    return bd_emit(R, &r);
}


/* Throughput row of a baseline call: rounds of back-to-back calls, process CPU time per call. */
static int baseline_tput(run *R, const char *scheme, const char *op, int (*call)(void *, unsigned),
                         ed_ctx *c)
{
    unsigned rounds = R->o->quick ? TPUT_ROUNDS_QUICK : TPUT_ROUNDS_FULL;
    unsigned per = R->o->count / rounds ? R->o->count / rounds : 1;
    double v[TPUT_ROUNDS_FULL];
    for (unsigned k = 0; k < rounds; k++) {
        uint64_t t0 = cpu_ns();
        for (unsigned i = 0; i < per; i++) {
            int rc = call(c, i);
            if (rc)
                return rc;
        }
        v[k] = (double)(cpu_ns() - t0) / per;
    }
    bench_dsig_row r = bd_row_of(scheme, op, "throughput", c->len, crypto_sign_BYTES, NULL);
    bench_dsig_fill_stats(&r, v, rounds);
    return bd_emit(R, &r);
}

/* The four baseline calls, in row order. */
static const struct {
    const char *scheme, *op;
    int (*call)(void *, unsigned);
} baselines[] = {
    {"sodium-ed25519", "sign", sodium_sign_call},
    {"sodium-ed25519", "verify", sodium_verify_call},
    {"openssl-ed25519", "sign", ossl_sign_call},
    {"openssl-ed25519", "verify", ossl_verify_call},
};

/* Baseline rows for one message size (latency, or throughput). The sign call also produces the
 * signature its verify row checks. */
int bd_baseline_rows(run *R, ed_ctx *c, const uint8_t *msg, size_t len, int tput)
{
    c->msg = msg;
    c->len = len;
    for (size_t b = 0; b < sizeof baselines / sizeof baselines[0]; b++) {
        int rc = tput ? baseline_tput(R, baselines[b].scheme, baselines[b].op, baselines[b].call, c)
                      : baseline_latency(R, baselines[b].scheme, baselines[b].op, baselines[b].call, c);
        if (rc) {
            char why[512];
            fprintf(stderr, "bench dsig: %s %s failed: %s\n", baselines[b].scheme, baselines[b].op,
                    bd_errtext(rc, why, sizeof why));
            return rc;
        }
    }
    return 0;
}


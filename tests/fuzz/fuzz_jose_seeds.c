/*
 * Seed inputs of the JWS and JWK targets (fuzz_jws.c: mode byte + text; fuzz_jwk.c: text): our own JWS
 * in every format made with every JOSE key, RFC-shaped and malformed headers, exported JWKs, and, when
 * DSIG_VECTORS names tests/vectors, the RFC 7515 appendix JWS and JWKs.
 */
#include <dirent.h>
#include <string.h>

#include "core/internal.h"
#include "fuzz_common.h"

#define SEED_MAX 16384

static fuzz_dsig_seed_cb emit_cb;
static void *emit_arg;

/* One seed of `target` (0 JWS, 1 JWK), the JWS ones with their mode byte. */
static void emit(unsigned target, uint8_t mode, const void *d, size_t len)
{
    static uint8_t buf[SEED_MAX + 1];
    if (len > SEED_MAX)
        return;
    size_t o = 0;
    if (target == 0)
        buf[o++] = mode;
    memcpy(buf + o, d, len);
    emit_cb(emit_arg, target, buf, len + o);
}

/* Sign "$.02" with `key` in each format and emit the texts (with mode bytes for each path). */
static void seed_jws_from_key(dsig_key *key, const dsig_alg *alg)
{
    for (int f = DSIG_FMT_JWS; f <= DSIG_FMT_RAW; f++) {
        dsig_jws_sign_opts so = {.format = (dsig_format)f, .include_kid = f == DSIG_FMT_JSON};
        dsig_jws_sign_ctx *sc;
        if (dsig_jws_sign_init(&sc, alg, key, &so) != DSIG_OK)
            continue;
        char *out;
        size_t ol;
        if (dsig_jws_sign_update(sc, "$.02", 4) != DSIG_OK) {
            dsig_jws_sign_abort(sc);
            continue;
        }
        if (dsig_jws_sign_final(sc, &out, &ol) != DSIG_OK)
            continue;
        emit(0, (uint8_t)(0x40 | f), out, ol);
        emit(0, 0x40, out, ol);
        if (f == DSIG_FMT_COMPACT_B64)
            emit(0, 0x80, out, ol);
        dsig_free(out);
    }
}

/* BASE64URL(header) + rest, as a JWS seed. */
static void seed_header(const char *hdr, const char *rest, uint8_t mode)
{
    char *h = dsig_b64url_encode_alloc((const uint8_t *)hdr, strlen(hdr));
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%s%s", h, rest);
    dsig_free(h);
    emit(0, mode, buf, (size_t)n);
}

/* The files of DSIG_VECTORS/jws/rfc7515: *.jwk to the JWK target, JWS texts to the JWS target (compact
 * ones through the embedded-payload path, JSON ones through the streaming API). */
static void seed_vectors(void)
{
    const char *v = getenv("DSIG_VECTORS");
    char dir[4096];
    if (!v)
        return;
    snprintf(dir, sizeof dir, "%s/jws/rfc7515", v);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static uint8_t text[SEED_MAX];
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        if (strcmp(dot, ".jwk") == 0)
            emit(1, 0, text, n);
        else if (strcmp(dot, ".jwsc") == 0)
            emit(0, 0x80, text, n);
        else
            emit(0, 0x42, text, n);
    }
    closedir(d);
}

void fuzz_jose_seeds(fuzz_dsig_seed_cb cb, void *arg)
{
    emit_cb = cb;
    emit_arg = arg;
    const fuzz_keys *fk = fuzz_get_keys();
    for (size_t i = 0; i < fk->n; i++) {
        const dsig_alg *a = NULL;
        for (size_t j = 0; j < dsig_alg_count() && !a; j++)
            if (dsig_key_check_alg(fk->key[i], dsig_alg_at(j)) == DSIG_OK)
                a = dsig_alg_at(j);
        if (a)
            seed_jws_from_key(fk->key[i], a);
        for (int priv = 1; priv >= 0; priv--) {
            char *j;
            size_t jl;
            if (dsig_jwk_export(fk->key[i], priv, &j, &jl) == DSIG_OK) {
                emit(1, 0, j, jl);
                dsig_free(j);
            }
        }
    }
    static const char *const headers[] = {
        "{\"alg\":\"HS256\",\"b64\":false,\"crit\":[\"b64\"]}",
        "{\"alg\":\"HS256\",\"b64\":true}",
        "{\"alg\":\"none\"}",
        "{\"alg\":\"EdDSA\",\"crit\":[\"exp\"],\"exp\":1}",
        "{\"alg\":\"ES256\",\"alg\":\"HS256\"}",
        "{\"alg\":\"HS256\",\"crit\":[\"b64\",\"b64\"],\"b64\":false}",
        "{\"alg\":\"\\u0000HS256\",\"kid\":\"\\ud800\"}",
        "{\"alg\":[],\"b64\":0,\"crit\":{}}",
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        seed_header(headers[i], "..AAAA", 0x40);
        seed_header(headers[i], ".JC4wMg.AAAA", 0x80);
    }
    static const char *const texts[] = {
        ("{\"protected\":\"eyJhbGciOiJIUzI1NiIsImI2NCI6ZmFsc2UsImNyaXQiOlsiYjY0Il19\",\"payload\":\"$.02\","
         "\"header\":{\"kid\":\"x\"},\"signature\":\"A5dxf2s96_n5FLueVuW1Z_vh161FwXZC4YLPff6dmDY\"}"),
        "{\"payload\":\"Zm9v\",\"signatures\":[{\"protected\":\"eyJhbGciOiJIUzI1NiJ9\",\"signature\":\"AA\"}]}",
        "eyJhbGciOiJIUzI1NiJ9.JC4wMg.5mvfOroL-g7HyqJoozehmsaqmvTYGEq5jTI1gVvoEoQ\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        for (uint8_t m = 0; m < 2; m++)
            emit(0, m ? 0x80 : 0x42, texts[i], strlen(texts[i]));
    static const char *const jwks[] = {
        "{\"kty\":\"oct\",\"k\":\"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow\",\"alg\":\"HS256\",\"use\":\"sig\",\"key_ops\":[\"sign\",\"verify\"]}",
        "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"d\":\"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\",\"alg\":\"EdDSA\"}",
        "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\",\"y\":\"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0\",\"d\":\"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI\"}",
        "{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"}",
        "{\"keys\":[{\"kty\":\"oct\",\"k\":\"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ\"}]}",
    };
    for (size_t i = 0; i < sizeof jwks / sizeof jwks[0]; i++)
        emit(1, 0, jwks[i], strlen(jwks[i]));
    seed_vectors();
}

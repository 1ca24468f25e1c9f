/*
 * examples/sign_file.c — the smallest complete use of libdsig: generate an Ed25519 key, sign FILE as a
 * detached JWS (RFC 7797) while it streams, then verify that JWS with the public key while FILE
 * streams again. Prints the JWS and "verified"; exit 0 valid, 1 invalid, 2 error.
 *
 *   cc sign_file.c $(pkg-config --cflags --libs dsig) -o sign_file && ./sign_file FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dsig/dsig.h>

static int feed_sign(void *arg, const uint8_t *data, size_t len)
{
    return dsig_jws_sign_update(arg, data, len);
}

static int feed_verify(void *arg, const uint8_t *data, size_t len)
{
    return dsig_jws_verify_update(arg, data, len);
}

/* Stream FILE through the signer: a detached JWS of the key's algorithm in *jws. */
static int sign_file(const char *path, const dsig_key *key, char **jws, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return DSIG_E_IO;
    }
    dsig_jws_sign_ctx *ctx;
    dsig_jws_sign_opts opts = {.format = DSIG_FMT_JWS};
    int rc = dsig_jws_sign_init(&ctx, NULL /* the key's algorithm */, key, &opts);
    if (rc == DSIG_OK) {
        rc = dsig_read_fd(fd, NULL, DSIG_IO_DEFAULT_CHUNK, feed_sign, ctx, NULL);
        if (rc == DSIG_OK)
            rc = dsig_jws_sign_final(ctx, jws, len);
        else
            dsig_jws_sign_abort(ctx);
    }
    close(fd);
    return rc;
}

/* Stream FILE through the verifier of `jws`: DSIG_OK valid, DSIG_E_VERIFY invalid, else an error. */
static int verify_file(const char *path, const dsig_key *pub, const char *jws, size_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return DSIG_E_IO;
    }
    dsig_jws_verify_ctx *ctx;
    int rc = dsig_jws_verify_init(&ctx, pub, jws, len, NULL /* the key decides the algorithm */);
    if (rc == DSIG_OK) {
        rc = dsig_read_fd(fd, NULL, DSIG_IO_DEFAULT_CHUNK, feed_verify, ctx, NULL);
        if (rc == DSIG_OK)
            rc = dsig_jws_verify_final(ctx);
        else
            dsig_jws_verify_abort(ctx);
    }
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "Usage: %s FILE\n", argv[0]);
        return 2;
    }
    const dsig_alg *alg = dsig_alg_by_name("Ed25519");
    dsig_key *key = NULL, *pub = NULL;
    char *jws = NULL;
    size_t jws_len = 0;
    int rc = alg ? dsig_key_generate(&key, alg, NULL) : DSIG_E_UNSUPPORTED;
    if (rc == DSIG_OK)
        rc = dsig_key_public(&pub, key);
    if (rc == DSIG_OK)
        rc = sign_file(argv[1], key, &jws, &jws_len);
    if (rc == DSIG_OK) {
        printf("%s %s\n", dsig_alg_name(alg), jws);
        rc = verify_file(argv[1], pub, jws, jws_len);
    }
    if (rc == DSIG_OK)
        printf("verified: %s\n", argv[1]);
    else
        fprintf(stderr, "%s: %s: %s\n", argv[1], dsig_strerror(rc), dsig_last_error_detail());
    dsig_free(jws);
    dsig_key_free(pub);
    dsig_key_free(key);
    return rc == DSIG_OK ? 0 : rc == DSIG_E_VERIFY ? 1 : 2;
}

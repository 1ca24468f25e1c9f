/*
 * A program that only verifies: read a public JWK and a compact JWS (embedded payload), verify, print
 * the payload. tests/install builds it with `pkg-config dsig` alone: it must link without libdsig-net
 * or libdsig-serve, and its ldd must name no HTTP library.
 *
 *   verify_jws PUB.jwk SIG.jws    exit 0 valid, 1 invalid, 2 error
 */
#include <stdio.h>
#include <stdlib.h>

#include <dsig/dsig.h>

/* The whole file in a NUL-terminated buffer (free it), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf) {
        while (*len && (buf[*len - 1] == '\n' || buf[*len - 1] == '\r'))
            (*len)--;
        buf[*len] = '\0';
    }
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: verify_jws PUB.jwk SIG.jws\n");
        return 2;
    }
    size_t klen, slen;
    char *jwk = slurp(argv[1], &klen), *jws = slurp(argv[2], &slen);
    dsig_key *key = NULL;
    int rc = jwk && jws ? dsig_jwk_import(&key, jwk, klen) : DSIG_E_IO;
    uint8_t *payload = NULL;
    size_t plen = 0;
    if (rc == DSIG_OK)
        rc = dsig_jws_verify_compact(key, jws, slen, NULL, &payload, &plen);
    if (rc == DSIG_OK)
        printf("verified: %.*s\n", (int)plen, (const char *)payload);
    else
        fprintf(stderr, "verify_jws: %s: %s\n", dsig_strerror(rc), dsig_last_error_detail());
    dsig_free(payload);
    dsig_key_free(key);
    free(jwk);
    free(jws);
    return rc == DSIG_OK ? 0 : rc == DSIG_E_VERIFY ? 1 : 2;
}

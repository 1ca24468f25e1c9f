/*
 * Key files: one JWK object or one PEM key (PKCS#8 private / SubjectPublicKeyInfo public), detected
 * from the content, or the state file of a stateful key (LMS/HSS, XMSS: dsig/state.h), detected by
 * its magic. The file text is wiped as soon as the key is parsed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Open a state file: locked until the key is freed. A dsig command makes one signature, and the
 * unused rest of a reserved window is lost when it exits: so it reserves 1 index per durable write
 * unless $DSIG_STATE_RESERVE says otherwise. */
static int keyfile_load_state(const char *path, dsig_key **key, struct cli_fileid *id)
{
    dsig_state_opts opts = {.reserve = 1};
    const char *env = getenv("DSIG_STATE_RESERVE");
    if (env && *env) {
        char *end;
        unsigned long v = strtoul(env, &end, 10);
        if (*end || v == 0 || v > 1000000) {
            fprintf(stderr, "dsig: DSIG_STATE_RESERVE='%s': %s: expected 1..1000000\n", env,
                    dsig_strerror(DSIG_E_ARG));
            return -1;
        }
        opts.reserve = (uint32_t)v;
    }
    int rc = dsig_state_open(key, path, &opts);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "state file '%s'", path);
        *key = NULL;
        return -1;
    }
    if (id)
        fileid_from_path(id, path, "state file");
    return 0;
}

/* Load and parse a key file. */
int keyfile_load(const char *path, dsig_key **key, int *is_pem, struct cli_fileid *id)
{
    *key = NULL;
    *is_pem = 0;
    if (!input_is_stdin(path) && dsig_state_is_state_file(path))
        return keyfile_load_state(path, key, id);
    char *text;
    size_t len;
    if (input_read_all(path, DSIG_JWK_MAX_BYTES, "key", &text, &len, id) != 0)
        return -1;
    const char *name = input_is_stdin(path) ? "<stdin>" : path;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    int rc;
    if (i < len && text[i] == '{') {
        rc = dsig_jwk_import(key, text, len);
    } else if (memmem(text, len, "-----BEGIN", 10)) {
        *is_pem = 1;
        rc = dsig_key_import_pem(key, text, len);
    } else {
        cli_free_secret(text, len);
        fprintf(stderr, "dsig: key '%s': %s: neither a JWK (JSON object) nor a PEM key\n", name,
                dsig_strerror(DSIG_E_FORMAT));
        return -1;
    }
    cli_free_secret(text, len);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "key '%s' (%s)", name, *is_pem ? "PEM" : "JWK");
        *key = NULL;
        return -1;
    }
    return 0;
}

/* Serialize a key (private or public part) as JWK or PEM. PEM carries no algorithm: a key bound to an
 * algorithm that takes only its own keys (DSIG_ALG_BOUND_KEY) would come out as a key of no use to it,
 * and usable for the plain algorithm of its type instead, so that is refused. */
int keyfile_export(const dsig_key *key, int pem, int include_private, const char *what, char **text,
                   size_t *len)
{
    const dsig_alg *bound = dsig_key_alg(key);
    if (pem && bound && (dsig_alg_flags(bound) & DSIG_ALG_BOUND_KEY)) {
        fprintf(stderr, "dsig: a %s key cannot be written as PEM: PEM records no algorithm, and %s takes only "
                "keys bound to it; write a JWK (without --pem)\n", dsig_alg_name(bound), dsig_alg_name(bound));
        *text = NULL;
        return -1;
    }
    int rc = pem ? dsig_key_export_pem(key, include_private, text, len)
                 : dsig_jwk_export(key, include_private, text, len);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "cannot export the %s as %s", what, pem ? "PEM" : "JWK");
        *text = NULL;
        return -1;
    }
    return 0;
}

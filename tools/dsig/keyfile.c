/*
 * Key files: one JWK object, one PEM key or one DER key (every form openssl writes: PKCS#8, SEC1,
 * PKCS#1, SubjectPublicKeyInfo), detected from the content, or the state file of a stateful key
 * (LMS/HSS, XMSS: dsig/state.h), detected by its magic. The file text is wiped as soon as the key is
 * parsed. A private key file that group or others may write is refused, one they may read is used
 * with a warning — as ssh treats its keys: whoever can write a key file chooses the key. (State
 * files: the library refuses any group or other access itself.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Refuse (-1) a private key file writable by group or others; warn when they may read it. */
static int check_private_mode(const struct cli_fileid *id, const char *kind)
{
    if (!id->set)
        return 0; /* standard input, a pipe: no file mode to judge */
    if (id->mode & 022) {
        cli_err("%s '%s': %s: mode %04o: a private key must not be writable by group or "
                        "others (chmod 600 '%s')",
                kind, id->name, dsig_strerror(DSIG_E_ARG), (unsigned)id->mode, id->name);
        return -1;
    }
    if (id->mode & 044)
        fprintf(stderr, "dsig: warning: %s '%s': mode %04o: a private key readable by group or others "
                        "(chmod 600 '%s')\n",
                kind, id->name, (unsigned)id->mode, id->name);
    return 0;
}

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
            cli_err("DSIG_STATE_RESERVE='%s': %s: expected 1..1000000", env,
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
    /* dsig_state_open has refused any group or other access to the file already. */
    if (id)
        fileid_from_path(id, path, "state file");
    return 0;
}

/* Load and parse a key file. */
int keyfile_load(const char *path, dsig_key **key, int *is_pem, struct cli_fileid *id)
{
    const char *form;
    int rc = keyfile_load_form(path, key, &form, id);
    *is_pem = rc == 0 && (strcmp(form, "PEM") == 0 || strcmp(form, "DER") == 0);
    return rc;
}

/* Load and parse a key file, saying which form it had. */
int keyfile_load_form(const char *path, dsig_key **key, const char **out_form, struct cli_fileid *id)
{
    *key = NULL;
    *out_form = "state file";
    if (!input_is_stdin(path) && dsig_state_is_state_file(path))
        return keyfile_load_state(path, key, id);
    char *text;
    size_t len;
    struct cli_fileid mine;
    if (input_read_all(path, DSIG_JWK_MAX_BYTES, "key", &text, &len, &mine) != 0)
        return -1;
    if (id)
        *id = mine;
    const char *name = input_is_stdin(path) ? "<stdin>" : path;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    int rc;
    const char *form = "JWK";
    if (i < len && text[i] == '{') {
        rc = dsig_jwk_import(key, text, len);
    } else if (memmem(text, len, "-----BEGIN", 10)) {
        form = "PEM";
        rc = dsig_key_import_pem(key, text, len);
    } else if (len && (unsigned char)text[0] == 0x30) { /* an ASN.1 SEQUENCE: DER */
        form = "DER";
        rc = dsig_key_import_der(key, (const uint8_t *)text, len);
    } else {
        cli_free_secret(text, len);
        cli_err("key '%s': %s: neither a JWK (JSON object) nor a PEM or DER key", name,
                dsig_strerror(DSIG_E_FORMAT));
        return -1;
    }
    *out_form = form;
    cli_free_secret(text, len);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "key '%s' (%s)", name, form);
        *key = NULL;
        return -1;
    }
    mine.name = name;
    if (dsig_key_has_private(*key) && check_private_mode(&mine, "key") != 0) {
        dsig_key_free(*key);
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

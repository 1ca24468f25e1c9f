/*
 * `dsig log`: check a `dsig serve` transparency log offline (dsig/tlog.h) — the whole log against its
 * signed checkpoints (verify), one record's inclusion (prove), and the note verifier key of a log key
 * (key). See docs/serve.md "Transparency log".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dsig/jwk.h"
#include "dsig/tlog.h"
#include "log_cmd.h"

const char cli_usage_log[] =
    "Usage: dsig log verify LOG... --log-key PUB [--checkpoints FILE] [--tree FILE]\n"
    "                       [--keys PATH]... [--jws DIR]\n"
    "       dsig log prove LOG... --log-key PUB (--jws FILE | --index N) [--payload-digest HEX]\n"
    "                      [--checkpoint FILE]\n"
    "       dsig log prove --proof ANSWER --log-key PUB [--record FILE] [--jws FILE] [--payload-digest HEX]\n"
    "       dsig log key KEY [--origin NAME]\n"
    "\n"
    "verify  recompute the Merkle tree (RFC 9162) of the audit log LOG (rotated files first, in order)\n"
    "        and check every signed checkpoint of FILE (default: LOG.checkpoints beside the last LOG)\n"
    "        against it: signature, root at its size, sizes that never shrink, consistency. Each\n"
    "        record's \"index\" must be its position. Prints the first bad record: edited, deleted,\n"
    "        reordered, truncated (an edited record is found exactly with the tree file the service\n"
    "        keeps, LOG.tree; without it, the range between two checkpoints).\n"
    "        --keys PATH (repeatable): a key directory (KID.jwk, KID.pub, as `dsig serve` reads it) or a\n"
    "        JWK Set / JWK file; only public halves are used. Once the log verifies, each record that\n"
    "        names a key must name one given: its \"thumbprint\" that of a key under its \"kid\", its\n"
    "        \"alg\" that key's algorithm. --jws DIR (with --keys): files of released JWS; each must be\n"
    "        in a record (its SHA-256 the record's \"jws_sha256\"), its header naming the record's\n"
    "        algorithm and opening with the record's key. The signature itself signs the payload\n"
    "        (detached, b64:false), which the log does not hold: check it with `dsig verify`.\n"
    "prove   the inclusion of one record in the latest checkpoint: with LOG, the record whose\n"
    "        \"jws_sha256\" is the SHA-256 of the JWS in FILE (the signature as the service returned it)\n"
    "        or record N, against FILE (default: LOG.checkpoint); with --proof, an answer of\n"
    "        GET /v1/log/proof, tied to the record in FILE (one line of the log) when given.\n"
    "        --payload-digest: the record must also hold this payload digest (hex SHA-256 / BLAKE3).\n"
    "key     print the note verifier key of a log key (Ed25519 JWK, private or public): what\n"
    "        --log-key takes; NAME defaults to the service's origin, dsig-serve/<thumbprint>.\n"
    "\n"
    "PUB is a note verifier key (NAME+KEYID+BASE64, as `dsig log key` and the service's start-up\n"
    "log print it) or a file holding one, or the log key's public JWK file (with --origin NAME when\n"
    "the service was configured with audit.log_origin).\n"
    "\n"
    "  -q, --quiet  no OK line (failures are still reported)\n"
    "\n"
    "Exit status: 0 verified, 1 the log or the proof does not verify, 2 error.\n";

/* The service's default origin for a log key: dsig-serve/<RFC 7638 thumbprint>. */
static int default_origin(const dsig_key *k, char name[DSIG_TLOG_ORIGIN_MAX + 1])
{
    char tp[DSIG_THUMBPRINT_LEN];
    int rc = dsig_jwk_thumbprint(k, tp);
    if (rc != DSIG_OK)
        return rc;
    snprintf(name, DSIG_TLOG_ORIGIN_MAX + 1, "dsig-serve/%s", tp);
    return DSIG_OK;
}

/* The log key: (name, pub) from a verifier key text, a file holding one, or a public JWK file. */
static int load_logkey(const char *arg, const char *origin, struct logkey *lk)
{
    FILE *f = fopen(arg, "rb");
    char *text = NULL;
    size_t len = 0;
    if (f) {
        fclose(f);
        if (input_read_all(arg, DSIG_JWK_MAX_BYTES, "log key", &text, &len, NULL) != 0)
            return -1;
    } else {
        len = strlen(arg);
        if (!(text = malloc(len + 1)))
            return cli_err("out of memory"), -1;
        memcpy(text, arg, len + 1);
    }
    size_t skip = strspn(text, " \t\r\n");
    int rc;
    if (text[skip] == '{') {
        dsig_key *k = NULL;
        rc = dsig_jwk_import(&k, text, len);
        if (rc == DSIG_OK)
            rc = dsig_tlog_ed25519_public(k, lk->pub);
        if (rc == DSIG_OK) {
            if (origin)
                snprintf(lk->name, sizeof lk->name, "%s", origin);
            else
                rc = default_origin(k, lk->name);
        }
        dsig_key_free(k);
    } else {
        rc = dsig_tlog_vkey_parse(text + skip, len - skip, lk->name, lk->pub);
        if (rc == DSIG_OK && origin && strcmp(origin, lk->name) != 0)
            rc = DSIG_E_ARG;
    }
    free(text);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "--log-key '%s'", arg);
        return -1;
    }
    return 0;
}

/* ---- key -------------------------------------------------------------------------------------- */

static int log_key(const char *path, const char *origin)
{
    dsig_key *k = NULL;
    int is_pem;
    if (keyfile_load(path, &k, &is_pem, NULL) != 0)
        return CLI_EXIT_ERROR;
    uint8_t pub[32];
    char name[DSIG_TLOG_ORIGIN_MAX + 1], *vkey = NULL;
    int rc = dsig_tlog_ed25519_public(k, pub);
    if (rc == DSIG_OK) {
        if (origin)
            snprintf(name, sizeof name, "%s", origin);
        else
            rc = default_origin(k, name);
    }
    if (rc == DSIG_OK)
        rc = dsig_tlog_vkey_format(name, pub, &vkey);
    dsig_key_free(k);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "log key '%s'", path);
        return CLI_EXIT_ERROR;
    }
    printf("%s\n", vkey);
    dsig_free(vkey);
    return CLI_EXIT_OK;
}

/* `dsig log` */
int cmd_log(int argc, char **argv)
{
    enum { OPT_LOGKEY = 1, OPT_CKPTS, OPT_TREE, OPT_JWS, OPT_INDEX, OPT_DIGEST, OPT_CKPT, OPT_PROOF, OPT_RECORD, OPT_ORIGIN,
           OPT_KEYS };
    static const struct cli_opt opts[] = {
        {"log-key", 0, 1, OPT_LOGKEY},     {"checkpoints", 0, 1, OPT_CKPTS}, {"tree", 0, 1, OPT_TREE},
        {"jws", 0, 1, OPT_JWS},            {"index", 0, 1, OPT_INDEX},       {"payload-digest", 0, 1, OPT_DIGEST},
        {"checkpoint", 0, 1, OPT_CKPT},    {"proof", 0, 1, OPT_PROOF},       {"record", 0, 1, OPT_RECORD},
        {"origin", 0, 1, OPT_ORIGIN},      {"keys", 0, 1, OPT_KEYS},         CLI_COMMON_OPTS,
        {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "log", opts, argc, argv);
    const char *sub = NULL, *lkey = NULL, *ckpts = NULL, *tree = NULL, *jws = NULL, *index = NULL, *digest = NULL,
               *ckpt = NULL, *proof = NULL, *record = NULL, *origin = NULL, *val;
    char **files = calloc((size_t)argc + 1, sizeof *files), **keys = calloc((size_t)argc + 1, sizeof *keys);
    int nfiles = 0, nkeys = 0, id;
    struct log_keys *ks = NULL;
    if (!files || !keys) {
        free(files);
        free(keys);
        return cli_err("out of memory"), CLI_EXIT_ERROR;
    }
    int status = CLI_EXIT_ERROR;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_LOGKEY: lkey = val; break;
        case OPT_CKPTS: ckpts = val; break;
        case OPT_TREE: tree = val; break;
        case OPT_JWS: jws = val; break;
        case OPT_INDEX: index = val; break;
        case OPT_DIGEST: digest = val; break;
        case OPT_CKPT: ckpt = val; break;
        case OPT_PROOF: proof = val; break;
        case OPT_RECORD: record = val; break;
        case OPT_ORIGIN: origin = val; break;
        case OPT_KEYS: keys[nkeys++] = (char *)val; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_log, stdout); status = CLI_EXIT_OK; goto out;
        case ARGS_POSITIONAL:
            if (!sub)
                sub = val;
            else
                files[nfiles++] = (char *)val;
            break;
        default: goto out;
        }
    }
    if (!sub) {
        status = cli_usage_error("log", "expected verify, prove or key");
    } else if (strcmp(sub, "key") == 0) {
        if (nfiles != 1 || lkey || ckpts || tree || jws || index || digest || ckpt || proof || record || nkeys)
            status = cli_usage_error("log", "key takes one key file and --origin only");
        else
            status = log_key(files[0], origin);
    } else if (strcmp(sub, "verify") != 0 && strcmp(sub, "prove") != 0) {
        status = cli_usage_error("log", "unknown subcommand '%s' (verify, prove, key)", sub);
    } else if (!lkey) {
        status = cli_usage_error("log", "%s needs --log-key PUB", sub);
    } else {
        struct logkey lk;
        if (load_logkey(lkey, origin, &lk) != 0)
            goto out;
        if (strcmp(sub, "verify") == 0) {
            if (!nfiles || index || digest || ckpt || proof || record)
                status = cli_usage_error("log", "verify takes LOG... --log-key PUB [--checkpoints FILE] [--tree FILE] "
                                                "[--keys PATH]... [--jws DIR]");
            else if (jws && !nkeys)
                status = cli_usage_error("log", "verify --jws DIR needs --keys PATH (the JWS are checked with the keys)");
            else if (nkeys && log_keys_load(&ks, keys, nkeys, jws) != 0)
                status = CLI_EXIT_ERROR;
            else
                status = log_verify(files, nfiles, &lk, ckpts, tree, ks);
        } else if (nkeys) {
            status = cli_usage_error("log", "--keys is an option of verify");
        } else if (proof) {
            if (nfiles || index || ckpts || tree || ckpt)
                status = cli_usage_error("log", "prove --proof takes --record, --jws and --payload-digest only");
            else
                status = log_prove_answer(proof, &lk, record, jws, digest);
        } else if (!nfiles || !!jws == !!index || record || ckpts || tree) {
            status = cli_usage_error("log", "prove takes LOG... and one of --jws FILE or --index N (or --proof ANSWER)");
        } else {
            status = log_prove_from_log(files, nfiles, &lk, jws, index, digest, ckpt);
        }
    }
out:
    log_keys_free(ks);
    free(keys);
    free(files);
    return status;
}

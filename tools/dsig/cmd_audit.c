/*
 * tools/dsig/cmd_audit.c — `dsig audit`: offline checks with public keys only (docs/kv.md "Auditing"):
 * a request log of `dsig kv serve` / `dsig book serve` entry by entry, a replay of a verified log into an
 * empty store, and a receipt (a signed reply).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
#include "cli.h"

int cmd_audit(int argc, char **argv);

const char cli_usage_audit[] =
    "Usage: dsig audit verify LOG --keys DIR\n"
    "       dsig audit replay LOG --keys DIR (--redis ADDR | --book)\n"
    "       dsig audit receipt FILE --server-key SERVER.pub.jwk\n"
    "\n"
    "verify   check every entry of a request log with nothing but the clients' public keys\n"
    "         (DIR/client-<ID>.jwk), each signature on the slow path: framing, consecutive entry numbers,\n"
    "         per-client sequence numbers (1, 2, 3, ...), the request against its record, the signature,\n"
    "         the hash chain. Prints the first bad, missing or reordered entry, or a summary.\n"
    "replay   verify, then execute every write of the log in order on an empty store: a redis-server\n"
    "         that holds no key (--redis unix:PATH or tcp:HOST:PORT), or an order book whose resting\n"
    "         orders are printed (--book). The result is the data set the server held.\n"
    "receipt  verify a reply written by 'dsig kv|book --receipt FILE' with the server's public key and\n"
    "         print what it proves.\n"
    "\n"
    "  -q, --quiet  no OK line and no notes (failures are still reported)\n"
    "\n"
    "Exit status: 0 verified, 1 a bad, missing or reordered entry / a receipt that does not verify,\n"
    "2 error (unreadable file, bad key, Redis not empty or unreachable).\n";

static void hex32(char out[65], const uint8_t in[32])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[in[i] >> 4];
        out[2 * i + 1] = hx[in[i] & 15];
    }
    out[64] = '\0';
}

/* Verify a log; prints the verdict (a success only without --quiet, as `dsig verify`). CLI exit code. */
static int verify_log(const char *log, const char *dir)
{
    apps_keyset *ks = NULL;
    int rc = apps_keyset_load(dir, &ks);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "audit: keys");
        return CLI_EXIT_ERROR;
    }
    apps_audit_result res;
    rc = apps_audit_verify(log, ks, &res);
    apps_keyset_free(ks);
    if (rc == DSIG_E_VERIFY) {
        fprintf(stderr, "dsig audit: %s: FAILED after %llu good entries: %s\n", log, (unsigned long long)res.entries,
                res.what);
        return CLI_EXIT_INVALID;
    }
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "audit: %s", log);
        return CLI_EXIT_ERROR;
    }
    if (!cli_quiet) {
        char h[65];
        hex32(h, res.head);
        printf("%s: OK: %llu entries from %llu clients verified (dsig %llu, sig %llu), chain head %s\n", log,
               (unsigned long long)res.entries, (unsigned long long)res.clients,
               (unsigned long long)res.by_scheme[APPS_SCHEME_DSIG], (unsigned long long)res.by_scheme[APPS_SCHEME_SIG],
               h);
    }
    return CLI_EXIT_OK;
}

/* `dsig audit receipt FILE --server-key KEY` */
static int check_receipt(const char *file, const char *keypath)
{
    char *buf = NULL;
    size_t len = 0;
    dsig_key *key = NULL;
    int status = CLI_EXIT_ERROR;
    if (input_read_all(file, 4 + 144 + APPS_MAX_RESULT + APPS_MAX_SIG, "receipt", &buf, &len, NULL) != 0)
        goto out;
    int rc = apps_key_load(keypath, 0, &key);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "audit receipt: server key");
        goto out;
    }
    apps_receipt_info info;
    rc = apps_receipt_check((const uint8_t *)buf, len, key, &info);
    if (rc == DSIG_E_VERIFY) {
        cli_err_lib(rc, "audit receipt: %s", file);
        status = CLI_EXIT_INVALID;
        goto out;
    }
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "audit receipt: %s", file);
        goto out;
    }
    char rh[65], ch[65];
    hex32(rh, info.request_hash);
    hex32(ch, info.chain);
    printf("%s: OK: signed by the server (%s, scheme %s): client %llu request %llu is log entry %llu\n"
           "request hash %s\nchain after it %s\nresult ",
           file, apps_app_name(info.app), apps_scheme_name(info.scheme), (unsigned long long)info.client,
           (unsigned long long)info.seq, (unsigned long long)info.index, rh, ch);
    apps_value_print(stdout, info.result, info.result_len);
    fputc('\n', stdout);
    status = CLI_EXIT_OK;
out:
    dsig_key_free(key);
    free(buf);
    return status;
}

/* `dsig audit ...`: argv[0] is "audit". */
int cmd_audit(int argc, char **argv)
{
    enum { OPT_KEYS = 1, OPT_REDIS, OPT_BOOK, OPT_SERVER_KEY };
    static const struct cli_opt opts[] = {{"keys", 0, 1, OPT_KEYS}, {"redis", 0, 1, OPT_REDIS},
                                          {"book", 0, 0, OPT_BOOK}, {"server-key", 0, 1, OPT_SERVER_KEY},
                                          CLI_COMMON_OPTS,          {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "audit", opts, argc, argv);
    const char *sub = NULL, *file = NULL, *keys = NULL, *redis = NULL, *skey = NULL, *val;
    int book = 0, id;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_KEYS: keys = val; break;
        case OPT_REDIS: redis = val; break;
        case OPT_BOOK: book = 1; break;
        case OPT_SERVER_KEY: skey = val; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_audit, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL:
            if (!sub)
                sub = val;
            else if (!file)
                file = val;
            else
                return cli_usage_error("audit", "unexpected argument '%s'", val);
            break;
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!sub || !file)
        return cli_usage_error("audit", "expected verify LOG, replay LOG or receipt FILE");
    if (strcmp(sub, "receipt") == 0) {
        if (!skey || keys || redis || book)
            return cli_usage_error("audit", "receipt takes --server-key only");
        return check_receipt(file, skey);
    }
    if (strcmp(sub, "verify") != 0 && strcmp(sub, "replay") != 0)
        return cli_usage_error("audit", "unknown subcommand '%s' (verify, replay, receipt)", sub);
    if (!keys)
        return cli_usage_error("audit", "%s needs --keys DIR", sub);
    if (strcmp(sub, "verify") == 0) {
        if (redis || book || skey)
            return cli_usage_error("audit", "verify takes --keys only");
        return verify_log(file, keys);
    }
    if (!!redis == book)
        return cli_usage_error("audit", "replay needs --redis ADDR or --book");
    int status = verify_log(file, keys);
    if (status != CLI_EXIT_OK)
        return status;
    uint64_t writes = 0;
    int rc = redis ? apps_audit_replay_kv(file, redis, &writes) : apps_audit_replay_book(file, stdout, &writes);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "audit replay: %s", file);
        return CLI_EXIT_ERROR;
    }
    cli_note("dsig audit: %s: %llu writes replayed into %s", file, (unsigned long long)writes,
             redis ? redis : "an empty order book");
    return CLI_EXIT_OK;
}

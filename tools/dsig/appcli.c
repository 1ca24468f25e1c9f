/*
 * tools/dsig/appcli.c — the server and client commands shared by `dsig kv` and `dsig book` (appcli.h).
 * The server runs on its own thread while the main thread waits for SIGINT/SIGTERM with sigwait (the
 * signals are blocked before any thread starts, so every thread inherits the mask).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appcli.h"
#include "cli.h"

#define LINE_MAX_BYTES (APPS_MAX_BODY + 1024)
#define MAX_WORDS 64

/* The server thread. */
static void *server_thread(void *arg)
{
    apps_server *s = arg;
    int rc = apps_server_run(s);
    if (rc != DSIG_OK)
        cli_err_lib(rc, "server");
    return NULL;
}

int appcli_serve(const struct appcli_app *a, int argc, char **argv)
{
    enum { OPT_LISTEN = 1, OPT_REDIS, OPT_KEY, OPT_KEYS, OPT_LOG, OPT_SCHEME, OPT_SYNC, OPT_POOL };
    static const struct cli_opt opts[] = {
        {"listen", 'l', 1, OPT_LISTEN}, {"redis", 0, 1, OPT_REDIS},   {"key", 'k', 1, OPT_KEY},
        {"keys", 0, 1, OPT_KEYS},       {"log", 0, 1, OPT_LOG},       {"scheme", 0, 1, OPT_SCHEME},
        {"sync", 0, 1, OPT_SYNC},       {"pool", 0, 1, OPT_POOL},     CLI_COMMON_OPTS,
        {NULL, 0, 0, 0}};
    char cmd[32];
    snprintf(cmd, sizeof cmd, "%s serve", a->cmd);
    struct cli_parser p;
    args_init(&p, cmd, opts, argc, argv);
    apps_server_opts so = {.app = a->app, .scheme = APPS_SCHEME_DSIG};
    const char *keypath = NULL, *keysdir = NULL, *val;
    int id;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_LISTEN:
            if (so.nlisten == APPS_MAX_LISTEN)
                return cli_usage_error(cmd, "at most %u --listen addresses", APPS_MAX_LISTEN);
            so.listen[so.nlisten++] = val;
            break;
        case OPT_REDIS: so.redis = val; break;
        case OPT_KEY: keypath = val; break;
        case OPT_KEYS: keysdir = val; break;
        case OPT_LOG: so.log_path = val; break;
        case OPT_SCHEME:
            if ((so.scheme = apps_scheme_by_name(val)) < 0)
                return cli_usage_error(cmd, "unknown scheme '%s' (none, sig, dsig)", val);
            break;
        case OPT_SYNC:
            if (strcmp(val, "group") == 0)
                so.sync_always = 0;
            else if (strcmp(val, "always") == 0)
                so.sync_always = 1;
            else
                return cli_usage_error(cmd, "--sync is group or always, not '%s'", val);
            break;
        case OPT_POOL:
            if (cli_parse_uint(cmd, "--pool", val, &so.pool) != 0)
                return CLI_EXIT_ERROR;
            break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(a->usage, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL: return cli_usage_error(cmd, "unexpected argument '%s'", val);
        default: return CLI_EXIT_ERROR;
        }
    }
    if (!so.nlisten || !keypath || !keysdir || !so.log_path)
        return cli_usage_error(cmd, "--listen, --key, --keys and --log are needed");
    if (a->app == APPS_APP_KV && !so.redis)
        return cli_usage_error(cmd, "--redis ADDR (the redis-server this store runs on) is needed");
    if (a->app != APPS_APP_KV && so.redis)
        return cli_usage_error(cmd, "--redis belongs to 'dsig kv serve'");
    so.quiet = cli_quiet;
    int status = CLI_EXIT_ERROR;
    dsig_key *key = NULL;
    apps_keyset *ks = NULL;
    apps_server *s = NULL;
    int rc = apps_key_load(keypath, 1, &key);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "%s: server key", cmd);
        goto out;
    }
    if ((rc = apps_keyset_load(keysdir, &ks)) != DSIG_OK) {
        cli_err_lib(rc, "%s: client keys", cmd);
        goto out;
    }
    so.key = key;
    so.clients = ks;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if ((rc = apps_server_new(&s, &so)) != DSIG_OK) {
        cli_err_lib(rc, "%s: cannot start", cmd);
        goto out;
    }
    for (size_t i = 0; i < so.nlisten; i++) {
        char addr[160];
        if (apps_server_address(s, i, addr, sizeof addr) == DSIG_OK)
            cli_note("dsig %s: listening on %s (%zu registered clients)", cmd, addr, apps_keyset_count(ks));
    }
    pthread_t th;
    if (pthread_create(&th, NULL, server_thread, s) != 0) {
        cli_err_sys(errno, "%s: thread", cmd);
        goto out;
    }
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    apps_server_stop(s);
    pthread_join(th, NULL);
    apps_server_stats st;
    apps_server_stats_get(s, &st);
    cli_note("dsig %s: stopping: %llu log entries, %llu executed now, refused %llu malformed / %llu bad "
             "signature / %llu replayed / %llu unknown client / %llu bad command, %llu store rebuilds",
             cmd, (unsigned long long)st.entries, (unsigned long long)st.executed,
             (unsigned long long)st.refused_malformed, (unsigned long long)st.refused_signature,
             (unsigned long long)st.refused_replay, (unsigned long long)st.refused_unknown,
             (unsigned long long)st.refused_command, (unsigned long long)st.backend_rebuilds);
    status = CLI_EXIT_OK;
out:
    apps_server_free(s);
    apps_keyset_free(ks);
    dsig_key_free(key);
    return status;
}

/* Split a line into whitespace-separated words (in place). The number of words, or -1 if too many. */
static int split_words(char *line, char **w, int cap)
{
    int n = 0;
    for (char *t = strtok(line, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
        if (n == cap)
            return -1;
        w[n++] = t;
    }
    return n;
}

/* Sign, send and print one command. CLI_EXIT_OK or CLI_EXIT_ERROR. */
static int run_one(const struct appcli_app *a, apps_client *c, int argc, char **argv, uint8_t *body,
                   const char *receipt, int verbose)
{
    size_t len = 0;
    if (a->body(argc, argv, body, &len) != 0)
        return CLI_EXIT_ERROR;
    apps_reply r;
    int rc = apps_client_call(c, body, len, &r);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "%s %s", a->cmd, argv[0]);
        return CLI_EXIT_ERROR;
    }
    a->print(r.result, r.result_len);
    if (fflush(stdout) != 0) {
        cli_err_sys(errno, "%s: standard output", a->cmd);
        return CLI_EXIT_ERROR;
    }
    if (verbose)
        fprintf(stderr, "dsig %s: request %llu is log entry %llu; reply verified (%s path)\n", a->cmd,
                (unsigned long long)r.seq, (unsigned long long)r.index,
                apps_client_scheme(c) == APPS_SCHEME_DSIG ? (r.fast ? "fast" : "slow") : "one-shot");
    if (receipt && output_write(receipt, r.receipt, r.receipt_len, 0, 0644, "receipt", NULL, 0) != 0)
        return CLI_EXIT_ERROR;
    return CLI_EXIT_OK;
}

int appcli_client(const struct appcli_app *a, int argc, char **argv)
{
    enum { OPT_CONNECT = 1, OPT_ID, OPT_KEY, OPT_SERVER_KEY, OPT_SCHEME, OPT_RECEIPT, OPT_TIMEOUT, OPT_VERBOSE,
           OPT_POOL };
    static const struct cli_opt opts[] = {
        {"connect", 'c', 1, OPT_CONNECT}, {"id", 0, 1, OPT_ID},           {"key", 'k', 1, OPT_KEY},
        {"server-key", 0, 1, OPT_SERVER_KEY}, {"scheme", 0, 1, OPT_SCHEME}, {"receipt", 0, 1, OPT_RECEIPT},
        {"timeout", 0, 1, OPT_TIMEOUT},   {"verbose", 'v', 0, OPT_VERBOSE}, {"pool", 0, 1, OPT_POOL},
        CLI_COMMON_OPTS,                  {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, a->cmd, opts, argc, argv);
    apps_client_opts co = {.app = a->app, .scheme = -1};
    const char *keypath = NULL, *serverkey = NULL, *receipt = NULL, *val;
    char *words[MAX_WORDS];
    int nwords = 0, verbose = 0, id;
    unsigned timeout = 0, idv = 0;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_CONNECT: co.address = val; break;
        case OPT_ID: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(val, &end, 10);
            if (errno || *end || v == 0 || v > APPS_MAX_ID || val[0] == '-')
                return cli_usage_error(a->cmd, "--id is a client id in 1..2^63-1, not '%s'", val);
            co.id = v;
            idv = 1;
            break;
        }
        case OPT_KEY: keypath = val; break;
        case OPT_SERVER_KEY: serverkey = val; break;
        case OPT_SCHEME:
            if ((co.scheme = apps_scheme_by_name(val)) < 0)
                return cli_usage_error(a->cmd, "unknown scheme '%s' (none, sig, dsig)", val);
            break;
        case OPT_RECEIPT: receipt = val; break;
        case OPT_TIMEOUT:
            if (cli_parse_uint(a->cmd, "--timeout", val, &timeout) != 0)
                return CLI_EXIT_ERROR;
            co.timeout_ms = (int)timeout;
            break;
        case OPT_POOL:
            if (cli_parse_uint(a->cmd, "--pool", val, &co.pool) != 0)
                return CLI_EXIT_ERROR;
            break;
        case OPT_VERBOSE: verbose = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(a->usage, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL:
            /* The command: it and everything after it are its words, verbatim ("INCRBY n -5"). */
            words[nwords++] = (char *)val;
            for (; p.idx < argc; p.idx++) {
                if (nwords == MAX_WORDS)
                    return cli_usage_error(a->cmd, "at most %d words in a command", MAX_WORDS);
                words[nwords++] = argv[p.idx];
            }
            break;
        default: return CLI_EXIT_ERROR;
        }
        if (nwords)
            break;
    }
    if (!co.address || !idv || !keypath || !serverkey)
        return cli_usage_error(a->cmd, "--connect, --id, --key and --server-key are needed");
    if (nwords == 0)
        return cli_usage_error(a->cmd, "missing the command (or '-' to read one per line)");
    int from_stdin = nwords == 1 && strcmp(words[0], "-") == 0;
    if (from_stdin && receipt)
        return cli_usage_error(a->cmd, "--receipt is for one command, not for '-'");
    int status = CLI_EXIT_ERROR;
    dsig_key *key = NULL, *skey = NULL;
    apps_client *c = NULL;
    uint8_t *body = malloc(APPS_MAX_BODY);
    char *line = from_stdin ? malloc(LINE_MAX_BYTES) : NULL;
    int rc;
    if (!body || (from_stdin && !line)) {
        cli_err_sys(ENOMEM, "%s", a->cmd);
        goto out;
    }
    if ((rc = apps_key_load(keypath, 1, &key)) != DSIG_OK) {
        cli_err_lib(rc, "%s: client key", a->cmd);
        goto out;
    }
    if ((rc = apps_key_load(serverkey, 0, &skey)) != DSIG_OK) {
        cli_err_lib(rc, "%s: server key", a->cmd);
        goto out;
    }
    co.key = key;
    co.server_key = skey;
    if ((rc = apps_client_connect(&c, &co)) != DSIG_OK) {
        cli_err_lib(rc, "%s: cannot connect to %s", a->cmd, co.address);
        goto out;
    }
    /* The server verifies this client's first batches before the first request: fast path from it on. */
    if ((rc = apps_client_sync(c)) != DSIG_OK) {
        cli_err_lib(rc, "%s: warm-up with %s", a->cmd, co.address);
        goto out;
    }
    if (!from_stdin) {
        status = run_one(a, c, nwords, words, body, receipt, verbose);
        goto out;
    }
    status = CLI_EXIT_OK;
    unsigned long lineno = 0;
    while (fgets(line, LINE_MAX_BYTES, stdin)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(stdin)) {
            fprintf(stderr, "dsig %s: line %lu: longer than %u bytes\n", a->cmd, lineno, LINE_MAX_BYTES);
            status = CLI_EXIT_ERROR;
            break;
        }
        char *w[MAX_WORDS];
        int n = split_words(line, w, MAX_WORDS);
        if (n < 0) {
            fprintf(stderr, "dsig %s: line %lu: more than %d words\n", a->cmd, lineno, MAX_WORDS);
            status = CLI_EXIT_ERROR;
            break;
        }
        if (n == 0 || w[0][0] == '#')
            continue;
        if ((status = run_one(a, c, n, w, body, NULL, verbose)) != CLI_EXIT_OK)
            break;
    }
out:
    apps_client_close(c);
    dsig_key_free(key);
    dsig_key_free(skey);
    free(body);
    free(line);
    return status;
}

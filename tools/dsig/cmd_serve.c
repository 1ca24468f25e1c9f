/*
 * tools/dsig/cmd_serve.c — `dsig serve --config FILE`: run the streaming signing service (docs/serve.md)
 * until SIGINT/SIGTERM; SIGHUP reloads the configuration and its keys. Signals are taken synchronously
 * with sigwait in the main thread (blocked before the server threads start, so they inherit the mask).
 * The server's log (JSON lines) goes to standard error.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dsig/mem.h"
#include "dsig/serve.h"

int cmd_serve(int argc, char **argv);

const char cli_usage_serve[] =
    "Usage: dsig serve --config FILE [-q]\n"
    "       dsig serve --new-token\n"
    "\n"
    "Run the HTTP signing service described by the configuration FILE (docs/serve.md) until SIGINT or\n"
    "SIGTERM. SIGHUP reloads the whole configuration and the key directory (all or nothing: a bad file\n"
    "keeps the current one; requests in flight keep theirs) and reopens the audit log. The log goes to\n"
    "standard error, one JSON object per line.\n"
    "Endpoints (docs/openapi.yaml): POST /v1/keys/{kid}/sign, POST /v1/keys/{kid}/verify (signature in\n"
    "the DSig-Signature header), GET /v1/keys/{kid}, GET /v1/keys, GET /healthz, GET /readyz,\n"
    "GET /metrics.\n"
    "\n"
    "  -c, --config FILE  the configuration (JSON)\n"
    "      --new-token    print a new random bearer token and the SHA-256 the configuration stores, as\n"
    "                     JSON {\"token\": ..., \"sha256\": ...}; hand the token to the client, put the\n"
    "                     hash in tenants[].tokens[].sha256\n"
    "  -q, --quiet        no informational messages (warnings and errors are still printed)\n"
    "  -h, --help         this help\n";

/* Server messages (one JSON object each) on stderr, one per line. */
static void log_line(void *arg, int level, const char *msg)
{
    (void)arg;
    if (level == DSIG_SERVE_LOG_INFO && cli_quiet)
        return;
    fprintf(stderr, "%s\n", msg);
}

/* `dsig serve` */
int cmd_serve(int argc, char **argv)
{
    enum { OPT_CONFIG = 1, OPT_NEW_TOKEN };
    static const struct cli_opt opts[] = {{"config", 'c', 1, OPT_CONFIG}, {"new-token", 0, 0, OPT_NEW_TOKEN},
                                          CLI_COMMON_OPTS, {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, "serve", opts, argc, argv);
    const char *config = NULL, *val;
    int id, new_token = 0;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        switch (id) {
        case OPT_CONFIG: config = val; break;
        case OPT_NEW_TOKEN: new_token = 1; break;
        case CLI_OPT_QUIET: cli_quiet = 1; break;
        case CLI_OPT_HELP: fputs(cli_usage_serve, stdout); return CLI_EXIT_OK;
        case ARGS_POSITIONAL: return cli_usage_error("serve", "unexpected argument '%s'", val);
        default: return CLI_EXIT_ERROR;
        }
    }
    if (new_token) {
        if (config)
            return cli_usage_error("serve", "--new-token and --config do not go together");
        char tok[DSIG_SERVE_TOKEN_LEN + 1], hex[65];
        int trc = dsig_serve_new_token(tok, hex);
        if (trc != DSIG_OK) {
            cli_err_lib(trc, "cannot make a token");
            return CLI_EXIT_ERROR;
        }
        printf("{\"token\": \"%s\", \"sha256\": \"%s\"}\n", tok, hex);
        dsig_memzero(tok, sizeof tok);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    }
    if (!config)
        return cli_usage_error("serve", "missing --config FILE");
    dsig_serve_config *cfg = NULL;
    int rc = dsig_serve_config_load(&cfg, config);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "configuration '%s'", config);
        return CLI_EXIT_ERROR;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    dsig_server *srv = NULL;
    if ((rc = dsig_server_start(&srv, cfg, log_line, NULL)) != DSIG_OK) {
        cli_err_lib(rc, "cannot start the server");
        return CLI_EXIT_ERROR;
    }
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig != SIGHUP)
            break;
        (void)dsig_server_reload(srv, NULL); /* logs what it did, or why it kept the configuration */
    }
    dsig_server_stop(srv);
    return CLI_EXIT_OK;
}

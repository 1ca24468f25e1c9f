/*
 * dsig — sign and verify payloads of any size with every algorithm of libdsig.
 *
 * main.c only dispatches: global options, then one command (cmd_*.c). `dsig bench` is handed to the
 * benchmark harness (bench/bench.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);
static int cmd_bench(int argc, char **argv);
int cmd_ping(int argc, char **argv); /* cmd_ping.c */
extern const char cli_usage_ping[];
int cmd_node(int argc, char **argv); /* cmd_node.c */
extern const char cli_usage_node[];
int cmd_bft(int argc, char **argv); /* cmd_bft.c */
extern const char cli_usage_bft[];
int cmd_serve(int argc, char **argv); /* cmd_serve.c */
extern const char cli_usage_serve[];
int cmd_kv(int argc, char **argv); /* cmd_kv.c */
extern const char cli_usage_kv[];
int cmd_book(int argc, char **argv); /* cmd_book.c */
extern const char cli_usage_book[];
int cmd_audit(int argc, char **argv); /* cmd_audit.c */
extern const char cli_usage_audit[];
int cmd_log(int argc, char **argv); /* cmd_log.c */
extern const char cli_usage_log[];

static const char usage_help[] = "Usage: dsig help [COMMAND]\n\nShow the usage of dsig or of one command.\n";
static const char usage_version[] = "Usage: dsig version\n\nShow the versions of the tool and of libdsig.\n";
static const char usage_bench[] =
    "Usage: dsig bench SUBCOMMAND [options]\n\nBenchmarks; see 'dsig bench --help'.\n";

static const struct cli_command commands[] = {
    {"list", "list the algorithms of the registry", cli_usage_list, cmd_list},
    {"keygen", "generate a key (JWK or PEM)", cli_usage_keygen, cmd_keygen},
    {"pubkey", "extract the public key of a key file", cli_usage_pubkey, cmd_pubkey},
    {"sign", "sign a file or standard input (streaming)", cli_usage_sign, cmd_sign},
    {"verify", "verify a signature (exit 0 valid, 1 invalid, 2 error)", cli_usage_verify, cmd_verify},
    {"key", "describe a key file (key info FILE)", cli_usage_key, cmd_key},
    {"bench", "run the benchmarks", usage_bench, cmd_bench},
    {"ping", "ping-pong latency: none / Ed25519 / DSig", cli_usage_ping, cmd_ping},
    {"node", "run a DSig node (background plane) until SIGINT/SIGTERM", cli_usage_node, cmd_node},
    {"bft", "a BFT replica, client or broadcast member on a DSig node", cli_usage_bft, cmd_bft},
    {"serve", "run the HTTP signing service (docs/serve.md)", cli_usage_serve, cmd_serve},
    {"kv", "auditable Redis: server and signing client (docs/kv.md)", cli_usage_kv, cmd_kv},
    {"book", "auditable order book: server and client (docs/orderbook.md)", cli_usage_book, cmd_book},
    {"audit", "verify a request log, replay it, check a receipt", cli_usage_audit, cmd_audit},
    {"log", "verify a dsig serve transparency log, prove a record's inclusion", cli_usage_log, cmd_log},
    {"version", "show versions", usage_version, cmd_version},
    {"help", "show help for a command", usage_help, cmd_help},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* The general usage: synopsis, commands, global options, exit codes. */
static void usage(FILE *f)
{
    fputs("Usage: dsig [-q] COMMAND [options] [arguments]\n"
          "\n"
          "Sign and verify payloads of any size in one streaming pass, as JWS (RFC 7515/7797) or raw\n"
          "signatures, with every algorithm of libdsig.\n"
          "\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-8s  %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "Global options:\n"
          "  -q, --quiet     no informational messages or progress bar (also accepted by every command)\n"
          "  -h, --help      this help ('dsig COMMAND --help' for a command's options)\n"
          "  -V, --version   same as 'dsig version'\n"
          "\n"
          "Exit status: 0 success, 1 what was checked does not verify (verify; audit: a log or a receipt;\n"
          "log: a transparency log or a proof;\n"
          "bft: a client's wrong result), 2 any error.\n",
          f);
}

/* Find a command by name. */
static const struct cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* Accept only -h/--help/-q/--quiet for commands that take no other arguments. */
static int simple_args(const char *cmd, const char *usage_text, int argc, char **argv, const char **arg)
{
    static const struct cli_opt opts[] = {CLI_COMMON_OPTS, {NULL, 0, 0, 0}};
    struct cli_parser p;
    args_init(&p, cmd, opts, argc, argv);
    int id;
    const char *val;
    while ((id = args_next(&p, &val)) != ARGS_END) {
        if (id == CLI_OPT_HELP) {
            fputs(usage_text, stdout);
            return -1;
        }
        if (id == CLI_OPT_QUIET) {
            cli_quiet = 1;
        } else if (id == ARGS_POSITIONAL && arg && !*arg) {
            *arg = val;
        } else if (id == ARGS_POSITIONAL) {
            return cli_usage_error(cmd, "unexpected argument '%s'", val);
        } else {
            return CLI_EXIT_ERROR;
        }
    }
    return CLI_EXIT_OK;
}

/* `dsig help [COMMAND]` */
static int cmd_help(int argc, char **argv)
{
    const char *topic = NULL;
    int rc = simple_args("help", usage_help, argc, argv, &topic);
    if (rc != CLI_EXIT_OK)
        return rc < 0 ? CLI_EXIT_OK : rc;
    if (!topic) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    const struct cli_command *c = find_command(topic);
    if (!c)
        return cli_usage_error("help", "unknown command '%s'", topic);
    fputs(c->usage, stdout);
    return CLI_EXIT_OK;
}

/* `dsig version` */
static int cmd_version(int argc, char **argv)
{
    int rc = simple_args("version", usage_version, argc, argv, NULL);
    if (rc != CLI_EXIT_OK)
        return rc < 0 ? CLI_EXIT_OK : rc;
    printf("dsig %s (libdsig %s)\n", DSIG_VERSION_STRING, dsig_version());
    return CLI_EXIT_OK;
}

/* `dsig bench ...`: argv[0] is "bench". */
static int cmd_bench(int argc, char **argv)
{
    return dsig_bench_main(argc, argv);
}

int main(int argc, char **argv)
{
    /* First of all, before jansson allocates anything: blocks freed by jansson (its lexer buffers
     * hold private JWK members as text) are wiped. A block from the default allocator must never
     * reach the wiping free, hence "first". */
    cli_json_wiping_allocator_install();
    /* Must come before anything touches OpenSSL, so the benchmarks can count its heap too. */
    (void)dsig_track_openssl_allocations();
    /* A closed output pipe must be an error message and exit 2, not death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            cli_quiet = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            return cmd_version(1, argv + i);
        } else {
            return cli_usage_error(NULL, "unknown option '%s'", a);
        }
    }
    if (i >= argc) {
        usage(stderr);
        return CLI_EXIT_ERROR;
    }
    const struct cli_command *c = find_command(argv[i]);
    if (!c)
        return cli_usage_error(NULL, "unknown command '%s'", argv[i]);
    return c->run(argc - i, argv + i);
}

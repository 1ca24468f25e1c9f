/*
 * tools/dsig/cmd_kv.c — `dsig kv`: the auditable key-value store on redis-server (docs/kv.md). `dsig kv
 * serve` runs the server; any other invocation is a client that signs one Redis command (or one per line
 * of standard input) and prints the verified reply.
 */
#include <stdio.h>
#include <string.h>

#include "appcli.h"
#include "cli.h"

int cmd_kv(int argc, char **argv);

const char cli_usage_kv[] =
    "Usage: dsig kv serve --listen ADDR [--listen ADDR]... --redis ADDR --key SERVER.jwk --keys DIR\n"
    "                     --log FILE [--scheme dsig|sig|none] [--sync group|always] [--pool N] [-q]\n"
    "       dsig kv --connect ADDR --id N --key CLIENT.jwk --server-key SERVER.pub.jwk [--scheme S]\n"
    "               [--receipt FILE] [--timeout MS] [--pool N] [-v] COMMAND [ARG...]  (or '-': one per line)\n"
    "\n"
    "An auditable Redis (docs/kv.md). The server signs nothing it did not log: every request must be\n"
    "signed by a registered client with the next sequence number; it is appended to the durable,\n"
    "hash-chained log FILE before Redis executes it, and the reply is signed by the server and names the\n"
    "request, its log entry and the log's chain value. 'dsig audit verify FILE --keys DIR' checks a log.\n"
    "The server owns its redis-server: it empties it (FLUSHALL) and replays the log at start and whenever\n"
    "the connection to Redis is lost.\n"
    "\n"
    "Server:\n"
    "  -l, --listen ADDR   unix:PATH or tcp:HOST:PORT (numeric host; port 0: any)\n"
    "      --redis ADDR    the redis-server: unix:PATH or tcp:HOST:PORT\n"
    "  -k, --key FILE      the server's private JWK (dsig keygen -a DSig for dsig, -a Ed25519 for sig)\n"
    "      --keys DIR      the clients' public keys, DIR/client-<ID>.jwk\n"
    "      --log FILE      the request log (created 0600, or recovered and continued)\n"
    "      --scheme S      dsig (default: DSig hybrid signatures), sig (the keys' one-shot algorithm,\n"
    "                      e.g. Ed25519) or none (unsigned: the benchmark's baseline; not auditable)\n"
    "      --sync MODE     group (default: concurrent requests share an fdatasync) or always\n"
    "      --pool N        DSig one-time keys kept ready (default 512)\n"
    "Client:\n"
    "  -c, --connect ADDR  the server's address\n"
    "      --id N          this client's registered id\n"
    "  -k, --key FILE      this client's private JWK\n"
    "      --server-key F  the server's public JWK: replies must verify under it\n"
    "      --scheme S      require this scheme (default: the one the server announces)\n"
    "      --receipt FILE  write the signed reply (for 'dsig audit receipt')\n"
    "      --timeout MS    wait this long for a reply (default 30000)\n"
    "      --pool N        DSig one-time keys kept ready (default 512)\n"
    "  -v, --verbose       say which log entry the request became and how the reply verified\n"
    "Commands: GET SET SETNX DEL EXISTS INCR DECR INCRBY DECRBY APPEND STRLEN MGET MSET HSET HGET HDEL\n"
    "HGETALL HLEN LPUSH RPUSH LPOP RPOP LRANGE LLEN SADD SREM SISMEMBER SCARD DBSIZE (deterministic ones\n"
    "only: a replay must rebuild the same data set). Options go before the command; its words follow it.\n"
    "Exit status: 0 executed (the reply may be a Redis error value), 2 refused or failed.\n";

/* Words -> KV body (the words are the Redis command). */
static int kv_body(int argc, char **argv, uint8_t *body, size_t *len)
{
    int rc = apps_kv_body(argc, (const char *const *)argv, NULL, body, APPS_MAX_BODY, len);
    if (rc != DSIG_OK) {
        cli_err_lib(rc, "kv %s", argv[0]);
        return -1;
    }
    return 0;
}

/* The reply as redis-cli would show it, on one line. */
static void kv_print(const uint8_t *v, size_t len)
{
    apps_value_print(stdout, v, len);
    fputc('\n', stdout);
}

static const struct appcli_app kv_app = {APPS_APP_KV, "kv", cli_usage_kv, kv_body, kv_print};

/* `dsig kv ...`: argv[0] is "kv". */
int cmd_kv(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return appcli_serve(&kv_app, argc - 1, argv + 1);
    return appcli_client(&kv_app, argc, argv);
}

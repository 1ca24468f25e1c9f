/*
 * src/apps/kv_redis.c — the key-value backend: an allow-list of deterministic Redis commands and their
 * execution on redis-server through hiredis (one blocking connection, used by whichever server thread
 * holds the execution turn).
 *
 * Only commands whose effect depends on nothing but the data set and their arguments are allowed (no
 * expiry, no randomness, no scripting, no administration), so that replaying the log rebuilds exactly
 * the same data set. A lost connection is reported as APPS_EXEC_DOWN: the server then resets Redis
 * (FLUSHALL on a new connection) and replays its log, because whether the last command took effect
 * cannot be known.
 */
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "apps/apps_internal.h"
#include "core/internal.h"

/* One allowed command: its arity (command name included) and whether it writes. parity: 1 = argc must be
 * odd (MSET key value ...), 2 = even (HSET key field value ...). */
struct kv_cmd {
    const char *name;
    unsigned min, max;
    unsigned char writes, parity;
};

static const struct kv_cmd kv_cmds[] = {
    {"GET", 2, 2, 0, 0},       {"SET", 3, 3, 1, 0},        {"SETNX", 3, 3, 1, 0},     {"DEL", 2, 64, 1, 0},
    {"EXISTS", 2, 64, 0, 0},   {"INCR", 2, 2, 1, 0},       {"DECR", 2, 2, 1, 0},      {"INCRBY", 3, 3, 1, 0},
    {"DECRBY", 3, 3, 1, 0},    {"APPEND", 3, 3, 1, 0},     {"STRLEN", 2, 2, 0, 0},    {"MGET", 2, 64, 0, 0},
    {"MSET", 3, 63, 1, 1},     {"HSET", 4, 64, 1, 2},      {"HGET", 3, 3, 0, 0},      {"HDEL", 3, 64, 1, 0},
    {"HGETALL", 2, 2, 0, 0},   {"HLEN", 2, 2, 0, 0},       {"LPUSH", 3, 64, 1, 0},    {"RPUSH", 3, 64, 1, 0},
    {"LPOP", 2, 2, 1, 0},      {"RPOP", 2, 2, 1, 0},       {"LRANGE", 4, 4, 0, 0},    {"LLEN", 2, 2, 0, 0},
    {"SADD", 3, 64, 1, 0},     {"SREM", 3, 64, 1, 0},      {"SISMEMBER", 3, 3, 0, 0}, {"SCARD", 2, 2, 0, 0},
    {"DBSIZE", 1, 1, 0, 0},
};
#define N_CMDS (sizeof kv_cmds / sizeof kv_cmds[0])

const char *apps_kv_command_list(void)
{
    return "GET SET SETNX DEL EXISTS INCR DECR INCRBY DECRBY APPEND STRLEN MGET MSET HSET HGET HDEL HGETALL HLEN "
           "LPUSH RPUSH LPOP RPOP LRANGE LLEN SADD SREM SISMEMBER SCARD DBSIZE";
}

/* The table entry of a command name (any case). */
static const struct kv_cmd *kv_lookup(const uint8_t *name, size_t len)
{
    for (size_t i = 0; i < N_CMDS; i++)
        if (strlen(kv_cmds[i].name) == len && strncasecmp(kv_cmds[i].name, (const char *)name, len) == 0)
            return &kv_cmds[i];
    return NULL;
}

/* Parse and check a body: the command is allowed and its arity fits. */
static int kv_parse_checked(const uint8_t *body, size_t len, const uint8_t **argv, size_t *lens, size_t *argc,
                            const struct kv_cmd **cmd, char *why, size_t cap)
{
    if (apps_kv_parse(body, len, argv, lens, APPS_KV_MAX_ARGS, argc) != DSIG_OK) {
        snprintf(why, cap, "%s", dsig_last_error_detail());
        return -1;
    }
    const struct kv_cmd *c = kv_lookup(argv[0], lens[0]);
    if (!c) {
        size_t n = lens[0] > 32 ? 32 : lens[0];
        char shown[33];
        for (size_t i = 0; i < n; i++)
            shown[i] = argv[0][i] >= 0x20 && argv[0][i] < 0x7f ? (char)argv[0][i] : '?';
        shown[n] = '\0';
        snprintf(why, cap, "kv: command \"%s\" is not allowed (allowed: %s)", shown, apps_kv_command_list());
        return -1;
    }
    if (*argc < c->min || *argc > c->max || (c->parity == 1 && *argc % 2 == 0) ||
        (c->parity == 2 && *argc % 2 == 1)) {
        snprintf(why, cap, "kv: wrong number of arguments for %s (%zu)", c->name, *argc - 1);
        return -1;
    }
    *cmd = c;
    return 0;
}

static int kv_check(const uint8_t *body, size_t len, char *why, size_t cap)
{
    const uint8_t *argv[APPS_KV_MAX_ARGS];
    size_t lens[APPS_KV_MAX_ARGS], argc;
    const struct kv_cmd *c;
    return kv_parse_checked(body, len, argv, lens, &argc, &c, why, cap);
}

static int kv_writes(const uint8_t *body, size_t len)
{
    const uint8_t *argv[APPS_KV_MAX_ARGS];
    size_t lens[APPS_KV_MAX_ARGS], argc;
    const struct kv_cmd *c;
    char why[8];
    return kv_parse_checked(body, len, argv, lens, &argc, &c, why, sizeof why) == 0 && c->writes;
}

struct kv_backend {
    apps_backend base;
    char *path;                  /* unix socket, or NULL */
    char *host;                  /* tcp */
    int port;
    redisContext *ctx;
};

/* A hiredis reply as a result value. */
static void put_reply(apps_buf *out, const redisReply *r, int depth)
{
    switch (r->type) {
    case REDIS_REPLY_STRING:
        apps_val_str(out, APPS_V_BULK, r->str, r->len);
        break;
    case REDIS_REPLY_STATUS:
        apps_val_str(out, APPS_V_STATUS, r->str, r->len);
        break;
    case REDIS_REPLY_ERROR:
        apps_val_str(out, APPS_V_ERROR, r->str, r->len);
        break;
    case REDIS_REPLY_INTEGER:
        apps_val_int(out, r->integer);
        break;
    case REDIS_REPLY_ARRAY:
        if (depth >= 4) {
            apps_val_str(out, APPS_V_ERROR, "nested too deep", 15);
            break;
        }
        apps_val_array(out, (uint32_t)r->elements);
        for (size_t i = 0; i < r->elements; i++)
            put_reply(out, r->element[i], depth + 1);
        break;
    default:
        apps_val_nil(out);
        break;
    }
}

static void kv_disconnect(struct kv_backend *k)
{
    if (k->ctx)
        redisFree(k->ctx);
    k->ctx = NULL;
}

static int kv_exec(apps_backend *be, uint64_t index, uint64_t client, const uint8_t *body, size_t len, apps_buf *out)
{
    (void)index;
    (void)client;
    struct kv_backend *k = (struct kv_backend *)be;
    const uint8_t *argv[APPS_KV_MAX_ARGS];
    size_t lens[APPS_KV_MAX_ARGS], argc;
    const struct kv_cmd *c;
    char why[256];
    if (kv_parse_checked(body, len, argv, lens, &argc, &c, why, sizeof why) != 0) {
        apps_val_str(out, APPS_V_ERROR, why, strlen(why)); /* checked before logging: unreachable */
        return APPS_EXEC_OK;
    }
    if (!k->ctx)
        return APPS_EXEC_DOWN;
    const char *av[APPS_KV_MAX_ARGS];
    av[0] = c->name; /* the canonical name, whatever case the client wrote */
    lens[0] = strlen(c->name);
    for (size_t i = 1; i < argc; i++)
        av[i] = (const char *)argv[i];
    redisReply *r = redisCommandArgv(k->ctx, (int)argc, av, lens);
    if (!r) {
        kv_disconnect(k);
        return APPS_EXEC_DOWN;
    }
    put_reply(out, r, 0);
    freeReplyObject(r);
    return APPS_EXEC_OK;
}

/* Connect (again); APPS_EXEC_OK or APPS_EXEC_DOWN with why[]. */
static int kv_connect(struct kv_backend *k, char *why, size_t cap)
{
    kv_disconnect(k);
    struct timeval tv = {2, 0};
    k->ctx = k->path ? redisConnectUnixWithTimeout(k->path, tv) : redisConnectWithTimeout(k->host, k->port, tv);
    if (!k->ctx || k->ctx->err) {
        snprintf(why, cap, "redis-server at %s%s: %s", k->path ? "unix:" : "tcp:", k->path ? k->path : k->host,
                 k->ctx ? k->ctx->errstr : "out of memory");
        kv_disconnect(k);
        return APPS_EXEC_DOWN;
    }
    /* A generous timeout: a command that takes longer is treated as a lost connection (rebuild). */
    struct timeval cmd = {10, 0};
    redisSetTimeout(k->ctx, cmd);
    return APPS_EXEC_OK;
}

static int kv_reset(apps_backend *be, char *why, size_t cap)
{
    struct kv_backend *k = (struct kv_backend *)be;
    if (kv_connect(k, why, cap) != APPS_EXEC_OK)
        return APPS_EXEC_DOWN;
    redisReply *r = redisCommand(k->ctx, "FLUSHALL");
    int ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (!ok)
        snprintf(why, cap, "redis-server: FLUSHALL failed: %s",
                 r && r->type == REDIS_REPLY_ERROR ? r->str : k->ctx->errstr[0] ? k->ctx->errstr : "no reply");
    if (r)
        freeReplyObject(r);
    if (!ok) {
        kv_disconnect(k);
        return APPS_EXEC_DOWN;
    }
    return APPS_EXEC_OK;
}

int apps_kv_connect_empty(apps_backend *be)
{
    struct kv_backend *k = (struct kv_backend *)be;
    char why[256];
    if (kv_connect(k, why, sizeof why) != APPS_EXEC_OK)
        return dsig_fail(DSIG_E_IO, "%s", why);
    redisReply *r = redisCommand(k->ctx, "DBSIZE");
    int rc = !r || r->type != REDIS_REPLY_INTEGER ? dsig_fail(DSIG_E_IO, "redis-server: DBSIZE failed")
             : r->integer != 0 ? dsig_fail(DSIG_E_STATE, "redis-server holds %lld keys: a replay needs an empty one",
                                           r->integer)
                               : DSIG_OK;
    if (r)
        freeReplyObject(r);
    return rc;
}

static void kv_free(apps_backend *be)
{
    struct kv_backend *k = (struct kv_backend *)be;
    if (!k)
        return;
    kv_disconnect(k);
    free(k->path);
    free(k->host);
    free(k);
}

const struct apps_backend_ops apps_kv_ops = {
    .app = APPS_APP_KV, .check = kv_check, .writes = kv_writes, .exec = kv_exec, .reset = kv_reset, .free = kv_free,
};

int apps_kv_backend_new(apps_backend **out, const char *address)
{
    *out = NULL;
    struct kv_backend *k = calloc(1, sizeof *k);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "kv: out of memory");
    k->base.ops = &apps_kv_ops;
    if (strncmp(address, "unix:", 5) == 0 && address[5]) {
        k->path = strdup(address + 5);
    } else if (strncmp(address, "tcp:", 4) == 0) {
        const char *colon = strrchr(address + 4, ':');
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : 0;
        if (!colon || colon == address + 4 || !end || *end || port < 1 || port > 65535) {
            free(k);
            return dsig_fail(DSIG_E_ARG, "kv: redis address \"%s\": expected unix:PATH or tcp:HOST:PORT", address);
        }
        k->host = strndup(address + 4, (size_t)(colon - address - 4));
        k->port = (int)port;
    } else {
        free(k);
        return dsig_fail(DSIG_E_ARG, "kv: redis address \"%s\": expected unix:PATH or tcp:HOST:PORT", address);
    }
    if (!k->path && !k->host) {
        free(k);
        return dsig_fail(DSIG_E_NOMEM, "kv: out of memory");
    }
    *out = &k->base;
    return DSIG_OK;
}

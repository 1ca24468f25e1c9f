/*
 * dsig/serve.h — `dsig serve`: a streaming signing service over HTTP/1.1 (libmicrohttpd), optionally
 * over its built-in TLS (configuration member "tls").
 *
 * Uploads are signed (JWS detached, unencoded payload: dsig/jws.h) or verified while they arrive: each
 * body chunk goes straight to the signer, nothing is buffered beyond one chunk and nothing is written
 * to disk. Keys come from a key directory (JWK files; state files of stateful keys) loaded at start and
 * on dsig_server_reload (SIGHUP in the tool), swapped atomically: a request in flight keeps the key it
 * started with. Tenants authenticate with bearer tokens stored as SHA-256 hashes. See docs/serve.md
 * for the configuration reference and docs/openapi.yaml for the HTTP interface.
 */
#ifndef DSIG_SERVE_H
#define DSIG_SERVE_H

#include "common.h"

DSIG_BEGIN_DECLS

typedef struct dsig_serve_config dsig_serve_config;
typedef struct dsig_server dsig_server;

/* Parse a configuration file (JSON, strict: unknown members, duplicates, wrong types and values out
 * of bounds are refused; dsig_last_error_detail() names the member). Relative paths in it are taken
 * relative to the file's directory. Free with dsig_serve_config_free. */
DSIG_EXPORT int dsig_serve_config_load(dsig_serve_config **cfg, const char *path);
/* The same from text; relative paths are taken relative to base_dir (NULL: the working directory). */
DSIG_EXPORT int dsig_serve_config_parse(dsig_serve_config **cfg, const char *json, size_t len,
                                        const char *base_dir);
DSIG_EXPORT void dsig_serve_config_free(dsig_serve_config *cfg);

/* Messages of the running server (key reloads, listener errors); NULL: none. Called from any thread. */
typedef void (*dsig_serve_log_fn)(void *arg, const char *message);

/* Load the keys, open the audit log and start listening (internal polling threads). Takes ownership
 * of cfg on every path (freed by dsig_server_stop, or here on failure). */
DSIG_EXPORT int dsig_server_start(dsig_server **srv, dsig_serve_config *cfg, dsig_serve_log_fn log,
                                  void *log_arg);
/* The bound TCP port (useful with port 0: an ephemeral port). */
DSIG_EXPORT unsigned dsig_server_port(const dsig_server *srv);
/* 1 if the server speaks TLS (configuration member "tls": https), 0 for plain HTTP. */
DSIG_EXPORT int dsig_server_tls(const dsig_server *srv);
/* Reload the key directory; all or nothing: on any error the current keys stay. *nkeys (may be NULL)
 * receives the number of keys now served. Requests in flight keep the keys they started with. */
DSIG_EXPORT int dsig_server_reload(dsig_server *srv, size_t *nkeys);
/* Stop listening, finish (abort) the connections, flush the audit log, free everything. NULL ok. */
DSIG_EXPORT void dsig_server_stop(dsig_server *srv);

#define DSIG_SERVE_TOKEN_LEN 43 /* base64url of 32 random bytes */
/* A new bearer token: 256 bits from the OS RNG as base64url (token, DSIG_SERVE_TOKEN_LEN chars + NUL)
 * and the lowercase hex SHA-256 the configuration stores (sha256_hex, 64 chars + NUL). The
 * configuration keeps only the hash, unsalted: safe because the token is random (docs/serve.md). The
 * caller should wipe `token` once it is handed over. */
DSIG_EXPORT int dsig_serve_new_token(char token[DSIG_SERVE_TOKEN_LEN + 1], char sha256_hex[65]);

DSIG_END_DECLS

#endif

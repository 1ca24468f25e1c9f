/*
 * dsig/serve.h — `dsig serve`: a streaming signing service over HTTP/1.1 (libmicrohttpd), optionally
 * over its built-in TLS (configuration member "tls").
 *
 * Uploads are signed (JWS detached, unencoded payload: dsig/jws.h) or verified while they arrive: each
 * body chunk goes straight to the signer, nothing is buffered beyond one chunk and nothing is written
 * to disk but the audit log, and no signature leaves before its audit record is durable. Keys come
 * from a key directory (JWK files; state files of stateful keys). The configuration and the keys are
 * loaded at start and again, as one unit, by dsig_server_reload (SIGHUP in the tool), swapped
 * atomically: a request in flight keeps the configuration and key it started with. Tenants
 * authenticate with bearer tokens stored as SHA-256 hashes. See docs/serve.md for the configuration
 * reference and docs/openapi.yaml for the HTTP interface.
 */
#ifndef DSIG_SERVE_H
#define DSIG_SERVE_H

#include "common.h"

DSIG_BEGIN_DECLS

typedef struct dsig_serve_config dsig_serve_config;
typedef struct dsig_server dsig_server;

/* Parse a configuration file (JSON, strict: unknown members, duplicates, wrong types and values out
 * of bounds are refused; dsig_last_error_detail() names the member). Relative paths in it are taken
 * relative to the file's directory. Free with dsig_serve_config_free. Keys are not loaded here (see
 * dsig_server_start). *cfg is NULL on failure.
 * @spec docs/serve.md "Configuration".
 * @retval DSIG_OK          *cfg holds the configuration.
 * @retval DSIG_E_ARG       cfg or path NULL, or a value out of bounds (the detail names the member).
 * @retval DSIG_E_IO        the file cannot be opened or read.
 * @retval DSIG_E_TOO_LARGE the file, or a member, is over its bound.
 * @retval DSIG_E_JSON      not strict JSON, an unknown, duplicate or missing member, a wrong type.
 * @retval DSIG_E_NOMEM     out of memory.
 */
DSIG_EXPORT int dsig_serve_config_load(dsig_serve_config **cfg, const char *path);

/*
 * dsig_serve_config_load from text (`json`, `len` bytes); relative paths are taken relative to
 * base_dir (NULL: the working directory). *cfg is NULL on failure.
 * @retval DSIG_OK          *cfg holds the configuration.
 * @retval DSIG_E_ARG       cfg or json NULL, or a value out of bounds.
 * @retval DSIG_E_TOO_LARGE the text, or a member, is over its bound.
 * @retval DSIG_E_JSON      not strict JSON, an unknown, duplicate or missing member, a wrong type.
 * @retval DSIG_E_NOMEM     out of memory.
 */
DSIG_EXPORT int dsig_serve_config_parse(dsig_serve_config **cfg, const char *json, size_t len,
                                        const char *base_dir);
/* Free a configuration not handed to dsig_server_start (which takes ownership). NULL is accepted. */
DSIG_EXPORT void dsig_serve_config_free(dsig_serve_config *cfg);

#define DSIG_SERVE_LOG_INFO 0  /* start, stop, reloads */
#define DSIG_SERVE_LOG_WARN 1  /* a skipped key file, libmicrohttpd's messages */
#define DSIG_SERVE_LOG_ERROR 2 /* a refused reload, the audit log stopping, a failed request's cause */
/* Messages of the running server, one JSON object each (no newline):
 *   {"time":"2026-11-30T04:04:07.432Z","level":"info","msg":"listening on port 8080"}
 * with "request_id" (the response header DSig-Request-Id, and the audit record's) when the message is
 * about a request. `level` is one of DSIG_SERVE_LOG_*. NULL: none. Called from any thread. */
typedef void (*dsig_serve_log_fn)(void *arg, int level, const char *message);

/* Load the keys, open the audit log and start listening (internal polling threads); logs "listening on
 * port N" (or "... (https)"). Takes ownership of cfg on every path (freed by dsig_server_stop, or here
 * on failure). *srv is NULL on failure.
 * @retval DSIG_OK      *srv runs (stop it with dsig_server_stop).
 * @retval DSIG_E_ARG   srv or cfg NULL.
 * @retval DSIG_E_IO    the key directory, a key file or the audit log cannot be read or opened, or the
 *                      port cannot be bound.
 * @retval DSIG_E_CRYPTO SHA-256 is not available from OpenSSL, or TLS cannot start.
 * @retval DSIG_E_RNG   the request-id key cannot be drawn.
 * @retval DSIG_E_NOMEM out of memory.
 * @retval other        a key the key directory holds is refused (the codes of dsig_jwk_import and
 *                      dsig_state_open).
 */
DSIG_EXPORT int dsig_server_start(dsig_server **srv, dsig_serve_config *cfg, dsig_serve_log_fn log,
                                  void *log_arg);
/*
 * The TCP port the server is bound to (useful with port 0: an ephemeral port).
 * @return the port, 0 for a NULL srv.
 */
DSIG_EXPORT unsigned dsig_server_port(const dsig_server *srv);
/*
 * Whether the server speaks TLS (configuration member "tls": https).
 * @retval 1 HTTPS.
 * @retval 0 plain HTTP, or srv NULL.
 */
DSIG_EXPORT int dsig_server_tls(const dsig_server *srv);
/* Reload the whole configuration — the file of dsig_serve_config_load again (or the text given to
 * dsig_serve_config_parse) — and its key directory, and reopen the audit log (rotation). All or
 * nothing: tenants, tokens (a removed token stops working at once), grants, rate limits, body and time
 * limits and keys are replaced together; on any error — a bad file or key, or a change of a member that
 * needs a restart (listen, tls, the thread pool and connection limits, audit) — the current
 * configuration stays and the error says why (it is logged too). *nkeys (may be NULL) receives the
 * number of keys now served. Requests in flight keep the configuration and keys they started with.
 * @retval DSIG_OK    the new configuration and keys serve from now on.
 * @retval DSIG_E_ARG srv NULL, or a member changed that needs a restart (the detail names it).
 * @retval other      the codes of dsig_serve_config_load and of key loading (dsig_server_start):
 *                    nothing changed.
 */
DSIG_EXPORT int dsig_server_reload(dsig_server *srv, size_t *nkeys);
/*
 * Whether the server can sign now: keys loaded and the audit log running (GET /readyz).
 * @retval 1 ready.
 * @retval 0 not ready, or srv NULL.
 */
DSIG_EXPORT int dsig_server_ready(dsig_server *srv);
/* Stop listening, finish (abort) the connections, flush the audit log, free everything. NULL ok. */
DSIG_EXPORT void dsig_server_stop(dsig_server *srv);

#define DSIG_SERVE_TOKEN_LEN 43 /* base64url of 32 random bytes */
/* A new bearer token: 256 bits from the OS RNG as base64url (token, DSIG_SERVE_TOKEN_LEN chars + NUL)
 * and the lowercase hex SHA-256 the configuration stores (sha256_hex, 64 chars + NUL). The
 * configuration keeps only the hash, unsalted: safe because the token is random (docs/serve.md). The
 * caller should wipe `token` once it is handed over.
 * @retval DSIG_OK       token and sha256_hex are written.
 * @retval DSIG_E_ARG    token or sha256_hex NULL.
 * @retval DSIG_E_RNG    the OS random generator failed (token is wiped).
 * @retval DSIG_E_CRYPTO SHA-256 failed (token is wiped).
 */
DSIG_EXPORT int dsig_serve_new_token(char token[DSIG_SERVE_TOKEN_LEN + 1], char sha256_hex[65]);

DSIG_END_DECLS

#endif

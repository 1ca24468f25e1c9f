/*
 * src/serve/key_rotate.c — key rotation at runtime (the "admin" operation):
 *
 *   POST /v1/keys/{id}/rotate               a new key of the same algorithm becomes version N+1: written
 *                                           durably as <id>.v<N+1>.jwk (kid "<id>.v<N+1>"), installed
 *                                           as the signing version; older versions verify only
 *   POST /v1/keys/{id}/versions/{N}/retire  marker <id>.v<N>.retired (durable): the version neither
 *                                           signs, verifies nor is listed in the JWK Set
 *   GET  /v1/keys/{id}/versions             every version and its state
 *
 * Both changes hold the server's reload lock: one reload, rotation or retirement at a time, each
 * seeing the set the previous one installed. A rotation installs a new key set (shared keys plus the
 * new one) as a reload does; requests in flight keep the set and keys they hold. A retirement flips
 * the version's atomic flag, seen by every set at once. What is on disk is what a restart loads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/durable.h"
#include "core/internal.h"
#include "front.h"

/* Wipe and free jansson's text (the tool's allocator wipes too; this does not rely on it). */
static void text_free(char *text)
{
    if (text)
        dsig_memzero(text, strlen(text));
    serve_json_free(text);
}

/* Create key_dir/name durably (never over an existing file): 0 or an errno, *step naming the step. */
static int create_file(const char *dir, const char *name, const char *buf, size_t len, const char **step)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        *step = "open the key directory";
        return errno;
    }
    int fd = -1;
    int e = dsig_durable_create(dfd, name, buf, len, 0, &fd, step);
    if (fd >= 0)
        close(fd);
    close(dfd);
    return e;
}

/* A new private key of alg `like`'s algorithm (and size, for RSA) as JWK text with "kid" = vkid. */
static int new_jwk(const struct serve_key *like, const char *vkid, char **text)
{
    *text = NULL;
    dsig_keygen_params p = {0};
    p.bits = dsig_key_bits(like->key);
    dsig_key *nk = NULL;
    int rc = dsig_key_generate(&nk, like->alg, &p);
    if (rc == DSIG_E_ARG) /* a key type of one size refuses an explicit size: its default is that size */
        rc = dsig_key_generate(&nk, like->alg, NULL);
    if (rc != DSIG_OK)
        return rc;
    char *jwk = NULL;
    size_t jl = 0;
    rc = dsig_jwk_export(nk, 1, &jwk, &jl);
    dsig_key_free(nk);
    if (rc != DSIG_OK)
        return rc;
    json_t *o = json_loadb(jwk, jl, 0, NULL);
    dsig_xfree(jwk, jl);
    if (!o || json_object_set_new(o, "kid", json_string(vkid)) != 0 || !(*text = json_dumps(o, JSON_COMPACT)))
        rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    json_decref(o);
    return rc;
}

/* Make, write and load version N+1 of `cur`'s id; *made holds a reference. */
static int make_version(const struct dsig_serve_config *cfg, const struct serve_keyset *ks,
                        const struct serve_key *cur, struct serve_key **made, unsigned *code, char *msg, size_t n)
{
    unsigned v = serve_keyset_max_version(ks, cur->kid) + 1;
    char vkid[SERVE_NAME_MAX + 16], file[SERVE_NAME_MAX + 24];
    snprintf(vkid, sizeof vkid, "%s.v%u", cur->kid, v);
    if (v > 999999999u || !serve_valid_name(vkid, strlen(vkid))) {
        *code = 409;
        snprintf(msg, n, "key \"%s\" cannot get a version %u: its kid \"%s\" would be over 64 characters", cur->kid,
                 v, vkid);
        return DSIG_E_ARG;
    }
    snprintf(file, sizeof file, "%s.jwk", vkid);
    char *text = NULL;
    int rc = new_jwk(cur, vkid, &text);
    if (rc != DSIG_OK) {
        *code = 500;
        snprintf(msg, n, "cannot generate a %s key: %s", dsig_alg_name(cur->alg), dsig_last_error_detail());
        return rc;
    }
    const char *step = "create";
    int e = create_file(cfg->key_dir, file, text, strlen(text), &step);
    text_free(text);
    if (e) {
        *code = e == EEXIST ? 409 : 500;
        snprintf(msg, n, "cannot write \"%s/%s\": %s: %s%s", cfg->key_dir, file, step, strerror(e),
                 e == EEXIST ? " (a file not loaded yet: reload the server first)" : "");
        return DSIG_E_IO;
    }
    if ((rc = serve_key_load(cfg, file, made)) != DSIG_OK) {
        *code = 500;
        snprintf(msg, n, "\"%s\" was written but does not load: %s", file, dsig_last_error_detail());
    }
    return rc;
}

json_t *serve_key_rotate(struct dsig_server *s, const char *id, unsigned *code, char *msg, size_t n,
                         struct serve_key **used)
{
    pthread_mutex_lock(&s->reload_mu);
    struct serve_runtime *rt = serve_current(s);
    struct serve_key *cur = serve_keyset_find(rt->ks, id), *made = NULL;
    struct serve_keyset *ks = NULL;
    json_t *doc = NULL;
    if (!cur) {
        *code = 404;
        snprintf(msg, n, "no such key");
    } else if (cur->stateful) {
        /* A stateful key's security rests on its one state file and index counter: a new version is a
         * new state file made with `dsig keygen --state` and placed in the key directory (a reload). */
        *code = 409;
        snprintf(msg, n, "key \"%s\" is %s, a stateful algorithm: it is not rotated by the server (make a new "
                 "state file <id>.v<N>.state with dsig and reload)", id, dsig_alg_name(cur->alg));
    } else if (make_version(rt->cfg, rt->ks, cur, &made, code, msg, n) == DSIG_OK) {
        if (serve_keyset_with(rt->ks, made, &ks) != DSIG_OK || serve_install_keyset(s, ks) != DSIG_OK) {
            *code = 500;
            snprintf(msg, n, "version %u was written but not installed (%s): reload the server", made->version,
                     dsig_last_error_detail());
        } else {
            *code = 200;
            doc = json_pack("{s:s,s:s,s:I,s:s,s:s}", "kid", made->vkid, "id", made->kid, "version",
                            (json_int_t)made->version, "alg", dsig_alg_name(made->alg), "thumbprint",
                            made->thumbprint);
        }
    }
    serve_runtime_unref(rt);
    pthread_mutex_unlock(&s->reload_mu);
    *used = made;
    return doc;
}

/* A version number from the path: 1..999999999, no leading zero. */
static unsigned parse_version(const char *t)
{
    size_t len = strlen(t);
    if (len == 0 || len > 9 || t[0] == '0')
        return 0;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] < '0' || t[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(t[i] - '0');
    }
    return v;
}

json_t *serve_key_retire(struct dsig_server *s, const char *id, const char *version, unsigned *code, char *msg,
                         size_t n, struct serve_key **used)
{
    unsigned v = parse_version(version);
    *used = NULL;
    if (!v) {
        *code = 404;
        snprintf(msg, n, "not a version number (1..999999999)");
        return NULL;
    }
    pthread_mutex_lock(&s->reload_mu);
    struct serve_runtime *rt = serve_current(s);
    struct serve_key *k = serve_keyset_find_version(rt->ks, id, v);
    json_t *doc = NULL;
    if (!k) {
        *code = 404;
        snprintf(msg, n, "key \"%s\" has no version %u", id, v);
    } else if (serve_keyset_find(rt->ks, id) == k) {
        *code = 409;
        snprintf(msg, n, "version %u is the signing version of key \"%s\": rotate first, then retire it", v, id);
    } else {
        char file[SERVE_NAME_MAX + 32], body[SERVE_STAMP_LEN + 1];
        snprintf(file, sizeof file, "%s.v%u.retired", id, v);
        serve_utc_stamp(body);
        size_t bl = strlen(body);
        body[bl++] = '\n';
        const char *step = "create";
        int e = atomic_load(&k->retired) ? 0 : create_file(rt->cfg->key_dir, file, body, bl, &step);
        if (e && e != EEXIST) { /* an existing marker is the same retirement, made before */
            *code = 500;
            snprintf(msg, n, "cannot write \"%s/%s\": %s: %s", rt->cfg->key_dir, file, step, strerror(e));
        } else {
            atomic_store(&k->retired, 1);
            *code = 200;
            doc = json_pack("{s:s,s:s,s:I,s:s}", "kid", k->vkid, "id", k->kid, "version", (json_int_t)k->version,
                            "state", "retired");
        }
    }
    if (k) {
        serve_key_ref(k);
        *used = k;
    }
    serve_runtime_unref(rt);
    pthread_mutex_unlock(&s->reload_mu);
    return doc;
}

json_t *serve_key_versions(const struct serve_keyset *ks, const char *id)
{
    size_t lo, hi;
    serve_keyset_range(ks, id, &lo, &hi);
    json_t *arr = json_array();
    for (size_t i = lo; arr && i < hi; i++) {
        const struct serve_key *k = ks->keys[i];
        json_array_append_new(arr, json_pack("{s:s,s:I,s:s,s:s,s:s}", "kid", k->vkid, "version",
                                             (json_int_t)k->version, "alg", dsig_alg_name(k->alg), "thumbprint",
                                             k->thumbprint, "state", serve_key_state(ks, k)));
    }
    return arr ? json_pack("{s:s,s:o}", "id", id, "versions", arr) : NULL;
}

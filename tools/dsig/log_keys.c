/*
 * tools/dsig/log_keys.c — `dsig log verify --keys PATH [--jws DIR]`: each record's signing key against
 * the public keys an auditor holds (a `dsig serve` key directory, or a JWK Set), and the released JWS
 * files against their records.
 *
 * What a record lets us check: it holds the key id, the key's RFC 7638 thumbprint, the algorithm, the
 * payload digest and the SHA-256 of the released JWS — not the JWS. So with the keys: the thumbprint is
 * that of a key given under this id, and the algorithm is one that key signs with. With JWS files: a
 * file whose SHA-256 a record holds is that record's signature; its protected header must name the
 * record's algorithm and open with the record's key (dsig_jws_verify_init: header, "alg" against the
 * key, signature size). The signature itself is NOT verified: the JWS is detached with "b64":false
 * (RFC 7797), so its signing input is BASE64URL(header) "." payload — the payload bytes, which no
 * digest in the record can stand in for (no JWS algorithm signs a digest of the payload alone). With
 * the payload, `dsig verify -k KEY -s JWS PAYLOAD` checks the signature.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "dsig/jwk.h"
#include "dsig/jws.h"
#include "log_cmd.h"

#define JWS_FILE_MAX (1u << 20) /* a released JWS: header and signature, far below this */

struct lk_key {
    char *kid;                      /* the service's key id: file name without extension, or "kid" */
    char *src;                      /* where it came from, for messages */
    dsig_key *pub;
    char tp[DSIG_THUMBPRINT_LEN];
};

struct lk_jws {
    uint8_t h[32];                  /* SHA-256 of the JWS (without a trailing newline) */
    char *path, *text;
    size_t len;
    int matched;
};

struct log_keys {
    struct lk_key *k;
    size_t nk, capk;
    struct lk_jws *j;
    size_t nj;
    uint64_t checked, jws_checked;  /* records whose key, and whose JWS, were checked */
};

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static char *path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p)
        snprintf(p, a + b + 2, "%s/%s", dir, name);
    return p;
}

/* Add the public half of k (freed here, private parts wiped by dsig_key_free) under kid. */
static int add_key(struct log_keys *ks, dsig_key *k, const char *kid, const char *src)
{
    struct lk_key e = {0};
    int rc = dsig_key_public(&e.pub, k);
    dsig_key_free(k);
    if (rc == DSIG_OK)
        rc = dsig_jwk_thumbprint(e.pub, e.tp);
    if (rc != DSIG_OK) {
        dsig_key_free(e.pub);
        cli_err_lib(rc, "--keys: key '%s' (MAC keys have no public part)", src);
        return -1;
    }
    if (ks->nk == ks->capk) {
        size_t cap = ks->capk ? 2 * ks->capk : 16;
        struct lk_key *p = realloc(ks->k, cap * sizeof *p);
        if (!p) {
            dsig_key_free(e.pub);
            return cli_err("out of memory"), -1;
        }
        ks->k = p;
        ks->capk = cap;
    }
    e.kid = dupstr(kid);
    e.src = dupstr(src);
    if (!e.kid || !e.src) {
        free(e.kid);
        free(e.src);
        dsig_key_free(e.pub);
        return cli_err("out of memory"), -1;
    }
    ks->k[ks->nk++] = e;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a > b && strcmp(s + a - b, suffix) == 0;
}

/* A key directory as `dsig serve` reads it: KID.jwk (private or public: only the public half is kept)
 * and KID.pub (the public key of a stateful KID.state, which is not opened here). */
static int load_dir(struct log_keys *ks, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_err_sys(errno, "--keys '%s'", dir);
        return -1;
    }
    int status = 0;
    struct dirent *de;
    while (status == 0 && (de = readdir(d))) {
        const char *name = de->d_name;
        if (name[0] == '.' || (!ends_with(name, ".jwk") && !ends_with(name, ".pub")))
            continue;
        char *path = path_join(dir, name), *kid = dupstr(name);
        struct stat st;
        if (!path || !kid) {
            cli_err("out of memory");
            status = -1;
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            kid[strlen(kid) - 4] = '\0';
            dsig_key *k = NULL;
            int is_pem;
            status = keyfile_load(path, &k, &is_pem, NULL) != 0 ? -1 : add_key(ks, k, kid, path);
        }
        free(path);
        free(kid);
    }
    closedir(d);
    return status;
}

/* A JWK Set file ({"keys": [...]}, as GET /.well-known/jwks.json serves it) or one JWK. A key's id is
 * its "kid" member; the service's JWK Set writes the RFC 7638 thumbprint there for a key file without
 * a "kid" of its own, so such a key matches a record by thumbprint only. One JWK without "kid": the file
 * name without extension. */
static int load_file(struct log_keys *ks, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (input_read_all(path, 64u * DSIG_JWK_MAX_BYTES, "keys", &text, &len, NULL) != 0)
        return -1;
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    cli_free_secret(text, len);
    json_t *arr = json_is_object(doc) ? json_object_get(doc, "keys") : NULL;
    if (!json_is_object(doc) || (arr && !json_is_array(arr))) {
        json_decref(doc);
        cli_err("--keys '%s': neither a directory, a JWK Set nor a JWK (%s)", path, doc ? "not an object" : je.text);
        return -1;
    }
    int status = 0;
    size_t n = arr ? json_array_size(arr) : 1;
    for (size_t i = 0; i < n && status == 0; i++) {
        json_t *jk = arr ? json_array_get(arr, i) : doc;
        if (!json_is_object(jk)) {
            cli_err("--keys '%s': key %zu is not a JSON object", path, i + 1);
            status = -1;
            break;
        }
        char *one = json_dumps(jk, JSON_COMPACT);
        dsig_key *k = NULL;
        int rc = one ? dsig_jwk_import(&k, one, strlen(one)) : DSIG_E_NOMEM;
        if (one) { /* jansson's allocator (the tool's wiping one, cli_json_wiping_allocator_install) */
            json_malloc_t jm;
            json_free_t jf;
            json_get_alloc_funcs(&jm, &jf);
            jf(one);
        }
        if (rc != DSIG_OK) {
            cli_err_lib(rc, "--keys '%s': key %zu", path, i + 1);
            status = -1;
            break;
        }
        char src[4096], stem[256];
        snprintf(src, sizeof src, arr ? "%s, key %zu" : "%s", path, i + 1);
        const char *kid = dsig_key_kid(k);
        if (!kid) {
            const char *base = strrchr(path, '/');
            snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
            char *dot = strrchr(stem, '.');
            if (dot && dot != stem)
                *dot = '\0';
            kid = stem;
        }
        char kidcopy[DSIG_KID_MAX + 1];
        snprintf(kidcopy, sizeof kidcopy, "%s", kid); /* k is freed by add_key */
        status = add_key(ks, k, kidcopy, src);
    }
    json_decref(doc);
    return status;
}

static int cmp_jws(const void *a, const void *b)
{
    return memcmp(((const struct lk_jws *)a)->h, ((const struct lk_jws *)b)->h, 32);
}

/* Every regular file of DIR is a released JWS (the response body of a sign request, compact or
 * flattened JSON; a trailing newline is not part of it). */
static int load_jws_dir(struct log_keys *ks, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_err_sys(errno, "--jws '%s'", dir);
        return -1;
    }
    size_t cap = 0;
    int status = 0;
    struct dirent *de;
    while (status == 0 && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        struct lk_jws e = {0};
        struct stat st;
        if (!(e.path = path_join(dir, de->d_name))) {
            cli_err("out of memory");
            status = -1;
            break;
        }
        if (stat(e.path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(e.path);
            continue;
        }
        if (input_read_all(e.path, JWS_FILE_MAX, "JWS", &e.text, &e.len, NULL) != 0) {
            free(e.path);
            status = -1;
            break;
        }
        while (e.len && (e.text[e.len - 1] == '\n' || e.text[e.len - 1] == '\r'))
            e.len--;
        dsig_tlog_sha256(e.text, e.len, e.h);
        if (ks->nj == cap) {
            cap = cap ? 2 * cap : 64;
            struct lk_jws *p = realloc(ks->j, cap * sizeof *p);
            if (!p) {
                free(e.path);
                free(e.text);
                cli_err("out of memory");
                status = -1;
                break;
            }
            ks->j = p;
        }
        ks->j[ks->nj++] = e;
    }
    closedir(d);
    if (status == 0 && ks->nj)
        qsort(ks->j, ks->nj, sizeof *ks->j, cmp_jws);
    for (size_t i = 1; status == 0 && i < ks->nj; i++)
        if (memcmp(ks->j[i - 1].h, ks->j[i].h, 32) == 0) {
            cli_err("--jws: '%s' and '%s' hold the same JWS", ks->j[i - 1].path, ks->j[i].path);
            status = -1;
        }
    return status;
}

void log_keys_free(struct log_keys *ks)
{
    if (!ks)
        return;
    for (size_t i = 0; i < ks->nk; i++) {
        free(ks->k[i].kid);
        free(ks->k[i].src);
        dsig_key_free(ks->k[i].pub);
    }
    for (size_t i = 0; i < ks->nj; i++) {
        free(ks->j[i].path);
        free(ks->j[i].text);
    }
    free(ks->k);
    free(ks->j);
    free(ks);
}

int log_keys_load(struct log_keys **out, char **paths, int npaths, const char *jws_dir)
{
    struct log_keys *ks = calloc(1, sizeof *ks);
    if (!ks)
        return cli_err("out of memory"), -1;
    int status = 0;
    for (int i = 0; i < npaths && status == 0; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            cli_err_sys(errno, "--keys '%s'", paths[i]);
            status = -1;
        } else {
            status = S_ISDIR(st.st_mode) ? load_dir(ks, paths[i]) : load_file(ks, paths[i]);
        }
    }
    if (status == 0 && ks->nk == 0) {
        cli_err("--keys: no key in %s%s (a key directory holds KID.jwk or KID.pub files)", paths[0],
                npaths > 1 ? " and the others" : "");
        status = -1;
    }
    if (status == 0 && jws_dir)
        status = load_jws_dir(ks, jws_dir);
    if (status != 0) {
        log_keys_free(ks);
        ks = NULL;
    }
    *out = ks;
    return status;
}

/* A bad record: the message, malloc'ed, in *why; returns 1. */
static int bad(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(char **why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(why, fmt, ap) < 0)
        *why = NULL;
    va_end(ap);
    return 1;
}

/* The JWS of this record, if given: its header names the record's algorithm and opens with its key. */
static int check_jws(struct log_keys *ks, const char *at, const char *hex, const struct lk_key *key,
                     const dsig_alg *alg, char **why)
{
    struct lk_jws want;
    if (!hex || log_unhex32(hex, want.h) != 0)
        return hex ? bad(why, "%s: \"jws_sha256\" is not 64 hex digits", at) : 0;
    struct lk_jws *j = ks->nj ? bsearch(&want, ks->j, ks->nj, sizeof *ks->j, cmp_jws) : NULL;
    if (!j)
        return 0;
    j->matched = 1;
    dsig_jws_verify_ctx *ctx = NULL;
    dsig_jws_verify_opts o = {.format = DSIG_FMT_AUTO, .alg = alg};
    int rc = dsig_jws_verify_init(&ctx, key->pub, j->text, j->len, &o);
    const dsig_alg *got = rc == DSIG_OK ? dsig_jws_verify_alg(ctx) : NULL;
    dsig_jws_verify_abort(ctx);
    if (rc != DSIG_OK)
        return bad(why, "%s: its JWS '%s' does not open with the key \"%s\" (%s): %s: %s", at, j->path, key->kid,
                   key->src, dsig_strerror(rc), dsig_last_error_detail());
    if (got != alg)
        return bad(why, "%s: its JWS '%s' is %s, the record says %s", at, j->path, dsig_alg_name(got),
                   dsig_alg_name(alg));
    ks->jws_checked++;
    return 0;
}

int log_keys_record(struct log_keys *ks, uint64_t index, const char *line, size_t len, const char *file,
                    uint64_t lineno, char **why)
{
    *why = NULL;
    char at[4200]; /* where, for the messages: "audit.log:8: record 7" */
    snprintf(at, sizeof at, "%s:%llu: record %llu", file, (unsigned long long)lineno, (unsigned long long)index);
    json_error_t je;
    json_t *r = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(r)) {
        json_decref(r);
        return bad(why, "%s is not a JSON object: %s", at, r ? "another JSON value" : je.text);
    }
    const char *kid = json_string_value(json_object_get(r, "kid"));
    const char *alg_name = json_string_value(json_object_get(r, "alg"));
    const char *tp = json_string_value(json_object_get(r, "thumbprint"));
    const char *jws = json_string_value(json_object_get(r, "jws_sha256"));
    int st = 0;
    if (!tp) {
        /* No key was used (refused before a key was chosen): nothing to check — unless it claims a
         * signature. */
        if (jws)
            st = bad(why, "%s holds a signature (\"jws_sha256\") but no key \"thumbprint\"", at);
        goto out;
    }
    if (!kid || !alg_name) {
        st = bad(why, "%s has a key \"thumbprint\" but no %s", at, kid ? "\"alg\"" : "\"kid\"");
        goto out;
    }
    /* The keys given under this version's kid (a record's "version" N > 1 is the key file
     * KID.vN.jwk: its kid "KID.vN"; version 1 is KID.jwk or KID.v1.jwk), else under the id, else keys
     * listed under their thumbprint (a JWK Set). */
    json_int_t ver = json_integer_value(json_object_get(r, "version"));
    char vkid[128] = "";
    if (ver > 0 && ver <= 999999999)
        snprintf(vkid, sizeof vkid, "%.64s.v%lld", kid, (long long)ver);
    const char *names[3] = {vkid[0] ? vkid : NULL, ver <= 1 ? kid : NULL, tp};
    const struct lk_key *key = NULL, *other = NULL;
    for (int pass = 0; pass < 3 && !key && !other; pass++)
        for (size_t i = 0; names[pass] && i < ks->nk && !key; i++)
            if (strcmp(ks->k[i].kid, names[pass]) == 0) {
                if (strcmp(ks->k[i].tp, tp) == 0)
                    key = &ks->k[i];
                else if (!other)
                    other = &ks->k[i];
            }
    if (!key) {
        st = other ? bad(why, "%s: key \"%s\" has thumbprint %s in the log, but the key \"%s\" given (%s) "
                              "has thumbprint %s: another key under this id",
                         at, kid, tp, other->kid, other->src, other->tp)
                   : bad(why, "%s: key \"%s\" (thumbprint %s) is not among the keys given (--keys)", at, kid, tp);
        goto out;
    }
    const dsig_alg *alg = dsig_alg_by_name(alg_name);
    if (!alg) {
        st = bad(why, "%s: unknown algorithm \"%s\"", at, alg_name);
        goto out;
    }
    const dsig_alg *bound = dsig_key_alg(key->pub);
    if (bound && bound != alg) {
        st = bad(why, "%s: algorithm %s in the log, but the key \"%s\" (%s) is bound to %s", at, alg_name,
                 key->kid, key->src, dsig_alg_name(bound));
        goto out;
    }
    int rc = dsig_key_check_alg(key->pub, alg);
    if (rc != DSIG_OK) {
        st = bad(why, "%s: algorithm %s in the log does not fit the key \"%s\" (%s): %s", at, alg_name,
                 key->kid, key->src, dsig_strerror(rc));
        goto out;
    }
    ks->checked++;
    st = check_jws(ks, at, jws, key, alg, why);
out:
    json_decref(r);
    if (st && !*why)
        return -1; /* out of memory for the message */
    return st;
}

int log_keys_unmatched(const struct log_keys *ks)
{
    for (size_t i = 0; i < ks->nj; i++)
        if (!ks->j[i].matched) {
            cli_err("the JWS '%s' is in no record of the log (no \"jws_sha256\" is its SHA-256)", ks->j[i].path);
            return 1;
        }
    return 0;
}

void log_keys_counts(const struct log_keys *ks, uint64_t *checked, uint64_t *jws_checked, size_t *nkeys,
                     size_t *njws)
{
    *checked = ks->checked;
    *jws_checked = ks->jws_checked;
    *nkeys = ks->nk;
    *njws = ks->nj;
}

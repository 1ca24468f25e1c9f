/*
 * Fuzz target: HTTP requests into `dsig serve` — the real server (dsig_server_start: libmicrohttpd,
 * routing, bearer-token authentication, tenants, streaming sign / verify, audit log with payload
 * digests) running in this process on 127.0.0.1, with an Ed25519, an ES256 and an ML-DSA-44 key. Each
 * input is one connection. The input is
 *
 *   byte 0   bit 7 set: raw mode — the rest is sent as is
 *            else structured mode, bits 0-1 method (GET POST HEAD PUT), bits 2-4 endpoint (sign, verify,
 *            key, keys, healthz, metrics, other, sign-digest), bit 5: extra header bytes follow; bit 6:
 *            a key-version endpoint instead, bits 2-3 (rotate, versions, retire version body[0] % 8,
 *            retire the version text made of the body's bytes as digits and 'v')
 *   byte 1   bits 0-1 key (ed, es, ml, a key id that does not exist), bits 2-3 token (full, verify-only,
 *            unknown, none), bit 4 Accept: application/json, bit 5 chunked body, bit 6 verify: give the
 *            harness's own valid JWS of the body (else the one after the body), bit 7 corrupt it;
 *            sign-digest: bit 6 makes the body {"hash": H, "digest": base64url(rest)} from the body
 *            bytes (H: the first one picks SHA-256, SHA-512, ExternalMu or SHA-384), else it goes as is
 *   [bit 5]  u8 length + header bytes (inserted as they are)
 *   u16le    body length, body; verify without bit 6: the rest is the DSig-Signature value
 *
 * Invariants (abort on violation; also whatever ASan and UBSan see in the server's threads):
 *   - every answer is an HTTP/1.1 status line, and never 500 (an internal error from a request);
 *   - structured requests without extra headers get exactly the documented answer: 400 for a control
 *     character in the DSig-Signature value (RFC 9110 §5.5, src/serve/http_strict.c), 401 for an unknown
 *     or missing token, 403 for a verify-only token signing, 404 for an unknown key or endpoint, 405
 *     for a wrong method; a sign answer (200) is a detached JWS that verifies over the body under the
 *     key; a verify answer is 200 for the harness's valid JWS, 422 for a corrupted one; a sign-digest
 *     answer is 400 for the Ed25519 key, 413 over 1 KiB (Content-Length), else 200 exactly when the
 *     library signs that digest with the harness's copy of the key (400 otherwise), and a 200's
 *     signature verifies over the digest under the key (dsig_verify_digest);
 *   - key versions (src/serve/key_rotate.c): the key directory starts every input as the harness made
 *     it (ed: version 1; es: 1 and 2; ml: 1 retired, 2, 3: the newest signs, and is the harness's key) —
 *     files a request wrote are removed and the server reloaded first. The harness keeps a model of
 *     each id's versions and states: a rotation (the "full" token has "admin") answers the next version
 *     with the key's algorithm and the thumbprint of the private key it wrote to <id>.v<N>.jwk; a
 *     retirement answers 200 for a version that is not the signing one (again for one retired), 409 for
 *     the signing one, 404 for no such version or not a version number, and leaves <id>.v<N>.retired;
 *     403 for the verify-only token; after each change, and for GET .../versions, the listing is the
 *     model exactly (kid, version, algorithm, thumbprint, state).
 *   A raw request may rotate or retire after its answer was given up on, during the next input: a
 *   model check then excuses a mismatch only if the key directory holds a file no request of this
 *   input wrote (late_change), and the next input starts from the reset directory again.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/sha.h>

#include "core/codec.h"
#include "dsig/serve.h"
#include "fuzz_common.h"

#define FH_MAX_INPUT 65536u
#define FH_NKEYS 3
/* How long a request that must be answered may wait for its first byte. Not 5 s: the campaign runs
 * under nice 19 on a shared machine, where a signature under ASan once took longer than that to get
 * the CPU (a false "no answer"); a server that does not answer at all still fails, at 30 s. */
#define FH_ANSWER_MS 30000

static const char *const kids[FH_NKEYS + 1] = {"ed", "es", "ml", "nokey"};
static const char *const algs[FH_NKEYS] = {"Ed25519", "ES256", "ML-DSA-44"};
#define FH_MAXV 6 /* versions of an id: the baseline's 3 + one rotation, with room */
/* Versions of each id in the baseline key directory, and the seeds of their keys (the newest is
 * S.key[i], seed 0x50 + i, as before versions existed). */
static const unsigned base_nv[FH_NKEYS] = {1, 2, 3};
enum { VS_SIGNING, VS_VERIFY_ONLY, VS_RETIRED };
static const char *const vstates[3] = {"signing", "verify-only", "retired"};
/* The model: per id, versions 1..nv with their state and thumbprint. */
struct vmodel {
    unsigned nv;
    int state[FH_MAXV + 1];
    char tp[FH_MAXV + 1][DSIG_THUMBPRINT_LEN];
};
static const char *const tokens[2] = {"fuzz-token-full-0123456789abcdefghijklmnopq",
                                      "fuzz-token-verify-0123456789abcdefghijklmno"};

static struct {
    int ready;
    char dir[256];
    dsig_server *srv;
    unsigned port;
    dsig_key *key[FH_NKEYS], *pub[FH_NKEYS];
    struct vmodel base[FH_NKEYS];
    char keydir[300];
    char own[4][96]; /* files the requests of this input wrote (late_change) */
    unsigned nown;
} S;

/* The server's last log messages (every level: reloads, libmicrohttpd's own warnings, a failed
 * request's cause), kept for the report of a request that got no answer. */
#define FH_LOG_KEEP 12
static struct {
    pthread_mutex_t mu;
    char msg[FH_LOG_KEEP][400];
    unsigned next;
} L = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};

static void server_log(void *arg, int level, const char *message)
{
    (void)arg;
    (void)level;
    pthread_mutex_lock(&L.mu);
    snprintf(L.msg[L.next++ % FH_LOG_KEEP], sizeof L.msg[0], "%s", message);
    pthread_mutex_unlock(&L.mu);
}

/* The kept log messages, oldest first, then the audit log's last records (what the server says the
 * client got, and why a request ended: its "result"), to stderr. */
static void print_server_state(void)
{
    pthread_mutex_lock(&L.mu);
    fprintf(stderr, "fuzz: the server's last log messages:\n");
    for (unsigned i = L.next > FH_LOG_KEEP ? L.next - FH_LOG_KEEP : 0; i < L.next; i++)
        fprintf(stderr, "  %s\n", L.msg[i % FH_LOG_KEEP]);
    pthread_mutex_unlock(&L.mu);
    char p[512];
    snprintf(p, sizeof p, "%s/audit.log", S.dir);
    FILE *f = fopen(p, "rb");
    if (!f)
        return;
    static char tail[6][2048];
    unsigned n = 0;
    while (fgets(tail[n % 6], sizeof tail[0], f))
        n++;
    fclose(f);
    fprintf(stderr, "fuzz: the audit log's last records:\n");
    for (unsigned i = n > 6 ? n - 6 : 0; i < n; i++)
        fprintf(stderr, "  %s", tail[i % 6]);
}

static void stop(void)
{
    dsig_server_stop(S.srv);
    for (int i = 0; i < FH_NKEYS; i++) {
        dsig_key_free(S.key[i]);
        dsig_key_free(S.pub[i]);
    }
}

static void write_file(const char *path, const char *text, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FUZZ_CHECK(fd >= 0 && write(fd, text, n) == (ssize_t)n && close(fd) == 0, "cannot write %s", path);
}

static void hex_sha256(const char *s, char out[65])
{
    uint8_t h[32];
    SHA256((const uint8_t *)s, strlen(s), h);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
}

/* 1 if `name` is a file of the baseline key directory. */
static int base_file(const char *name)
{
    if (strcmp(name, "ml.v1.retired") == 0)
        return 1;
    for (int i = 0; i < FH_NKEYS; i++)
        for (unsigned v = 1; v <= base_nv[i]; v++) {
            char f[32];
            if (v == 1)
                snprintf(f, sizeof f, "%s.jwk", kids[i]);
            else
                snprintf(f, sizeof f, "%s.v%u.jwk", kids[i], v);
            if (strcmp(name, f) == 0)
                return 1;
        }
    return 0;
}

/* Files in the key directory that are not the baseline's (remove: unlink them). Their count; with
 * skip_own, those this input's requests wrote are not counted. */
static unsigned extra_files(int remove, int skip_own)
{
    DIR *d = opendir(S.keydir);
    FUZZ_CHECK(d != NULL, "opendir %s: %s", S.keydir, strerror(errno));
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || base_file(e->d_name))
            continue;
        int own = 0;
        for (unsigned i = 0; skip_own && i < S.nown; i++)
            own |= strcmp(e->d_name, S.own[i]) == 0;
        if (own)
            continue;
        n++;
        if (remove) {
            char p[600];
            snprintf(p, sizeof p, "%s/%s", S.keydir, e->d_name);
            FUZZ_CHECK(unlink(p) == 0, "unlink %s: %s", p, strerror(errno));
        }
    }
    closedir(d);
    return n;
}

/* Back to the baseline key directory: remove what rotations and retirements wrote, reload the server
 * (a reload also clears a retirement's flag: a version's state is what the markers say). */
static void reset_keys(void)
{
    S.nown = 0;
    if (extra_files(1, 0)) {
        size_t nk = 0;
        FUZZ_CHECK(dsig_server_reload(S.srv, &nk) == DSIG_OK && nk == 6, "reload: %zu keys (%s)", nk,
                   dsig_last_error_detail());
    }
}

/* A file written by a request some earlier input sent and gave up on: a mismatch with the model may be
 * its doing (a rotation writes its file before it installs the key). */
static int late_change(void)
{
    return extra_files(0, 1) != 0;
}

/* The key directory, the configuration and the server (once per process). */
static void init(void)
{
    if (S.ready)
        return;
    S.ready = 1;
    snprintf(S.dir, sizeof S.dir, "%s", fuzz_tmpdir("serve"));
    char p[512];
    snprintf(S.keydir, sizeof S.keydir, "%s/keys", S.dir);
    FUZZ_CHECK(mkdir(S.keydir, 0700) == 0, "mkdir %s", S.keydir);
    for (int i = 0; i < FH_NKEYS; i++) {
        S.base[i].nv = base_nv[i];
        for (unsigned v = 1; v <= base_nv[i]; v++) {
            uint8_t seed[32];
            memset(seed, v == base_nv[i] ? 0x50 + i : 0x60 + 8 * i + (int)v, sizeof seed);
            dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
            dsig_key *k;
            char *j;
            size_t jl;
            FUZZ_CHECK(dsig_key_generate(&k, dsig_alg_by_name(algs[i]), &kp) == DSIG_OK &&
                           dsig_jwk_export(k, 1, &j, &jl) == DSIG_OK &&
                           dsig_jwk_thumbprint(k, S.base[i].tp[v]) == DSIG_OK,
                       "key %s", algs[i]);
            if (v == 1)
                snprintf(p, sizeof p, "%s/%s.jwk", S.keydir, kids[i]);
            else
                snprintf(p, sizeof p, "%s/%s.v%u.jwk", S.keydir, kids[i], v);
            write_file(p, j, jl);
            dsig_free(j);
            S.base[i].state[v] = v == base_nv[i] ? VS_SIGNING : VS_VERIFY_ONLY;
            if (v == base_nv[i]) {
                S.key[i] = k;
                FUZZ_CHECK(dsig_key_public(&S.pub[i], k) == DSIG_OK, "public key %s", algs[i]);
            } else {
                dsig_key_free(k);
            }
        }
    }
    snprintf(p, sizeof p, "%s/ml.v1.retired", S.keydir);
    write_file(p, "2026-12-02T00:00:00Z\n", 21);
    S.base[2].state[1] = VS_RETIRED;
    char h0[65], h1[65], cfg[4096];
    hex_sha256(tokens[0], h0);
    hex_sha256(tokens[1], h1);
    int n = snprintf(cfg, sizeof cfg,
                     "{\"listen\":{\"address\":\"127.0.0.1\",\"port\":0},\"key_dir\":\"keys\","
                     "\"audit\":{\"path\":\"audit.log\",\"sync\":\"none\",\"payload_digest\":\"blake3\","
                     "\"digest_threads\":1},\"limits\":{\"max_header_bytes\":4096,\"request_timeout_s\":2,"
                     "\"max_body_bytes\":65536,\"threads\":1,\"upload_buffer_bytes\":8192,"
                     "\"auth_failures\":{\"per_second\":0}},\"tenants\":["
                     "{\"name\":\"full\",\"tokens\":[{\"sha256\":\"%s\"}],\"keys\":[\"*\"],\"operations\":[\"sign\",\"verify\",\"sign-digest\",\"admin\"]},"
                     "{\"name\":\"ro\",\"tokens\":[{\"sha256\":\"%s\"}],\"keys\":[\"ed\",\"es\",\"ml\"],"
                     "\"operations\":[\"verify\"]}]}",
                     h0, h1);
    dsig_serve_config *c;
    FUZZ_CHECK(dsig_serve_config_parse(&c, cfg, (size_t)n, S.dir) == DSIG_OK, "configuration: %s",
               dsig_last_error_detail());
    FUZZ_CHECK(dsig_server_start(&S.srv, c, server_log, NULL) == DSIG_OK, "server start: %s", dsig_last_error_detail());
    S.port = dsig_server_port(S.srv);
    atexit(stop);
}

/* 1 once resp holds a whole answer: headers and Content-Length bytes of body. */
static int complete(const char *resp, size_t n)
{
    const char *end = strstr(resp, "\r\n\r\n"), *cl = strcasestr(resp, "\r\nContent-Length:");
    return end && cl && cl < end && (size_t)(n - (size_t)(end + 4 - resp)) >= strtoull(cl + 17, NULL, 10);
}

/* One connection: send the request, read the answer until the server closes, or until nothing came for
 * first_ms (no answer: an incomplete request the server waits on), or until the answer is complete
 * (Content-Length), or, once bytes came, 50 ms of silence. The request's end is not signalled by shutting the write side:
 * libmicrohttpd then holds an answered upload until its request timeout. */
static size_t exchange(const uint8_t *req, size_t n, int first_ms, char *resp, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)S.port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    FUZZ_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s", strerror(errno));
    size_t off = 0;
    while (off < n) { /* the server may answer (413, 401) and close before reading everything */
        ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    size_t got = 0;
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, got ? 50 : first_ms) <= 0)
            break;
        ssize_t r = recv(fd, resp + got, cap - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
        resp[got] = '\0';
        if (got == cap - 1 || complete(resp, got))
            break;
    }
    resp[got] = '\0';
    close(fd);
    return got;
}

/* When a request that must be answered got nothing: the server's connection figures (GET /metrics),
 * for the failure message — a stuck server, the per-address limit, a connection cut, or a request
 * ended by an internal error without a response (errors_total{kind="internal"}). */
static const char *no_answer_why(unsigned code)
{
    static char why[768], m[1 << 16];
    why[0] = '\0';
    if (code)
        return why;
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n";
    size_t n = exchange((const uint8_t *)req, sizeof req - 1, FH_ANSWER_MS, m, sizeof m);
    int o = snprintf(why, sizeof why, "(then GET /metrics: %zu bytes;", n);
    static const char *const names[] = {"\ndsig_serve_connections_open ", "{reason=\"header_timeout\"} ",
                                        "{reason=\"too_slow\"} ", "{reason=\"per_address\"} ",
                                        "\ndsig_serve_requests_in_flight ", "{kind=\"internal\"} ",
                                        "{kind=\"timeout\"} ", "{kind=\"client_abort\"} "};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *at = strstr(m, names[i]);
        o += snprintf(why + o, sizeof why - (size_t)o, " %s %lld", names[i] + (names[i][0] == '\n'),
                      at ? strtoll(at + strlen(names[i]), NULL, 10) : -1LL);
    }
    snprintf(why + o, sizeof why - (size_t)o, ")");
    print_server_state();
    return why;
}

/* Status code of an answer; 0 if there is none. */
static unsigned status(const char *resp, size_t n)
{
    if (!n)
        return 0;
    FUZZ_CHECK(n >= 12 && memcmp(resp, "HTTP/1.1 ", 9) == 0 && resp[9] >= '1' && resp[9] <= '5',
               "not an HTTP/1.1 status line: %.40s", resp);
    unsigned code = (unsigned)atoi(resp + 9);
    FUZZ_CHECK(code != 500, "internal error answered to a request: %.300s", resp);
    return code;
}

/* The body of an answer (after the blank line). */
static const char *body_of(const char *resp)
{
    const char *b = strstr(resp, "\r\n\r\n");
    return b ? b + 4 : "";
}

/* A detached JWS of `body` by key i (compact), NUL-terminated; free with dsig_free. */
static char *our_jws(int i, const uint8_t *body, size_t n)
{
    dsig_jws_sign_ctx *c;
    char *out;
    size_t ol;
    FUZZ_CHECK(dsig_jws_sign_init(&c, NULL, S.key[i], NULL) == DSIG_OK && dsig_jws_sign_update(c, body, n) == DSIG_OK &&
                   dsig_jws_sign_final(c, &out, &ol) == DSIG_OK,
               "our JWS");
    return out;
}

/* The server's sign answer must verify over the body. */
static void check_signed(int i, const char *jws, const uint8_t *body, size_t n)
{
    size_t jl = strcspn(jws, "\r\n");
    dsig_jws_verify_ctx *c;
    dsig_jws_verify_opts o = {.format = DSIG_FMT_AUTO};
    int rc = dsig_jws_verify_init(&c, S.pub[i], jws, jl, &o);
    FUZZ_CHECK(rc == DSIG_OK, "the server's JWS does not parse: %.200s (%s)", jws, dsig_last_error_detail());
    FUZZ_CHECK(dsig_jws_verify_update(c, body, n) == DSIG_OK, "update");
    rc = dsig_jws_verify_final(c);
    FUZZ_CHECK(rc == DSIG_OK, "the server's JWS does not verify over the body (%d)", rc);
}

/* A sign-digest request body's members, if it is {"hash": string, "digest": base64url} (else 0). */
static int digest_request(const uint8_t *body, size_t n, char hash[32], uint8_t dg[64], size_t *dl)
{
    json_t *o = json_loadb((const char *)body, n, JSON_REJECT_DUPLICATES, NULL);
    const char *h = json_string_value(json_object_get(o, "hash")), *d = json_string_value(json_object_get(o, "digest"));
    int ok = o && json_object_size(o) == 2 && h && d && strlen(h) < 32 &&
             dsig_b64url_decode(d, strlen(d), dg, 64, dl) == DSIG_OK;
    if (ok)
        strcpy(hash, h);
    json_decref(o);
    return ok;
}

/* The server's sign-digest answer: the signature verifies over the digest asked for, under key i. */
static void check_signed_digest(int i, const char *answer, const uint8_t *body, size_t n)
{
    char hash[32];
    uint8_t dg[64], sig[8192];
    size_t dl = 0, sl = 0;
    FUZZ_CHECK(digest_request(body, n, hash, dg, &dl), "200 for a sign-digest body that is not a request: %.200s",
               (const char *)body);
    json_t *o = json_loads(answer, JSON_DISABLE_EOF_CHECK, NULL);
    const char *s = json_string_value(json_object_get(o, "signature"));
    FUZZ_CHECK(s && dsig_b64url_decode(s, strlen(s), sig, sizeof sig, &sl) == DSIG_OK, "sign-digest answer: %.200s",
               answer);
    FUZZ_CHECK(strcmp(json_string_value(json_object_get(o, "hash")), hash) == 0, "sign-digest answer names another hash");
    int rc = dsig_verify_digest(dsig_alg_by_name(algs[i]), S.pub[i], hash, dg, dl, sig, sl);
    FUZZ_CHECK(rc == DSIG_OK, "the server's %s signature of a %s digest does not verify (%d)", algs[i], hash, rc);
    json_decref(o);
}

/* A model check: a mismatch aborts unless a late request of an earlier input changed the keys. */
#define MODEL_CHECK(cond, ...) FUZZ_CHECK((cond) || late_change(), __VA_ARGS__)

/* The version number in a retire path, as the server reads it: 1..999999999 without a leading zero. */
static unsigned model_version(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > 9 || t[0] == '0' || strspn(t, "0123456789") != n)
        return 0;
    return (unsigned)strtoul(t, NULL, 10);
}

/* The signing version of model m: the newest not retired (0: none). */
static unsigned model_signing(const struct vmodel *m)
{
    for (unsigned v = m->nv; v >= 1; v--)
        if (m->state[v] != VS_RETIRED)
            return v;
    return 0;
}

/* GET /v1/keys/{id}/versions with the full token: the listing must be model m exactly. */
static void check_versions(int i, const struct vmodel *m, const char *answer)
{
    static char resp[1 << 16];
    if (!answer) {
        char req[256];
        int n = snprintf(req, sizeof req, "GET /v1/keys/%s/versions HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n"
                         "Authorization: Bearer %s\r\n\r\n", kids[i], tokens[0]);
        size_t got = exchange((const uint8_t *)req, (size_t)n, FH_ANSWER_MS, resp, sizeof resp);
        MODEL_CHECK(status(resp, got) == 200, "versions of %s: %.300s", kids[i], resp);
        answer = body_of(resp);
    }
    json_t *o = json_loads(answer, JSON_DISABLE_EOF_CHECK, NULL), *arr = json_object_get(o, "versions");
    const char *id = json_string_value(json_object_get(o, "id"));
    MODEL_CHECK(id && strcmp(id, kids[i]) == 0 && json_array_size(arr) == m->nv, "versions of %s: %u expected: %.600s",
                kids[i], m->nv, answer);
    for (unsigned v = 1; v <= m->nv && v <= json_array_size(arr); v++) {
        json_t *e = json_array_get(arr, v - 1);
        char vkid[32];
        if (v == 1)
            snprintf(vkid, sizeof vkid, "%s", kids[i]);
        else
            snprintf(vkid, sizeof vkid, "%s.v%u", kids[i], v);
        const char *kid = json_string_value(json_object_get(e, "kid")), *alg = json_string_value(json_object_get(e, "alg")),
                   *tp = json_string_value(json_object_get(e, "thumbprint")),
                   *st = json_string_value(json_object_get(e, "state"));
        MODEL_CHECK(kid && alg && tp && st && strcmp(kid, vkid) == 0 &&
                        json_integer_value(json_object_get(e, "version")) == (json_int_t)v && strcmp(alg, algs[i]) == 0 &&
                        strcmp(tp, m->tp[v]) == 0 && strcmp(st, vstates[m->state[v]]) == 0,
                    "version %u of %s: expected %s, %s, %s: %.600s", v, kids[i], vkid, m->tp[v], vstates[m->state[v]],
                    answer);
    }
    json_decref(o);
}

/* A rotation's answer: the next version, written to <kid>.jwk as a private key of the id's algorithm
 * whose thumbprint the answer gives. The model gains it as the signing version. */
static void check_rotated(int i, struct vmodel *m, const char *answer)
{
    json_t *o = json_loads(answer, JSON_DISABLE_EOF_CHECK, NULL);
    const char *kid = json_string_value(json_object_get(o, "kid")), *id = json_string_value(json_object_get(o, "id")),
               *alg = json_string_value(json_object_get(o, "alg")), *tp = json_string_value(json_object_get(o, "thumbprint"));
    const unsigned v = m->nv + 1;
    char vkid[32];
    snprintf(vkid, sizeof vkid, "%s.v%u", kids[i], v);
    MODEL_CHECK(kid && id && alg && tp && strcmp(kid, vkid) == 0 && strcmp(id, kids[i]) == 0 && strcmp(alg, algs[i]) == 0 &&
                    json_integer_value(json_object_get(o, "version")) == (json_int_t)v,
                "rotation of %s: expected %s (%s): %.300s", kids[i], vkid, algs[i], answer);
    if (!kid || strcmp(kid, vkid) != 0 || v > FH_MAXV) { /* excused as a late change: nothing to follow */
        json_decref(o);
        return;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s.jwk", S.keydir, vkid);
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL, "rotation of %s answered 200 but %s is not there", kids[i], path);
    static char buf[1 << 15];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    dsig_key *k = NULL;
    char own_tp[DSIG_THUMBPRINT_LEN];
    FUZZ_CHECK(dsig_jwk_import(&k, buf, n) == DSIG_OK && dsig_key_has_private(k) &&
                   dsig_key_check_alg(k, dsig_alg_by_name(algs[i])) == DSIG_OK && dsig_jwk_thumbprint(k, own_tp) == DSIG_OK,
               "%s: not a private %s key (%s)", path, algs[i], dsig_last_error_detail());
    FUZZ_CHECK(tp && strcmp(own_tp, tp) == 0, "rotation of %s: thumbprint %s answered, %s written", kids[i], tp, own_tp);
    dsig_key_free(k);
    dsig_memzero(buf, n);
    if (S.nown < 4)
        snprintf(S.own[S.nown++], sizeof S.own[0], "%s.jwk", vkid);
    const unsigned old = model_signing(m);
    if (old)
        m->state[old] = VS_VERIFY_ONLY;
    m->nv = v;
    m->state[v] = VS_SIGNING;
    memcpy(m->tp[v], own_tp, sizeof own_tp);
    json_decref(o);
}

/* A key-version request (b0 bit 6): the documented answer for the model of this input's keys. */
static void check_admin(unsigned method, unsigned aop, unsigned ki, unsigned ti, unsigned v, unsigned code,
                        const char *resp)
{
    const int is_get = method == 0 || method == 2;
    const int right_method = aop == 1 ? is_get : method == 1;
    struct vmodel m;
    if (ki < FH_NKEYS)
        m = S.base[ki];
    unsigned expect;
    if (!right_method)
        expect = 405;
    else if (ti >= 2)
        expect = 401;
    else if (ki == FH_NKEYS)
        expect = ti == 0 ? 404 : 403;
    else if (aop != 1 && ti == 1)
        expect = 403; /* the verify-only token has no "admin" */
    else if (aop <= 1)
        expect = 200;
    else if (!v || v > m.nv)
        expect = 404;
    else if (v == model_signing(&m))
        expect = 409;
    else
        expect = 200;
    MODEL_CHECK(code == expect, "%s key %u (token %u, version %u): answer %u, expected %u: %.300s",
                aop == 0 ? "rotate" : aop == 1 ? "versions" : "retire", ki, ti, v, code, expect, resp);
    if (code != 200 || expect != 200 || method == 2)
        return;
    if (aop == 1) {
        check_versions((int)ki, &m, body_of(resp));
        return;
    }
    if (aop == 0) {
        check_rotated((int)ki, &m, body_of(resp));
    } else {
        json_t *o = json_loads(body_of(resp), JSON_DISABLE_EOF_CHECK, NULL);
        const char *st = json_string_value(json_object_get(o, "state"));
        MODEL_CHECK(st && strcmp(st, "retired") == 0 && json_integer_value(json_object_get(o, "version")) == (json_int_t)v,
                    "retirement of version %u of %s: %.300s", v, kids[ki], body_of(resp));
        json_decref(o);
        char name[96], path[600];
        snprintf(name, sizeof name, "%s.v%u.retired", kids[ki], v);
        snprintf(path, sizeof path, "%s/%s", S.keydir, name);
        FUZZ_CHECK(access(path, F_OK) == 0 || m.state[v] == VS_RETIRED, "retirement of %s: no marker %s", kids[ki], path);
        if (S.nown < 4)
            snprintf(S.own[S.nown++], sizeof S.own[0], "%s", name);
        m.state[v] = VS_RETIRED;
    }
    check_versions((int)ki, &m, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FH_MAX_INPUT)
        return 0;
    init();
    reset_keys();
    static char resp[1 << 17];
    if (data[0] & 0x80) {
        size_t n = exchange(data + 1, size - 1, 30, resp, sizeof resp);
        (void)status(resp, n);
        return 0;
    }
    fuzz_in in = {data, size};
    const unsigned b0 = fuzz_u8(&in), b1 = fuzz_u8(&in);
    static const char *const methods[4] = {"GET", "POST", "HEAD", "PUT"};
    const unsigned method = b0 & 3, ki = b1 & 3, ti = (b1 >> 2) & 3, aop = (b0 >> 2) & 3;
    unsigned ep = (b0 >> 2) & 7;
    const int admin = b0 & 0x40;
    const int extra = b0 & 0x20, json = b1 & 0x10, chunked = b1 & 0x20, own = b1 & 0x40, corrupt = b1 & 0x80;
    size_t hl = 0, bl, sl;
    const uint8_t *hdr = extra ? fuzz_take(&in, fuzz_u8(&in), &hl) : NULL;
    const uint8_t *body = fuzz_take(&in, fuzz_u16(&in), &bl);
    const uint8_t *sigin = fuzz_take(&in, in.n, &sl);
    char dreq[512];
    int lib_signs = 0; /* sign-digest, own body: the library signs this digest with this key */
    if (!admin && ep == 7 && own && bl >= 1 && bl <= 1 + 300) {
        static const char *const hashes[4] = {"SHA-256", "SHA-512", "ExternalMu", "SHA-384"};
        char b64[404];
        dsig_b64url_encode(b64, body + 1, bl - 1);
        int dn = snprintf(dreq, sizeof dreq, "{\"hash\":\"%s\",\"digest\":\"%s\"}", hashes[body[0] % 4], b64);
        if (ki < FH_NKEYS) {
            uint8_t sig[8192];
            size_t sl2;
            lib_signs = dsig_sign_digest(dsig_alg_by_name(algs[ki]), S.key[ki], hashes[body[0] % 4], body + 1, bl - 1,
                                         sig, sizeof sig, &sl2) == DSIG_OK;
        }
        body = (const uint8_t *)dreq;
        bl = (size_t)dn;
    }
    char path[128];
    static const char *const fixed[3] = {"/v1/keys", "/healthz", "/metrics"};
    unsigned want_v = 0; /* retire: the version the path names, as the server reads it */
    if (admin) {
        static const char *const ops[2] = {"rotate", "versions"};
        char vt[16] = "";
        if (aop == 2)
            snprintf(vt, sizeof vt, "%u", bl ? body[0] % 8 : 0);
        for (size_t i = 0; aop == 3 && i < bl && i < 12; i++)
            vt[i] = "0123456789v"[body[i] % 11];
        want_v = model_version(vt);
        if (aop < 2)
            snprintf(path, sizeof path, "/v1/keys/%s/%s", kids[ki], ops[aop]);
        else
            snprintf(path, sizeof path, "/v1/keys/%s/versions/%s/retire", kids[ki], vt);
        ep = 8; /* none of the endpoints below */
    } else if (ep <= 2 || ep == 7)
        snprintf(path, sizeof path, "/v1/keys/%s%s", kids[ki],
                 ep == 0 ? "/sign" : ep == 1 ? "/verify" : ep == 7 ? "/sign-digest" : "");
    else
        snprintf(path, sizeof path, "%s", ep == 6 ? "/v2/other" : fixed[ep - 3]);
    char *sig = NULL;
    if (ep == 1 && own && ki < FH_NKEYS) {
        sig = our_jws((int)ki, body, bl);
        if (corrupt) { /* another base64url digit inside the signature part (all of its 6 bits are data) */
            char *d = &sig[strlen(sig) - 2];
            *d = *d == 'A' ? 'B' : 'A';
        }
    }
    /* The request: line, headers, body (chunked: pieces of up to 1000 bytes). */
    size_t cap = 1024 + hl + 2 * bl + sl + (sig ? strlen(sig) : 0) + 16 * (bl / 1000 + 2);
    uint8_t *req = malloc(cap);
    FUZZ_CHECK(req != NULL, "out of memory");
    int o = snprintf((char *)req, cap, "%s %s HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n", methods[method], path);
    if (ti < 2)
        o += snprintf((char *)req + o, cap - (size_t)o, "Authorization: Bearer %s\r\n", tokens[ti]);
    else if (ti == 2)
        o += snprintf((char *)req + o, cap - (size_t)o, "Authorization: Bearer unknown-token\r\n");
    if (json)
        o += snprintf((char *)req + o, cap - (size_t)o, "Accept: application/json\r\n");
    int ctl = 0; /* a control character in the DSig-Signature value: the strict head check's 400 */
    if (ep == 1) {
        o += snprintf((char *)req + o, cap - (size_t)o, "DSig-Signature: ");
        if (sig)
            o += snprintf((char *)req + o, cap - (size_t)o, "%s", sig);
        else
            for (size_t i = 0; i < sl; i++) {
                const uint8_t c = sigin[i] == '\r' || sigin[i] == '\n' ? ' ' : sigin[i];
                ctl |= (c < 0x20 && c != '\t') || c == 0x7f;
                req[o++] = c;
            }
        o += snprintf((char *)req + o, cap - (size_t)o, "\r\n");
    }
    if (hl)
        memcpy(req + o, hdr, hl);
    o += (int)hl;
    if (chunked)
        o += snprintf((char *)req + o, cap - (size_t)o, "Transfer-Encoding: chunked\r\n\r\n");
    else
        o += snprintf((char *)req + o, cap - (size_t)o, "Content-Length: %zu\r\n\r\n", bl);
    for (size_t off = 0; off < bl || (chunked && off == bl);) {
        size_t k = chunked ? (bl - off < 1000 ? bl - off : 1000) : bl;
        if (chunked)
            o += snprintf((char *)req + o, cap - (size_t)o, "%zx\r\n", k);
        memcpy(req + o, body + off, k);
        o += (int)k;
        if (chunked)
            o += snprintf((char *)req + o, cap - (size_t)o, "\r\n");
        off += k;
        if (!k)
            break;
    }
    size_t n = exchange(req, (size_t)o, extra ? 30 : FH_ANSWER_MS, resp, sizeof resp);
    unsigned code = status(resp, n);
    if (!extra && admin) {
        check_admin(method, aop, ki, ti, want_v, code, resp);
    } else if (!extra) {
        const int is_get = method == 0 || method == 2, keyed = ep <= 2 || ep == 7;
        const int right_method = ep <= 1 || ep == 7 ? method == 1 : ep <= 5 ? is_get : 1;
        unsigned expect = 0;
        if (ctl)
            expect = 400;
        else if (ep == 6)
            expect = 404;
        else if (!right_method)
            expect = 405;
        else if (ep == 4 || ep == 5)
            expect = 200;
        else if (ti >= 2)
            expect = 401;
        else if (keyed && ki == FH_NKEYS)
            expect = ti == 0 ? 404 : 403;
        else if ((ep == 0 || ep == 7) && ti == 1)
            expect = 403;
        else if (ep == 7 && ki == 0)
            expect = 400; /* Ed25519 signs no digest: refused before the body */
        else if (ep == 7 && bl > 1024)
            expect = chunked ? 0 : 413; /* chunked: the connection is closed past the bound */
        else if (ep == 7 && own)
            expect = lib_signs ? 200 : 400;
        else if (ep == 7)
            FUZZ_CHECK(code == 200 || code == 400, "sign-digest %s: answer %u: %.300s", path, code, resp);
        else if (ep == 1 && sig)
            expect = corrupt ? 422 : 200;
        else if (ep != 1)
            expect = 200;
        if (expect)
            FUZZ_CHECK(code == expect, "%s %s (token %u, key %u): answer %u, expected %u: %.300s %s", methods[method], path,
                       ti, ki, code, expect, resp, code == expect ? "" : no_answer_why(code));
        if (ep == 0 && code == 200 && !json && method == 1)
            check_signed((int)ki, body_of(resp), body, bl);
        if (ep == 7 && code == 200)
            check_signed_digest((int)ki, body_of(resp), body, bl);
    }
    dsig_free(sig);
    free(req);
    return 0;
}

/* Seeds: every endpoint with every method, token and key, small and chunked bodies; raw requests. */
static void seeds(void)
{
    for (unsigned ep = 0; ep < 8; ep++)
        for (unsigned m = 0; m < 4; m++)
            for (unsigned t = 0; t < 4; t++) {
                const uint8_t head[2] = {(uint8_t)(m | ep << 2), (uint8_t)((ep * 3 + m) % 3 | t << 2 | (ep == 1 ? 0x40 : 0) |
                                                                           (m == 1 && t == 0 ? 0x20 : 0))};
                fuzz_seed_begin();
                fuzz_seed_add(head, 2);
                fuzz_seed_u16(12);
                fuzz_seed_add("hello, serve", 12);
                fuzz_seed_end();
            }
    /* sign-digest with a body built from a hash choice and digest bytes: ES256 over SHA-256, ML-DSA-44
     * over SHA-512 (HashML-DSA) and an external mu, ES256 given another hash's digest (400). */
    static const uint8_t dg[][2] = {{1, 0}, {2, 1}, {2, 2}, {1, 1}};
    for (size_t i = 0; i < sizeof dg / sizeof dg[0]; i++) {
        const uint8_t head[2] = {1 | 7 << 2, (uint8_t)(dg[i][0] | 0x40)};
        uint8_t body[65];
        body[0] = dg[i][1];
        for (int j = 1; j < 65; j++)
            body[j] = (uint8_t)(j * 37 + i);
        const uint16_t len = dg[i][1] == 0 ? 33 : 65;
        fuzz_seed_begin();
        fuzz_seed_add(head, 2);
        fuzz_seed_u16(len);
        fuzz_seed_add(body, len);
        fuzz_seed_end();
    }
    /* Key versions: rotate, list, retire with every method of interest, token and key; retire each
     * version 0..4 of every key with the full token (404, 200, 409), and version texts for the parser. */
    for (unsigned a = 0; a < 4; a++)
        for (unsigned m = 0; m < 2; m++)
            for (unsigned t = 0; t < 3; t++)
                for (unsigned k = 0; k < 4; k++) {
                    const uint8_t head[2] = {(uint8_t)(0x40 | m | a << 2), (uint8_t)(k | t << 2)}, b = (uint8_t)(1 + k % 3);
                    fuzz_seed_begin();
                    fuzz_seed_add(head, 2);
                    fuzz_seed_u16(1);
                    fuzz_seed_add(&b, 1);
                    fuzz_seed_end();
                }
    for (unsigned k = 0; k < 3; k++)
        for (uint8_t v = 0; v < 5; v++) {
            const uint8_t head[2] = {0x40 | 1 | 2 << 2, (uint8_t)k};
            fuzz_seed_begin();
            fuzz_seed_add(head, 2);
            fuzz_seed_u16(1);
            fuzz_seed_add(&v, 1);
            fuzz_seed_end();
        }
    static const char *const vtexts[] = {"\x01", "\x00\x01", "\x0a\x02", "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x00"};
    for (size_t i = 0; i < sizeof vtexts / sizeof vtexts[0]; i++) {
        const size_t n = i == 3 ? 10 : strlen(vtexts[i]) ? strlen(vtexts[i]) : 2;
        const uint8_t head[2] = {0x40 | 1 | 3 << 2, 2};
        fuzz_seed_begin();
        fuzz_seed_add(head, 2);
        fuzz_seed_u16((unsigned)n);
        fuzz_seed_add(vtexts[i], n);
        fuzz_seed_end();
    }
    static const char *const raw[] = {
        "POST /v1/keys/es/rotate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fuzz-token-full-0123456789abcdefghijklmnopq\r\n"
        "Content-Length: 0\r\n\r\n",
        "POST /v1/keys/ml/versions/2/retire HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        "fuzz-token-full-0123456789abcdefghijklmnopq\r\nContent-Length: 0\r\n\r\n",
        "GET /v1/keys/ml/versions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fuzz-token-verify-0123456789abcdefghijklmno\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /v1/keys/ed/sign HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fuzz-token-full-0123456789abcdefghijklmnopq\r\n"
        "Content-Length: 5\r\n\r\nhello",
        "POST /v1/keys/es/sign HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fuzz-token-full-0123456789abcdefghijklmnopq\r\n"
        "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "GET /v1/keys HTTP/1.0\r\nAuthorization: Bearer fuzz-token-verify-0123456789abcdefghijklmno\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        fuzz_seed2("\x80", 1, raw[i], strlen(raw[i]));
    }
}

FUZZ_SEED_GENERATOR(seeds)

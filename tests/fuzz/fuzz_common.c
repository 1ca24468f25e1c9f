/* Shared by the fuzz harnesses: checks, copies, patches, the input reader, seeds, the JOSE keys. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "net/net.h"

void fuzz_check_detail(int rc, const char *what)
{
    const char *d = dsig_last_error_detail();
    FUZZ_CHECK(rc == DSIG_OK || rc == DSIG_E_VERIFY || (d && *d), "%s failed (%d) without a detail string", what, rc);
}

uint8_t *fuzz_dup(const void *data, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    FUZZ_CHECK(p != NULL, "out of memory");
    if (n)
        memcpy(p, data, n);
    return p;
}

size_t fuzz_patch(const uint8_t *base, size_t blen, const uint8_t *ed, size_t elen, uint8_t *out, size_t grow)
{
    size_t len = blen;
    memcpy(out, base, blen);
    for (size_t e = 0; e + 5 <= elen; e += 5) {
        size_t off = (size_t)ed[e + 1] | ((size_t)ed[e + 2] << 8) | ((size_t)ed[e + 3] << 16);
        uint8_t val = ed[e + 4];
        switch (ed[e] & 3) {
        case 0:
            if (len)
                out[off % len] ^= val;
            break;
        case 1:
            if (len)
                out[off % len] = val;
            break;
        case 2:
            len = off % (len + 1);
            break;
        default:
            if (len < blen + grow) {
                size_t at = off % (len + 1);
                memmove(out + at + 1, out + at, len - at);
                out[at] = val;
                len++;
            }
            break;
        }
    }
    return len;
}

uint8_t fuzz_u8(fuzz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

uint16_t fuzz_u16(fuzz_in *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

const uint8_t *fuzz_take(fuzz_in *in, size_t want, size_t *len)
{
    const uint8_t *p = in->p;
    *len = want < in->n ? want : in->n;
    in->p += *len;
    in->n -= *len;
    return p;
}

int fuzz_feed(fuzz_chunk_fn fn, void *arg, const uint8_t *data, size_t len, uint32_t split)
{
    if (!split)
        return fn(arg, data, len);
    uint32_t x = split;
    size_t off = 0;
    while (off < len) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32: a reproducible split, not secret */
        size_t n;
        switch (x % 8) {
        case 0:
            n = 0;
            break;
        case 1:
        case 2:
            n = 1 + (x >> 8) % 3;
            break;
        case 3:
            n = 64u << ((x >> 8) % 3); /* 64, 128, 256: block sizes */
            break;
        default:
            n = 1 + (x >> 8) % 300;
            break;
        }
        if (n > len - off)
            n = len - off;
        int rc = fn(arg, data + off, n);
        if (rc)
            return rc;
        off += n;
    }
    return fn(arg, data + len, 0); /* a trailing empty piece */
}

int fuzz_sign_update(void *ctx, const uint8_t *chunk, size_t n)
{
    return dsig_sign_update(ctx, chunk, n);
}

int fuzz_verify_update(void *ctx, const uint8_t *chunk, size_t n)
{
    return dsig_verify_update(ctx, chunk, n);
}

int fuzz_sign_streamed(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                       const dsig_sign_opts *opts, uint32_t split, uint8_t *sig, size_t cap, size_t *sig_len)
{
    dsig_sign_ctx *c;
    int rc = dsig_sign_init_ex(&c, alg, key, opts);
    if (rc)
        return rc;
    if ((rc = fuzz_feed(fuzz_sign_update, c, msg, len, split))) {
        dsig_sign_abort(c);
        return rc;
    }
    return dsig_sign_final(c, sig, cap, sig_len);
}

int fuzz_verify_streamed(const dsig_alg *alg, const dsig_key *key, const uint8_t *msg, size_t len,
                         const uint8_t *sig, size_t sig_len, const dsig_sign_opts *opts, uint32_t split)
{
    dsig_verify_ctx *c;
    int rc = dsig_verify_init_ex(&c, alg, key, sig, sig_len, opts);
    if (rc)
        return rc;
    if ((rc = fuzz_feed(fuzz_verify_update, c, msg, len, split))) {
        dsig_verify_abort(c);
        return rc;
    }
    return dsig_verify_final(c);
}

/* ---- seeds ------------------------------------------------------------------------------------- */

static const char *seed_dir;
static unsigned seed_count;
static uint8_t *seed_buf;
static size_t seed_len, seed_cap;

void fuzz_seeds_run(void (*gen)(void))
{
    seed_dir = getenv("DSIG_FUZZ_SEEDS");
    if (!seed_dir || !*seed_dir)
        return;
    gen();
    fprintf(stderr, "fuzz: %u seeds written to %s\n", seed_count, seed_dir);
    free(seed_buf);
    exit(0);
}

void fuzz_seed(const void *data, size_t len)
{
    if (!seed_dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%04u", seed_dir, seed_count++);
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s: %s", path,
               strerror(errno));
}

void fuzz_seed_begin(void)
{
    seed_len = 0;
}

void fuzz_seed_add(const void *data, size_t len)
{
    if (seed_len + len > seed_cap) {
        seed_cap = 2 * (seed_len + len);
        seed_buf = realloc(seed_buf, seed_cap);
        FUZZ_CHECK(seed_buf != NULL, "out of memory");
    }
    if (len)
        memcpy(seed_buf + seed_len, data, len);
    seed_len += len;
}

void fuzz_seed_u16(unsigned v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    fuzz_seed_add(b, 2);
}

void fuzz_seed_end(void)
{
    fuzz_seed(seed_buf, seed_len);
}

void fuzz_seed_texts(const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fuzz_seed(texts[i], strlen(texts[i]));
}

void fuzz_seed2(const void *head, size_t hl, const void *body, size_t bl)
{
    fuzz_seed_begin();
    fuzz_seed_add(head, hl);
    fuzz_seed_add(body, bl);
    fuzz_seed_end();
}

void fuzz_seed_cb(void *arg, unsigned target, const uint8_t *data, size_t len)
{
    if (!arg || *(const unsigned *)arg == target)
        fuzz_seed(data, len);
}

/* ---- temporary directories ----------------------------------------------------------------------- */

#define MAX_TMPDIRS 8
static char tmpdirs[MAX_TMPDIRS][256];
static unsigned n_tmpdirs;

/* Remove a directory tree (files and directories only: the harnesses make nothing else). */
static void rm_tree(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd)
        return;
    struct dirent *e;
    while ((e = readdir(dd)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char p[512];
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            if (unlink(p) != 0)
                rm_tree(p);
        }
    closedir(dd);
    rmdir(d);
}

static void rm_tmpdirs(void)
{
    for (unsigned i = 0; i < n_tmpdirs; i++)
        rm_tree(tmpdirs[i]);
}

const char *fuzz_tmpdir(const char *tag)
{
    FUZZ_CHECK(n_tmpdirs < MAX_TMPDIRS, "too many temporary directories");
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *d = tmpdirs[n_tmpdirs];
    snprintf(d, sizeof tmpdirs[0], "%s/dsig-fuzz-%s-XXXXXX", base, tag);
    FUZZ_CHECK(mkdtemp(d) != NULL, "mkdtemp %s: %s", d, strerror(errno));
    if (n_tmpdirs++ == 0)
        atexit(rm_tmpdirs);
    return d;
}

/* ---- the JOSE keys ------------------------------------------------------------------------------- */

static fuzz_keys keys;
static int ready;

/* 1 if a key of this algorithm's type is already in the set. */
static int have_kty(const dsig_alg *a)
{
    for (size_t i = 0; i < keys.n; i++) {
        const char *c1 = dsig_key_curve(keys.key[i]), *c2 = dsig_alg_curve(a);
        if (strcmp(dsig_key_kty(keys.key[i]), dsig_alg_kty(a)) == 0 &&
            ((!c1 && !c2) || (c1 && c2 && strcmp(c1, c2) == 0)))
            return 1;
    }
    return 0;
}

const fuzz_keys *fuzz_get_keys(void)
{
    if (ready)
        return &keys;
    ready = 1;
    static const uint8_t seed[32] = "dsig fuzz keys, fixed seed.....";
    dsig_keygen_params kp = {.seed = seed, .seed_len = sizeof seed};
    size_t na = 0;
    for (size_t i = 0; i < dsig_alg_count(); i++) {
        const dsig_alg *a = dsig_alg_at(i);
        if (na < 63)
            keys.allowed[na++] = dsig_alg_name(a);
        if (keys.n >= 16 || have_kty(a) || (dsig_alg_flags(a) & DSIG_ALG_STATEFUL) ||
            strcmp(dsig_alg_kty(a), "RSA") == 0)
            continue;
        dsig_key *k;
        if (dsig_key_generate(&k, a, &kp) == DSIG_OK) {
            dsig_key_set_alg(k, NULL); /* unbound: the allow-list and the header decide */
            keys.key[keys.n++] = k;
        }
    }
    keys.allowed[na] = NULL;
    return &keys;
}

void fuzz_check_key_pair(const dsig_key *key)
{
    if (!dsig_key_has_private(key))
        return;
    const dsig_alg *a = dsig_key_alg(key);
    for (size_t i = 0; i < dsig_alg_count() && !a; i++)
        if (dsig_key_check_alg(key, dsig_alg_at(i)) == DSIG_OK)
            a = dsig_alg_at(i);
    if (!a || (dsig_alg_flags(a) & DSIG_ALG_STATEFUL))
        return;
    size_t cap = dsig_alg_sig_max(a), sl = 0;
    uint8_t *sig = malloc(cap);
    FUZZ_CHECK(sig != NULL, "out of memory");
    dsig_key *pub = NULL;
    if (dsig_sign(a, key, "key pair", 8, sig, cap, &sl) == DSIG_OK) {
        const dsig_key *v = key;
        if (!(dsig_alg_flags(a) & DSIG_ALG_SYMMETRIC)) {
            FUZZ_CHECK(dsig_key_public(&pub, key) == DSIG_OK, "public part of an imported %s key", dsig_alg_name(a));
            v = pub;
        }
        int rc = dsig_verify(a, v, "key pair", 8, sig, sl);
        FUZZ_CHECK(rc == DSIG_OK, "an imported %s private key signs what its public key rejects (%d: %s)",
                   dsig_alg_name(a), rc, dsig_last_error_detail());
    }
    dsig_key_free(pub);
    free(sig);
}

void fuzz_free_keys(void)
{
    for (size_t i = 0; i < keys.n; i++)
        dsig_key_free(keys.key[i]);
    memset(&keys, 0, sizeof keys);
    ready = 0;
}

dsig_key *fuzz_ed25519_key(uint8_t seed_byte)
{
    uint8_t seed[32];
    memset(seed, seed_byte, sizeof seed);
    const dsig_keygen_params p = {.seed = seed, .seed_len = sizeof seed};
    dsig_key *k = NULL;
    FUZZ_CHECK(dsig_key_generate(&k, dsig_alg_by_name("Ed25519"), &p) == DSIG_OK, "Ed25519 key: %s",
               dsig_last_error_detail());
    return k;
}

static int send_chunk(void *arg, const uint8_t *chunk, size_t n)
{
    const int fd = *(const int *)arg;
    while (n) {
        ssize_t w = send(fd, chunk, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 1;
        chunk += w;
        n -= (size_t)w;
    }
    return 0;
}

int fuzz_send_split(int fd, const uint8_t *p, size_t n, uint32_t split)
{
    return fuzz_feed(send_chunk, &fd, p, n, split ? split * 0x9E3779B1u : 0) != 0;
}

int fuzz_send_frame(int fd, uint8_t type, const uint8_t *payload, size_t n, uint32_t split)
{
    uint8_t *f = malloc(DSIG_NET_HDR_BYTES + n);
    FUZZ_CHECK(f != NULL && n <= UINT32_MAX, "out of memory");
    dsig_net_frame_header(f, type, (uint32_t)n);
    if (n)
        memcpy(f + DSIG_NET_HDR_BYTES, payload, n);
    int rc = fuzz_send_split(fd, f, DSIG_NET_HDR_BYTES + n, split);
    free(f);
    return rc;
}

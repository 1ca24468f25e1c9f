/* A fleet of signers of one shared stateful key (ranges_fleet.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ranges_fleet.h"
#include "sigindex.h"
#include "testutil.h"

#define SIG_MAX 16384

int (*fleet_counter_new)(struct serve_counter **out, const char *dir);

static void copy_file(const char *from, const char *to)
{
    FILE *f = fopen(from, "rb");
    assert_non_null(f);
    uint8_t *b = malloc(1 << 20);
    size_t n = fread(b, 1, 1 << 20, f);
    fclose(f);
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, n), (ssize_t)n);
    assert_int_equal(fsync(fd), 0);
    close(fd);
    free(b);
}

void fleet_create(const char *dir, const struct fleet_key *fk, int n, dsig_key **pub)
{
    char p[600], q[600];
    const dsig_alg *alg = dsig_alg_by_name(fk->alg_name);
    assert_non_null(alg);
    snprintf(p, sizeof p, "%s/master.state", dir);
    snprintf(q, sizeof q, "%s/master-reg", dir);
    dsig_keygen_params kp = {.param = fk->param};
    dsig_state_opts o = {.registry_dir = q};
    dsig_key *k = NULL;
    assert_int_equal(dsig_state_create(&k, p, alg, &kp, &o), DSIG_OK);
    assert_int_equal(dsig_state_set_window(k, 0, 0), DSIG_OK); /* fenced before any copy is made */
    assert_int_equal(dsig_key_public(pub, k), DSIG_OK);
    dsig_key_free(k);
    for (int i = 0; i < n; i++) {
        snprintf(q, sizeof q, "%s/inst%d", dir, i);
        assert_int_equal(mkdir(q, 0700), 0);
        snprintf(q, sizeof q, "%s/inst%d/key.state", dir, i);
        copy_file(p, q);
    }
}

struct signer {
    const dsig_alg *alg;
    const dsig_key *key;
    int fd, per_thread, j;
    const char *tag;
    int exhausted, failed;
    char detail[300];
};

static void *sign_thread(void *arg)
{
    struct signer *s = arg;
    uint8_t *rec = malloc(SIG_MAX + 200);
    for (int m = 0; m < s->per_thread; m++) {
        char msg[96];
        int ml = snprintf(msg, sizeof msg, "%s t%d n%d", s->tag, s->j, m);
        size_t sl = 0;
        int rc = dsig_sign(s->alg, s->key, msg, (size_t)ml, rec + 8 + ml, SIG_MAX, &sl);
        if (rc == DSIG_E_EXHAUSTED) {
            s->exhausted = 1;
            break;
        }
        if (rc != DSIG_OK) {
            s->failed = rc;
            snprintf(s->detail, sizeof s->detail, "%s: %s", dsig_strerror(rc), dsig_last_error_detail());
            break;
        }
        uint32_t L = (uint32_t)ml, S = (uint32_t)sl;
        memcpy(rec, &L, 4);
        memcpy(rec + 4, msg, (size_t)ml);
        /* the signature was made at rec + 8 + ml, leaving 4 bytes for its length */
        memcpy(rec + 4 + ml, &S, 4);
        size_t total = 8 + (size_t)ml + sl;
        if (write(s->fd, rec, total) != (ssize_t)total) {
            s->failed = DSIG_E_IO;
            snprintf(s->detail, sizeof s->detail, "record write: %s", strerror(errno));
            break;
        }
    }
    free(rec);
    return NULL;
}

int fleet_instance(const char *dir, const struct fleet_key *fk, int i, int threads, int per_thread,
                   const char *out, const char *tag)
{
    char p[600], reg[600], cdir[600];
    snprintf(p, sizeof p, "%s/inst%d/key.state", dir, i);
    snprintf(reg, sizeof reg, "%s/inst%d/reg", dir, i);
    snprintf(cdir, sizeof cdir, "%s/counter", dir);
    struct serve_counter *fc = NULL;
    struct serve_ranges *r = NULL;
    struct serve_ranges_config cfg = {.initial = 4, .floor = 2, .ceiling = 64, .target_ms = 40,
                                      .backoff_ms = 1, .attempts = 64};
    int crc = fleet_counter_new ? fleet_counter_new(&fc, cdir) : serve_counter_file_new(&fc, cdir);
    if (crc != DSIG_OK || serve_ranges_new(&r, fc, &cfg) != DSIG_OK) {
        fprintf(stderr, "instance %d: counter: %s\n", i, dsig_last_error_detail());
        return -1;
    }
    dsig_state_opts o = {.reserve = 1 + (uint32_t)(i % 3), .registry_dir = reg,
                         .ranges = serve_ranges_source(r)};
    dsig_key *k = NULL;
    if (dsig_state_open(&k, p, &o) != DSIG_OK) {
        fprintf(stderr, "instance %d: open: %s\n", i, dsig_last_error_detail());
        return -1;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    struct signer *s = calloc((size_t)threads, sizeof *s);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    const dsig_alg *alg = dsig_alg_by_name(fk->alg_name);
    for (int j = 0; j < threads; j++) {
        s[j] = (struct signer){.alg = alg, .key = k, .fd = fd, .per_thread = per_thread, .j = j, .tag = tag};
        if (pthread_create(&t[j], NULL, sign_thread, &s[j]) != 0)
            return -1;
    }
    int exhausted = 0, failed = 0;
    for (int j = 0; j < threads; j++) {
        pthread_join(t[j], NULL);
        exhausted += s[j].exhausted;
        if (s[j].failed) {
            fprintf(stderr, "instance %d thread %d: %s\n", i, j, s[j].detail);
            failed = 1;
        }
    }
    close(fd);
    free(s);
    free(t);
    dsig_key_free(k);
    serve_ranges_free(r);
    serve_counter_free(fc);
    return failed ? -1 : exhausted;
}

size_t fleet_collect(const char *path, const struct fleet_key *fk, const dsig_key *pub, int torn_ok,
                     int64_t *idx, size_t *n, size_t cap)
{
    const dsig_alg *alg = dsig_alg_by_name(fk->alg_name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    size_t off = 0, recs = 0;
    while (off < (size_t)len) {
        uint32_t L, S;
        if (off + 4 > (size_t)len)
            goto torn;
        memcpy(&L, b + off, 4);
        if (L > 96 || off + 8 + L > (size_t)len)
            goto torn;
        memcpy(&S, b + off + 4 + L, 4);
        if (S > SIG_MAX || off + 8 + L + S > (size_t)len)
            goto torn;
        const uint8_t *msg = b + off + 4, *sig = b + off + 8 + L;
        int64_t q = fk->idx_bytes ? sigindex_xmss(sig, S, fk->idx_bytes) : sigindex_hss(sig, S);
        if (q < 0)
            fail_msg("%s: a record's signature has no index", path);
        int rc = dsig_verify(alg, pub, msg, L, sig, S);
        if (rc != DSIG_OK)
            fail_msg("%s: the signature of index %lld does not verify (%d)", path, (long long)q, rc);
        assert_true(*n < cap);
        idx[(*n)++] = q;
        recs++;
        off += 8 + L + S;
    }
    free(b);
    return recs;
torn:
    if (!torn_ok)
        fail_msg("%s: torn record in the output of a signer that was not killed", path);
    free(b);
    return recs;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void fleet_check_unique(int64_t *idx, size_t n, const char *what)
{
    qsort(idx, n, sizeof *idx, cmp_i64);
    for (size_t i = 1; i < n; i++)
        if (idx[i] == idx[i - 1])
            fail_msg("%s: index %lld used twice", what, (long long)idx[i]);
}

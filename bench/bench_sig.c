/*
 * bench/bench_sig.c — `dsig bench sig`: key generation, one-shot sign and one-shot verify of a short
 * message for every algorithm (like `openssl speed`), with median, p90, p99 and operations per second.
 *
 * Key generation is timed with the OS RNG (what applications do); sign/verify use a seeded key.
 * Stateful schemes get a fresh key (distinct seed) for every signature, generated outside the timing,
 * so no one-time key is ever used twice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

enum { OP_KEYGEN, OP_SIGN, OP_VERIFY };
static const char *const op_names[] = {"keygen", "sign", "verify"};

/* One output row. */
typedef struct sig_row {
    char alg[48];
    unsigned key_bits;
    int op;
    size_t msg_bytes, n;
    double median_ns, p90_ns, p99_ns, min_ns, max_ns, ops_per_s;
} sig_row;

/* Print a row as a table line or a JSON object. */
static void print_row(FILE *f, const sig_row *r, int json)
{
    if (json) {
        fprintf(f, "{\"alg\":\"%s\",\"key_bits\":%u,\"op\":\"%s\",\"msg_bytes\":%zu,\"n\":%zu,"
                   "\"median_ns\":%.0f,\"p90_ns\":%.0f,\"p99_ns\":%.0f,\"min_ns\":%.0f,"
                   "\"max_ns\":%.0f,\"ops_per_s\":%.1f}\n",
                r->alg, r->key_bits, op_names[r->op], r->msg_bytes, r->n, r->median_ns, r->p90_ns,
                r->p99_ns, r->min_ns, r->max_ns, r->ops_per_s);
    } else {
        fprintf(f, "%-16s | %5u | %-6s | %5zu | %6zu | %12.1f | %12.1f | %12.1f | %10.1f\n", r->alg,
                r->key_bits, op_names[r->op], r->msg_bytes, r->n, r->median_ns / 1e3,
                r->p90_ns / 1e3, r->p99_ns / 1e3, r->ops_per_s);
    }
}

/* CSV line of a row. */
static void csv_row(FILE *f, const sig_row *r)
{
    fprintf(f, "%s,%u,%s,%zu,%zu,%.0f,%.0f,%.0f,%.0f,%.0f,%.1f\n", r->alg, r->key_bits,
            op_names[r->op], r->msg_bytes, r->n, r->median_ns, r->p90_ns, r->p99_ns, r->min_ns,
            r->max_ns, r->ops_per_s);
}

/* Loop state of one (alg, op): samples until `measure` or the time budget is used. */
typedef struct sampler {
    double *ns;
    size_t n, cap;
    double start_ms, budget_ms, sum_ns;
} sampler;

/* Keep sampling? At least min(3, cap) samples; then stop at cap or when the budget is spent. */
static int sampler_more(const sampler *s)
{
    size_t min = s->cap < 3 ? s->cap : 3;
    if (s->n < min)
        return 1;
    return s->n < s->cap && bench_now_ms() - s->start_ms < s->budget_ms;
}

/* Turn samples into a row. */
static void finish_row(sig_row *r, sampler *s)
{
    bench_stat st = bench_stat_of(s->ns, s->n);
    r->n = s->n;
    r->median_ns = st.median;
    r->min_ns = st.min;
    r->max_ns = st.max;
    r->p90_ns = bench_percentile(s->ns, s->n, 0.90);
    r->p99_ns = bench_percentile(s->ns, s->n, 0.99);
    r->ops_per_s = s->sum_ns > 0 ? (double)s->n / (s->sum_ns / 1e9) : 0;
}

/* Measure keygen, sign and verify of one (alg, bits); rows go to `out` (3 entries). Returns the number
 * of rows, or -1 with `why` filled. */
static int measure_alg(const bench_sig_opts *o, const dsig_alg *alg, unsigned bits, const uint8_t *msg,
                       double *ns, sig_row *out, char *why, size_t whylen)
{
    const int stateful = (dsig_alg_flags(alg) & DSIG_ALG_STATEFUL) != 0;
    size_t cap = dsig_alg_sig_max(alg);
    uint8_t *sig = malloc(cap ? cap : 1);
    dsig_key *sk = NULL, *vk = NULL;
    size_t sig_len = 0;
    uint64_t counter = 0;
    int rc = sig ? 0 : DSIG_E_NOMEM, nrows = 0;

    for (int op = OP_KEYGEN; op <= OP_VERIFY && rc == 0; op++) {
        sampler s = {.ns = ns, .cap = o->measure, .budget_ms = o->max_time * 1e3};
        for (unsigned it = 0; rc == 0; it++) {
            int timed = it >= o->warmup;
            if (timed && s.n == 0)
                s.start_ms = bench_now_ms();
            if (timed && !sampler_more(&s))
                break;
            /* Untimed preparation: the key to sign with (fresh per signature if stateful) and, for
             * verify, a signature of the message. */
            if (op != OP_KEYGEN &&
                (!sk || (stateful && (op == OP_SIGN || sig_len == 0)))) {
                if (sk != vk)
                    dsig_key_free(vk);
                dsig_key_free(sk);
                if ((rc = bench_make_keys(alg, bits, o->seed, stateful ? ++counter : 0, &sk, &vk)))
                    break;
            }
            if (op == OP_VERIFY && sig_len == 0 &&
                (rc = dsig_sign(alg, sk, msg, o->msg_bytes, sig, cap, &sig_len)))
                break;
            double t0 = 0, t1 = 0;
            if (op == OP_KEYGEN) {
                dsig_keygen_params p = {.bits = bits};
                dsig_key *k = NULL;
                t0 = bench_now_ms();
                rc = dsig_key_generate(&k, alg, &p);
                t1 = bench_now_ms();
                dsig_key_free(k);
            } else if (op == OP_SIGN) {
                size_t len = 0;
                t0 = bench_now_ms();
                rc = dsig_sign(alg, sk, msg, o->msg_bytes, sig, cap, &len);
                t1 = bench_now_ms();
                sig_len = 0; /* verify signs again with its own key below */
            } else {
                t0 = bench_now_ms();
                rc = dsig_verify(alg, vk, msg, o->msg_bytes, sig, sig_len);
                t1 = bench_now_ms();
                if (rc == DSIG_E_VERIFY) {
                    snprintf(why, whylen, "a fresh signature did not verify (%s)",
                             dsig_last_error_detail());
                    break;
                }
            }
            if (rc)
                break;
            if (timed) {
                s.ns[s.n++] = (t1 - t0) * 1e6;
                s.sum_ns += (t1 - t0) * 1e6;
            }
        }
        if (rc)
            break;
        sig_row *r = &out[nrows++];
        memset(r, 0, sizeof *r);
        snprintf(r->alg, sizeof r->alg, "%s", dsig_alg_name(alg));
        r->key_bits = bits;
        r->op = op;
        r->msg_bytes = o->msg_bytes;
        finish_row(r, &s);
    }
    if (rc && !*why)
        bench_errstr(rc, why, whylen);
    for (int i = 0; i < nrows && sk; i++)
        out[i].key_bits = dsig_key_bits(sk); /* the size actually generated (MAC, EC, OKP too) */
    if (sk != vk)
        dsig_key_free(vk);
    dsig_key_free(sk);
    free(sig);
    return rc ? -1 : nrows;
}

/* `dsig bench sig` with parsed options. Returns a process exit code. */
int bench_sig_run(const bench_sig_opts *o)
{
    char err[BENCH_ERR_LEN];
    const dsig_alg *algs[BENCH_MAX_ALGS];
    size_t nalgs = 0;
    if (bench_select_algs(o->algs, algs, BENCH_MAX_ALGS, &nalgs, err, sizeof err) != 0) {
        fprintf(stderr, "dsig bench sig: %s\n", err);
        return 2;
    }
    if (o->list) {
        for (size_t i = 0; i < nalgs; i++)
            printf("%s\n", dsig_alg_name(algs[i]));
        return 0;
    }
    if (nalgs == 0) {
        fprintf(stderr, "dsig bench sig: no algorithm is registered in this build\n");
        return 2;
    }
    FILE *csv = NULL;
    char path[4200] = "";
    if (o->out_dir) {
        char stamp[32];
        bench_timestamp(stamp, sizeof stamp);
        snprintf(path, sizeof path, "%s/benchmark_sig_%s.csv", o->out_dir, stamp);
        if (bench_mkdir_p(o->out_dir) != 0 || !(csv = fopen(path, "w"))) {
            fprintf(stderr, "dsig bench sig: cannot write %s: %s\n", path, strerror(errno));
            return 1;
        }
        fputs("alg,key_bits,op,msg_bytes,n,median_ns,p90_ns,p99_ns,min_ns,max_ns,ops_per_s\n", csv);
    }
    uint8_t *msg = malloc(o->msg_bytes);
    double *ns = malloc(sizeof *ns * o->measure);
    if (!msg || !ns) {
        fprintf(stderr, "dsig bench sig: out of memory\n");
        free(msg);
        free(ns);
        if (csv)
            fclose(csv);
        return 1;
    }
    bench_payload_fill(msg, o->msg_bytes, o->seed);
    if (!o->json)
        printf("ALG              |  BITS | OP     | BYTES |      N |    MEDIAN-us |       P90-us |"
               "       P99-us |      OPS/S\n");
    size_t skipped = 0, rows = 0;
    for (size_t a = 0; a < nalgs; a++) {
        unsigned bits[BENCH_MAX_BITS];
        size_t nb = 1;
        if (bench_alg_takes_bits(algs[a]) && o->nrsa_bits) {
            memcpy(bits, o->rsa_bits, o->nrsa_bits * sizeof *bits);
            nb = o->nrsa_bits;
        } else {
            bits[0] = bench_alg_takes_bits(algs[a]) ? dsig_alg_default_bits(algs[a]) : 0;
        }
        for (size_t b = 0; b < nb; b++) {
            sig_row out[3];
            char why[512] = "";
            fprintf(stderr, "bench: [%zu/%zu] %s\n", a + 1, nalgs, dsig_alg_name(algs[a]));
            int n = measure_alg(o, algs[a], bits[b], msg, ns, out, why, sizeof why);
            if (n < 0) {
                fprintf(stderr, "bench: skipped %s: %s\n", dsig_alg_name(algs[a]), why);
                skipped++;
                continue;
            }
            for (int i = 0; i < n; i++) {
                print_row(stdout, &out[i], o->json);
                if (csv)
                    csv_row(csv, &out[i]);
                rows++;
            }
            fflush(stdout);
        }
    }
    free(msg);
    free(ns);
    FILE *sum = o->json ? stderr : stdout;
    fprintf(sum, "Total algs: %zu Rows: %zu Skipped: %zu (message %zu bytes)\n", nalgs, rows, skipped,
            o->msg_bytes);
    if (csv) {
        if (fclose(csv) != 0) {
            fprintf(stderr, "dsig bench sig: error writing %s\n", path);
            return 1;
        }
        fprintf(sum, "CSV: %s\n", path);
    }
    return 0;
}

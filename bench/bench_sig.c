/*
 * bench/bench_sig.c — `dsig bench sig`: key generation, one-shot sign and one-shot verify of a short
 * message for every algorithm (like `openssl speed`), with median, p90, p99 and operations per second.
 *
 * Key generation is timed with the OS RNG (what applications do); sign/verify use a seeded key.
 * Stateful schemes (HSS-LMS, XMSS, XMSSMT) sign only from a state file: each of their parameter sets
 * (bench_state.c, printed in the ALG column) gets keys made by dsig_state_create in a private
 * temporary directory. Their keygen row times dsig_state_create (the whole tree, plus the file's first
 * durable write), a few samples; sign uses one key for many signatures (--reserve indices per durable
 * write, default 1024), so a signature never hides a tree computation or an fsync; sign-r1 uses
 * reserve 1 (one durable write per signature: the cost of `dsig sign` on the command line).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "bench_state.h"

enum { OP_KEYGEN, OP_SIGN, OP_VERIFY, OP_SIGN_R1 };
static const char *const op_names[] = {"keygen", "sign", "verify", "sign-r1"};

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
        fprintf(f, "%-22s | %5u | %-7s | %5zu | %6zu | %12.1f | %12.1f | %12.1f | %10.1f\n", r->alg,
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

/* The clock a sample is read from: wall-clock ms, or with --clock cpu the thread's CPU ms (time spent
 * preempted by other processes is left out, which is what a loaded machine needs). */
static double sample_ms(const bench_sig_opts *o)
{
    return o->cpu_clock ? bench_cpu_ms() : bench_now_ms();
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
                t0 = sample_ms(o);
                rc = dsig_key_generate(&k, alg, &p);
                t1 = sample_ms(o);
                dsig_key_free(k);
            } else if (op == OP_SIGN) {
                size_t len = 0;
                t0 = sample_ms(o);
                rc = dsig_sign(alg, sk, msg, o->msg_bytes, sig, cap, &len);
                t1 = sample_ms(o);
                sig_len = 0; /* verify signs again with its own key below */
            } else {
                t0 = sample_ms(o);
                rc = dsig_verify(alg, vk, msg, o->msg_bytes, sig, sig_len);
                t1 = sample_ms(o);
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

/* Fill the identity columns of a stateful row. */
static void state_row(sig_row *r, const bench_pset *ps, int op, size_t msg_bytes)
{
    memset(r, 0, sizeof *r);
    snprintf(r->alg, sizeof r->alg, "%s", ps->label);
    r->op = op;
    r->msg_bytes = msg_bytes;
}

/* Make `*sk` a state key with at least one signature left (a new one, untimed, when it is used up or
 * absent). */
static int state_ready(const bench_sig_opts *o, const dsig_alg *alg, const bench_pset *ps,
                       uint32_t reserve, uint64_t *counter, dsig_key **sk, dsig_key **vk)
{
    if (*sk && bench_state_remaining(*sk) > 0)
        return DSIG_OK;
    dsig_key_free(*sk);
    dsig_key_free(*vk);
    *sk = *vk = NULL;
    return bench_state_key(alg, ps, o->seed, ++*counter, reserve, sk, vk, NULL);
}

/*
 * Rows of one stateful parameter set: keygen (dsig_state_create: the whole tree and the file's first
 * durable write; 1 sample with --quick, else up to 3 within --max-time), sign (one key, --reserve
 * indices per durable write, a new key only when one is used up), verify (one signature, checked
 * repeatedly), sign-r1 (reserve 1: a durable write per signature; at most 50 samples). Returns the
 * number of rows written to out (4), or -1 with `why` filled.
 */
static int measure_stateful(const bench_sig_opts *o, const dsig_alg *alg, const bench_pset *ps,
                            const uint8_t *msg, double *ns, sig_row *out, char *why, size_t whylen)
{
    static uint64_t counter = 1000000; /* distinct key seeds across sets (bench_key_seed counter) */
    const uint32_t reserve = o->reserve ? o->reserve : BENCH_STATE_RESERVE;
    size_t cap = dsig_alg_sig_max(alg), sig_len = 0;
    uint8_t *sig = malloc(cap ? cap : 1);
    dsig_key *sk = NULL, *vk = NULL;
    int rc = sig ? DSIG_OK : DSIG_E_NOMEM, nrows = 0;

    for (int op = OP_KEYGEN; op <= OP_SIGN_R1 && rc == DSIG_OK; op++) {
        size_t want = o->measure;
        if (op == OP_KEYGEN)
            want = o->quick ? 1 : (want < 3 ? want : 3);
        else if (op == OP_SIGN_R1)
            want = want < 50 ? want : 50;
        sampler s = {.ns = ns, .cap = want, .budget_ms = o->max_time * 1e3};
        uint32_t res = op == OP_SIGN_R1 ? 1 : reserve;
        if (op == OP_SIGN || op == OP_SIGN_R1) { /* a fresh key per row: its own reservation size */
            dsig_key_free(sk);
            dsig_key_free(vk);
            sk = vk = NULL;
        }
        unsigned warm = op == OP_KEYGEN ? 0 : o->warmup;
        for (unsigned it = 0; rc == DSIG_OK; it++) {
            int timed = it >= warm;
            if (timed && s.n == 0)
                s.start_ms = bench_now_ms();
            if (timed && !sampler_more(&s))
                break;
            double t0 = 0, t1 = 0;
            if (op == OP_KEYGEN) {
                dsig_key_free(sk);
                dsig_key_free(vk);
                sk = vk = NULL;
                double ms = 0;
                rc = bench_state_key(alg, ps, o->seed, ++counter, reserve, &sk, &vk, &ms);
                t1 = ms / 1e3; /* t1 - t0 in ms below */
            } else if (op == OP_VERIFY) {
                if (sig_len == 0 &&
                    ((rc = state_ready(o, alg, ps, res, &counter, &sk, &vk)) ||
                     (rc = dsig_sign(alg, sk, msg, o->msg_bytes, sig, cap, &sig_len))))
                    break;
                t0 = sample_ms(o);
                rc = dsig_verify(alg, vk, msg, o->msg_bytes, sig, sig_len);
                t1 = sample_ms(o);
                if (rc == DSIG_E_VERIFY) {
                    snprintf(why, whylen, "a fresh signature did not verify (%s)",
                             dsig_last_error_detail());
                    break;
                }
            } else {
                size_t len = 0;
                if ((rc = state_ready(o, alg, ps, res, &counter, &sk, &vk)))
                    break;
                t0 = sample_ms(o);
                rc = dsig_sign(alg, sk, msg, o->msg_bytes, sig, cap, &len);
                t1 = sample_ms(o);
            }
            if (rc)
                break;
            if (op == OP_KEYGEN) /* the sample is dsig_state_create's own time, in ms */
                t1 *= 1e3;
            if (timed) {
                s.ns[s.n++] = (t1 - t0) * 1e6;
                s.sum_ns += (t1 - t0) * 1e6;
            }
        }
        if (rc)
            break;
        state_row(&out[nrows], ps, op, o->msg_bytes);
        finish_row(&out[nrows++], &s);
    }
    if (rc && !*why)
        bench_errstr(rc, why, whylen);
    dsig_key_free(sk);
    dsig_key_free(vk);
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
        printf("ALG                    |  BITS | OP      | BYTES |      N |    MEDIAN-us |       P90-us |"
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
        if (dsig_alg_flags(algs[a]) & DSIG_ALG_STATEFUL) {
            const bench_pset *sets;
            size_t ns_ = bench_state_sets(algs[a], &sets);
            if (ns_ == 0) {
                fprintf(stderr, "bench: skipped %s: no parameter set chosen for this stateful "
                                "algorithm (bench/bench_state.c)\n", dsig_alg_name(algs[a]));
                skipped++;
            }
            for (size_t p = 0; p < ns_; p++) {
                sig_row out[4];
                char why[512] = "";
                fprintf(stderr, "bench: [%zu/%zu] %s: param %s, reserve %u (sign-r1: 1), state files in %s\n",
                        a + 1, nalgs, dsig_alg_name(algs[a]), sets[p].param,
                        o->reserve ? o->reserve : BENCH_STATE_RESERVE,
                        bench_state_begin(why, sizeof why) == 0 ? bench_state_dir() : "(none)");
                why[0] = '\0';
                int n = measure_stateful(o, algs[a], &sets[p], msg, ns, out, why, sizeof why);
                if (n < 0) {
                    fprintf(stderr, "bench: skipped %s: %s\n", sets[p].label, why);
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
            continue;
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
    bench_state_end(); /* the state files and their registry, if any were made */
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

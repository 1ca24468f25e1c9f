/*
 * bench/bench_stream.c — `dsig bench stream`: streaming sign then verify of the same signature, per
 * (algorithm, key size, payload size), with the bare-hash baseline measured in the same run.
 *
 * Timed region of one operation: init, every chunk, final (JWS detached unencoded by default). Not
 * timed: payload generation, key generation, opening the file / forking the pipe writer, memory probes.
 *
 * Stateful schemes (HSS-LMS, XMSS, XMSSMT): one row per parameter set of bench_state.c (the label
 * names it), signing from one state-file key per set made by dsig_state_create in a private temporary
 * directory (--reserve indices per durable write, default 1024) and reused across the sizes, a new key
 * only when one is used up. Key generation is timed separately (the summary's keygen lines), never
 * inside SIGN.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_feed.h"
#include "bench_internal.h"
#include "bench_state.h"

/* One signature in flight between the sign and the verify of an iteration. */
typedef struct op_ctx {
    const dsig_alg *alg;
    const dsig_key *sign_key, *verify_key;
    int format;
    uint8_t *raw;      /* raw format: buffer of dsig_alg_sig_max bytes (ours, allocated once) */
    size_t raw_cap;
    char *jws;         /* JWS text (library-allocated; dsig_free) */
    size_t sig_len;
} op_ctx;

/* Sinks: one chunk into the running operation. */
static int sink_sign_raw(void *arg, const uint8_t *d, size_t n) { return dsig_sign_update(arg, d, n); }
static int sink_verify_raw(void *arg, const uint8_t *d, size_t n) { return dsig_verify_update(arg, d, n); }
static int sink_sign_jws(void *arg, const uint8_t *d, size_t n) { return dsig_jws_sign_update(arg, d, n); }
static int sink_verify_jws(void *arg, const uint8_t *d, size_t n) { return dsig_jws_verify_update(arg, d, n); }

/* Streaming sign of the feeder's bytes; the signature stays in op. (The one place to swap APIs.) */
static int op_sign(op_ctx *op, bench_feeder *f)
{
    int rc;
    if (op->format == BENCH_FMT_JWS) {
        dsig_jws_sign_ctx *c;
        dsig_jws_sign_opts so = {.format = DSIG_FMT_JWS};
        if ((rc = dsig_jws_sign_init(&c, op->alg, op->sign_key, &so)))
            return rc;
        if ((rc = feed_run(f, sink_sign_jws, c))) {
            dsig_jws_sign_abort(c);
            return rc;
        }
        return dsig_jws_sign_final(c, &op->jws, &op->sig_len);
    }
    dsig_sign_ctx *c;
    if ((rc = dsig_sign_init(&c, op->alg, op->sign_key)))
        return rc;
    if ((rc = feed_run(f, sink_sign_raw, c))) {
        dsig_sign_abort(c);
        return rc;
    }
    return dsig_sign_final(c, op->raw, op->raw_cap, &op->sig_len);
}

/* Streaming verify of the signature op_sign produced. DSIG_OK only if it verifies. */
static int op_verify(op_ctx *op, bench_feeder *f)
{
    int rc;
    if (op->format == BENCH_FMT_JWS) {
        dsig_jws_verify_ctx *c;
        dsig_jws_verify_opts vo = {.format = DSIG_FMT_JWS, .alg = op->alg};
        if ((rc = dsig_jws_verify_init(&c, op->verify_key, op->jws, op->sig_len, &vo)))
            return rc;
        if ((rc = feed_run(f, sink_verify_jws, c))) {
            dsig_jws_verify_abort(c);
            return rc;
        }
        return dsig_jws_verify_final(c);
    }
    dsig_verify_ctx *c;
    if ((rc = dsig_verify_init(&c, op->alg, op->verify_key, op->raw, op->sig_len)))
        return rc;
    if ((rc = feed_run(f, sink_verify_raw, c))) {
        dsig_verify_abort(c);
        return rc;
    }
    return dsig_verify_final(c);
}

/* Drop the signature of the previous iteration. */
static void op_release(op_ctx *op)
{
    dsig_free(op->jws);
    op->jws = NULL;
    op->sig_len = 0;
}

/* One measured (baseline name, size) pair, measured once per run. */
typedef struct base_entry {
    char name[24];
    uint64_t bytes;
    double ms; /* < 0: unknown baseline */
} base_entry;

/* Key generation times of stateful schemes (dsig_state_create; never folded into sign times). */
typedef struct keygen_entry {
    char label[64];
    size_t n;
    double median_ms;
} keygen_entry;

/* Whole-run state. */
typedef struct run {
    const bench_stream_opts *o;
    uint8_t *payload;     /* the largest size; smaller sizes are prefixes */
    uint8_t *chunkbuf;
    char paths[BENCH_MAX_SIZES][4200];
    double *samples;      /* 6 * measure doubles */
    double *kg_samples;   /* warmup + measure doubles */
    base_entry bases[64];
    size_t nbases;
    bench_row *rows;
    size_t nrows, cap_rows;
    char skipped[64][256];
    size_t nskipped;
    keygen_entry keygens[32];
    size_t nkeygens;
    FILE *csv;
    /* Stateful schemes: the state key of the parameter set being measured, shared by its sizes. */
    const bench_pset *st_set;
    dsig_key *st_sk, *st_vk;
    uint64_t st_counter;
} run;

/* Forget the current state key (its file stays until bench_state_end). */
static void state_drop(run *R)
{
    dsig_key_free(R->st_sk);
    dsig_key_free(R->st_vk);
    R->st_sk = R->st_vk = NULL;
    R->st_set = NULL;
}

/* The state key of parameter set ps with a signature left: the current one, or a new one (its
 * dsig_state_create time recorded under the set's label). */
static int state_key_for(run *R, const dsig_alg *alg, const bench_pset *ps)
{
    if (R->st_set == ps && R->st_sk && bench_state_remaining(R->st_sk) > 0)
        return DSIG_OK;
    state_drop(R);
    double ms = 0;
    uint32_t reserve = R->o->reserve ? R->o->reserve : BENCH_STATE_RESERVE;
    int rc = bench_state_key(alg, ps, R->o->seed, ++R->st_counter, reserve, &R->st_sk, &R->st_vk, &ms);
    if (rc)
        return rc;
    R->st_set = ps;
    fprintf(stderr, "bench: %s: new state key (param %s, reserve %u, %s): %.1f ms\n", ps->label,
            ps->param, reserve, bench_state_dir(), ms);
    keygen_entry *e = NULL;
    for (size_t i = 0; i < R->nkeygens && !e; i++)
        if (strcmp(R->keygens[i].label, ps->label) == 0)
            e = &R->keygens[i];
    if (!e && R->nkeygens < sizeof R->keygens / sizeof R->keygens[0]) {
        e = &R->keygens[R->nkeygens++];
        snprintf(e->label, sizeof e->label, "%s", ps->label);
    }
    if (e) { /* running median is not kept: a handful of keys per set; report the latest and n */
        e->median_ms = e->n ? (e->median_ms * (double)e->n + ms) / (double)(e->n + 1) : ms;
        e->n++;
    }
    return DSIG_OK;
}

/* Record a skipped row and say why on stderr. */
static void skip_row(run *R, const char *label, uint64_t bytes, const char *why)
{
    fprintf(stderr, "bench: skipped %s at %llu KiB: %s\n", label, (unsigned long long)(bytes / 1024),
            why);
    if (R->nskipped < sizeof R->skipped / sizeof R->skipped[0])
        snprintf(R->skipped[R->nskipped++], sizeof R->skipped[0], "%s %llu KiB: %s", label,
                 (unsigned long long)(bytes / 1024), why);
}

/* Set up a feeder for `bytes` of the payload. */
static void feeder_for(run *R, bench_feeder *f, size_t size_index)
{
    const bench_stream_opts *o = R->o;
    feed_init(f, o->source, R->payload, o->sizes[size_index], o->chunk, R->paths[size_index],
              R->chunkbuf);
}

/* Median wall ms of the bare baseline over the same bytes, same source and same iteration counts;
 * measured the first time a row needs it (so baselines are interleaved with the rows). */
static double baseline_ms(run *R, const char *name, size_t size_index)
{
    uint64_t bytes = R->o->sizes[size_index];
    if (!name)
        return -1;
    for (size_t i = 0; i < R->nbases; i++)
        if (R->bases[i].bytes == bytes && strcmp(R->bases[i].name, name) == 0)
            return R->bases[i].ms;
    double ms = -1;
    bench_baseline b;
    if (baseline_open(&b, name) == 0) {
        fprintf(stderr, "bench: baseline %s over %llu KiB\n", name, (unsigned long long)(bytes / 1024));
        unsigned total = R->o->warmup + R->o->measure, ok = 1;
        for (unsigned it = 0; it < total && ok; it++) {
            bench_feeder f;
            feeder_for(R, &f, size_index);
            if (feed_prepare(&f) != 0) {
                ok = 0;
                break;
            }
            double t0 = bench_now_ms();
            int rc = baseline_pass(&b, &f);
            double t1 = bench_now_ms();
            if (feed_finish(&f) != 0 || rc != 0)
                ok = 0;
            if (it >= R->o->warmup)
                R->samples[it - R->o->warmup] = t1 - t0;
        }
        baseline_close(&b);
        if (ok)
            ms = bench_stat_of(R->samples, R->o->measure).median;
    } else {
        fprintf(stderr, "bench: no OpenSSL baseline for \"%s\": efficiency n/a\n", name);
    }
    if (R->nbases < sizeof R->bases / sizeof R->bases[0]) {
        base_entry *e = &R->bases[R->nbases++];
        snprintf(e->name, sizeof e->name, "%s", name);
        e->bytes = bytes;
        e->ms = ms;
    }
    return ms;
}

/* Append a finished row: table or JSON on stdout, CSV line, kept for the summary and the SVG. */
static int emit_row(run *R, const bench_row *row)
{
    if (R->nrows == R->cap_rows) {
        size_t cap = R->cap_rows ? 2 * R->cap_rows : 64;
        bench_row *n = realloc(R->rows, cap * sizeof *n);
        if (!n)
            return -1;
        R->rows = n;
        R->cap_rows = cap;
    }
    R->rows[R->nrows++] = *row;
    if (R->o->json)
        bench_json_row(stdout, row);
    else
        bench_table_row(stdout, row);
    fflush(stdout);
    if (R->csv) {
        bench_csv_row(R->csv, row);
        fflush(R->csv);
    }
    return 0;
}

/* Measure one row. Returns 0, or a status with `why` filled (the row is then skipped). */
static int measure_row(run *R, const dsig_alg *alg, unsigned bits, const bench_pset *ps,
                       size_t size_index, bench_row *row, char *why, size_t whylen)
{
    const bench_stream_opts *o = R->o;
    const int stateful = (dsig_alg_flags(alg) & DSIG_ALG_STATEFUL) != 0;
    unsigned total = o->warmup + o->measure;
    double *sw = R->samples, *vw = sw + o->measure, *cs = vw + o->measure, *cv = cs + o->measure,
           *ms = cv + o->measure, *mv = ms + o->measure;
    size_t nkg = 0;
    unsigned key_bits = bits;
    dsig_key *sk = NULL, *vk = NULL;
    op_ctx op = {.alg = alg, .format = o->format, .raw_cap = dsig_alg_sig_max(alg)};
    op.raw = malloc(op.raw_cap ? op.raw_cap : 1);
    int rc = op.raw ? 0 : DSIG_E_NOMEM;
    static uint64_t key_counter; /* stateful schemes: a fresh one-time key per signature */

    for (unsigned it = 0; it < total && rc == 0; it++) {
        if (stateful && ps) { /* a state key: many signatures per key, keygen outside the row */
            if ((rc = state_key_for(R, alg, ps))) {
                bench_errstr(rc, why, whylen);
                break;
            }
            op.sign_key = R->st_sk;
            op.verify_key = R->st_vk;
        } else if (!sk || stateful) {
            if (sk != vk)
                dsig_key_free(vk);
            dsig_key_free(sk);
            sk = vk = NULL;
            double k0 = bench_now_ms();
            rc = bench_make_keys(alg, bits, o->seed, stateful ? ++key_counter : 0, &sk, &vk);
            double k1 = bench_now_ms();
            if (rc) {
                bench_errstr(rc, why, whylen);
                break;
            }
            if (stateful)
                R->kg_samples[nkg++] = k1 - k0;
            key_bits = dsig_key_bits(sk);
            op.sign_key = sk;
            op.verify_key = vk;
        }
        bench_feeder f;
        bench_mem_probe mp;
        feeder_for(R, &f, size_index);
        if (feed_prepare(&f) != 0) {
            snprintf(why, whylen, "cannot open the payload source: %s", strerror(errno));
            rc = DSIG_E_IO;
            break;
        }
        bench_mem_begin(&mp);
        double c0 = bench_cpu_ms(), t0 = bench_now_ms();
        rc = op_sign(&op, &f);
        double t1 = bench_now_ms(), c1 = bench_cpu_ms();
        double m = bench_mem_end(&mp);
        if (feed_finish(&f) != 0 && rc == 0)
            rc = DSIG_E_IO;
        if (rc) {
            bench_errstr(rc, why, whylen);
            break;
        }
        if (it >= o->warmup) {
            sw[it - o->warmup] = t1 - t0;
            cs[it - o->warmup] = c1 - c0;
            ms[it - o->warmup] = m;
        }

        feeder_for(R, &f, size_index);
        if (feed_prepare(&f) != 0) {
            snprintf(why, whylen, "cannot open the payload source: %s", strerror(errno));
            rc = DSIG_E_IO;
            break;
        }
        bench_mem_begin(&mp);
        c0 = bench_cpu_ms();
        t0 = bench_now_ms();
        rc = op_verify(&op, &f);
        t1 = bench_now_ms();
        c1 = bench_cpu_ms();
        m = bench_mem_end(&mp);
        if (feed_finish(&f) != 0 && rc == 0)
            rc = DSIG_E_IO;
        op_release(&op);
        if (rc) {
            if (rc == DSIG_E_VERIFY)
                snprintf(why, whylen, "the signature just made did not verify (%s)",
                         dsig_last_error_detail());
            else
                bench_errstr(rc, why, whylen);
            break;
        }
        if (it >= o->warmup) {
            vw[it - o->warmup] = t1 - t0;
            cv[it - o->warmup] = c1 - c0;
            mv[it - o->warmup] = m;
        }
    }
    op_release(&op);
    free(op.raw);
    if (sk != vk)
        dsig_key_free(vk);
    dsig_key_free(sk);
    if (rc)
        return rc;

    uint64_t bytes = o->sizes[size_index];
    memset(row, 0, sizeof *row);
    snprintf(row->kty, sizeof row->kty, "%s", dsig_alg_kty(alg));
    snprintf(row->alg, sizeof row->alg, "%s", dsig_alg_name(alg));
    if (ps)
        snprintf(row->label, sizeof row->label, "%s", ps->label);
    else if (bench_alg_takes_bits(alg))
        snprintf(row->label, sizeof row->label, "%s/%u", dsig_alg_name(alg), bits);
    else
        snprintf(row->label, sizeof row->label, "%s", dsig_alg_name(alg));
    row->key_bits = key_bits;
    row->bytes = bytes;
    row->sign_ms = bench_stat_of(sw, o->measure);
    row->ver_ms = bench_stat_of(vw, o->measure);
    row->cpu_s_ms = bench_stat_of(cs, o->measure);
    row->cpu_v_ms = bench_stat_of(cv, o->measure);
    row->mem_s_kib = bench_stat_of(ms, o->measure);
    row->mem_v_kib = bench_stat_of(mv, o->measure);
    double mib = (double)bytes / (1024.0 * 1024.0);
    row->mibps_s = row->sign_ms.median > 0 ? mib / (row->sign_ms.median / 1e3) : 0;
    row->mibps_v = row->ver_ms.median > 0 ? mib / (row->ver_ms.median / 1e3) : 0;
    if (stateful && nkg && R->nkeygens < sizeof R->keygens / sizeof R->keygens[0]) {
        keygen_entry *e = &R->keygens[R->nkeygens++];
        snprintf(e->label, sizeof e->label, "%s", row->label);
        e->n = nkg;
        e->median_ms = bench_stat_of(R->kg_samples, nkg).median;
    }
    return 0;
}

/* Fill in the baseline and efficiency columns of a measured row. */
static void add_baseline(run *R, const dsig_alg *alg, size_t size_index, bench_row *row)
{
    const char *name = dsig_alg_baseline(alg);
    snprintf(row->baseline, sizeof row->baseline, "%s", name ? name : "");
    row->base_ms = baseline_ms(R, name, size_index);
    row->eff_s = row->eff_v = -1;
    if (row->base_ms >= 0) {
        row->eff_s = row->sign_ms.median > 0 ? row->base_ms / row->sign_ms.median : 0;
        row->eff_v = row->ver_ms.median > 0 ? row->base_ms / row->ver_ms.median : 0;
    }
}

/* Key sizes of an algorithm's rows: --rsa-bits, or the profile default (see --help). */
static size_t bits_for(const bench_stream_opts *o, const dsig_alg *alg, unsigned *bits)
{
    static const unsigned full_rsa[] = {2048, 3072, 4096, 6144, 8192};
    if (!bench_alg_takes_bits(alg)) {
        bits[0] = 0;
        return 1;
    }
    if (o->nrsa_bits) {
        memcpy(bits, o->rsa_bits, o->nrsa_bits * sizeof *bits);
        return o->nrsa_bits;
    }
    /* Full profile: every size for the first RSA algorithm of the registry (RS256 in its stable
     * order), the default size for the others; quick: the default size only. */
    const dsig_alg *first = NULL;
    for (size_t i = 0; i < dsig_alg_count() && !first; i++)
        if (bench_alg_takes_bits(dsig_alg_at(i)))
            first = dsig_alg_at(i);
    if (!o->quick && alg == first) {
        memcpy(bits, full_rsa, sizeof full_rsa);
        return sizeof full_rsa / sizeof full_rsa[0];
    }
    bits[0] = dsig_alg_default_bits(alg);
    return 1;
}

/* Write the payload of each size to a file (file source), once per run: in --out, else $TMPDIR. */
static int write_payload_files(run *R)
{
    const bench_stream_opts *o = R->o;
    const char *tmp = getenv("TMPDIR");
    const char *dir = o->out_dir ? o->out_dir : tmp && *tmp ? tmp : "/tmp";
    for (size_t s = 0; s < o->nsizes; s++) {
        snprintf(R->paths[s], sizeof R->paths[s], "%s/.dsig-bench-payload-%ld-%llu.bin", dir,
                 (long)getpid(), (unsigned long long)o->sizes[s]);
        FILE *f = fopen(R->paths[s], "wb");
        if (!f || fwrite(R->payload, 1, o->sizes[s], f) != o->sizes[s] || fclose(f) != 0) {
            fprintf(stderr, "dsig bench: cannot write %s: %s\n", R->paths[s], strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Print the summary block (stdout after the table; stderr in --json mode). */
static void print_summary(run *R, FILE *f, size_t nalgs, const char *csv, const char *svg)
{
    double ts = 0, tv = 0, bytes = 0;
    for (size_t i = 0; i < R->nrows; i++) {
        ts += R->rows[i].sign_ms.median;
        tv += R->rows[i].ver_ms.median;
        bytes += (double)R->rows[i].bytes * R->o->measure * 2.0;
    }
    fprintf(f, "Total algs: %zu Total measurements: %zu Total bytes: %.0f (%.1f MiB) Total sign: %.0f ms "
               "Total verify: %.0f ms\n",
            nalgs, R->nrows, bytes, bytes / (1024.0 * 1024.0), ts, tv);
    fprintf(f, "Source: %s, chunk %zu bytes, format %s, warm-up %u, measured %u, seed %llu\n",
            R->o->source == BENCH_SRC_FILE ? "file" : R->o->source == BENCH_SRC_PIPE ? "pipe" : "mem",
            R->o->chunk, R->o->format == BENCH_FMT_RAW ? "raw" : "jws",
            R->o->warmup, R->o->measure, (unsigned long long)R->o->seed);
    if (R->nkeygens) {
        fprintf(f, "Key generation of stateful schemes (dsig_state_create: tree + first durable write; "
                   "not in SIGN; reserve %u):\n", R->o->reserve ? R->o->reserve : BENCH_STATE_RESERVE);
        for (size_t i = 0; i < R->nkeygens; i++)
            fprintf(f, "  %s: mean %.3f ms over %zu keys\n", R->keygens[i].label,
                    R->keygens[i].median_ms, R->keygens[i].n);
    }
    fprintf(f, "Skipped: %zu\n", R->nskipped);
    for (size_t i = 0; i < R->nskipped; i++)
        fprintf(f, "  %s\n", R->skipped[i]);
    size_t suspect = 0;
    for (size_t i = 0; i < R->nrows; i++)
        suspect += bench_row_suspect(&R->rows[i]) != 0;
    if (suspect) {
        fprintf(f, "WARNING: %zu row%s with efficiency above %.2f (marked !): an operation cannot be "
                   "faster than the bare hash it contains, so the baseline measurement was disturbed "
                   "(other load on the machine); do not read these ratios, re-run those rows:\n",
                suspect, suspect == 1 ? "" : "s", BENCH_EFF_SUSPECT);
        for (size_t i = 0; i < R->nrows; i++)
            if (bench_row_suspect(&R->rows[i]))
                fprintf(f, "  %s %llu KiB: efficiency sign %.2f, verify %.2f (%s baseline %.3f ms)\n",
                        R->rows[i].label, (unsigned long long)(R->rows[i].bytes / 1024), R->rows[i].eff_s,
                        R->rows[i].eff_v, R->rows[i].baseline, R->rows[i].base_ms);
    }
    if (csv)
        fprintf(f, "CSV: %s\nSVG: %s\n", csv, svg);
    else
        fputs("CSV, SVG: not written (give --out DIR)\n", f);
}

/* Close the CSV and write the SVG of the largest size (--out). 0, or -1 reported. */
static int write_chart(run *R, const char *csv, const char *svg, uint64_t max)
{
    int bad = fclose(R->csv) != 0;
    R->csv = NULL;
    if (bad) {
        fprintf(stderr, "dsig bench stream: error writing %s\n", csv);
        return -1;
    }
    FILE *sf = fopen(svg, "w");
    if (!sf) {
        fprintf(stderr, "dsig bench stream: cannot write %s: %s\n", svg, strerror(errno));
        return -1;
    }
    char machine[256], date[64];
    bench_machine(machine, sizeof machine);
    bench_utc_date(date, sizeof date);
    const bench_svg_meta meta = {machine, date, R->o->warmup, R->o->measure};
    bench_svg_write(sf, R->rows, R->nrows, max, &meta);
    if (fclose(sf) != 0) {
        fprintf(stderr, "dsig bench stream: error writing %s\n", svg);
        return -1;
    }
    return 0;
}

/* `dsig bench stream` with parsed options. Returns a process exit code. */
int bench_stream_run(const bench_stream_opts *o)
{
    char err[BENCH_ERR_LEN];
    const dsig_alg *algs[BENCH_MAX_ALGS];
    size_t nalgs = 0;
    if (bench_select_algs(o->algs, algs, BENCH_MAX_ALGS, &nalgs, err, sizeof err) != 0) {
        fprintf(stderr, "dsig bench stream: %s\n", err);
        return 2;
    }
    if (o->list) {
        for (size_t i = 0; i < nalgs; i++)
            printf("%-16s %-4s baseline %s\n", dsig_alg_name(algs[i]), dsig_alg_kty(algs[i]),
                   dsig_alg_baseline(algs[i]) ? dsig_alg_baseline(algs[i]) : "(none)");
        return 0;
    }
    if (nalgs == 0) {
        fprintf(stderr, "dsig bench stream: no algorithm is registered in this build\n");
        return 2;
    }
    if (o->out_dir && bench_mkdir_p(o->out_dir) != 0) {
        fprintf(stderr, "dsig bench stream: cannot create --out directory %s: %s\n", o->out_dir,
                strerror(errno));
        return 1;
    }

    run R;
    memset(&R, 0, sizeof R);
    R.o = o;
    int code = 1;
    uint64_t max = 0;
    for (size_t s = 0; s < o->nsizes; s++)
        if (o->sizes[s] > max)
            max = o->sizes[s];
    char stamp[32], csv[4200] = "", svg[4200] = "";
    bench_timestamp(stamp, sizeof stamp);
    if (o->out_dir) {
        snprintf(csv, sizeof csv, "%s/benchmark_stream_sig_%s.csv", o->out_dir, stamp);
        snprintf(svg, sizeof svg, "%s/benchmark_stream_sig_%s.svg", o->out_dir, stamp);
    }

    R.payload = malloc(max);
    R.chunkbuf = malloc(o->chunk);
    R.samples = calloc(6 * (size_t)o->measure, sizeof *R.samples);
    R.kg_samples = calloc((size_t)o->warmup + o->measure, sizeof *R.kg_samples);
    if (!R.payload || !R.chunkbuf || !R.samples || !R.kg_samples) {
        fprintf(stderr, "dsig bench stream: out of memory for a %llu-byte payload\n",
                (unsigned long long)max);
        goto out;
    }
    fprintf(stderr, "bench: generating a %llu KiB payload (seed %llu)\n",
            (unsigned long long)(max / 1024), (unsigned long long)o->seed);
    bench_payload_fill(R.payload, max, o->seed);
    memset(R.chunkbuf, 0, o->chunk); /* touch it now so its pages are not counted as growth */
    if (o->source == BENCH_SRC_FILE && write_payload_files(&R) != 0)
        goto out;
    if (o->out_dir && !(R.csv = fopen(csv, "w"))) {
        fprintf(stderr, "dsig bench stream: cannot write %s: %s\n", csv, strerror(errno));
        goto out;
    }
    if (R.csv)
        bench_csv_header(R.csv);
    if (!o->json) {
        bench_table_header(stdout);
        bench_table_rule(stdout);
    }

    size_t nrows_total = 0, k = 0;
    for (size_t a = 0; a < nalgs; a++) {
        unsigned bits[BENCH_MAX_BITS];
        const bench_pset *sets;
        if (dsig_alg_flags(algs[a]) & DSIG_ALG_STATEFUL)
            nrows_total += bench_state_sets(algs[a], &sets) * o->nsizes;
        else
            nrows_total += bits_for(o, algs[a], bits) * o->nsizes;
    }
    for (size_t a = 0; a < nalgs; a++) {
        unsigned bits[BENCH_MAX_BITS];
        const bench_pset *sets = NULL;
        const int stateful = (dsig_alg_flags(algs[a]) & DSIG_ALG_STATEFUL) != 0;
        size_t nb = stateful ? bench_state_sets(algs[a], &sets) : bits_for(o, algs[a], bits);
        if (stateful && nb == 0)
            skip_row(&R, dsig_alg_name(algs[a]), 0, "no parameter set chosen for this stateful "
                                                    "algorithm (bench/bench_state.c)");
        for (size_t b = 0; b < nb; b++) {
            for (size_t s = 0; s < o->nsizes; s++) {
                bench_row row;
                char why[512] = "";
                char label[64];
                if (stateful)
                    snprintf(label, sizeof label, "%s", sets[b].label);
                else if (bench_alg_takes_bits(algs[a]))
                    snprintf(label, sizeof label, "%s/%u", dsig_alg_name(algs[a]), bits[b]);
                else
                    snprintf(label, sizeof label, "%s", dsig_alg_name(algs[a]));
                fprintf(stderr, "bench: [%zu/%zu] %s, %llu KiB\n", ++k, nrows_total, label,
                        (unsigned long long)(o->sizes[s] / 1024));
                if (measure_row(&R, algs[a], stateful ? 0 : bits[b], stateful ? &sets[b] : NULL, s,
                                &row, why, sizeof why) != 0) {
                    skip_row(&R, label, o->sizes[s], why);
                    continue;
                }
                add_baseline(&R, algs[a], s, &row);
                if (emit_row(&R, &row) != 0)
                    goto out;
            }
        }
    }
    if (!o->json)
        bench_table_rule(stdout);
    if (R.csv && write_chart(&R, csv, svg, max) != 0)
        goto out;
    print_summary(&R, o->json ? stderr : stdout, nalgs, o->out_dir ? csv : NULL, svg);
    code = 0;
out:
    state_drop(&R);
    bench_state_end(); /* state files and their registry (also on the error paths) */
    if (R.csv)
        fclose(R.csv);
    if (o->source == BENCH_SRC_FILE)
        for (size_t s = 0; s < o->nsizes; s++)
            if (R.paths[s][0])
                unlink(R.paths[s]);
    free(R.payload);
    free(R.chunkbuf);
    free(R.samples);
    free(R.kg_samples);
    free(R.rows);
    return code;
}

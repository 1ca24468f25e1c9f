/*
 * src/serve/tlog.c — the audit log as a Merkle tree (RFC 9162 §2.1; dsig/tlog.h): every line of the log
 * is a leaf, its entry the line's bytes without the newline.
 *
 * In memory: the compact range of the *durable* records (at most 64 hashes: the checkpoints sign it) and
 * the leaf hashes of the records appended but not durable yet, in order. The hashes of every complete
 * subtree go to a side file, "<log>.tree", in post-order (dsig_tlog_node_pos: 2n - popcount(n) hashes of
 * 32 bytes for n records), from which any inclusion or consistency proof takes O(log n) reads — the
 * service never holds the leaves. The side file is not synced: at every start the log is read again,
 * every record the side file already holds must hash to the leaf it holds (else the log was changed
 * and the start is refused, the side file kept as evidence), and the records it misses (a crash before
 * the kernel wrote it, or a new side file) are added. The last signed checkpoint is checked then too.
 *
 * A rotated log (rename, SIGHUP) continues the tree in the next file: the first record of a file says
 * its index, and the side file keeps the hashes of the records before it, so that a restart after a
 * rotation rebuilds only the current file's part. audit.c calls everything here under its lock except
 * serve_tlog_fetch (proofs: pread of subtrees already written, from any thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "dsig/tlog.h"
#include "serve_internal.h"

#define WBUF_MAX (64u << 10) /* subtree hashes written to the side file in batches of up to this */

struct serve_tlog {
    char *node_path;
    int node_fd;                 /* the side file (read with pread, appended with write) */
    dsig_tlog_range range;       /* the durable records */
    uint8_t (*pend)[32];         /* leaf hashes of the records appended, not durable yet */
    size_t npend, pcap;
    uint8_t *wbuf;               /* subtree hashes not written yet */
    size_t wlen;
    _Atomic int store_failed;    /* the side file could not be written: no more proofs */
    _Atomic uint64_t stored;     /* records whose subtrees are all in the side file */
    uint64_t file_end;           /* the log file's length up to its last whole line (at open) */
    uint64_t had;                /* records the side file held at open */
};

static int wbuf_put(void *arg, unsigned level, uint64_t index, const uint8_t h[32])
{
    (void)level;
    (void)index;
    struct serve_tlog *t = arg;
    memcpy(t->wbuf + t->wlen, h, 32);
    t->wlen += 32;
    return 0;
}

/* Write the batched subtree hashes; the side file is given up on the first failure. */
static void wbuf_flush(struct serve_tlog *t)
{
    if (t->wlen && !t->store_failed && dsig_write_all(t->node_fd, t->wbuf, t->wlen, NULL) != 0)
        t->store_failed = 1;
    t->wlen = 0;
    if (!t->store_failed)
        atomic_store_explicit(&t->stored, t->range.size, memory_order_release);
}

/* One leaf into the range (and its subtrees into the side file's batch). */
static void add_leaf(struct serve_tlog *t, const uint8_t leaf[32])
{
    /* An append completes at most 64 subtrees besides its leaf: flush before the batch could overflow. */
    if (t->wlen + 65 * 32 > WBUF_MAX)
        wbuf_flush(t);
    (void)dsig_tlog_range_append(&t->range, leaf, wbuf_put, t);
}

int serve_tlog_fetch(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    struct serve_tlog *t = arg;
    uint64_t pos = dsig_tlog_node_pos(level, index);
    uint64_t limit = dsig_tlog_stored_nodes(atomic_load_explicit(&t->stored, memory_order_acquire));
    if (t->store_failed || pos >= limit)
        return dsig_fail(DSIG_E_IO, "the tree file \"%s\" does not hold that subtree", t->node_path);
    ssize_t got = pread(t->node_fd, out, 32, (off_t)(pos * 32));
    if (got != 32)
        return dsig_fail(DSIG_E_IO, "the tree file \"%s\" cannot be read", t->node_path);
    return DSIG_OK;
}

/* The "index" a record line starts with ({"index":N,...}), or -1 if it has none. */
static int64_t line_index(const char *p, size_t n)
{
    static const char pre[] = "{\"index\":";
    if (n < sizeof pre || memcmp(p, pre, sizeof pre - 1) != 0)
        return -1;
    uint64_t v = 0;
    size_t i = sizeof pre - 1, digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9' && digits < 18; i++, digits++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    return digits ? (int64_t)v : -1;
}

/* The largest n with stored_nodes(n) <= count: how many records' subtrees a side file of `count`
 * hashes holds in full. */
static uint64_t leaves_in(uint64_t count)
{
    uint64_t lo = 0, hi = count; /* stored_nodes(n) >= n */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (dsig_tlog_stored_nodes(mid) <= count)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The compact range of the first b records, from the side file. */
static int range_from_store(struct serve_tlog *t, uint64_t b)
{
    dsig_tlog_range_init(&t->range);
    uint64_t start = 0;
    for (int k = 63; k >= 0; k--) {
        if (!((b >> k) & 1))
            continue;
        int rc = serve_tlog_fetch(t, (unsigned)k, start >> k, t->range.hash[t->range.n]);
        if (rc != DSIG_OK)
            return rc;
        t->range.n++;
        start += (uint64_t)1 << k;
    }
    t->range.size = b;
    return DSIG_OK;
}

void serve_tlog_free(struct serve_tlog *t)
{
    if (!t)
        return;
    if (t->node_fd >= 0)
        close(t->node_fd);
    dsig_xfree(t->pend, 0);
    dsig_xfree(t->wbuf, 0);
    dsig_xfree(t->node_path, 0);
    dsig_xfree(t, 0);
}

int serve_tlog_open(struct serve_tlog **out, const char *log_path)
{
    *out = NULL;
    struct serve_tlog *t = dsig_calloc(1, sizeof *t);
    if (!t)
        return dsig_fail(DSIG_E_NOMEM, "tree: out of memory");
    t->node_fd = -1;
    size_t pl = strlen(log_path);
    int rc = DSIG_OK;
    int lfd = -1;
    char *chunk = NULL, *carry = NULL;
    if (!(t->node_path = dsig_malloc(pl + 6)) || !(t->wbuf = dsig_malloc(WBUF_MAX)) ||
        !(chunk = dsig_malloc(1u << 20))) {
        rc = dsig_fail(DSIG_E_NOMEM, "tree: out of memory");
        goto out;
    }
    memcpy(t->node_path, log_path, pl);
    memcpy(t->node_path + pl, ".tree", 6);
    if ((t->node_fd = open(t->node_path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
        rc = dsig_fail(DSIG_E_IO, "tree file \"%s\": %s", t->node_path, strerror(errno));
        goto out;
    }
    struct stat ns;
    if (fstat(t->node_fd, &ns) != 0 || !S_ISREG(ns.st_mode)) {
        rc = dsig_fail(DSIG_E_IO, "tree file \"%s\": not a regular file", t->node_path);
        goto out;
    }
    uint64_t have = leaves_in((uint64_t)ns.st_size / 32);
    /* A side file that ends inside a record's subtrees (a crash mid-write) is cut back to whole ones. */
    if ((uint64_t)ns.st_size != dsig_tlog_stored_nodes(have) * 32 &&
        ftruncate(t->node_fd, (off_t)(dsig_tlog_stored_nodes(have) * 32)) != 0) {
        rc = dsig_fail(DSIG_E_IO, "tree file \"%s\": %s", t->node_path, strerror(errno));
        goto out;
    }
    atomic_store(&t->stored, have);
    t->had = have;
    if ((lfd = open(log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 && errno != ENOENT) {
        rc = dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", log_path, strerror(errno));
        goto out;
    }
    /* Read the log line by line; the first line says where in the tree this file starts. */
    int first = 1;
    size_t clen = 0, ccap = 0;
    uint64_t off = 0;
    ssize_t got = 0;
    while (lfd >= 0 && (got = read(lfd, chunk, 1u << 20)) > 0) {
        size_t i = 0;
        while (i < (size_t)got) {
            char *nl = memchr(chunk + i, '\n', (size_t)got - i);
            size_t take = nl ? (size_t)(nl - (chunk + i)) : (size_t)got - i;
            if (clen + take > ccap) { /* a line split across chunks (or a torn tail) */
                size_t ncap = ccap ? ccap : 4096;
                while (ncap < clen + take)
                    ncap *= 2;
                char *p = dsig_realloc(carry, ncap);
                if (!p) {
                    rc = dsig_fail(DSIG_E_NOMEM, "tree: out of memory");
                    goto out;
                }
                carry = p;
                ccap = ncap;
            }
            const char *line = chunk + i;
            size_t ll = take;
            if (clen || !nl) {
                memcpy(carry + clen, chunk + i, take);
                clen += take;
                line = carry;
                ll = clen;
            }
            i += take;
            if (!nl)
                break;
            i++; /* the newline */
            if (first) {
                int64_t idx = line_index(line, ll);
                uint64_t b = idx > 0 ? (uint64_t)idx : 0;
                if (b > have) {
                    rc = dsig_fail(DSIG_E_IO, "audit log \"%s\" starts at record %llu, but \"%s\" holds the tree of "
                                   "%llu records only: restore the tree file of the rotated logs",
                                   log_path, (unsigned long long)b, t->node_path, (unsigned long long)have);
                    goto out;
                }
                if ((rc = range_from_store(t, b)) != DSIG_OK)
                    goto out;
                first = 0;
            }
            uint8_t leaf[32], kept[32];
            dsig_tlog_leaf_hash(line, ll, leaf);
            uint64_t rec = t->range.size;
            if (rec < have) {
                /* Already in the side file: it must be the same record. The side file is left as it
                 * is, the evidence of what the service wrote. */
                if ((rc = serve_tlog_fetch(t, 0, rec, kept)) != DSIG_OK)
                    goto out;
                if (memcmp(leaf, kept, 32) != 0) {
                    rc = dsig_fail(DSIG_E_VERIFY, "record %llu of the audit log \"%s\" is not the one the service wrote "
                                   "(its tree file \"%s\" says otherwise): the log was changed (dsig log verify "
                                   "finds how) — or the tree file was damaged by a crash: move it away, the "
                                   "service then rebuilds it and checks the log against its last checkpoint",
                                   (unsigned long long)rec, log_path, t->node_path);
                    goto out;
                }
                (void)dsig_tlog_range_append(&t->range, leaf, NULL, NULL);
            } else {
                add_leaf(t, leaf);
            }
            off += ll + 1;
            clen = 0;
        }
    }
    if (got < 0) {
        rc = dsig_fail(DSIG_E_IO, "audit log \"%s\": %s", log_path, strerror(errno));
        goto out;
    }
    if (first) {
        /* An empty (or new) file: it continues the tree the side file holds (a rotation), if any. */
        if ((rc = range_from_store(t, have)) != DSIG_OK)
            goto out;
    } else if (t->range.size < have) {
        rc = dsig_fail(DSIG_E_VERIFY, "the audit log \"%s\" ends at record %llu, but the service wrote %llu (its tree "
                       "file \"%s\"): records were removed", log_path, (unsigned long long)t->range.size,
                       (unsigned long long)have, t->node_path);
        goto out;
    }

    wbuf_flush(t);
    if (t->store_failed) {
        rc = dsig_fail(DSIG_E_IO, "tree file \"%s\": cannot write it", t->node_path);
        goto out;
    }
    t->file_end = off;
out:
    if (lfd >= 0)
        close(lfd);
    dsig_xfree(chunk, 0);
    dsig_xfree(carry, 0);
    if (rc != DSIG_OK) {
        serve_tlog_free(t);
        return rc;
    }
    *out = t;
    return DSIG_OK;
}

uint64_t serve_tlog_file_end(const struct serve_tlog *t)
{
    return t->file_end;
}

uint64_t serve_tlog_next_index(const struct serve_tlog *t)
{
    return t->range.size + t->npend;
}

size_t serve_tlog_pending(const struct serve_tlog *t)
{
    return t->npend;
}

void serve_tlog_unpend(struct serve_tlog *t, size_t keep)
{
    if (keep < t->npend)
        t->npend = keep;
}

int serve_tlog_pend(struct serve_tlog *t, const char *line, size_t n)
{
    if (t->npend == t->pcap) {
        size_t ncap = t->pcap ? 2 * t->pcap : 1024;
        void *p = dsig_realloc(t->pend, ncap * 32);
        if (!p)
            return -1;
        t->pend = p;
        t->pcap = ncap;
    }
    dsig_tlog_leaf_hash(line, n, t->pend[t->npend++]);
    return 0;
}

void serve_tlog_advance(struct serve_tlog *t, uint64_t k)
{
    if (k > t->npend)
        k = t->npend; /* cannot happen: every record numbered by audit.c has its hash here */
    for (uint64_t i = 0; i < k; i++)
        add_leaf(t, t->pend[i]);
    memmove(t->pend, t->pend + k, (t->npend - (size_t)k) * 32);
    t->npend -= (size_t)k;
    wbuf_flush(t);
}

void serve_tlog_head(const struct serve_tlog *t, uint64_t *size, uint8_t root[32])
{
    *size = t->range.size;
    dsig_tlog_range_root(&t->range, root);
}

uint64_t serve_tlog_stored(struct serve_tlog *t)
{
    return t->store_failed ? 0 : atomic_load_explicit(&t->stored, memory_order_acquire);
}

void serve_tlog_undo_open(struct serve_tlog *t)
{
    if (t && ftruncate(t->node_fd, (off_t)(dsig_tlog_stored_nodes(t->had) * 32)) == 0)
        atomic_store(&t->stored, t->had);
}

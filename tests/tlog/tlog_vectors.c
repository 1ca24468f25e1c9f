/*
 * tests/tlog/tlog_vectors.c — prints the roots, inclusion proofs and consistency proofs dsig computes
 * (dsig/tlog.h) for the entries "entry-<i>": every tree of 1..70 leaves, every proof in them, and
 * random proofs in larger trees. tests/tlog/rfc9162.py recomputes each line from the RFC text.
 * The subtree hashes come from post-order storage (dsig_tlog_node_pos), filled by the compact range's
 * store callback: the storage layout the service uses is checked along the way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsig/dsig.h"
#include "dsig/tlog.h"

#define MAXN 5000

static uint8_t (*store)[32];
static uint64_t stored;

static int put(void *arg, unsigned level, uint64_t index, const uint8_t h[32])
{
    (void)arg;
    if (dsig_tlog_node_pos(level, index) != stored) {
        fprintf(stderr, "node (%u, %llu) stored at %llu, expected at %llu\n", level, (unsigned long long)index,
                (unsigned long long)stored, (unsigned long long)dsig_tlog_node_pos(level, index));
        exit(1);
    }
    memcpy(store[stored++], h, 32);
    return 0;
}

static int get(void *arg, unsigned level, uint64_t index, uint8_t out[32])
{
    uint64_t limit = *(const uint64_t *)arg, pos = dsig_tlog_node_pos(level, index);
    if (pos >= limit) {
        fprintf(stderr, "fetch of (%u, %llu) beyond the tree\n", level, (unsigned long long)index);
        exit(1);
    }
    memcpy(out, store[pos], 32);
    return 0;
}

static void print_hashes(const uint8_t (*h)[32], size_t n)
{
    if (n == 0)
        fputs("-", stdout);
    for (size_t i = 0; i < n; i++) {
        if (i)
            putchar(',');
        for (int j = 0; j < 32; j++)
            printf("%02x", h[i][j]);
    }
    putchar('\n');
}

static void incl(uint64_t m, uint64_t n)
{
    uint8_t proof[DSIG_TLOG_PROOF_MAX][32];
    size_t len = 0;
    uint64_t limit = dsig_tlog_stored_nodes(n);
    if (dsig_tlog_inclusion_proof(get, &limit, m, n, proof, &len) != DSIG_OK)
        exit(1);
    printf("incl %llu %llu ", (unsigned long long)m, (unsigned long long)n);
    print_hashes((const uint8_t(*)[32])proof, len);
}

static void cons(uint64_t m, uint64_t n)
{
    uint8_t proof[DSIG_TLOG_PROOF_MAX][32];
    size_t len = 0;
    uint64_t limit = dsig_tlog_stored_nodes(n);
    if (dsig_tlog_consistency_proof(get, &limit, m, n, proof, &len) != DSIG_OK)
        exit(1);
    printf("cons %llu %llu ", (unsigned long long)m, (unsigned long long)n);
    print_hashes((const uint8_t(*)[32])proof, len);
}

int main(int argc, char **argv)
{
    if (dsig_init() != DSIG_OK)
        return 1;
    srand(argc > 1 ? (unsigned)atoi(argv[1]) : 1u);
    store = calloc(2 * MAXN, 32);
    if (!store)
        return 1;
    dsig_tlog_range r;
    dsig_tlog_range_init(&r);
    for (uint64_t i = 0; i < MAXN; i++) {
        char e[32];
        uint8_t leaf[32], root[32];
        int n = snprintf(e, sizeof e, "entry-%llu", (unsigned long long)i);
        dsig_tlog_leaf_hash(e, (size_t)n, leaf);
        if (dsig_tlog_range_append(&r, leaf, put, NULL) != DSIG_OK)
            return 1;
        uint64_t size = i + 1;
        if (stored != dsig_tlog_stored_nodes(size))
            return 1;
        dsig_tlog_range_root(&r, root);
        if (size <= 70 || size % 997 == 0 || size == MAXN) {
            printf("root %llu ", (unsigned long long)size);
            print_hashes((const uint8_t(*)[32])root, 1);
        }
        if (size <= 70) {
            for (uint64_t m = 0; m < size; m++)
                incl(m, size);
            for (uint64_t m = 1; m <= size; m++)
                cons(m, size);
        }
    }
    for (int k = 0; k < 60; k++) {
        uint64_t n = 71 + (uint64_t)rand() % (MAXN - 70);
        incl((uint64_t)rand() % n, n);
        cons(1 + (uint64_t)rand() % n, n);
    }
    free(store);
    return 0;
}

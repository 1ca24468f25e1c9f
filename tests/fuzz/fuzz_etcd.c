/*
 * Fuzz target: what the etcd client (src/coord/) parses from the network — a range answer
 * (etcd_range_parse) and a watch stream (etcd_watch_feed), as a member or a man in the middle could
 * send them. Input byte 0: bit 0 picks the parser; for the stream, the rest of byte 0 and byte 1 give
 * the chunk size the bytes arrive in (1..512), so that messages split anywhere are reached.
 *
 * Invariants (abort on violation): a refused range answer says why and leaves no pairs; an accepted
 * one has n pairs each with NUL-terminated key and value of their stated lengths; a watch never
 * delivers an event below the revision it watches from, *from only grows and is one past the last
 * event delivered; the stream stops at the first broken message and takes no byte after it; the
 * message buffer is never overrun (ASan).
 */
#include <string.h>

#include "coord/etcd_internal.h"
#include "core/internal.h"
#include "fuzz_common.h"

#define FE_MAX_INPUT 65536u

static coord_etcd *client(void)
{
    static coord_etcd *e;
    if (!e) {
        /* No request is made: the address only has to be well-formed. Small cap: long lines are reached. */
        const char *ep[1] = {"http://127.0.0.1:1"};
        coord_etcd_config cfg = {.endpoints = ep, .n_endpoints = 1, .answer_max = 4096, .what = "fuzz etcd"};
        FUZZ_CHECK(coord_etcd_new(&e, &cfg) == DSIG_OK, "client");
    }
    return e;
}

struct seen {
    int64_t from_at_start, last;
    size_t events;
    int stop_after;
};

static int on_event(void *arg, const coord_etcd_event *ev)
{
    struct seen *s = arg;
    FUZZ_CHECK(ev->kv.key && ev->kv.key[ev->kv.key_len] == '\0', "event key not NUL-terminated");
    FUZZ_CHECK(ev->kv.value && ev->kv.value[ev->kv.value_len] == '\0', "event value not NUL-terminated");
    FUZZ_CHECK(ev->kv.mod_revision >= s->from_at_start && ev->kv.mod_revision >= s->last,
               "event at revision %lld delivered after %lld", (long long)ev->kv.mod_revision, (long long)s->last);
    s->last = ev->kv.mod_revision;
    s->events++;
    return s->stop_after && (int)s->events >= s->stop_after;
}

static void fuzz_range(const uint8_t *data, size_t size)
{
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!j)
        return;
    coord_etcd_kvs kvs;
    int rc = etcd_range_parse(client(), j, &kvs);
    if (rc != DSIG_OK) {
        fuzz_check_detail(rc, "etcd_range_parse");
        FUZZ_CHECK(kvs.n == 0 && kvs.kvs == NULL, "a refused answer left pairs");
    } else {
        for (size_t i = 0; i < kvs.n; i++) {
            FUZZ_CHECK(kvs.kvs[i].key && kvs.kvs[i].key[kvs.kvs[i].key_len] == '\0', "key %zu", i);
            FUZZ_CHECK(kvs.kvs[i].value && kvs.kvs[i].value[kvs.kvs[i].value_len] == '\0', "value %zu", i);
        }
    }
    coord_etcd_kvs_free(&kvs);
    json_decref(j);
}

static void fuzz_stream(const uint8_t *data, size_t size)
{
    size_t chunk = 1 + ((((size_t)data[0] >> 1) | ((size_t)data[1] << 7)) % 512);
    int stop_after = data[1] >> 5; /* 0: never */
    data += 2;
    size -= 2;
    int64_t from = 5;
    struct seen s = {.from_at_start = from, .last = from, .stop_after = stop_after};
    coord_etcd *e = client();
    struct etcd_watch_stream w = {.e = e, .fn = on_event, .arg = &s, .from = &from,
                                  .line = dsig_malloc(etcd_answer_max(e))};
    FUZZ_CHECK(w.line, "out of memory");
    size_t off = 0;
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;
        uint8_t *piece = fuzz_dup(data + off, n); /* exact size: ASan sees a read past the chunk */
        size_t took = etcd_watch_feed((char *)piece, 1, n, &w);
        free(piece);
        if (took != n) {
            FUZZ_CHECK(took == 0 && w.end != W_RUNNING, "a short write without a reason");
            break;
        }
        FUZZ_CHECK(w.end == W_RUNNING, "the stream ended but took every byte");
        off += n;
    }
    FUZZ_CHECK(from >= s.from_at_start, "*from went back");
    FUZZ_CHECK(s.events == 0 || from == s.last + 1, "*from is not one past the last event");
    FUZZ_CHECK(w.len <= etcd_answer_max(e), "message buffer overrun");
    if (w.end == W_STOPPED)
        FUZZ_CHECK(stop_after && (int)s.events == stop_after, "stopped without the callback asking");
    dsig_xfree(w.line, 0);
}

/* Seeds: a range answer with two pairs, and a watch stream (created, a put and a delete) in 7-byte
 * chunks; tests/fuzz/corpus/etcd holds more (compaction, cancel, error, repeated history). */
static void seeds(void)
{
    static const char range[] =
        "\x00{\"header\":{\"revision\":\"17\"},\"kvs\":[{\"key\":\"L3AvYQ==\",\"mod_revision\":\"6\","
        "\"value\":\"YWxwaGE=\"},{\"key\":\"L3AvYg==\",\"value\":\"eA==\",\"lease\":\"7587\"}]}";
    fuzz_seed(range, sizeof range - 1);
    static const char stream[] =
        "\x0d\x00{\"result\":{\"header\":{\"revision\":\"17\"},\"created\":true}}\n"
        "{\"result\":{\"header\":{\"revision\":\"17\"},\"events\":[{\"kv\":{\"key\":\"L3AvYQ==\","
        "\"mod_revision\":\"6\",\"value\":\"MQ==\"}},{\"type\":\"DELETE\",\"kv\":{\"key\":\"L3AvYQ==\","
        "\"mod_revision\":\"8\"}}]}}\n";
    fuzz_seed(stream, sizeof stream - 1);
}
FUZZ_SEED_GENERATOR(seeds)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > FE_MAX_INPUT)
        return 0;
    if (data[0] & 1)
        fuzz_stream(data, size);
    else
        fuzz_range(data + 1, size - 1);
    return 0;
}

/*
 * tests/coord/test_etcd_client.c — the etcd v3 client (src/coord/etcd.h) on a real 3-member cluster
 * (run inside etcd_cluster.sh: DSIG_ETCD_ENDPOINTS). Keys, prefixes, leases, watches with resume and
 * compaction, and members that do not answer.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "coord/etcd.h"
#include "dsig/dsig.h"

static char *g_eps[8];
static size_t g_n;
static char g_prefix[64];

static coord_etcd *client(void)
{
    coord_etcd_config cfg = {.endpoints = (const char *const *)g_eps, .n_endpoints = g_n,
                             .connect_timeout_ms = 500, .timeout_ms = 2000, .what = "test etcd"};
    coord_etcd *e = NULL;
    assert_int_equal(coord_etcd_new(&e, &cfg), DSIG_OK);
    return e;
}

/* PREFIX + suffix in a static buffer (one at a time). */
static const char *k(const char *suffix)
{
    static char buf[3][128];
    static int i;
    i = (i + 1) % 3;
    snprintf(buf[i], sizeof buf[i], "%s%s", g_prefix, suffix);
    return buf[i];
}

static void test_put_get_delete(void **state)
{
    (void)state;
    coord_etcd *e = client();
    int64_t rev1 = 0, rev2 = 0;
    assert_int_equal(coord_etcd_put(e, k("kv/a"), "alpha", 5, 0, &rev1), DSIG_OK);
    static const unsigned char bin[4] = {0, 0xff, '\n', 0};
    assert_int_equal(coord_etcd_put(e, k("kv/b"), bin, sizeof bin, 0, &rev2), DSIG_OK);
    assert_true(rev2 > rev1 && rev1 > 0);
    assert_int_equal(coord_etcd_put(e, k("kv0"), "outside", 7, 0, NULL), DSIG_OK);

    coord_etcd_kvs kvs;
    assert_int_equal(coord_etcd_get(e, k("kv/a"), 0, &kvs), DSIG_OK);
    assert_int_equal(kvs.n, 1);
    assert_string_equal(kvs.kvs[0].key, k("kv/a"));
    assert_int_equal(kvs.kvs[0].value_len, 5);
    assert_memory_equal(kvs.kvs[0].value, "alpha", 5);
    assert_int_equal(kvs.kvs[0].mod_revision, rev1);
    assert_true(kvs.revision >= rev2);
    coord_etcd_kvs_free(&kvs);

    /* The prefix "kv/" selects a and b, not "kv0" (the byte after '/' is '0'). */
    assert_int_equal(coord_etcd_get(e, k("kv/"), 1, &kvs), DSIG_OK);
    assert_int_equal(kvs.n, 2);
    assert_string_equal(kvs.kvs[1].key, k("kv/b"));
    assert_int_equal(kvs.kvs[1].value_len, sizeof bin);
    assert_memory_equal(kvs.kvs[1].value, bin, sizeof bin);
    coord_etcd_kvs_free(&kvs);

    /* An empty value is a value (the gateway leaves it out of the JSON). */
    assert_int_equal(coord_etcd_put(e, k("kv/empty"), "", 0, 0, NULL), DSIG_OK);
    assert_int_equal(coord_etcd_get(e, k("kv/empty"), 0, &kvs), DSIG_OK);
    assert_int_equal(kvs.n, 1);
    assert_int_equal(kvs.kvs[0].value_len, 0);
    coord_etcd_kvs_free(&kvs);

    uint64_t deleted = 0;
    assert_int_equal(coord_etcd_delete(e, k("kv/"), 1, &deleted), DSIG_OK);
    assert_int_equal(deleted, 3);
    assert_int_equal(coord_etcd_get(e, k("kv/"), 1, &kvs), DSIG_OK);
    assert_int_equal(kvs.n, 0);
    coord_etcd_kvs_free(&kvs);
    assert_int_equal(coord_etcd_delete(e, k("kv0"), 0, &deleted), DSIG_OK);
    assert_int_equal(deleted, 1);

    assert_int_equal(coord_etcd_get(e, "", 0, &kvs), DSIG_E_ARG);
    assert_true(coord_etcd_requests(e) >= 9);
    coord_etcd_free(e);
}

static void test_lease(void **state)
{
    (void)state;
    coord_etcd *e = client();
    int64_t id = 0, ttl = 0;
    assert_int_equal(coord_etcd_lease_grant(e, 2, &id), DSIG_OK);
    assert_true(id != 0);
    assert_int_equal(coord_etcd_put(e, k("lease/x"), "1", 1, id, NULL), DSIG_OK);
    coord_etcd_kvs kvs;
    assert_int_equal(coord_etcd_get(e, k("lease/x"), 0, &kvs), DSIG_OK);
    assert_int_equal(kvs.n, 1);
    assert_int_equal(kvs.kvs[0].lease, id);
    coord_etcd_kvs_free(&kvs);
    assert_int_equal(coord_etcd_lease_keepalive(e, id, &ttl), DSIG_OK);
    assert_true(ttl >= 1);
    /* Let it expire: its key goes with it, and keep-alive says so. */
    int gone = 0;
    for (int i = 0; i < 80 && !gone; i++) {
        usleep(100 * 1000);
        assert_int_equal(coord_etcd_get(e, k("lease/x"), 0, &kvs), DSIG_OK);
        gone = kvs.n == 0;
        coord_etcd_kvs_free(&kvs);
    }
    assert_true(gone);
    assert_int_equal(coord_etcd_lease_keepalive(e, id, &ttl), DSIG_E_STATE);
    assert_int_equal(coord_etcd_lease_revoke(e, id), DSIG_E_STATE);

    /* Revoke deletes the keys at once. */
    assert_int_equal(coord_etcd_lease_grant(e, 60, &id), DSIG_OK);
    assert_int_equal(coord_etcd_put(e, k("lease/y"), "1", 1, id, NULL), DSIG_OK);
    assert_int_equal(coord_etcd_lease_revoke(e, id), DSIG_OK);
    assert_int_equal(coord_etcd_get(e, k("lease/y"), 0, &kvs), DSIG_OK);
    assert_int_equal(kvs.n, 0);
    coord_etcd_kvs_free(&kvs);
    /* A put on a lease that does not exist is the request's fault. */
    assert_int_equal(coord_etcd_put(e, k("lease/z"), "1", 1, id, NULL), DSIG_E_ARG);
    assert_int_equal(coord_etcd_lease_grant(e, 0, &id), DSIG_E_ARG);
    coord_etcd_free(e);
}

struct seen {
    int n;
    char keys[16][128];
    int deleted[16];
    int stop_after;
};

static int on_event(void *arg, const coord_etcd_event *ev)
{
    struct seen *s = arg;
    if (s->n < 16) {
        snprintf(s->keys[s->n], sizeof s->keys[0], "%s=%s", ev->kv.key, ev->deleted ? "" : ev->kv.value);
        s->deleted[s->n] = ev->deleted;
    }
    s->n++;
    return s->stop_after && s->n >= s->stop_after;
}

struct writer {
    int delay_ms;
};

static void *late_writer(void *arg)
{
    struct writer *w = arg;
    usleep((useconds_t)w->delay_ms * 1000);
    coord_etcd *e = client();
    assert_int_equal(coord_etcd_put(e, k("w/late"), "L", 1, 0, NULL), DSIG_OK);
    coord_etcd_free(e);
    return NULL;
}

static void test_watch(void **state)
{
    (void)state;
    coord_etcd *e = client();
    coord_etcd_kvs kvs;
    assert_int_equal(coord_etcd_get(e, k("w/"), 1, &kvs), DSIG_OK);
    int64_t from = kvs.revision + 1, start = from;
    coord_etcd_kvs_free(&kvs);
    assert_int_equal(coord_etcd_put(e, k("w/1"), "one", 3, 0, NULL), DSIG_OK);
    assert_int_equal(coord_etcd_put(e, k("other"), "x", 1, 0, NULL), DSIG_OK);
    int64_t del_rev = 0;
    assert_int_equal(coord_etcd_delete(e, k("w/1"), 0, NULL), DSIG_OK);
    assert_int_equal(coord_etcd_get(e, k("w/"), 1, &kvs), DSIG_OK);
    del_rev = kvs.revision;
    coord_etcd_kvs_free(&kvs);

    /* History from `from`: the put and the delete, not the key outside the prefix. */
    struct seen s = {0};
    char want[160];
    assert_int_equal(coord_etcd_watch(e, k("w/"), &from, 600, on_event, &s), DSIG_OK);
    assert_int_equal(s.n, 2);
    snprintf(want, sizeof want, "%s=one", k("w/1"));
    assert_string_equal(s.keys[0], want);
    assert_int_equal(s.deleted[0], 0);
    snprintf(want, sizeof want, "%s=", k("w/1"));
    assert_string_equal(s.keys[1], want);
    assert_int_equal(s.deleted[1], 1);
    assert_int_equal(from, del_rev + 1);

    /* Nothing new: no event, *from unchanged. */
    memset(&s, 0, sizeof s);
    assert_int_equal(coord_etcd_watch(e, k("w/"), &from, 400, on_event, &s), DSIG_OK);
    assert_int_equal(s.n, 0);
    assert_int_equal(from, del_rev + 1);

    /* A change made while watching arrives; the callback ends the watch early. */
    pthread_t t;
    struct writer w = {.delay_ms = 300};
    assert_int_equal(pthread_create(&t, NULL, late_writer, &w), 0);
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(coord_etcd_watch(e, k("w/"), &from, 5000, on_event, &s), DSIG_OK);
    pthread_join(t, NULL);
    assert_int_equal(s.n, 1);
    snprintf(want, sizeof want, "%s=L", k("w/late"));
    assert_string_equal(s.keys[0], want);

    /* Resume: stopping after one event of two, the next watch delivers the other, once. */
    assert_int_equal(coord_etcd_put(e, k("w/2"), "2", 1, 0, NULL), DSIG_OK);
    assert_int_equal(coord_etcd_put(e, k("w/3"), "3", 1, 0, NULL), DSIG_OK);
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(coord_etcd_watch(e, k("w/"), &from, 2000, on_event, &s), DSIG_OK);
    assert_int_equal(s.n, 1);
    snprintf(want, sizeof want, "%s=2", k("w/2"));
    assert_string_equal(s.keys[0], want);
    memset(&s, 0, sizeof s);
    assert_int_equal(coord_etcd_watch(e, k("w/"), &from, 500, on_event, &s), DSIG_OK);
    assert_int_equal(s.n, 1);
    snprintf(want, sizeof want, "%s=3", k("w/3"));
    assert_string_equal(s.keys[0], want);

    /* Compacted history: DSIG_E_STALE (read again). */
    assert_int_equal(coord_etcd_get(e, k("w/"), 1, &kvs), DSIG_OK);
    char rev[24];
    snprintf(rev, sizeof rev, "%lld", (long long)kvs.revision);
    coord_etcd_kvs_free(&kvs);
    json_t *req = json_pack("{s:s,s:b}", "revision", rev, "physical", 1), *ans = NULL;
    assert_int_equal(coord_etcd_call(e, "/v3/kv/compaction", req, "compaction", &ans), DSIG_OK);
    json_decref(req);
    json_decref(ans);
    int64_t old = start;
    assert_int_equal(coord_etcd_watch(e, k("w/"), &old, 1000, on_event, &s), DSIG_E_STALE);
    assert_int_equal(old, start);
    assert_int_equal(coord_etcd_watch(e, k("w/"), &old, 1000, NULL, &s), DSIG_E_ARG);
    coord_etcd_free(e);
}

/* Members that do not answer: the next one is asked; none answering is DSIG_E_UNAVAILABLE naming
 * each. Port 1 on loopback refuses connections. */
static void test_members(void **state)
{
    (void)state;
    const char *dead[2] = {"http://127.0.0.1:1", "http://127.0.0.1:2"};
    coord_etcd_config cfg = {.endpoints = dead, .n_endpoints = 2, .connect_timeout_ms = 300, .timeout_ms = 600};
    coord_etcd *e = NULL;
    assert_int_equal(coord_etcd_new(&e, &cfg), DSIG_OK);
    coord_etcd_kvs kvs;
    assert_int_equal(coord_etcd_get(e, k("m"), 0, &kvs), DSIG_E_UNAVAILABLE);
    const char *d = dsig_last_error_detail();
    assert_non_null(strstr(d, "no member of 2 answered"));
    assert_non_null(strstr(d, "127.0.0.1:1"));
    assert_non_null(strstr(d, "127.0.0.1:2"));
    int64_t from = 1;
    assert_int_equal(coord_etcd_watch(e, k("m"), &from, 500, on_event, NULL), DSIG_E_UNAVAILABLE);
    coord_etcd_free(e);

    const char *mixed[2] = {"http://127.0.0.1:1", g_eps[0]};
    cfg.endpoints = mixed;
    assert_int_equal(coord_etcd_new(&e, &cfg), DSIG_OK);
    assert_int_equal(coord_etcd_put(e, k("m"), "v", 1, 0, NULL), DSIG_OK);
    uint64_t before = coord_etcd_requests(e);
    assert_int_equal(coord_etcd_get(e, k("m"), 0, &kvs), DSIG_OK); /* the live member first now */
    assert_int_equal(coord_etcd_requests(e), before + 1);
    assert_int_equal(kvs.n, 1);
    coord_etcd_kvs_free(&kvs);
    coord_etcd_free(e);

    const char *bad[1] = {"ftp://127.0.0.1:2379"};
    cfg.endpoints = bad;
    cfg.n_endpoints = 1;
    assert_int_equal(coord_etcd_new(&e, &cfg), DSIG_E_ARG);
    assert_null(e);
}

int main(void)
{
    const char *eps = getenv("DSIG_ETCD_ENDPOINTS");
    if (!eps) {
        fprintf(stderr, "run inside tests/coord/etcd_cluster.sh\n");
        return 77;
    }
    char *copy = strdup(eps), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && g_n < 8; t = strtok_r(NULL, ",", &save))
        g_eps[g_n++] = t;
    snprintf(g_prefix, sizeof g_prefix, "/dsig-etcd-client-test/%ld/", (long)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_delete),
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_members),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(copy);
    return rc;
}

/*
 * tests/coord/test_counter_etcd_fake.c — the etcd counter (src/serve/counter_etcd.c) against answers a
 * real cluster gives rarely or never: a loopback HTTP server in a thread answers each request with the
 * next canned response, and records the requests. Needs no etcd. Checks what each answer becomes
 * (ok / conflict / unavailable), that a failing member is followed by the next, and the request bodies
 * (the txn's compare, put and read-back; base64 keys under the prefix).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/ranges.h"
#include "testutil.h"

#define MAX_CANNED 8

struct fake {
    int lfd, port;
    const char *answers[MAX_CANNED]; /* whole HTTP responses, one per connection; NULL: close at once */
    size_t n;
    _Atomic size_t served;
    char last_body[4096];
    pthread_t t;
};

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    for (; f->served < f->n; f->served++) {
        int c = accept(f->lfd, NULL, NULL);
        if (c < 0)
            break;
        /* Read the head and the body (Content-Length) of one request. */
        char req[8192];
        size_t len = 0;
        for (;;) {
            ssize_t r = read(c, req + len, sizeof req - 1 - len);
            if (r <= 0)
                break;
            len += (size_t)r;
            req[len] = '\0';
            char *e = strstr(req, "\r\n\r\n");
            char *cl = strcasestr(req, "Content-Length:");
            if (e && cl && len >= (size_t)(e + 4 - req) + strtoul(cl + 15, NULL, 10)) {
                snprintf(f->last_body, sizeof f->last_body, "%s", e + 4);
                break;
            }
        }
        const char *a = f->answers[f->served];
        if (a) {
            size_t off = 0, al = strlen(a);
            while (off < al) {
                ssize_t w = write(c, a + off, al - off);
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
        }
        close(c);
    }
    return NULL;
}

static void fake_start(struct fake *f)
{
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->lfd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
    f->port = ntohs(sa.sin_port);
    assert_int_equal(listen(f->lfd, 8), 0);
    assert_int_equal(pthread_create(&f->t, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
    shutdown(f->lfd, SHUT_RDWR);
    pthread_join(f->t, NULL);
    close(f->lfd);
}

/* An answer with this status line and JSON body (Connection: close: one request per connection). */
static char *answer(const char *status, const char *json)
{
    char *b = malloc(strlen(json) + 200);
    sprintf(b, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
            status, strlen(json), json);
    return b;
}

static char *ok200(const char *json)
{
    return answer("200 OK", json);
}

#define HDR "\"header\":{\"revision\":\"3\"}"

static struct serve_counter *counter_for(const struct fake *const *fs, size_t n, char urls[][64])
{
    const char *eps[4];
    for (size_t i = 0; i < n; i++) {
        snprintf(urls[i], 64, "http://127.0.0.1:%d", fs[i]->port);
        eps[i] = urls[i];
    }
    struct serve_counter_etcd_config cfg = {.endpoints = eps, .n_endpoints = n, .prefix = "/t/",
                                            .connect_timeout_ms = 500, .timeout_ms = 1000};
    struct serve_counter *c = NULL;
    assert_int_equal(serve_counter_etcd_new(&c, &cfg), DSIG_OK);
    return c;
}

/* One get against one canned answer: its status (and value). */
static int get_with(const char *answer, uint64_t *v)
{
    struct fake f = {.n = 1};
    f.answers[0] = answer;
    fake_start(&f);
    char urls[1][64];
    const struct fake *fs[1] = {&f};
    struct serve_counter *c = counter_for(fs, 1, urls);
    int st = c->ops->get(c->ctx, "kid", v);
    serve_counter_free(c);
    fake_stop(&f);
    return st;
}

static void test_get_answers(void **state)
{
    (void)state;
    uint64_t v = 7;
    char *a = ok200("{" HDR "}");
    assert_int_equal(get_with(a, &v), SERVE_COUNTER_OK); /* no kvs: absent = 0 */
    assert_int_equal(v, 0);
    free(a);
    a = ok200("{" HDR ",\"kvs\":[{\"key\":\"L3Qva2lk\",\"value\":\"NDI=\"}],\"count\":\"1\"}"); /* "42" */
    assert_int_equal(get_with(a, &v), SERVE_COUNTER_OK);
    assert_int_equal(v, 42);
    free(a);
    static const char *const bad[] = {
        "{" HDR ",\"kvs\":[{\"value\":\"NDJ4\"}]}",          /* "42x": not a number */
        "{" HDR ",\"kvs\":[{\"value\":\"!!!!\"}]}",          /* not base64 */
        "{" HDR ",\"kvs\":[{\"value\":\"\"}]}",              /* empty */
        "{" HDR ",\"kvs\":[{\"value\":\"MTg0NDY3NDQwNzM3MDk1NTE2MTY=\"}]}", /* 2^64: too large */
        "{" HDR ",\"kvs\":[{},{}]}",                         /* two keys */
        "{\"kvs\":[]}",                                      /* no header: not an etcd answer */
        "not json",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        a = ok200(bad[i]);
        if (get_with(a, &v) != SERVE_COUNTER_UNAVAILABLE)
            fail_msg("answer %s was not refused", bad[i]);
        free(a);
    }
    a = answer("503 Service Unavailable", "{\"error\":\"etcdserver: no leader\",\"message\":\"no leader\",\"code\":14}");
    assert_int_equal(get_with(a, &v), SERVE_COUNTER_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "HTTP 503: no leader"));
    free(a);
    assert_int_equal(get_with(NULL, &v), SERVE_COUNTER_UNAVAILABLE); /* connection closed, no answer */
    /* An answer larger than 64 KiB is cut off, not buffered. */
    size_t big = 70 * 1024;
    char *json = malloc(big + 64);
    sprintf(json, "{" HDR ",\"x\":\"");
    size_t l = strlen(json);
    memset(json + l, 'a', big);
    strcpy(json + l + big, "\"}");
    a = ok200(json);
    assert_int_equal(get_with(a, &v), SERVE_COUNTER_UNAVAILABLE);
    assert_non_null(strstr(dsig_last_error_detail(), "larger than"));
    free(a);
    free(json);
}

static void test_cas_answers_and_failover(void **state)
{
    (void)state;
    /* Member 0 fails (500), member 1 answers: the swap succeeded. */
    struct fake f0 = {.n = 2}, f1 = {.n = 2};
    f0.answers[0] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    char *a_ok = ok200("{" HDR ",\"succeeded\":true,\"responses\":[{\"response_put\":{}}]}");
    char *a_conf = ok200("{" HDR ",\"responses\":[{\"response_range\":{\"kvs\":[{\"value\":\"OQ==\"}]}}]}");
    f1.answers[0] = a_ok;
    f1.answers[1] = a_conf; /* "succeeded" left out (false): a conflict, the value read back is 9 */
    fake_start(&f0);
    fake_start(&f1);
    char urls[2][64];
    const struct fake *fs[2] = {&f0, &f1};
    struct serve_counter *c = counter_for(fs, 2, urls);
    uint64_t obs = 0;
    assert_int_equal(c->ops->cas(c->ctx, "kid", 0, 16, &obs), SERVE_COUNTER_OK);
    /* The request: compare the create revision (expected 0), put "16" at base64("/t/kid"). */
    assert_non_null(strstr(f1.last_body, "\"target\":\"CREATE\""));
    assert_non_null(strstr(f1.last_body, "\"create_revision\":\"0\""));
    assert_non_null(strstr(f1.last_body, "\"key\":\"L3Qva2lk\""));
    assert_non_null(strstr(f1.last_body, "\"value\":\"MTY=\""));
    assert_non_null(strstr(f1.last_body, "request_range"));
    /* Member 1 answered last: it is asked first now (member 0 sees no second request). */
    assert_int_equal(c->ops->cas(c->ctx, "kid", 5, 21, &obs), SERVE_COUNTER_CONFLICT);
    assert_int_equal(obs, 9);
    assert_non_null(strstr(f1.last_body, "\"target\":\"VALUE\""));
    assert_non_null(strstr(f1.last_body, "\"value\":\"NQ==\"")); /* expected "5" */
    assert_int_equal(f0.served, 1);
    serve_counter_free(c);
    fake_stop(&f0);
    fake_stop(&f1);
    free(a_ok);
    free(a_conf);

    static const char *const bad[] = {
        "{" HDR ",\"succeeded\":\"yes\"}",                     /* not a boolean */
        "{" HDR ",\"succeeded\":false}",                       /* no read-back */
        "{" HDR ",\"responses\":[{\"response_range\":{\"kvs\":[{\"value\":\"NQ==\"}]}}]}", /* holds 5 = expected */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fake f = {.n = 1};
        char *a = ok200(bad[i]);
        f.answers[0] = a;
        fake_start(&f);
        const struct fake *one[1] = {&f};
        c = counter_for(one, 1, urls);
        if (c->ops->cas(c->ctx, "kid", 5, 6, &obs) != SERVE_COUNTER_UNAVAILABLE)
            fail_msg("txn answer %s was not refused", bad[i]);
        serve_counter_free(c);
        fake_stop(&f);
        free(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_answers),
        cmocka_unit_test(test_cas_answers_and_failover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * src/serve/http_strict.c — the request head against RFC 9112, where libmicrohttpd 0.9.75 is lenient.
 *
 * Framing that two parsers could read differently is what request smuggling behind a proxy is made of;
 * this service answers it with 400 (or 501) and closes the connection:
 *   - Content-Length and Transfer-Encoding together (§6.3 item 3), Transfer-Encoding in HTTP/1.0
 *     (§6.1), chunked not the final coding or applied twice (§6.3: "MUST respond with 400", also for a
 *     lone gzip or xchunked) → 400; chunked after another coding (gzip, chunked) → 501 (§6.1);
 *   - Content-Length repeated, or not 1*DIGIT (§6.3 item 5, §8.6 of RFC 9110) → 400;
 *   - a bare CR, NUL or other control character in a field value (RFC 9110 §5.5), a field name that is
 *     not a token or whitespace before the colon (§5.1), more than one Host (§3.2) or Authorization
 *     (RFC 9110 §11.6.2: one set of credentials) → 400;
 *   - a bare LF as a line end, obs-fold (§5.2), NUL bytes libmicrohttpd cut a value at → 400;
 *   - chunked spelled in a way libmicrohttpd does not take for chunked (a list with empty elements,
 *     trailing whitespace) → 400: it would read such a body until the connection closes.
 *
 * The last line is the hard part: libmicrohttpd accepts a bare LF as a line end, silently cuts a field
 * value at a NUL and mangles an obs-fold (it appends the continuation to the field *name*), and its API
 * shows none of it. What it does expose: it parses the head in place, in its read buffer (the method at
 * the start, then the target, the version and every field name and value, with the separators it
 * consumed overwritten by NULs), and MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE gives the head's size. So
 * the head is checked by accounting: walking the fields in order, each must start exactly where the
 * strict grammar puts it —
 *     method SP target SP version CRLF *( name ":" OWS value CRLF ) CRLF
 * (values keep their trailing whitespace in libmicrohttpd: OWS before CRLF is inside `value`) — with
 * only NUL (a consumed separator) or OWS between them, and the last CRLF ending the head exactly. A
 * bare LF is one byte short, a skipped NUL leaves bytes nobody accounts for, an obs-fold moves a name
 * out of the buffer: all fail the walk. Only bytes inside [method, method + head size) are read, and
 * every pointer is checked to lie there first. A libmicrohttpd that stopped parsing in place would fail
 * the walk for every request (400, never acceptance): tests/serve/serve_framing.sh would show it.
 * Chunked framing inside the body is libmicrohttpd's (it refuses malformed chunk sizes with 400, but
 * takes a bare LF after a chunk size or chunk data as a line end, as RFC 9112 §2.2 lets a recipient do).
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "front.h"

/* RFC 9110 §5.6.2 tchar. */
static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

struct walk {
    uintptr_t start, end;      /* the head: [method, method + head size) */
    uintptr_t next;            /* where the next field name must start */
    int bad;                   /* the layout does not account for the head */
    const char *why;
    unsigned ncl, nte, nhost, nauth;
    const char *cl;            /* the Content-Length value (the last one) */
    size_t cl_len;
    char te[256];              /* every Transfer-Encoding value, comma-joined */
    size_t te_len;
};

/* 1 if [p, p + n) lies inside the head. */
static int inside(const struct walk *w, uintptr_t p, size_t n)
{
    return p >= w->start && p <= w->end && n <= w->end - p;
}

/* One field, in order (MHD_get_connection_values_n). */
static enum MHD_Result walk_field(void *cls, enum MHD_ValueKind kind, const char *key, size_t klen, const char *value,
                                  size_t vlen)
{
    (void)kind;
    struct walk *w = cls;
    uintptr_t k = (uintptr_t)key, v = (uintptr_t)value;
    if (!key || !value || k != w->next || !inside(w, k, klen + 1) || v <= k + klen || !inside(w, v, vlen + 2)) {
        w->bad = 1;
        w->why = "a line of the request head is malformed (bare LF, NUL, obs-fold or stray bytes)";
        return MHD_NO;
    }
    if (klen == 0) {
        w->bad = 1;
        w->why = "empty field name";
        return MHD_NO;
    }
    for (size_t i = 0; i < klen; i++)
        if (!is_tchar((unsigned char)key[i])) {
            w->bad = 1;
            w->why = "a field name that is not a token (or whitespace before the colon)";
            return MHD_NO;
        }
    /* key[klen] was the colon; then OWS up to the value. */
    const char *p = key + klen;
    if (*p != '\0') {
        w->bad = 1;
        w->why = "a line of the request head is malformed";
        return MHD_NO;
    }
    for (p++; p < value; p++)
        if (*p != ' ' && *p != '\t') {
            w->bad = 1;
            w->why = "a line of the request head is malformed";
            return MHD_NO;
        }
    /* RFC 9110 §5.5: field-vchar / obs-text / SP / HTAB — a CR, LF, NUL or other control is invalid. */
    for (size_t i = 0; i < vlen; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            w->bad = 1;
            w->why = "a control character (bare CR, NUL, ...) in a field value";
            return MHD_NO;
        }
    }
    /* The line end: exactly CR LF, both consumed (NUL). A bare LF, or bytes after a NUL, fail here. */
    if (value[vlen] != '\0' || value[vlen + 1] != '\0') {
        w->bad = 1;
        w->why = "a line of the request head does not end with CRLF (bare LF, NUL or stray bytes)";
        return MHD_NO;
    }
    w->next = v + vlen + 2;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        w->ncl++;
        w->cl = value;
        w->cl_len = vlen;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        w->nte++;
        if (w->te_len + vlen + 2 >= sizeof w->te) {
            w->te_len = sizeof w->te; /* too long to be anything but garbage: 400 below */
        } else {
            if (w->te_len)
                w->te[w->te_len++] = ',';
            memcpy(w->te + w->te_len, value, vlen);
            w->te_len += vlen;
            w->te[w->te_len] = '\0';
        }
    } else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        w->nhost++;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0) {
        w->nauth++;
    }
    return MHD_YES;
}

/* Transfer-Encoding (the codings of every field line, in order): 0 if exactly "chunked"; 400 when
 * chunked is not the final coding or appears twice (RFC 9112 §6.3: the length cannot be determined),
 * 501 when the framing is chunked but another coding comes first (§6.1: not implemented here). */
static unsigned check_te(const struct walk *w, const char **why)
{
    *why = "Transfer-Encoding: chunked must be the final coding (the body length cannot be determined)";
    if (w->te_len >= sizeof w->te)
        return 400;
    char list[sizeof w->te];
    memcpy(list, w->te, w->te_len + 1);
    unsigned chunked = 0, other = 0, last_chunked = 0;
    for (char *save = NULL, *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        while (*c == ' ' || *c == '\t')
            c++;
        size_t n = strlen(c);
        while (n && (c[n - 1] == ' ' || c[n - 1] == '\t'))
            n--;
        if (n == 0)
            continue; /* RFC 9110 §5.6.1: empty list elements do not count */
        last_chunked = n == 7 && strncasecmp(c, "chunked", 7) == 0;
        chunked += last_chunked;
        other += !last_chunked;
    }
    if (!last_chunked)
        return 400;
    if (chunked > 1) {
        *why = "Transfer-Encoding: chunked applied more than once";
        return 400;
    }
    if (other) {
        *why = "Transfer-Encoding: only chunked is supported";
        return 501;
    }
    return 0;
}

unsigned serve_http_check(struct MHD_Connection *c, const struct req *r, const char *url, const char *method,
                          const char *version, int *has_body, const char **why)
{
    *has_body = 0;
    const union MHD_ConnectionInfo *hs = MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    struct walk w;
    memset(&w, 0, sizeof w);
    w.start = (uintptr_t)method;
    w.end = w.start + (hs ? hs->header_size : 0);
    *why = "the request line is malformed";
    if (!hs || !r->target_ok)
        return 400;
    /* method SP target SP version CRLF: the target as received (its length from the URI callback, before
     * libmicrohttpd decoded it in place). */
    size_t ml = strlen(method), vl = strlen(version);
    uintptr_t u = (uintptr_t)url, v = (uintptr_t)version;
    if (ml == 0 || u != w.start + ml + 1 || v != u + r->target_len + 1 || !inside(&w, v, vl + 2) ||
        version[vl] != '\0' || version[vl + 1] != '\0')
        return 400;
    w.next = v + vl + 2;
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, walk_field, &w);
    if (w.bad) {
        *why = w.why;
        return 400;
    }
    /* The empty line ends the head exactly. */
    if (w.next + 2 != w.end || ((const char *)w.next)[0] != '\0' || ((const char *)w.next)[1] != '\0') {
        *why = "the request head does not end with an empty CRLF line (bare LF or stray bytes)";
        return 400;
    }
    int http10 = strcmp(version, MHD_HTTP_VERSION_1_0) == 0;
    if (w.nhost > 1) {
        *why = "more than one Host field";
        return 400;
    }
    if (w.nauth > 1) { /* a singleton field: a proxy checking one and this service another must not happen */
        *why = "more than one Authorization field";
        return 400;
    }
    if (w.ncl > 1) {
        *why = "Content-Length repeated";
        return 400;
    }
    if (w.ncl) {
        size_t n = w.cl_len;
        while (n && (w.cl[n - 1] == ' ' || w.cl[n - 1] == '\t'))
            n--;
        int digits = n > 0 && n <= 19;
        for (size_t i = 0; digits && i < n; i++)
            digits = w.cl[i] >= '0' && w.cl[i] <= '9';
        if (!digits) {
            *why = "Content-Length is not a decimal number";
            return 400;
        }
        for (size_t i = 0; i < n; i++)
            *has_body |= w.cl[i] != '0';
    }
    if (w.nte) {
        if (w.ncl) {
            *why = "Content-Length together with Transfer-Encoding";
            return 400;
        }
        if (http10) {
            *why = "Transfer-Encoding in an HTTP/1.0 request";
            return 400;
        }
        unsigned st = check_te(&w, why);
        if (st)
            return st;
        /* libmicrohttpd dechunks only a (first) value that is exactly "chunked": with any other
         * spelling of the same coding ("chunked " with trailing OWS, "chunked,", ", chunked") it would
         * read the body until the connection closes, chunk framing and all, into the signer. */
        if (w.nte != 1 || strcasecmp(w.te, "chunked") != 0) {
            *why = "Transfer-Encoding: send exactly \"chunked\" (one field, no list, no trailing whitespace)";
            return 400;
        }
        *has_body = 1;
    }
    return 0;
}

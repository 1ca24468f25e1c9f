/*
 * src/coord/etcd_internal.h — what etcd.c (requests) and etcd_watch.c (the watch stream) share.
 */
#ifndef DSIG_COORD_ETCD_INTERNAL_H
#define DSIG_COORD_ETCD_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "coord/etcd.h"

/* A pooled libcurl handle (NULL: out of memory), and its return: reuse only after a clean transfer,
 * so that a connection in an unknown state is never reused. */
CURL *etcd_handle_take(coord_etcd *e);
void etcd_handle_give(coord_etcd *e, CURL *h, int reuse);
/* Reset h for one POST of body to url with the client's timeouts (total_ms for the whole transfer);
 * counts the request. err: CURL_ERROR_SIZE bytes. */
void etcd_handle_setup(coord_etcd *e, CURL *h, const char *url, const char *body, struct curl_slist *hdr,
                       long total_ms, char *err);

/* Members: the one to ask first, remember the one that answered, the URL of member i. */
size_t etcd_first_member(coord_etcd *e);
void etcd_prefer_member(coord_etcd *e, size_t i);
const char *etcd_member(const coord_etcd *e, size_t i);
const char *etcd_what(const coord_etcd *e);
size_t etcd_answer_max(const coord_etcd *e);
/* Append "; why" to a bounded detail string. */
void etcd_detail_add(char *detail, size_t cap, size_t *used, const char *why);

/* Set "key" (and for prefix, "range_end") of req from key. DSIG_OK, DSIG_E_ARG, DSIG_E_NOMEM. */
int etcd_key_fields(coord_etcd *e, json_t *req, const char *key, int prefix);
/* A gateway kv object into kv (owned: etcd_kv_clear). 0, or -1 (malformed / out of memory). */
int etcd_kv_parse(json_t *o, coord_etcd_kv *kv);
void etcd_kv_clear(coord_etcd_kv *kv);
/* A 64-bit number sent as a JSON string (absent: 0): 0, or -1 (malformed). */
int etcd_int(json_t *v, int64_t *out);
int etcd_header_revision(json_t *ans, int64_t *rev);
/* The message of an error answer, or "". */
const char *etcd_error_message(json_t *j);

#endif

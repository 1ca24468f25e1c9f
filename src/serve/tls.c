/*
 * src/serve/tls.c — the certificate chain and private key of `dsig serve`'s built-in TLS: read once at
 * start (bounded, never through a symbolic link, the key not readable by group or others), checked with
 * OpenSSL so that a bad PEM or a key that does not belong to the certificate fails the start with a
 * message naming the file, then handed to libmicrohttpd (GnuTLS) as PEM text by server.c.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "core/internal.h"
#include "serve_internal.h"

/* GnuTLS priority strings (gnutls_priority_init syntax). SECURE128 as the base (no suite under 128-bit
 * security), then an explicit allow-list: TLS 1.3 (and 1.2), AEAD ciphers only (AES-GCM first — AES-NI
 * makes it the cheapest per byte here — then ChaCha20-Poly1305), ECDHE key exchange only for TLS 1.2
 * (forward secrecy: no static RSA, no CBC/SHA-1 suites, no finite-field DHE with its weak-prime history),
 * and the server's preference order rather than the client's. The groups are elliptic curves only (TLS 1.3
 * would otherwise accept the FFDHE groups) with X25519 first: it is the key share OpenSSL/curl clients send,
 * and with P-256 first %SERVER_PRECEDENCE made GnuTLS answer them with a HelloRetryRequest (a round trip). */
#define PRIO_COMMON                                                                                           \
    "-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:" \
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-SECP521R1:%SERVER_PRECEDENCE"
static const char prio_tls12[] = "SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:" PRIO_COMMON;
static const char prio_tls13[] = "SECURE128:-VERS-ALL:+VERS-TLS1.3:" PRIO_COMMON;

/* The priority string for a minimum TLS version (12 or 13). */
const char *serve_tls_priorities(unsigned min_version)
{
    return min_version >= 13 ? prio_tls13 : prio_tls12;
}

/* Read a whole PEM file into a NUL-terminated buffer: a regular file opened without following a
 * symbolic link, at most `max` bytes, no NUL byte inside (GnuTLS takes it as a C string). With `secret`
 * the file must not be readable or writable by group or others. `what` names the member ("tls.key"). */
static int read_pem(const char *what, const char *path, size_t max, int secret, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP)
            return dsig_fail(DSIG_E_IO, "%s \"%s\": a symbolic link (links are not followed: name the file itself)",
                             what, path);
        return dsig_fail(DSIG_E_IO, "%s \"%s\": %s", what, path, strerror(errno));
    }
    struct stat st;
    int rc = DSIG_OK;
    if (fstat(fd, &st) != 0)
        rc = dsig_fail(DSIG_E_IO, "%s \"%s\": %s", what, path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = dsig_fail(DSIG_E_IO, "%s \"%s\": not a regular file", what, path);
    else if (secret && (st.st_mode & 077))
        rc = dsig_fail(DSIG_E_IO, "%s \"%s\": mode 0%03o: the private key must not be readable by group or others "
                       "(chmod 600)", what, path, (unsigned)(st.st_mode & 0777));
    else if ((uint64_t)st.st_size > max)
        rc = dsig_fail(DSIG_E_TOO_LARGE, "%s \"%s\": larger than %zu bytes", what, path, max);
    else if (st.st_size == 0)
        rc = dsig_fail(DSIG_E_IO, "%s \"%s\": empty file", what, path);
    if (rc != DSIG_OK) {
        close(fd);
        return rc;
    }
    char whatp[64 + PATH_MAX];
    snprintf(whatp, sizeof whatp, "%s \"%s\"", what, path);
    char *buf = NULL;
    size_t n = 0;
    rc = dsig_read_whole_fd(fd, whatp, max, &buf, &n);
    close(fd);
    if (rc != DSIG_OK)
        return rc;
    if (memchr(buf, '\0', n)) {
        dsig_xfree(buf, n + 1);
        return dsig_fail(DSIG_E_ARG, "%s \"%s\": contains a NUL byte: not a PEM file", what, path);
    }
    *out = buf;
    *out_len = n;
    return DSIG_OK;
}


/* Parse the chain and the key with OpenSSL: every certificate must parse, the key must be an
 * unencrypted PEM private key matching the first certificate. An expired (or not yet valid) leaf is
 * only a warning: the clients decide, and a restart with a fresh certificate fixes it. */
static int check_pair(const struct dsig_serve_config *cfg, const struct serve_tls *t, serve_warn_fn warn,
                      void *warn_arg)
{
    int rc = DSIG_OK;
    X509 *leaf = NULL;
    EVP_PKEY *pk = NULL;
    BIO *b = BIO_new_mem_buf(t->cert, (int)t->cert_len);
    if (!b)
        return dsig_fail(DSIG_E_NOMEM, "tls: out of memory");
    /* A combined certificate + key file would be read here with the certificate's (loose) mode
     * checks: refuse it, the key belongs in tls.key (mode 0600). */
    if (strstr(t->cert, "PRIVATE KEY-----")) {
        BIO_free(b);
        return dsig_fail(DSIG_E_ARG, "tls.cert \"%s\": contains a private key: put the key in its own file "
                         "(tls.key, chmod 600) and only certificates in tls.cert", cfg->tls_cert);
    }
    ERR_clear_error();
    leaf = PEM_read_bio_X509(b, NULL, dsig_pem_no_passphrase, NULL);
    if (!leaf) {
        rc = dsig_fail(DSIG_E_ARG, "tls.cert \"%s\": no PEM certificate (-----BEGIN CERTIFICATE-----) could be "
                       "read", cfg->tls_cert);
        goto done;
    }
    for (unsigned i = 2;; i++) { /* the rest of the chain (intermediates): all must parse */
        X509 *x = PEM_read_bio_X509(b, NULL, dsig_pem_no_passphrase, NULL);
        if (!x) {
            unsigned long e = ERR_peek_last_error();
            if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
                break; /* the end of the file */
            rc = dsig_fail(DSIG_E_ARG, "tls.cert \"%s\": certificate #%u of the chain does not parse", cfg->tls_cert,
                           i);
            goto done;
        }
        X509_free(x);
    }
    ERR_clear_error();
    BIO_free(b);
    if (!(b = BIO_new_mem_buf(t->key, (int)t->key_len))) {
        rc = dsig_fail(DSIG_E_NOMEM, "tls: out of memory");
        goto done;
    }
    if (!(pk = PEM_read_bio_PrivateKey(b, NULL, dsig_pem_no_passphrase, NULL))) {
        rc = dsig_fail(DSIG_E_ARG, "tls.key \"%s\": not an unencrypted PEM private key (an encrypted key is not "
                       "supported: the service starts unattended)", cfg->tls_key);
        goto done;
    }
    if (X509_check_private_key(leaf, pk) != 1) {
        rc = dsig_fail(DSIG_E_ARG, "tls.key \"%s\": does not match the certificate of tls.cert \"%s\" (the key "
                       "must belong to the first certificate of the chain)", cfg->tls_key, cfg->tls_cert);
        goto done;
    }
    if (warn && (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0 ||
                 X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0)) {
        char msg[4200];
        snprintf(msg, sizeof msg, "tls.cert \"%s\": the certificate is expired or not yet valid (clients will "
                 "refuse it)", cfg->tls_cert);
        warn(warn_arg, msg);
    }
done:
    ERR_clear_error();
    EVP_PKEY_free(pk);
    X509_free(leaf);
    BIO_free(b);
    return rc;
}

/* Load and check the TLS files of the configuration (see serve_internal.h). */
int serve_tls_load(const struct dsig_serve_config *cfg, serve_warn_fn warn, void *warn_arg, struct serve_tls **out)
{
    *out = NULL;
    if (!cfg->tls_cert)
        return DSIG_OK;
    struct serve_tls *t = dsig_calloc(1, sizeof *t);
    if (!t)
        return dsig_fail(DSIG_E_NOMEM, "tls: out of memory");
    t->min_version = cfg->tls_min >= 13 ? 13 : 12;
    int rc;
    if ((rc = read_pem("tls.cert", cfg->tls_cert, SERVE_TLS_CERT_MAX, 0, &t->cert, &t->cert_len)) != DSIG_OK ||
        (rc = read_pem("tls.key", cfg->tls_key, SERVE_TLS_KEY_MAX, 1, &t->key, &t->key_len)) != DSIG_OK ||
        (rc = check_pair(cfg, t, warn, warn_arg)) != DSIG_OK) {
        serve_tls_free(t);
        return rc;
    }
    *out = t;
    return DSIG_OK;
}

/* Free the buffers, wiping the private key. */
void serve_tls_free(struct serve_tls *t)
{
    if (!t)
        return;
    dsig_xfree(t->key, t->key ? t->key_len + 1 : 0);
    dsig_xfree(t->cert, 0);
    dsig_xfree(t, 0);
}

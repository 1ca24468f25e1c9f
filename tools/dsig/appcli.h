/*
 * tools/dsig/appcli.h — what `dsig kv` and `dsig book` share (appcli.c): the server command (options,
 * keys, signals) and the client command (options, one command from the arguments or one per line from
 * standard input, receipts). The application-specific part is how words become a request body and how a
 * result is printed. These commands use the applications library (src/apps/apps.h) besides libdsig.
 */
#ifndef DSIG_TOOL_APPCLI_H
#define DSIG_TOOL_APPCLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "apps/apps.h"

/* Words of one command -> request body (at most APPS_MAX_BODY bytes). 0, or -1 after printing why. */
typedef int (*appcli_body_fn)(int argc, char **argv, uint8_t *body, size_t *len);
/* Print a verified result (the encoded value) on stdout. */
typedef void (*appcli_print_fn)(const uint8_t *result, size_t len);

struct appcli_app {
    unsigned app;                /* APPS_APP_KV / APPS_APP_BOOK */
    const char *cmd;             /* "kv", "book" */
    const char *usage;
    appcli_body_fn body;
    appcli_print_fn print;
};

/* `dsig CMD serve ...` (argv[0] = "serve"). */
int appcli_serve(const struct appcli_app *a, int argc, char **argv);
/* `dsig CMD [client options] COMMAND...` (argv[0] = CMD). */
int appcli_client(const struct appcli_app *a, int argc, char **argv);

#endif

/*
 * tools/dsig/cli.h — what the files of the `dsig` tool share: commands, argument parsing, error
 * reporting, inputs, outputs, key files and the progress bar.
 *
 * The tool uses only the public API (the headers in include/dsig/) — and, for `dsig kv|book|audit`, the
 * applications library (src/apps/apps.h, appcli.h): no cryptography and no switch on algorithm names
 * here; everything about an algorithm comes from the registry.
 */
#ifndef DSIG_TOOL_CLI_H
#define DSIG_TOOL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dsig/dsig.h"

/* Exit codes (docs/cli.md): verify uses 1 only for a signature that does not verify. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_INVALID 1
#define CLI_EXIT_ERROR 2

/* Payloads stream through dsig_read_fd in chunks of this size. */
#define CLI_CHUNK DSIG_IO_DEFAULT_CHUNK

/* Set by --quiet (globally or on any command). */
extern int cli_quiet;

/* ---- commands (cmd_*.c) ------------------------------------------------------------------- */

struct cli_command {
    const char *name;
    const char *summary;              /* one line for `dsig help` */
    const char *usage;                /* full usage text printed by --help */
    int (*run)(int argc, char **argv);/* argv[0] is the command name; returns the exit code */
};

int cmd_list(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_pubkey(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_key(int argc, char **argv);

extern const char cli_usage_list[];
extern const char cli_usage_keygen[];
extern const char cli_usage_pubkey[];
extern const char cli_usage_sign[];
extern const char cli_usage_verify[];
extern const char cli_usage_key[];

/* ---- argument parsing (args.c) ------------------------------------------------------------ */

struct cli_opt {
    const char *long_name;  /* without the leading "--" */
    char short_name;        /* 0 when the option has no short form */
    int has_arg;            /* 1: takes a value ("--o=v", "--o v", "-ov", "-o v") */
    int id;                 /* returned by args_next; must be > 0 */
};

/* Options every command accepts. */
#define CLI_OPT_HELP 1000
#define CLI_OPT_QUIET 1001
#define CLI_COMMON_OPTS {"help", 'h', 0, CLI_OPT_HELP}, {"quiet", 'q', 0, CLI_OPT_QUIET}

struct cli_parser {
    const char *cmd;              /* command name, for messages */
    const struct cli_opt *opts;   /* terminated by an entry with long_name == NULL */
    int argc;
    char **argv;
    int idx;                      /* next argv index */
    int only_positional;          /* after "--" */
};

#define ARGS_END 0          /* no more arguments */
#define ARGS_POSITIONAL (-1)/* *val is a positional argument */
#define ARGS_ERROR (-2)     /* usage error, already reported */

/* argv[0] is the command name and is skipped. */
void args_init(struct cli_parser *p, const char *cmd, const struct cli_opt *opts, int argc, char **argv);
/* Next option id (with its value in *val), ARGS_POSITIONAL, ARGS_END or ARGS_ERROR. */
int args_next(struct cli_parser *p, const char **val);

/* ---- messages (util.c) ------------------------------------------------------------------- */

/* "dsig: <message>" on stderr. Every failure message of the tool goes through these four, which also
 * keep the last one (without the prefix) for cli_last_error. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *cli_last_error(void);
/* "dsig: <what>: <dsig_strerror(rc)>: <dsig_last_error_detail()>" on stderr. */
void cli_err_lib(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "dsig: <what>: I/O error: <strerror(errnum)>" on stderr. */
void cli_err_sys(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "dsig <cmd>: <message>" plus a hint to --help; returns CLI_EXIT_ERROR. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Informational line on stderr unless --quiet. */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A JSON string literal (RFC 8259 escapes) on f, or null for NULL. */
void cli_json_string(FILE *f, const char *s);
/* The key's id: its own "kid", else its RFC 7638 thumbprint (into buf); NULL if neither exists. */
const char *cli_key_id(const dsig_key *key, char buf[DSIG_THUMBPRINT_LEN]);

/* Resolve -a NAME; reports an unknown name and returns NULL. */
const dsig_alg *cli_alg_lookup(const char *cmd, const char *name);
/* Parse --format; reports and returns -1 on an unknown name. allow_auto: "auto" accepted. */
int cli_parse_format(const char *cmd, const char *s, dsig_format *out);
/* Parse an unsigned decimal number for an option; reports and returns -1 if invalid. */
int cli_parse_uint(const char *cmd, const char *opt, const char *s, unsigned *out);
/* Parse a comma-separated list of node ids (1..2^63-1, at most cap): their number, or -1. */
int cli_parse_ids(const char *s, uint64_t *ids, int cap);
/* Parse hex into a newly allocated buffer; reports and returns -1 if invalid. */
int cli_parse_hex(const char *cmd, const char *opt, const char *s, uint8_t **out, size_t *len);

/* ---- file identities (output.c) ------------------------------------------------------------ */

/* A regular file an output must never replace (the key, the payload, a private key just written):
 * compared by st_dev/st_ino, so symbolic and hard links to it are caught too. */
struct cli_fileid {
    int set;              /* a regular file was recorded (devices and pipes never are) */
    dev_t dev;
    ino_t ino;
    mode_t mode;          /* its permission bits */
    const char *what;     /* for messages: "key", "payload", "private key" */
    const char *name;     /* its path as the user gave it */
};

/* Record the identity of an open descriptor (nothing if it is not a regular file). */
void fileid_from_fd(struct cli_fileid *id, int fd, const char *what, const char *name);
/* Record the identity of an existing path, following symlinks (nothing if it does not exist). */
void fileid_from_path(struct cli_fileid *id, const char *path, const char *what);

/* ---- inputs (input.c) --------------------------------------------------------------------- */

struct cli_input {
    int fd;
    const char *name;     /* for messages: the path, or "<stdin>" */
    int owned;            /* fd was opened by us and must be closed */
    int size_known;       /* a regular file: size is exact */
    uint64_t size;
    dev_t dev;            /* identity of a regular file (size_known), for the output checks */
    ino_t ino;
};

/* Is `path` the standard input (NULL or "-")? */
int input_is_stdin(const char *path);
/* Open a payload: a file, "-" or NULL (stdin). Refuses directories. Reports errors; 0 / -1. */
int input_open(struct cli_input *in, const char *path);
/* The payload of sign / verify: input_open, except that a terminal on standard input is refused
 * when no FILE was given (a usage error for `cmd`) and announced when '-' asks for it. */
int input_open_payload(struct cli_input *in, const char *path, const char *cmd);
void input_close(struct cli_input *in);
/* Read a whole small file (or stdin) of at most `max` bytes into a malloc'ed buffer with a NUL
 * after the data. `what` names it in messages ("key", "signature"). `id` (may be NULL) receives the
 * file's identity. Reports errors; 0 / -1. */
int input_read_all(const char *path, size_t max, const char *what, char **buf, size_t *len,
                   struct cli_fileid *id);
/* Text output ends with one newline: JWK text has none, PEM text already has it. */
int cli_needs_newline(const char *text, size_t len);
/* Wipe and free a buffer that held secrets. */
void cli_free_secret(void *p, size_t n);

/* ---- outputs (output.c) ------------------------------------------------------------------- */

/* Refuse (report, -1) when `path` exists and is one of the `n` files of `avoid` (NULL or "-": 0).
 * An early check before any work; output_write checks again on the descriptor it writes. */
int output_check_distinct(const char *path, const char *what, const struct cli_fileid *avoid, size_t n);
/* Write data (+ "\n" if newline) to `path` (NULL or "-": stdout) — signatures and public keys. A new
 * file is created with `mode`; an existing one (symlinks followed, like a shell redirection) is
 * replaced in place, unless it is one of the `n` files of `avoid` (refused before anything is
 * truncated). A write error removes the file only if this call created it. `what` names it in
 * messages. Reports errors; 0 / -1. */
int output_write(const char *path, const void *data, size_t len, int newline, mode_t mode,
                 const char *what, const struct cli_fileid *avoid, size_t n);

/* A private key output in two steps, so that a later failure (the --pub file) can undo it:
 * output_private_begin writes the key — to stdout, to a new file (O_CREAT|O_EXCL|O_NOFOLLOW, 0600:
 * an existing file or a symlink is refused), or with `force` to a temporary file in the same
 * directory — then output_private_commit makes it final (renaming the temporary file over `path`,
 * which replaces a symlink itself, never its target) or output_private_abort removes what begin
 * created (never anything else). */
struct cli_private_out {
    const char *path;     /* NULL: standard output */
    char *tmp;            /* force: temporary file renamed over path by commit */
    int created;          /* no force: path was created by begin */
    struct cli_fileid id; /* the file written (path or tmp) */
};
int output_private_begin(struct cli_private_out *o, const char *path, int force, const void *data,
                         size_t len, int newline, const char *what);
int output_private_commit(struct cli_private_out *o, const char *what);
void output_private_abort(struct cli_private_out *o);
/* Atomically replace `path` with data (same directory, fsync, rename), mode 0600. 0 / -1. */
int output_replace_private(const char *path, const void *data, size_t len, const char *what);

/* ---- key files (keyfile.c) ---------------------------------------------------------------- */

/* Load a JWK or PEM key file (auto-detected). *is_pem tells which (PEM keys are unbound). `id` (may
 * be NULL) receives the key file's identity, so that no output replaces it. 0 / -1. */
int keyfile_load(const char *path, dsig_key **key, int *is_pem, struct cli_fileid *id);
/* As keyfile_load, with the form the file had: "JWK", "PEM", "DER" or "state file". */
int keyfile_load_form(const char *path, dsig_key **key, const char **form, struct cli_fileid *id);
/* Serialize a key as JWK (default) or PEM, private or public part. Reports errors; 0 / -1.
 * *text is freed with dsig_free(). */
int keyfile_export(const dsig_key *key, int pem, int include_private, const char *what, char **text,
                   size_t *len);

/* ---- jansson allocator (jsonalloc.c) ------------------------------------------------------- */

/* Make jansson wipe every block it frees (its lexer buffers hold private JWK members as text).
 * Process-wide: call first thing in main, before any JSON is parsed. */
void cli_json_wiping_allocator_install(void);

/* ---- progress bar (progress.c) ------------------------------------------------------------ */

struct progress {
    int enabled;          /* stderr is a TTY and not --quiet */
    int visible;          /* something was drawn (must be cleared) */
    int size_known;
    uint64_t size;
    uint64_t done;
    uint64_t t0_ns, last_ns;
};

void progress_start(struct progress *p, const struct cli_input *in);
/* The progress line (without "\r" and the erase sequence) for a terminal of `width` columns: at
 * most width - 1 characters — the bar, then the byte counts dropped as the terminal narrows, empty
 * when not even "NN%" fits. Returns its length. */
size_t progress_format(char *buf, size_t cap, unsigned width, uint64_t done, int size_known,
                       uint64_t size, double secs);
void progress_add(struct progress *p, size_t n);
void progress_end(struct progress *p);

#endif

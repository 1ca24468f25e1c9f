/*
 * Command-line parsing for every command: long options ("--out=F", "--out F"), short options ("-oF",
 * "-o F"), "--" to end options and "-" as a positional (stdin). Unknown options are usage errors that
 * name the option.
 */
#include <string.h>

#include "cli.h"

/* Prepare a parser over argv[1..argc) of a command. */
void args_init(struct cli_parser *p, const char *cmd, const struct cli_opt *opts, int argc, char **argv)
{
    p->cmd = cmd;
    p->opts = opts;
    p->argc = argc;
    p->argv = argv;
    p->idx = 1;
    p->only_positional = 0;
}

/* Find a long option by name (the first `n` characters of `name`). */
static const struct cli_opt *find_long(const struct cli_opt *opts, const char *name, size_t n)
{
    for (const struct cli_opt *o = opts; o->long_name; o++)
        if (strlen(o->long_name) == n && strncmp(o->long_name, name, n) == 0)
            return o;
    return NULL;
}

/* Find a short option by letter. */
static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
    for (const struct cli_opt *o = opts; o->long_name; o++)
        if (o->short_name && o->short_name == c)
            return o;
    return NULL;
}

/* Take the value of an option that requires one: inline (after '=' or the letter) or the next word. */
static int take_value(struct cli_parser *p, const struct cli_opt *o, const char *inl, const char *shown,
                      const char **val)
{
    if (inl) {
        *val = inl;
        return o->id;
    }
    if (p->idx >= p->argc) {
        cli_usage_error(p->cmd, "option '%s' needs a value", shown);
        return ARGS_ERROR;
    }
    *val = p->argv[p->idx++];
    return o->id;
}

/* Next option or positional argument. */
int args_next(struct cli_parser *p, const char **val)
{
    *val = NULL;
    if (p->idx >= p->argc)
        return ARGS_END;
    char *a = p->argv[p->idx++];
    if (p->only_positional || a[0] != '-' || a[1] == '\0') {
        *val = a;
        return ARGS_POSITIONAL;
    }
    if (a[1] == '-') {
        if (a[2] == '\0') { /* "--": everything after is positional */
            p->only_positional = 1;
            return args_next(p, val);
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        const struct cli_opt *o = find_long(p->opts, name, n);
        if (!o) {
            cli_usage_error(p->cmd, "unknown option '--%.*s'", (int)n, name);
            return ARGS_ERROR;
        }
        if (!o->has_arg) {
            if (eq) {
                cli_usage_error(p->cmd, "option '--%s' takes no value", o->long_name);
                return ARGS_ERROR;
            }
            return o->id;
        }
        return take_value(p, o, eq ? eq + 1 : NULL, a, val);
    }
    const struct cli_opt *o = find_short(p->opts, a[1]);
    if (!o) {
        cli_usage_error(p->cmd, "unknown option '-%c'", a[1]);
        return ARGS_ERROR;
    }
    if (!o->has_arg) {
        if (a[2] != '\0') {
            cli_usage_error(p->cmd, "unknown option '%s' (short options cannot be combined)", a);
            return ARGS_ERROR;
        }
        return o->id;
    }
    char shown[3] = {'-', a[1], '\0'};
    return take_value(p, o, a[2] ? a + 2 : NULL, shown, val);
}

/*
 * cmd_ping.c — `dsig ping`: the two-process ping-pong benchmark (none / libsodium Ed25519 /
 * DSig, sign → send → verify → reply). The tool only dispatches: the harness is bench/bench_ping.c.
 */
#include "bench_ping.h"

int cmd_ping(int argc, char **argv);

/* Usage, for `dsig help ping` (the harness prints the full option list for --help). */
const char cli_usage_ping[] =
    "Usage: dsig ping [--size LIST] [--count N] [--warmup N] [--runs N] [--schemes LIST] [--json]\n"
    "       dsig ping --config FILE --id N --key KEY [--peer M] [options]\n"
    "\n"
    "Two-process ping-pong (sign -> send -> verify -> reply) with no signature, libsodium Ed25519 and\n"
    "DSig in the same run; without --config both ends run here over loopback. See 'dsig ping --help'.\n";

/* `dsig ping ...`: argv[0] is "ping". */
int cmd_ping(int argc, char **argv)
{
    return dsig_ping_main(argc, argv);
}

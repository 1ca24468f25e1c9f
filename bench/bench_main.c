/* PLACEHOLDER — replaced by the benchmark harness. */
#include <stdio.h>
#include "bench.h"
int dsig_bench_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "dsig bench: not built yet\n");
    return 2;
}

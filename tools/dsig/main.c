/* PLACEHOLDER — replaced by the CLI. */
#include <stdio.h>
#include "dsig/dsig.h"
int main(void)
{
    for (size_t i = 0; i < dsig_alg_count(); i++)
        printf("%s\n", dsig_alg_name(dsig_alg_at(i)));
    return 0;
}

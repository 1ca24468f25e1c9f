/* The progress line fits the terminal: never more than width - 1 characters at any width, the bar
 * first dropped, then the byte counts, then nothing — a wider line would wrap and litter. */
#include <string.h>

#include "cli.h"
#include "testutil.h"

static void test_fits_every_width(void **state)
{
    (void)state;
    const uint64_t MiB = 1024 * 1024;
    const struct {
        uint64_t done, size;
        int known;
        double secs;
    } cases[] = {{0, 100 * MiB, 1, 0}, {37 * MiB, 100 * MiB, 1, 0.5}, {100 * MiB, 100 * MiB, 1, 1.0},
                 {123456 * MiB, 987654 * MiB, 1, 3.0}, {70 * MiB, 0, 0, 0.1}, {99999 * MiB, 0, 0, 9.0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (unsigned w = 0; w <= 200; w++) {
            char buf[256];
            size_t n = progress_format(buf, sizeof buf, w, cases[c].done, cases[c].known, cases[c].size,
                                       cases[c].secs);
            assert_int_equal(n, strlen(buf));
            assert_true(n + 1 <= (w ? w : 1));
            assert_null(strchr(buf, '\n'));
        }
}

static void test_forms(void **state)
{
    (void)state;
    const uint64_t MiB = 1024 * 1024;
    char buf[256];
    /* Wide: bar, percentage, counts, rate. */
    progress_format(buf, sizeof buf, 80, 50 * MiB, 1, 100 * MiB, 1.0);
    assert_string_equal(buf, "[##########..........]  50%  50.0 / 100.0 MiB  50.0 MiB/s");
    /* 40 columns: the bar shrinks or goes, the line stays within 39 characters. */
    progress_format(buf, sizeof buf, 40, 50 * MiB, 1, 100 * MiB, 1.0);
    assert_true(strlen(buf) <= 39);
    assert_non_null(strstr(buf, "50%"));
    progress_format(buf, sizeof buf, 20, 50 * MiB, 1, 100 * MiB, 1.0);
    assert_string_equal(buf, " 50%  50.0 MiB/s");
    progress_format(buf, sizeof buf, 16, 50 * MiB, 1, 100 * MiB, 1.0);
    assert_string_equal(buf, "[####....]  50%");
    progress_format(buf, sizeof buf, 6, 50 * MiB, 1, 100 * MiB, 1.0);
    assert_string_equal(buf, " 50%");
    progress_format(buf, sizeof buf, 4, 50 * MiB, 1, 100 * MiB, 1.0);
    assert_string_equal(buf, "");
    /* Unknown size (a pipe). */
    progress_format(buf, sizeof buf, 80, 70 * MiB, 0, 0, 2.0);
    assert_string_equal(buf, "70.0 MiB  35.0 MiB/s");
    progress_format(buf, sizeof buf, 12, 70 * MiB, 0, 0, 2.0);
    assert_string_equal(buf, "70.0 MiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fits_every_width), cmocka_unit_test(test_forms)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

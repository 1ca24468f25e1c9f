/*
 * bench/preload/cputime.c — LD_PRELOAD shim for bench/compare_liboqs.sh: gettimeofday() returns the
 * CPU time of the calling thread instead of the time of day.
 *
 * liboqs' speed_sig times each operation with gettimeofday() and prints the mean. On a machine shared
 * with other busy processes, an operation that is preempted counts the other processes' time slices
 * as its own and the mean is dominated by those few samples. Under this shim speed_sig measures what
 * `dsig bench sig --clock cpu` measures: CPU time of the thread, read with clock_gettime
 * (CLOCK_THREAD_CPUTIME_ID), a system call on both sides. Its -d duration becomes CPU seconds too.
 * Built by the script into a temporary directory (not part of libdsig or the dsig tool).
 */
#define _GNU_SOURCE
#include <sys/time.h>
#include <time.h>

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    struct timespec ts;
    (void)tz;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
    return 0;
}

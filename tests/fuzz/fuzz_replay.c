/*
 * The libFuzzer harnesses without libFuzzer: a main() that runs LLVMFuzzerInitialize and then
 * LLVMFuzzerTestOneInput once on every file of the directories (or files) given — the committed corpus
 * of a harness — in name order. The gcc builds (release, ASan/UBSan) link each harness with it, so that
 * every regression input and every corpus input is replayed by `make check` without clang; the fuzz
 * build (clang, DSIG_FUZZ=ON) replays and fuzzes them with libFuzzer itself (run_fuzzer.sh).
 *
 *   fuzz_replay_NAME DIR|FILE ...
 *
 * Each input's name is printed before it runs, so a crash or a failed invariant (which aborts) names it.
 * Exit 0 when every input ran; 2 when a directory or file cannot be read.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    int err = ferror(f) || !buf;
    fclose(f);
    if (err) {
        free(buf);
        fprintf(stderr, "fuzz replay: cannot read %s\n", path);
        return -1;
    }
    printf("%s (%zu bytes)\n", path, n);
    fflush(stdout);
    /* an exact-size copy, as libFuzzer passes it: ASan sees any read past the end */
    uint8_t *in = fuzz_dup(buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
    return 0;
}

static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz replay: cannot open directory %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names)))
            break;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (!names && n) {
        fprintf(stderr, "fuzz replay: out of memory\n");
        return -1;
    }
    qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (rc == 0 && run_file(path) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    *count += n;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR|FILE ...\n", argv[0]);
        return 2;
    }
    LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz replay: %s does not exist\n", argv[i]);
            return 2;
        }
        if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : (count++, run_file(argv[i])))
            return 2;
    }
    printf("fuzz replay: %zu inputs, no finding\n", count);
    return 0;
}

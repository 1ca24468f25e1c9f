/*
 * tests/hybrid/test_fork.c — one-time keys across process creation, every way Linux offers:
 *   - fork(), _Fork() and a raw clone() without CLONE_VM give the child a copy of the signer: it must
 *     refuse to sign (its pool holds the very keys the parent goes on using). _Fork and clone run no
 *     pthread_atfork handler; the refusal comes from the signer's secrets living in wipe-on-fork
 *     memory (the copy reads as zeros);
 *   - vfork() and clone(CLONE_VM | CLONE_VFORK) children share the parent's memory, hence its pool: a
 *     key the child takes is gone for the parent, so no key is used twice (checked); with strict_pid
 *     they are refused too;
 *   - the secret-memory regions carry the protections they report (VmFlags in /proc/self/smaps: dd
 *     no dump, wf wipe on fork, lo locked), and a fork child reads them as zeros.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hybrid/runtime.h"
#include "testutil.h"

enum { CHILD_REFUSED = 10, CHILD_SIGNED = 11, CHILD_OTHER = 12 };
enum { WAY_FORK, WAY_UFORK, WAY_CLONE, WAY_VFORK, WAY_CLONE_VM, WAYS };
static const char *const way_name[WAYS] = {"fork", "_Fork", "clone", "vfork", "clone(CLONE_VM|CLONE_VFORK)"};

/* What a child that shares our memory leaves for us. */
static struct {
    dsig_hybrid_signer *s;
    uint8_t sig[2048];
    size_t sl;
    int rc;
} shared;

/* The child's whole job: one signature attempt; exit code says what happened. */
static int child_sign(void)
{
    shared.rc = dsig_hybrid_sign(shared.s, (const uint8_t *)"child", 5, shared.sig, sizeof shared.sig, &shared.sl);
    return shared.rc == DSIG_E_STATE ? CHILD_REFUSED : shared.rc == DSIG_OK ? CHILD_SIGNED : CHILD_OTHER;
}

static int clone_fn(void *arg)
{
    (void)arg;
    return child_sign();
}

/* Create a child `way`, let it try to sign; its exit code. */
static int spawn(int way)
{
    pid_t pid = -1;
    static char stack[256 * 1024] __attribute__((aligned(16)));
    fflush(NULL);
    switch (way) {
    case WAY_FORK:
        pid = fork();
        break;
    case WAY_UFORK:
        pid = _Fork();
        break;
    case WAY_CLONE: /* a raw clone system call: a copy of the memory, no libc bookkeeping at all */
        pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
        break;
    case WAY_VFORK:
        pid = vfork();
        if (pid == 0)
            _exit(child_sign());
        break;
    default:
        pid = clone(clone_fn, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
        break;
    }
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_sign());
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* A signer with one batch ready (no threads: nothing runs behind the test's back). */
static dsig_hybrid_signer *ready_signer(const dsig_key *k, int strict)
{
    dsig_hybrid_signer_options o;
    dsig_hybrid_signer_options_default(&o);
    o.threads = 0;
    o.signer_id = 3;
    o.strict_pid = strict;
    dsig_hybrid_signer *s;
    assert_int_equal(dsig_hybrid_signer_new(&s, k, NULL, &o), DSIG_OK);
    assert_int_equal(dsig_hybrid_signer_refill(s, 1), DSIG_OK);
    return s;
}

/* (seq, index) of a signature. */
static uint64_t where(const uint8_t *sig, size_t sl)
{
    uint64_t seq;
    uint32_t idx;
    assert_int_equal(dsig_hybrid_sig_locate(NULL, sig, sl, &seq, &idx), DSIG_OK);
    return seq * 4096u + idx;
}

static void test_every_way(void **state)
{
    (void)state;
    dsig_key *k = NULL, *pub = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("DSig"), NULL), DSIG_OK);
    assert_int_equal(dsig_key_public(&pub, k), DSIG_OK);
    for (int strict = 0; strict < 2; strict++) {
        for (int way = 0; way < WAYS; way++) {
            shared.s = ready_signer(k, strict);
            shared.rc = 1;
            uint8_t sig[2048];
            size_t sl;
            assert_int_equal(dsig_hybrid_sign(shared.s, (const uint8_t *)"parent", 6, sig, sizeof sig, &sl), DSIG_OK);
            int copy = way <= WAY_CLONE, got = spawn(way);
            int want = copy || strict ? CHILD_REFUSED : CHILD_SIGNED;
            if (got != want)
                fail_msg("%s child (strict_pid %d): exit %d, want %d", way_name[way], strict, got, want);
            if (!copy) {
                /* Shared memory: we see the child's verdict, and a key it used is not ours to use. */
                assert_int_equal(shared.rc, strict ? DSIG_E_STATE : DSIG_OK);
                uint64_t taken = strict ? UINT64_MAX : where(shared.sig, shared.sl);
                if (!strict)
                    assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 3, (const uint8_t *)"child", 5, shared.sig,
                                                             shared.sl), DSIG_OK);
                for (int i = 0; i < 200; i++) {
                    assert_int_equal(dsig_hybrid_sign(shared.s, (const uint8_t *)"p", 1, sig, sizeof sig, &sl), DSIG_OK);
                    assert_true(where(sig, sl) != taken);
                }
            }
            /* The parent is unaffected. */
            assert_int_equal(dsig_hybrid_sign(shared.s, (const uint8_t *)"after", 5, sig, sizeof sig, &sl), DSIG_OK);
            assert_int_equal(dsig_hybrid_verify_slow(NULL, pub, 3, (const uint8_t *)"after", 5, sig, sl), DSIG_OK);
            dsig_hybrid_signer_stats st;
            dsig_hybrid_signer_stats_get(shared.s, &st);
            assert_true(st.protections & DSIG_HYBRID_PROTECT_WIPEONFORK);
            assert_true(st.protections & DSIG_HYBRID_PROTECT_NODUMP);
            dsig_hybrid_signer_free(shared.s);
        }
    }
    dsig_key_free(k);
    dsig_key_free(pub);
}

/* A fork child's copy refuses sign / refill / wait_ready, can be freed (wiped, abandoned), and the
 * child can make a signer of its own that works. */
static void test_child_fresh_signer(void **state)
{
    (void)state;
    dsig_key *k = NULL;
    assert_int_equal(dsig_key_generate(&k, dsig_alg_by_name("DSig"), NULL), DSIG_OK);
    dsig_hybrid_signer *s = ready_signer(k, 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint8_t sig[2048];
        size_t sl;
        int bad = dsig_hybrid_sign(s, (const uint8_t *)"x", 1, sig, sizeof sig, &sl) != DSIG_E_STATE;
        bad |= dsig_hybrid_signer_refill(s, 1) != DSIG_E_STATE;
        bad |= dsig_hybrid_signer_wait_ready(s, 1) != DSIG_E_STATE;
        dsig_hybrid_signer_free(s);
        dsig_hybrid_signer *mine;
        bad |= dsig_hybrid_signer_new(&mine, k, NULL, NULL) != DSIG_OK;
        if (!bad) {
            bad |= dsig_hybrid_sign(mine, (const uint8_t *)"x", 1, sig, sizeof sig, &sl) != DSIG_OK;
            dsig_hybrid_signer_free(mine);
        }
        _exit(bad);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    dsig_hybrid_signer_free(s);
    dsig_key_free(k);
}

/* The VmFlags of the mapping that contains p ("" if not found). */
static void vmflags(const void *p, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    int in = 0;
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            size_t n = strlen(line + 8);
            if (n >= cap)
                n = cap - 1;
            memcpy(out, line + 8, n);
            out[n] = 0;
            break;
        }
    }
    fclose(f);
}

/* Secret memory: the protections it reports are the kernel's view, and a fork child reads zeros. */
static void test_secmem(void **state)
{
    (void)state;
    dsig_secmem m;
    assert_int_equal(dsig_secmem_alloc(&m, 10000), DSIG_OK);
    assert_true(m.len >= 10000);
    char fl[512];
    vmflags(m.p, fl, sizeof fl);
    assert_true(fl[0]);
    assert_int_equal(strstr(fl, " dd") != NULL, (m.flags & DSIG_SECMEM_NODUMP) != 0);
    assert_int_equal(strstr(fl, " wf") != NULL, (m.flags & DSIG_SECMEM_WIPEONFORK) != 0);
    assert_int_equal(strstr(fl, " lo") != NULL, (m.flags & DSIG_SECMEM_LOCKED) != 0);
    assert_true(m.flags & DSIG_SECMEM_NODUMP);      /* Linux ≥ 3.4 */
    assert_true(m.flags & DSIG_SECMEM_WIPEONFORK);  /* Linux ≥ 4.14 */
    print_message("secret memory: %s%s%s\n", m.flags & DSIG_SECMEM_NODUMP ? "no-dump " : "",
                  m.flags & DSIG_SECMEM_WIPEONFORK ? "wipe-on-fork " : "",
                  m.flags & DSIG_SECMEM_LOCKED ? "locked" : "not locked (RLIMIT_MEMLOCK)");
    memset(m.p, 0xA5, m.len);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const uint8_t *b = m.p;
        int nonzero = 0;
        for (size_t i = 0; i < m.len; i++)
            nonzero |= b[i];
        _exit(nonzero ? 1 : 0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(((const uint8_t *)m.p)[m.len - 1], 0xA5); /* ours is intact */
    dsig_secmem_free(&m);
    assert_null(m.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secmem),
        cmocka_unit_test(test_every_way),
        cmocka_unit_test(test_child_fresh_signer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

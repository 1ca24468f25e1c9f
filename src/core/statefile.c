/*
 * State files of stateful hash-based keys (LMS/HSS, XMSS/XMSS^MT; include/dsig/state.h, docs/state.md).
 *
 * The private key of a stateful scheme must never sign twice with one index. It therefore lives only
 * in a state file, which this file creates, locks, parses and advances:
 *
 *   "dsig-state 1\n"                 magic and format version (13 bytes)
 *   u8    name_len, name             JOSE algorithm name ("HSS-LMS", "XMSS", "XMSSMT"), 1..64 bytes
 *   u32be pub_len,  pub              the RFC public key (the AKP JWK "pub"), 1..4096 bytes
 *   u32be priv_len, priv             provider's private material (save_private), 1..1 MiB
 *   u64be counter                    next index not yet reserved: every index below it may be used
 *   32    SHA-256 of all the bytes above (torn or edited files are refused)
 *
 * Indices are reserved in windows: when the window is used up, the next counter is written to a
 * temporary file in the same directory, fsync'ed, renamed over the state file and the directory is
 * fsync'ed; then the high-water registry is raised; only then is an index handed out. See
 * docs/state.md for why this order never reuses an index and never bricks a key.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "hash/sha256.h"
#include "core/bytes.h"

#define STATE_MAGIC "dsig-state 1\n"
#define STATE_MAGIC_LEN 13
#define STATE_PREFIX "dsig-state " /* any version: what dsig_state_is_state_file recognizes */
#define STATE_PREFIX_LEN 11
#define STATE_NAME_MAX 64
#define STATE_PUB_MAX 4096u
#define STATE_PRIV_MAX (1u << 20)
#define STATE_FILE_MAX (STATE_MAGIC_LEN + 1 + STATE_NAME_MAX + 4 + STATE_PUB_MAX + 4 + STATE_PRIV_MAX + 8 + 32)
#define STATE_DEFAULT_RESERVE 64u

/* High-water registry file: two 32-byte slots, each "dsighwm1" || u64be mark || 16-byte check. */
#define HWM_MAGIC "dsighwm1"
#define HWM_SLOT 32
#define HWM_FILE (2 * HWM_SLOT)

struct dsig_state_file {
    pthread_mutex_t mu;    /* serializes take_index */
    int fd;                /* the state file, flock'ed LOCK_EX for the key's lifetime */
    int dirfd;             /* its directory: temp file, rename, fsync */
    char *base;            /* file name inside dirfd */
    char *path;            /* as given, for messages */
    const dsig_alg *alg;
    uint8_t *pub;
    size_t pub_len;
    uint8_t *priv;         /* secret: wiped on close */
    size_t priv_len;
    uint64_t next;         /* next index handed out */
    uint64_t end;          /* durable counter: [next, end) is this process's reserved window */
    uint64_t cap;          /* capacity of the key */
    uint32_t reserve;
    pid_t pid;             /* a forked child shares the lock: it must not sign */
    int reg_fd;            /* high-water registry file, flock'ed; -1 = no registry */
    char thumb[DSIG_THUMBPRINT_LEN];
    int slot_ok[2];
    uint64_t slot_val[2];
    struct dsig_state_file *open_next; /* list of keys open in this process (open_claim) */
    int claimed;                       /* on that list */
};

/* The algorithm a test-only provider adds to the name lookup of dsig_state_open (tests/state). */
static const dsig_alg *state_test_alg;

/* Test hook: let dsig_state_open find `alg` (a provider compiled into a test, not the library). */
void dsig_state_set_test_alg(const dsig_alg *alg);
void dsig_state_set_test_alg(const dsig_alg *alg) { state_test_alg = alg; }

/* ---- small helpers -------------------------------------------------------------------------- */

/* Read exactly len bytes from offset 0; 0, or errno (EIO for a short file). */
static int read_exact(int fd, uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, buf + done, len - done, (off_t)done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno ? errno : EIO;
        }
        if (r == 0)
            return EIO;
        done += (size_t)r;
    }
    return 0;
}

/* Split `path` into an open directory descriptor and a newly allocated base name. */
static int open_dir_of(const char *path, int *dirfd, char **base)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    if (!*b)
        return dsig_fail(DSIG_E_ARG, "state file path '%s' names a directory", path);
    char *dir;
    if (!slash)
        dir = dsig_strdup(".");
    else if (slash == path)
        dir = dsig_strdup("/");
    else {
        dir = dsig_malloc((size_t)(slash - path) + 1);
        if (dir) {
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = '\0';
        }
    }
    *base = dsig_strdup(b);
    if (!dir || !*base) {
        dsig_xfree(dir, 0);
        dsig_xfree(*base, 0);
        *base = NULL;
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    *dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err = errno;
    if (*dirfd < 0) {
        int rc = dsig_fail(DSIG_E_IO, "state file directory '%s': %s", dir, strerror(err));
        dsig_xfree(dir, 0);
        dsig_xfree(*base, 0);
        *base = NULL;
        return rc;
    }
    dsig_xfree(dir, 0);
    return DSIG_OK;
}

/* The "pub" member of a key's public JWK export (the RFC public key encoding). */
static int export_pub(const struct dsig_key *key, uint8_t **pub, size_t *pub_len)
{
    const struct dsig_keytype *t = key->type;
    dsig_jwk_member m[DSIG_JWK_MAX_MEMBERS];
    size_t n = 0;
    *pub = NULL;
    if (!t->export_jwk)
        return dsig_fail(DSIG_E_INTERNAL, "stateful key type without export_jwk");
    int rc = t->export_jwk(key, 0, m, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && i < DSIG_JWK_MAX_MEMBERS; i++) {
        if (!*pub && t->pub_members && t->pub_members[i] && strcmp(t->pub_members[i], "pub") == 0 &&
            m[i].data) {
            *pub = m[i].data;
            *pub_len = m[i].len;
        } else {
            dsig_xfree(m[i].data, m[i].len);
        }
    }
    if (!*pub)
        return dsig_fail(DSIG_E_INTERNAL, "stateful key type exports no \"pub\" member");
    if (*pub_len == 0 || *pub_len > STATE_PUB_MAX) {
        dsig_xfree(*pub, *pub_len);
        *pub = NULL;
        return dsig_fail(DSIG_E_INTERNAL, "stateful public key of %zu bytes (1..%u)", *pub_len,
                         STATE_PUB_MAX);
    }
    return DSIG_OK;
}

/* ---- the file image --------------------------------------------------------------------------- */

/* Serialize the state with `counter` into a newly allocated buffer (holds the private material:
 * the caller wipes it with dsig_xfree(buf, len)). */
static int state_image(const struct dsig_state_file *st, uint64_t counter, uint8_t **out, size_t *len)
{
    size_t nlen = strlen(st->alg->name);
    size_t total = STATE_MAGIC_LEN + 1 + nlen + 4 + st->pub_len + 4 + st->priv_len + 8 + 32;
    uint8_t *b = dsig_malloc(total);
    if (!b)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    uint8_t *p = b;
    memcpy(p, STATE_MAGIC, STATE_MAGIC_LEN), p += STATE_MAGIC_LEN;
    *p++ = (uint8_t)nlen;
    memcpy(p, st->alg->name, nlen), p += nlen;
    dsig_store_be32(p, (uint32_t)st->pub_len), p += 4;
    memcpy(p, st->pub, st->pub_len), p += st->pub_len;
    dsig_store_be32(p, (uint32_t)st->priv_len), p += 4;
    memcpy(p, st->priv, st->priv_len), p += st->priv_len;
    dsig_store_be64(p, counter), p += 8;
    dsig_sha256(p, b, (size_t)(p - b));
    *out = b;
    *len = total;
    return DSIG_OK;
}

/* Fields of a parsed image (pointers into the buffer). */
struct state_fields {
    char name[STATE_NAME_MAX + 1];
    const uint8_t *pub, *priv;
    size_t pub_len, priv_len;
    uint64_t counter;
};

/* Bounded parser: every length is checked against the bytes left; the checksum first. */
static int state_parse(const uint8_t *b, size_t len, const char *path, struct state_fields *f)
{
    if (len < STATE_PREFIX_LEN || memcmp(b, STATE_PREFIX, STATE_PREFIX_LEN) != 0)
        return dsig_fail(DSIG_E_FORMAT, "'%s' is not a dsig state file (no \"dsig-state\" magic)", path);
    if (len < STATE_MAGIC_LEN || memcmp(b, STATE_MAGIC, STATE_MAGIC_LEN) != 0)
        return dsig_fail(DSIG_E_UNSUPPORTED, "state file '%s': unknown format version (this library "
                                             "reads \"dsig-state 1\")", path);
    const size_t fixed = STATE_MAGIC_LEN + 1 + 4 + 4 + 8 + 32;
    if (len < fixed + 2)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s' is truncated (%zu bytes)", path, len);
    uint8_t sum[32];
    dsig_sha256(sum, b, len - 32);
    if (!dsig_ct_equal(sum, b + len - 32, 32))
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': checksum mismatch: the file is damaged (torn "
                                        "write) or was edited; it is refused", path);
    const uint8_t *p = b + STATE_MAGIC_LEN, *e = b + len - 32;
    size_t nlen = *p++;
    if (nlen == 0 || nlen > STATE_NAME_MAX || (size_t)(e - p) < nlen + 4)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': bad algorithm name length %zu", path, nlen);
    for (size_t i = 0; i < nlen; i++)
        if (p[i] < 0x21 || p[i] > 0x7e)
            return dsig_fail(DSIG_E_FORMAT, "state file '%s': algorithm name is not printable ASCII", path);
    memcpy(f->name, p, nlen);
    f->name[nlen] = '\0';
    p += nlen;
    f->pub_len = dsig_load_be32(p), p += 4;
    if (f->pub_len == 0 || f->pub_len > STATE_PUB_MAX || (size_t)(e - p) < f->pub_len + 4)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': bad public key length %zu", path, f->pub_len);
    f->pub = p, p += f->pub_len;
    f->priv_len = dsig_load_be32(p), p += 4;
    if (f->priv_len == 0 || f->priv_len > STATE_PRIV_MAX || (size_t)(e - p) < f->priv_len + 8)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': bad private material length %zu", path,
                         f->priv_len);
    f->priv = p, p += f->priv_len;
    f->counter = dsig_load_be64(p), p += 8;
    if (p != e)
        return dsig_fail(DSIG_E_FORMAT, "state file '%s': %zu unexpected bytes before the checksum",
                         path, (size_t)(e - p));
    return DSIG_OK;
}

/* ---- high-water registry ------------------------------------------------------------------- */

/* The 16-byte check of a registry slot: binds the mark to this key's thumbprint. */
static void hwm_check(uint8_t out[16], const char *thumb, uint64_t mark)
{
    uint8_t in[8 + 8 + DSIG_THUMBPRINT_LEN], h[32];
    size_t tl = strlen(thumb);
    memcpy(in, HWM_MAGIC, 8);
    dsig_store_be64(in + 8, mark);
    memcpy(in + 16, thumb, tl);
    dsig_sha256(h, in, 16 + tl);
    memcpy(out, h, 16);
}

/* Registry directory from opts / environment; *dir = NULL means "no registry". */
static int hwm_dir(const dsig_state_opts *opts, char **dir)
{
    *dir = NULL;
    const char *d = opts ? opts->registry_dir : NULL;
    if (d && !*d)
        return DSIG_OK; /* explicitly none (tests) */
    char buf[4096];
    if (!d) {
        const char *env = getenv("DSIG_STATE_REGISTRY");
        const char *xdg = getenv("XDG_STATE_HOME");
        const char *home = getenv("HOME");
        if (env && *env)
            d = env;
        else if (xdg && *xdg == '/' && (size_t)snprintf(buf, sizeof buf, "%s/dsig/hwm", xdg) < sizeof buf)
            d = buf;
        else if (home && *home == '/' &&
                 (size_t)snprintf(buf, sizeof buf, "%s/.local/state/dsig/hwm", home) < sizeof buf)
            d = buf;
        else
            return dsig_fail(DSIG_E_STATE, "no high-water registry directory: set DSIG_STATE_REGISTRY "
                                           "(or XDG_STATE_HOME / HOME)");
    }
    *dir = dsig_strdup(d);
    return *dir ? DSIG_OK : dsig_fail(DSIG_E_NOMEM, "out of memory");
}

/* fsync the directory holding the just-created directory dir[0..end): without it a crash can lose the
 * new entry, and with it the registry files later written below it (review follow-up). */
static int fsync_parent(char *dir, char *end)
{
    char *slash = end;
    while (slash > dir && *--slash != '/')
        ;
    const char *parent = ".";
    if (*slash == '/')
        parent = slash == dir ? "/" : dir;
    char saved = *slash;
    if (parent == dir)
        *slash = '\0';
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int ok = fd >= 0 && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0)
        close(fd);
    int rc = ok ? DSIG_OK
                : dsig_fail(DSIG_E_IO, "high-water registry directory '%s': fsync of the parent "
                                       "directory: %s", parent, strerror(err));
    *slash = saved;
    return rc;
}

/* mkdir -p with mode 0700 for the components that do not exist; each new directory's parent is
 * fsync'ed so that the creation is durable before anything is stored in it. */
static int mkdir_p(char *dir)
{
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            int r = mkdir(dir, 0700);
            int err = errno;
            *p = c;
            if (r != 0 && err != EEXIST)
                return dsig_fail(DSIG_E_IO, "high-water registry directory '%s': %s", dir, strerror(err));
            if (r == 0) {
                int rc = fsync_parent(dir, p);
                if (rc)
                    return rc;
            }
            if (!c)
                return DSIG_OK;
        }
    }
}

/* Open and lock this key's registry file, reading its mark (0 for a new file). */
static int hwm_open(struct dsig_state_file *st, const dsig_state_opts *opts, uint64_t *mark)
{
    *mark = 0;
    char *dir;
    int rc = hwm_dir(opts, &dir);
    if (rc || !dir)
        return rc;
    rc = mkdir_p(dir);
    int dfd = rc ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!rc && dfd < 0)
        rc = dsig_fail(DSIG_E_IO, "high-water registry directory '%s': %s", dir, strerror(errno));
    if (rc) {
        dsig_xfree(dir, 0);
        return rc;
    }
    int created = 1;
    int fd = openat(dfd, st->thumb, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = openat(dfd, st->thumb, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        rc = dsig_fail(DSIG_E_IO, "high-water registry '%s/%s': %s", dir, st->thumb, strerror(errno));
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK
                 ? dsig_fail(DSIG_E_STATE, "key %s is in use by another process (another state file "
                                           "of the same key is open)", st->thumb)
                 : dsig_fail(DSIG_E_IO, "high-water registry lock: %s", strerror(errno));
        goto out;
    }
    /* Other users must not be able to lower the mark (a restored copy would then sign again), nor
     * swap the file: the directory and the file belong to us and only we can write them. */
    struct stat sb, db;
    if (fstat(dfd, &db) != 0 || db.st_uid != geteuid() || (db.st_mode & 022)) {
        rc = dsig_fail(DSIG_E_STATE, "high-water registry directory '%s' is not owned by this user or "
                                     "is writable by others: chmod 700 it (or choose another with "
                                     "DSIG_STATE_REGISTRY)", dir);
        goto out;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is not a regular file", dir, st->thumb);
        goto out;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is not owned by this user or is "
                                     "accessible by others (mode %03o): chmod 600 it", dir, st->thumb,
                       (unsigned)(sb.st_mode & 0777));
        goto out;
    }
    /* A new file gets both slots (mark 0) at once, so that its size is always 0 or HWM_FILE. An
     * empty file is one whose creation was interrupted (crash, failed write) before any mark was
     * recorded: it is initialized the same way, or the first slot write would leave a 32-byte
     * file that every later open refuses as damaged. */
    if (created || sb.st_size == 0) {
        uint8_t init[HWM_FILE];
        for (int s = 0; s < 2; s++) {
            memcpy(init + s * HWM_SLOT, HWM_MAGIC, 8);
            dsig_store_be64(init + s * HWM_SLOT + 8, 0);
            hwm_check(init + s * HWM_SLOT + 16, st->thumb, 0);
        }
        ssize_t w;
        do
            w = pwrite(fd, init, HWM_FILE, 0);
        while (w < 0 && errno == EINTR);
        if (w != HWM_FILE || fdatasync(fd) != 0) {
            rc = dsig_fail(DSIG_E_IO, "high-water registry '%s/%s': write failed", dir, st->thumb);
            goto out;
        }
        /* the new name must survive a crash before any mark is recorded in it */
        if (fsync(dfd) != 0) {
            rc = dsig_fail(DSIG_E_IO, "high-water registry '%s': fsync: %s", dir, strerror(errno));
            goto out;
        }
        sb.st_size = HWM_FILE;
    }
    if (sb.st_size != 0) {
        uint8_t buf[HWM_FILE];
        if (sb.st_size != HWM_FILE || read_exact(fd, buf, HWM_FILE) != 0) {
            rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is damaged (size %lld); refusing "
                                         "to guess the key's mark", dir, st->thumb, (long long)sb.st_size);
            goto out;
        }
        for (int s = 0; s < 2; s++) {
            const uint8_t *slot = buf + s * HWM_SLOT;
            uint8_t chk[16];
            uint64_t v = dsig_load_be64(slot + 8);
            hwm_check(chk, st->thumb, v);
            st->slot_ok[s] = memcmp(slot, HWM_MAGIC, 8) == 0 && memcmp(slot + 16, chk, 16) == 0;
            st->slot_val[s] = st->slot_ok[s] ? v : 0;
        }
        /* A torn write damages one slot at most; both bad means the file was tampered with. */
        if (!st->slot_ok[0] && !st->slot_ok[1]) {
            rc = dsig_fail(DSIG_E_STATE, "high-water registry '%s/%s' is damaged (no valid slot)", dir,
                           st->thumb);
            goto out;
        }
        *mark = st->slot_val[0] > st->slot_val[1] ? st->slot_val[0] : st->slot_val[1];
    }
    st->reg_fd = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    close(dfd);
    dsig_xfree(dir, 0);
    return rc;
}

/* Durably record `mark`, overwriting the slot that does not hold the current maximum. */
static int hwm_write(struct dsig_state_file *st, uint64_t mark)
{
    if (st->reg_fd < 0)
        return DSIG_OK;
    int s = st->slot_ok[0] && (!st->slot_ok[1] || st->slot_val[0] >= st->slot_val[1]) ? 1 : 0;
    uint8_t slot[HWM_SLOT];
    memcpy(slot, HWM_MAGIC, 8);
    dsig_store_be64(slot + 8, mark);
    hwm_check(slot + 16, st->thumb, mark);
    ssize_t w;
    do
        w = pwrite(st->reg_fd, slot, HWM_SLOT, (off_t)s * HWM_SLOT);
    while (w < 0 && errno == EINTR);
    if (w != HWM_SLOT || fdatasync(st->reg_fd) != 0)
        return dsig_fail(DSIG_E_IO, "high-water registry of key %s: write failed: %s", st->thumb,
                         w < 0 || w == HWM_SLOT ? strerror(errno) : "short write");
    st->slot_ok[s] = 1;
    st->slot_val[s] = mark;
    return DSIG_OK;
}

/* The registry's current mark (0 without a registry). */
static uint64_t hwm_mark(const struct dsig_state_file *st)
{
    if (st->reg_fd < 0)
        return 0;
    return st->slot_val[0] > st->slot_val[1] ? st->slot_val[0] : st->slot_val[1];
}

/* ---- keys open in this process ------------------------------------------------------------- */

/* flock alone does not stop a second open in the same process where it is emulated with POSIX
 * record locks (NFS: a process never conflicts with itself), nor a second copy of the file when the
 * registry is disabled: this list of open keys (by thumbprint) refuses both. */
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dsig_state_file *open_list;

/* Record st's key as open in this process; DSIG_E_STATE if it already is. */
static int open_claim(struct dsig_state_file *st)
{
    int busy = 0;
    pthread_mutex_lock(&open_mu);
    for (const struct dsig_state_file *o = open_list; o && !busy; o = o->open_next)
        busy = strcmp(o->thumb, st->thumb) == 0;
    if (!busy) {
        st->open_next = open_list;
        open_list = st;
        st->claimed = 1;
    }
    pthread_mutex_unlock(&open_mu);
    return busy ? dsig_fail(DSIG_E_STATE, "key %s is in use: this state file or another state file of "
                                          "the same key is already open in this process ('%s')",
                            st->thumb, st->path)
                : DSIG_OK;
}

/* Remove st from the list of open keys. */
static void open_release(struct dsig_state_file *st)
{
    pthread_mutex_lock(&open_mu);
    for (struct dsig_state_file **pp = &open_list; *pp; pp = &(*pp)->open_next)
        if (*pp == st) {
            *pp = st->open_next;
            break;
        }
    st->claimed = 0;
    pthread_mutex_unlock(&open_mu);
}

/* ---- state file lifecycle ------------------------------------------------------------------ */

/* Free a state (closing descriptors releases both locks); the private copy is wiped. */
static void state_free(struct dsig_state_file *st)
{
    if (!st)
        return;
    if (st->claimed)
        open_release(st);
    if (st->fd >= 0)
        close(st->fd);
    if (st->reg_fd >= 0)
        close(st->reg_fd);
    if (st->dirfd >= 0)
        close(st->dirfd);
    dsig_xfree(st->priv, st->priv_len);
    dsig_xfree(st->pub, 0);
    dsig_xfree(st->base, 0);
    dsig_xfree(st->path, 0);
    pthread_mutex_destroy(&st->mu);
    dsig_xfree(st, sizeof *st);
}

/* A new, empty state (no descriptors yet). */
static struct dsig_state_file *state_new(const char *path, const dsig_state_opts *opts)
{
    struct dsig_state_file *st = dsig_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->fd = st->dirfd = st->reg_fd = -1;
    pthread_mutex_init(&st->mu, NULL);
    st->reserve = opts && opts->reserve ? opts->reserve : STATE_DEFAULT_RESERVE;
    st->pid = getpid();
    st->path = dsig_strdup(path);
    if (!st->path) {
        state_free(st);
        return NULL;
    }
    return st;
}

/*
 * @spec SP 800-208 §8.1 (the state must be updated in non-volatile memory before a signature is
 * released). Replace the state file by one holding `counter`: temporary file in the same directory,
 * fsync, lock it, rename over, fsync the directory. The lock moves to the new inode before the rename,
 * so the path never names an unlocked state.
 */
static int state_write(struct dsig_state_file *st, uint64_t counter)
{
    uint8_t *img;
    size_t len;
    int rc = state_image(st, counter, &img, &len);
    if (rc)
        return rc;
    size_t tl = strlen(st->base) + 5;
    char *tmp = dsig_malloc(tl);
    if (!tmp) {
        dsig_xfree(img, len);
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    snprintf(tmp, tl, "%s.tmp", st->base);
    const char *step = "create temporary file";
    /* A leftover temporary name (a crash before the rename, or planted) is removed, and the file is
     * created anew (O_EXCL): opening an existing one would write the private key into whatever inode
     * it is, e.g. a hard link whose other name keeps a copy. */
    if (unlinkat(st->dirfd, tmp, 0) != 0 && errno != ENOENT) {
        int uerr = errno;
        dsig_xfree(img, len);
        int rc2 = dsig_fail(DSIG_E_IO, "state file '%s': cannot remove the stale temporary file '%s': %s; "
                                       "no index was handed out", st->path, tmp, strerror(uerr));
        dsig_xfree(tmp, 0);
        return rc2;
    }
    int fd = openat(st->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int err = fd < 0 ? errno : 0;
    if (!err && fchmod(fd, 0600) != 0)
        err = errno, step = "chmod";
    if (!err && (err = dsig_write_all(fd, img, len, NULL)) != 0)
        step = "write";
    if (!err && fsync(fd) != 0)
        err = errno, step = "fsync";
    if (!err && flock(fd, LOCK_EX | LOCK_NB) != 0)
        err = errno, step = "lock";
    if (!err && renameat(st->dirfd, tmp, st->dirfd, st->base) != 0)
        err = errno, step = "rename";
    dsig_xfree(img, len);
    if (err) {
        if (fd >= 0) {
            close(fd);
            unlinkat(st->dirfd, tmp, 0);
        }
        dsig_xfree(tmp, 0);
        return dsig_fail(DSIG_E_IO, "state file '%s': %s failed: %s; no index was handed out", st->path,
                         step, strerror(err));
    }
    dsig_xfree(tmp, 0);
    /* The path now names the new (locked) inode: keep its lock, drop the old one. */
    close(st->fd);
    st->fd = fd;
    if (fsync(st->dirfd) != 0)
        return dsig_fail(DSIG_E_IO, "state file '%s': fsync of the directory failed: %s; no index was "
                                    "handed out", st->path, strerror(errno));
    return DSIG_OK;
}

/* Bind a loaded or generated key to its state. */
static void state_attach(struct dsig_key *k, struct dsig_state_file *st, uint64_t counter)
{
    st->next = st->end = counter;
    st->cap = k->type->stateful->capacity(k);
    k->state = st;
    k->has_private = 1;
    k->alg = st->alg;
}

/* A fresh key of `alg` rebuilt from private material for index `next`, checked against `pub`. */
static int key_from_private(struct dsig_key **out, const dsig_alg *alg, const uint8_t *priv,
                            size_t priv_len, uint64_t next, const uint8_t *pub, size_t pub_len)
{
    struct dsig_key *k = dsig_key_new(alg->keytype);
    if (!k)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    const struct dsig_stateful_ops *so = alg->keytype->stateful;
    int rc = so->check_private ? so->check_private(priv, priv_len, pub, pub_len) : DSIG_OK;
    if (!rc)
        rc = so->load_private(k, priv, priv_len, next);
    uint8_t *kp = NULL;
    size_t kl = 0;
    if (!rc)
        rc = export_pub(k, &kp, &kl);
    if (!rc && (kl != pub_len || memcmp(kp, pub, kl) != 0))
        rc = dsig_fail(DSIG_E_KEY, "state file: the private material does not belong to the public key");
    dsig_xfree(kp, kl);
    if (rc) {
        dsig_key_free(k);
        return rc;
    }
    *out = k;
    return DSIG_OK;
}

int dsig_state_create(dsig_key **key, const char *path, const dsig_alg *alg,
                      const dsig_keygen_params *params, const dsig_state_opts *opts)
{
    if (!key || !path || !alg)
        return dsig_fail(DSIG_E_ARG, "dsig_state_create: NULL argument");
    *key = NULL;
    if (!(alg->flags & DSIG_ALG_STATEFUL) || !alg->keytype->stateful)
        return dsig_fail(DSIG_E_UNSUPPORTED, "%s is not a stateful algorithm: its keys need no state file",
                         alg->name);
    if (strlen(alg->name) > STATE_NAME_MAX)
        return dsig_fail(DSIG_E_INTERNAL, "algorithm name too long for a state file");
    struct dsig_state_file *st = state_new(path, opts);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    st->alg = alg;
    struct dsig_key *k = NULL;
    int fd = -1, rc = open_dir_of(path, &st->dirfd, &st->base);
    if (!rc)
        rc = dsig_key_generate(&k, alg, params);
    if (!rc)
        rc = alg->keytype->stateful->save_private(k, &st->priv, &st->priv_len);
    if (!rc && (st->priv_len == 0 || st->priv_len > STATE_PRIV_MAX))
        rc = dsig_fail(DSIG_E_INTERNAL, "private material of %zu bytes (1..%u)", st->priv_len,
                       STATE_PRIV_MAX);
    if (!rc)
        rc = export_pub(k, &st->pub, &st->pub_len);
    if (!rc)
        rc = dsig_jwk_thumbprint(k, st->thumb);
    if (!rc)
        rc = open_claim(st);
    uint64_t mark = 0;
    if (!rc)
        rc = hwm_open(st, opts, &mark);
    /* The same key made again (same seed) continues after its recorded mark, never from 0. */
    if (!rc && mark > 0) {
        dsig_key_free(k);
        k = NULL;
        rc = key_from_private(&k, alg, st->priv, st->priv_len, mark, st->pub, st->pub_len);
    }
    if (!rc && mark > alg->keytype->stateful->capacity(k))
        rc = dsig_fail(DSIG_E_EXHAUSTED, "this key (%s) was already used up on this machine", st->thumb);
    uint8_t *img = NULL;
    size_t len = 0;
    if (!rc)
        rc = state_image(st, mark, &img, &len);
    if (!rc) {
        fd = openat(st->dirfd, st->base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            rc = errno == EEXIST ? dsig_fail(DSIG_E_IO, "state file '%s' already exists: a state file is "
                                                        "never overwritten", path)
                                 : dsig_fail(DSIG_E_IO, "state file '%s': %s", path, strerror(errno));
    }
    if (!rc) {
        int err = flock(fd, LOCK_EX | LOCK_NB) != 0 ? errno : 0;
        if (!err)
            err = dsig_write_all(fd, img, len, NULL);
        if (!err && fsync(fd) != 0)
            err = errno;
        if (!err && fsync(st->dirfd) != 0)
            err = errno;
        if (err) {
            close(fd);
            unlinkat(st->dirfd, st->base, 0);
            fd = -1;
            rc = dsig_fail(DSIG_E_IO, "state file '%s': write failed: %s", path, strerror(err));
        }
    }
    dsig_xfree(img, len);
    if (rc) {
        dsig_key_free(k);
        state_free(st);
        return rc;
    }
    st->fd = fd;
    state_attach(k, st, mark);
    *key = k;
    return DSIG_OK;
}

/* Look a stateful algorithm up by the name stored in a state file. */
static const dsig_alg *state_alg(const char *name)
{
    if (state_test_alg && strcmp(state_test_alg->name, name) == 0)
        return state_test_alg;
    const dsig_alg *a = dsig_alg_by_name(name);
    return a && (a->flags & DSIG_ALG_STATEFUL) && a->keytype->stateful ? a : NULL;
}

/* Open and lock the file, retrying if it was renamed over between open and lock. */
static int state_lock_open(struct dsig_state_file *st, struct stat *sb)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = openat(st->dirfd, st->base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return errno == ELOOP ? dsig_fail(DSIG_E_STATE, "state file '%s' is a symbolic link: it would "
                                                            "be replaced on update; use the file itself", st->path)
                                  : dsig_fail(DSIG_E_IO, "state file '%s': %s", st->path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            close(fd);
            return err == EWOULDBLOCK
                       ? dsig_fail(DSIG_E_STATE, "state file '%s' is in use by another process (or already "
                                                 "open in this one)", st->path)
                       : dsig_fail(DSIG_E_IO, "state file '%s': lock: %s", st->path, strerror(err));
        }
        struct stat now;
        if (fstat(fd, sb) != 0 || fstatat(st->dirfd, st->base, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
            now.st_ino != sb->st_ino || now.st_dev != sb->st_dev) {
            close(fd); /* we locked an inode that was just replaced: try the new one */
            continue;
        }
        st->fd = fd;
        return DSIG_OK;
    }
    return dsig_fail(DSIG_E_STATE, "state file '%s' keeps changing while being opened", st->path);
}

int dsig_state_open(dsig_key **key, const char *path, const dsig_state_opts *opts)
{
    if (!key || !path)
        return dsig_fail(DSIG_E_ARG, "dsig_state_open: NULL argument");
    *key = NULL;
    int rc = dsig_backend_init();
    if (rc)
        return rc;
    struct dsig_state_file *st = state_new(path, opts);
    if (!st)
        return dsig_fail(DSIG_E_NOMEM, "out of memory");
    struct dsig_key *k = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    struct stat sb;
    struct state_fields f;
    rc = open_dir_of(path, &st->dirfd, &st->base);
    if (!rc)
        rc = state_lock_open(st, &sb);
    if (!rc && !S_ISREG(sb.st_mode))
        rc = dsig_fail(DSIG_E_STATE, "state file '%s' is not a regular file", path);
    if (!rc && (sb.st_mode & 077))
        rc = dsig_fail(DSIG_E_STATE, "state file '%s' is accessible by other users (mode %03o): it holds "
                                     "a private key; chmod 600 it", path, (unsigned)(sb.st_mode & 0777));
    if (!rc && (sb.st_size <= 0 || (uint64_t)sb.st_size > STATE_FILE_MAX))
        rc = dsig_fail(DSIG_E_FORMAT, "state file '%s' has an impossible size (%lld bytes)", path,
                       (long long)sb.st_size);
    if (!rc) {
        len = (size_t)sb.st_size;
        buf = dsig_malloc(len);
        if (!buf)
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
        else if (read_exact(st->fd, buf, len) != 0)
            rc = dsig_fail(DSIG_E_IO, "state file '%s': read failed", path);
    }
    if (!rc)
        rc = state_parse(buf, len, path, &f);
    if (!rc && !(st->alg = state_alg(f.name)))
        rc = dsig_fail(DSIG_E_UNSUPPORTED, "state file '%s': algorithm \"%s\" is not a stateful "
                                           "algorithm of this library", path, f.name);
    if (!rc) {
        st->pub = dsig_malloc(f.pub_len);
        st->priv = dsig_malloc(f.priv_len);
        if (!st->pub || !st->priv)
            rc = dsig_fail(DSIG_E_NOMEM, "out of memory");
    }
    if (!rc) {
        memcpy(st->pub, f.pub, st->pub_len = f.pub_len);
        memcpy(st->priv, f.priv, st->priv_len = f.priv_len);
        rc = key_from_private(&k, st->alg, st->priv, st->priv_len, f.counter, st->pub, st->pub_len);
    }
    if (!rc && f.counter > st->alg->keytype->stateful->capacity(k))
        rc = dsig_fail(DSIG_E_FORMAT, "state file '%s': counter %llu beyond the key's capacity", path,
                       (unsigned long long)f.counter);
    if (!rc)
        rc = dsig_jwk_thumbprint(k, st->thumb);
    if (!rc)
        rc = open_claim(st);
    uint64_t mark = 0;
    if (!rc)
        rc = hwm_open(st, opts, &mark);
    if (!rc && f.counter < mark)
        rc = dsig_fail(DSIG_E_STATE, "state file '%s' is older than the key's high-water mark (counter "
                                     "%llu < %llu): a copy restored from a backup or an old copy; "
                                     "signing with it would reuse one-time keys", path,
                       (unsigned long long)f.counter, (unsigned long long)mark);
    dsig_xfree(buf, len);
    if (rc) {
        dsig_key_free(k);
        state_free(st);
        return rc;
    }
    state_attach(k, st, f.counter);
    *key = k;
    return DSIG_OK;
}

int dsig_state_take_index(const struct dsig_key *key, uint64_t *index)
{
    if (!key || !index)
        return dsig_fail(DSIG_E_ARG, "dsig_state_take_index: NULL argument");
    struct dsig_state_file *st = key->state;
    if (!st)
        return dsig_fail(DSIG_E_STATE, "a stateful key signs only from its state file (dsig_state_open, "
                                       "dsig -k FILE.state); keys generated in memory or imported from a "
                                       "JWK only verify");
    if (getpid() != st->pid)
        return dsig_fail(DSIG_E_STATE, "state file '%s' was opened by the parent process: a forked child "
                                       "must open it itself", st->path);
    int rc = DSIG_OK;
    pthread_mutex_lock(&st->mu);
    if (st->next >= st->end) {
        if (st->next >= st->cap) {
            rc = dsig_fail(DSIG_E_EXHAUSTED, "the key in '%s' has made all its %llu signatures: it can "
                                             "never sign again", st->path, (unsigned long long)st->cap);
            goto out;
        }
        uint64_t left = st->cap - st->next;
        uint64_t end = st->next + (left < st->reserve ? left : st->reserve);
        if (hwm_mark(st) > st->next) { /* cannot happen while we hold the registry lock */
            rc = dsig_fail(DSIG_E_STATE, "key %s: high-water mark moved ahead of '%s'", st->thumb, st->path);
            goto out;
        }
        /* Order (docs/state.md): state file, then registry, then the index. */
        if ((rc = state_write(st, end)) != DSIG_OK || (rc = hwm_write(st, end)) != DSIG_OK)
            goto out;
        st->end = end;
    }
    *index = st->next++;
out:
    pthread_mutex_unlock(&st->mu);
    return rc;
}

int dsig_state_remaining(const dsig_key *key, uint64_t *remaining)
{
    if (!key || !remaining)
        return dsig_fail(DSIG_E_ARG, "dsig_state_remaining: NULL argument");
    *remaining = 0;
    struct dsig_state_file *st = key->state;
    if (!st)
        return dsig_fail(DSIG_E_STATE, "the key has no open state file");
    pthread_mutex_lock(&st->mu);
    /* capacity - durable counter + rest of the window = capacity - next */
    *remaining = st->cap - st->next;
    pthread_mutex_unlock(&st->mu);
    return DSIG_OK;
}

int dsig_state_is_state_file(const char *path)
{
    if (!path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    uint8_t b[STATE_PREFIX_LEN];
    struct stat sb;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && read_exact(fd, b, sizeof b) == 0 &&
             memcmp(b, STATE_PREFIX, STATE_PREFIX_LEN) == 0;
    close(fd);
    return ok;
}

void dsig_state_close(struct dsig_key *key)
{
    if (!key || !key->state)
        return;
    state_free(key->state);
    key->state = NULL;
}

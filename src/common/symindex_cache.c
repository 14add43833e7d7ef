#include "common/symindex_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hex.h"
#include "common/read_full.h"
#include "common/switches.h"

/* The cache's bound: a file is written only where the directory's files
 * and it together stay within this many bytes, the files written longest
 * ago removed as needed. cc1's index is ~2 MiB: the bound holds a few
 * dozen big modules, and one file over it is never written. */
#define CACHE_MAX_BYTES ((uint64_t)64 << 20)

/* The file: a header, n entries sorted by (lo, rank), then the names,
 * each ending in a NUL, padded with NULs to a multiple of 8 bytes. The
 * checksum covers the entries and the names. Native byte order and
 * layout: the version, header_size and entry_size fields read back
 * otherwise on another kind of machine, and the file is ignored there.
 * Bump CACHE_VERSION whenever what the index holds or how it is built
 * changes (its names, its order, which symbols it keeps). */
#define CACHE_MAGIC   "LBSYMIX"
#define CACHE_VERSION 2u

typedef struct file_header {
    char magic[8];
    uint32_t version, header_size, entry_size, build_id_len;
    unsigned char build_id[LB_SYMINDEX_CACHE_MAX_BUILD_ID];
    uint64_t table;      /* lb_symindex_table_t */
    uint64_t count;      /* the table's entries */
    uint64_t content;    /* the key's content sum */
    uint64_t n;          /* entries in the file, at least 1 */
    uint64_t names_size; /* bytes, a multiple of 8 */
    uint64_t checksum;   /* of the entries and names (checksum()) */
} file_header_t;

typedef struct file_entry {
    uint64_t lo;   /* the index's start less the load bias */
    uint64_t size; /* 0: up to the next start */
    uint32_t name; /* offset of its name in the names */
    uint32_t rank; /* 0 global, 1 weak, 2 local */
} file_entry_t;

_Static_assert(sizeof(file_header_t) % 8 == 0, "entries start 8-aligned");
_Static_assert(sizeof(file_entry_t) % 8 == 0, "names start 8-aligned");

static struct {
    bool on;
    char dir[PATH_MAX]; /* .../lockblame/symindex */
} cache;

/* A file's name: the build id in hex, ".libdwfl" and at most
 * ".tmp.<pid>.<random>". */
#define FILE_NAME_MAX (2 * LB_SYMINDEX_CACHE_MAX_BUILD_ID + 64)

void lb_symindex_cache_use(void)
{
    cache.on = false;
    if (lb_switch_off(getenv("LOCKBLAME_CACHE")))
        return;
    /* XDG: a relative XDG_CACHE_HOME is ignored. */
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int len;
    if (xdg && xdg[0] == '/')
        len = snprintf(cache.dir, sizeof cache.dir, "%s/lockblame/symindex", xdg);
    else if (home && home[0] == '/')
        len = snprintf(cache.dir, sizeof cache.dir, "%s/.cache/lockblame/symindex", home);
    else
        return;
    cache.on = len > 0 && (size_t)len < sizeof cache.dir;
}

bool lb_symindex_cache_on(void)
{
    return cache.on;
}

/* A Fletcher-style sum of len bytes, a word at a time (~0.5 instructions
 * a byte), the last partial word padded with zeros: any one flipped bit,
 * and most swaps of words, change it. Not a guard against a forged file:
 * the cache is the user's own, and files not the user's are not read. */
uint64_t lb_symindex_cache_sum(const void *p, size_t len, uint64_t seed)
{
    const unsigned char *b = p;
    uint64_t sum = seed | 1, sums = 0;
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8); /* (a fixed size: one load) */
        sum += w;
        sums += sum;
    }
    if (whole < len) {
        uint64_t w = 0;
        memcpy(&w, b + whole, len - whole);
        sum += w;
        sums += sum;
    }
    return sum ^ (sums << 32 | sums >> 32);
}

static uint64_t checksum(const unsigned char *p, size_t len)
{
    return lb_symindex_cache_sum(p, len, 1);
}

/* The cache's directory, opened (O_DIRECTORY, O_NOFOLLOW) where it is
 * this user's: owned by the effective user, not writable by group or
 * others; else -1. */
static int open_dir(void)
{
    int fd = open(cache.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 &&
        (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The file names' kinds, by the table an index comes from. */
static const char *const kinds[] = {
    [LB_SYMINDEX_TABLE_SYMTAB] = "symtab",
    [LB_SYMINDEX_TABLE_DYNSYM] = "dynsym",
    [LB_SYMINDEX_TABLE_LIBDWFL] = "libdwfl",
};

/* Whether name is one of the cache's own: <hex>.<kind>, or a temporary
 * file of one (<hex>.<kind>.tmp.<...>). */
static bool own_name(const char *name)
{
    size_t hex = strspn(name, "0123456789abcdef");
    if (hex == 0 || name[hex] != '.')
        return false;
    const char *kind = name + hex + 1;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t len = strlen(kinds[i]);
        if (strncmp(kind, kinds[i], len) == 0 &&
            (kind[len] == '\0' || strncmp(kind + len, ".tmp.", 5) == 0))
            return true;
    }
    return false;
}

/* The name of key's file in the directory (and, with a suffix, of a
 * name beside it). */
static void file_name(char *name, size_t size, const lb_symindex_key_t *key, const char *suffix)
{
    char hex[2 * LB_SYMINDEX_CACHE_MAX_BUILD_ID + 1];
    lb_hex_encode(key->build_id, key->build_id_len, hex);
    snprintf(name, size, "%s.%s%s", hex, kinds[key->table], suffix);
}

/* The whole file `name` in the directory dfd (malloc), its size in
 * *size; NULL when it is not there, not a regular file of this user's,
 * bigger than the cache, or unread. O_NONBLOCK: a FIFO planted there
 * does not hold the open. */
static unsigned char *read_whole(int dfd, const char *name, size_t *size)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size > 0 &&
        (uint64_t)st.st_size <= CACHE_MAX_BYTES && (buf = malloc((size_t)st.st_size))) {
        size_t got = lb_read_full(fd, buf, (size_t)st.st_size);
        if (got != (size_t)st.st_size) {
            free(buf);
            buf = NULL;
        }
        *size = got;
    }
    close(fd);
    return buf;
}

/* Whether buf[0..size) is key's file, whole and consistent. */
static bool file_valid(const unsigned char *buf, size_t size, const lb_symindex_key_t *key)
{
    file_header_t h;
    if (size < sizeof h)
        return false;
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) != 0 || h.version != CACHE_VERSION ||
        h.header_size != sizeof h || h.entry_size != sizeof(file_entry_t) ||
        h.build_id_len != key->build_id_len ||
        memcmp(h.build_id, key->build_id, key->build_id_len) != 0 ||
        h.table != (uint64_t)key->table || h.count != key->count || h.content != key->content)
        return false;
    size_t room = size - sizeof h;
    if (h.n == 0 || h.n > room / sizeof(file_entry_t) || h.names_size % 8 != 0 ||
        h.names_size == 0 || h.names_size > UINT32_MAX ||
        h.names_size != room - h.n * sizeof(file_entry_t))
        return false;
    const unsigned char *body = buf + sizeof h;
    if (checksum(body, room) != h.checksum)
        return false;
    const char *names = (const char *)body + h.n * sizeof(file_entry_t);
    if (names[h.names_size - 1] != '\0')
        return false; /* every name ends inside the names */
    const file_entry_t *e = (const file_entry_t *)body;
    for (size_t i = 0; i < h.n; i++) {
        if (e[i].name >= h.names_size || names[e[i].name] == '\0' || e[i].rank > 2)
            return false;
        if (i > 0 &&
            (e[i].lo < e[i - 1].lo || (e[i].lo == e[i - 1].lo && e[i].rank < e[i - 1].rank)))
            return false;
    }
    return true;
}

lb_symentry_t *lb_symindex_cache_load(const lb_symindex_key_t *key, uintptr_t bias, size_t *n,
                                      char **names)
{
    if (!cache.on)
        return NULL;
    char name[FILE_NAME_MAX];
    file_name(name, sizeof name, key, "");
    int dfd = open_dir();
    if (dfd < 0)
        return NULL;
    size_t size = 0;
    unsigned char *buf = read_whole(dfd, name, &size);
    close(dfd);
    if (!buf)
        return NULL;
    file_header_t h;
    lb_symentry_t *e = NULL;
    if (file_valid(buf, size, key)) {
        memcpy(&h, buf, sizeof h);
        e = malloc(h.n * sizeof *e);
    }
    if (!e) {
        free(buf);
        return NULL;
    }
    /* The names stay where they are: buf is kept as *names. */
    const file_entry_t *fe = (const file_entry_t *)(buf + sizeof h);
    const char *text = (const char *)(fe + h.n);
    for (size_t i = 0; i < h.n; i++)
        e[i] = (lb_symentry_t){ (uintptr_t)fe[i].lo + bias, (uintptr_t)fe[i].size,
                                text + fe[i].name, (int)fe[i].rank };
    *n = h.n;
    *names = (char *)buf;
    return e;
}

/* Makes dir and its missing parents (0700, as XDG asks), each only under
 * a directory the effective user owns (`sudo -E` makes no root-owned
 * directory in a user's home); whether it is there. */
static bool make_dirs(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (stat(path, &st) != 0) {
            char *slash = strrchr(path, '/');
            *slash = '\0';
            bool parent_ours = stat(slash == path ? "/" : path, &st) == 0 && st.st_uid == geteuid();
            *slash = '/';
            if (!parent_ours || (mkdir(path, 0700) != 0 && errno != EEXIST))
                return false;
        }
        *p = c;
        if (c == '\0')
            return true;
    }
}

typedef struct cached_file {
    char name[NAME_MAX + 1];
    uint64_t size;
    struct timespec written;
} cached_file_t;

static int by_age(const void *a, const void *b)
{
    const cached_file_t *x = a, *y = b;
    if (x->written.tv_sec != y->written.tv_sec)
        return x->written.tv_sec < y->written.tv_sec ? -1 : 1;
    if (x->written.tv_nsec != y->written.tv_nsec)
        return x->written.tv_nsec < y->written.tv_nsec ? -1 : 1;
    return 0;
}

/* Removes the cache's files (own_name) written longest ago, in the
 * directory dfd, until `incoming` more bytes fit within CACHE_MAX_BYTES;
 * whether they fit. Another writer's files come and go meanwhile: a file
 * already gone counts as removed. */
static bool make_room(int dfd, uint64_t incoming)
{
    int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return false;
    }
    cached_file_t *files = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    for (struct dirent *de; (de = readdir(d));) {
        struct stat st;
        if (!own_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            cached_file_t *more = realloc(files, cap * sizeof *files);
            if (!more)
                break;
            files = more;
        }
        files[n] = (cached_file_t){ .size = (uint64_t)st.st_size, .written = st.st_mtim };
        snprintf(files[n].name, sizeof files[n].name, "%s", de->d_name);
        total += files[n++].size;
    }
    if (total + incoming > CACHE_MAX_BYTES && files) {
        qsort(files, n, sizeof *files, by_age);
        for (size_t i = 0; i < n && total + incoming > CACHE_MAX_BYTES; i++)
            if (unlinkat(dirfd(d), files[i].name, 0) == 0 || errno == ENOENT)
                total -= files[i].size;
    }
    closedir(d);
    free(files);
    return total + incoming <= CACHE_MAX_BYTES;
}

static bool write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

void lb_symindex_cache_store(const lb_symindex_key_t *key, uintptr_t bias, const lb_symentry_t *e,
                             size_t n)
{
    if (!cache.on || n == 0 || key->build_id_len == 0 ||
        key->build_id_len > LB_SYMINDEX_CACHE_MAX_BUILD_ID)
        return;
    uint32_t *lens = malloc(n * sizeof *lens); /* of the names, their NULs included */
    if (!lens)
        return;
    uint64_t names_size = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(e[i].name) + 1;
        lens[i] = len <= UINT32_MAX ? (uint32_t)len : UINT32_MAX;
        names_size += len;
    }
    names_size = (names_size + 7) & ~(uint64_t)7;
    uint64_t size = sizeof(file_header_t) + n * sizeof(file_entry_t) + names_size;
    unsigned char *buf = NULL;
    int dfd = names_size <= UINT32_MAX && size <= CACHE_MAX_BYTES && make_dirs(cache.dir)
                  ? open_dir()
                  : -1;
    if (dfd >= 0 && make_room(dfd, size))
        buf = calloc(1, (size_t)size);
    if (!buf) {
        if (dfd >= 0)
            close(dfd);
        free(lens);
        return;
    }
    file_entry_t *fe = (file_entry_t *)(buf + sizeof(file_header_t));
    char *text = (char *)(fe + n);
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        fe[i] = (file_entry_t){ (uint64_t)(e[i].lo - bias), (uint64_t)e[i].size, at,
                                (uint32_t)e[i].rank };
        memcpy(text + at, e[i].name, lens[i]);
        at += lens[i];
    }
    free(lens);
    file_header_t h = { .version = CACHE_VERSION,
                        .header_size = sizeof h,
                        .entry_size = sizeof(file_entry_t),
                        .build_id_len = (uint32_t)key->build_id_len,
                        .table = key->table,
                        .count = key->count,
                        .content = key->content,
                        .n = n,
                        .names_size = names_size };
    memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
    memcpy(h.build_id, key->build_id, key->build_id_len);
    h.checksum = checksum((const unsigned char *)fe, (size_t)(size - sizeof h));
    memcpy(buf, &h, sizeof h);

    /* a fresh name (O_EXCL: nothing there is truncated or followed) */
    char name[FILE_NAME_MAX], tmp[FILE_NAME_MAX], suffix[48];
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(suffix, sizeof suffix, ".tmp.%ld.%lx", (long)getpid(),
             (unsigned long)(now.tv_nsec ^ (long)&now));
    file_name(name, sizeof name, key, "");
    file_name(tmp, sizeof tmp, key, suffix);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
        bool written = write_all(fd, buf, (size_t)size);
        if (close(fd) != 0 || !written || renameat(dfd, tmp, dfd, name) != 0)
            unlinkat(dfd, tmp, 0);
    }
    close(dfd);
    free(buf);
}

/* Unit tests for src/common/symindex.h: a module's index holds exactly
 * the function symbols libdwfl gives (dwfl_module_getsym_info: defined,
 * STT_FUNC or STT_GNU_IFUNC, named, at a nonzero address), the same
 * names, sizes and addresses in address order, preferred bindings first.
 * The index reads a module's own table through libelf where that is the
 * table libdwfl reads (its .symtab, else its .dynsym, as many entries as
 * libdwfl counts): this test program (a .symtab) and the system's
 * libstdc++ and SQLite (a .dynsym alone, as distributions ship them)
 * are such modules, and the test says so before it compares.
 *
 * The per-user cache of indexes (common/symindex_cache.h), pointed at a
 * directory of each test's own through XDG_CACHE_HOME: a module's index
 * read from its file holds the very entries a cold build gives (start,
 * size, name, rank), at another load bias too; a file that fails a check
 * (truncated, another version or build id, a flipped byte) is ignored and
 * written again; a cache that cannot be written costs nothing and says
 * nothing; LOCKBLAME_CACHE=0 neither reads nor writes. */
#include "check.h"

#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hex.h"
#include "common/module_names.h"
#include "common/symindex.h"
#include "common/symindex_cache.h"
#include "util/lazy_deps.h"

typedef struct entry {
    uintptr_t lo, size;
    const char *name;
    int rank, order;
} entry_t;

typedef struct entries {
    entry_t *e;
    size_t n;
} entries_t;

static void keep(void *ctx, uintptr_t lo, uintptr_t size, const char *name)
{
    entries_t *x = ctx;
    x->e = realloc(x->e, (x->n + 1) * sizeof *x->e);
    ASSERT_NOT_NULL(x->e);
    x->e[x->n++] = (entry_t){ .lo = lo, .size = size, .name = name };
}

static int by_address(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->order - y->order;
}

/* What libdwfl gives of mod's function symbols, in the index's order. */
static entries_t from_dwfl(Dwfl_Module *mod)
{
    entries_t x = { 0 };
    int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || addr == 0 || sym.st_shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        keep(&x, (uintptr_t)addr, (uintptr_t)sym.st_size, name);
        int bind = GELF_ST_BIND(sym.st_info);
        x.e[x.n - 1].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
        x.e[x.n - 1].order = i;
    }
    qsort(x.e, x.n, sizeof *x.e, by_address);
    return x;
}

/* Whether mod's own table is the one libdwfl reads (symindex.c's test). */
static bool own_table_read(Dwfl_Module *mod)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    Elf_Scn *table = NULL, *dynamic = NULL;
    GElf_Shdr sh;
    for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
        ASSERT_NOT_NULL(gelf_getshdr(scn, &sh));
        if (sh.sh_type == SHT_SYMTAB)
            table = scn;
        else if (sh.sh_type == SHT_DYNSYM)
            dynamic = scn;
    }
    table = table ? table : dynamic;
    return table && gelf_getshdr(table, &sh) && sh.sh_entsize &&
           sh.sh_size / sh.sh_entsize == (uint64_t)dwfl_module_getsymtab(mod);
}

/* path's index against libdwfl's symbols; whether its own table was
 * read (false also where the file is not there). */
static bool check_module(const char *path)
{
    if (access(path, R_OK) != 0)
        return false;
    Dwfl *dwfl = dwfl_begin(&lb_file_dwfl_callbacks);
    ASSERT_NOT_NULL(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0x100000, false);
    ASSERT_NOT_NULL(mod);
    dwfl_report_end(dwfl, NULL, NULL);
    bool own = own_table_read(mod);
    entries_t want = from_dwfl(mod), got = { 0 };
    ASSERT_TRUE(lb_symindex_each(mod, keep, &got));
    ASSERT_GT(want.n, 0u);
    ASSERT_EQ(got.n, want.n);
    for (size_t i = 0; i < want.n; i++) {
        ASSERT_UEQ(got.e[i].lo, want.e[i].lo);
        ASSERT_UEQ(got.e[i].size, want.e[i].size);
        ASSERT_STR_EQ(got.e[i].name, want.e[i].name);
    }
    free(want.e);
    free(got.e);
    lb_symindex_release_all(dwfl);
    dwfl_end(dwfl);
    return own;
}

static void test_index_is_libdwfl_symbols(void)
{
    ASSERT_TRUE(lb_debuginfo_libs_open());
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GT(n, 0);
    self[n] = '\0';
    ASSERT_TRUE(check_module(self)); /* built with -g: its .symtab */
    const char *shipped[] = { "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                              "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" };
    int own = 0;
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++)
        own += check_module(shipped[i]);
    printf("# %d shipped libraries with a table of their own\n", own);
}

/* ---- the cache ---- */

#define BIAS       0x100000u
#define OTHER_BIAS 0x7f0000000000u
#define LIBSTDCXX  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

static void self_path(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    ASSERT_GT(n, 0);
    buf[n] = '\0';
}

/* A copy of an index: its entries, names copied. */
typedef struct copy {
    lb_symentry_t *e;
    size_t n;
} copy_t;

static void copy_free(copy_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free((char *)c->e[i].name);
    free(c->e);
}

/* The index of the module at path, reported at bias, copied; the
 * module's cache key into *key, its build id copied into id. */
static copy_t index_copy(const char *path, uintptr_t bias, lb_symindex_key_t *key,
                         unsigned char id[LB_SYMINDEX_CACHE_MAX_BUILD_ID])
{
    Dwfl *dwfl = dwfl_begin(&lb_file_dwfl_callbacks);
    ASSERT_NOT_NULL(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, bias, false);
    ASSERT_NOT_NULL(mod);
    dwfl_report_end(dwfl, NULL, NULL);
    ASSERT_TRUE(lb_symindex_cache_key_of(mod, key));
    ASSERT_GT(key->build_id_len, 0);
    ASSERT_LE(key->build_id_len, LB_SYMINDEX_CACHE_MAX_BUILD_ID);
    memcpy(id, key->build_id, key->build_id_len);
    key->build_id = id; /* (libdwfl's copy ends with dwfl_end) */
    copy_t c = { 0 };
    const lb_symentry_t *e = lb_symindex_entries(mod, &c.n);
    ASSERT_NOT_NULL(e);
    c.e = malloc(c.n * sizeof *c.e);
    ASSERT_NOT_NULL(c.e);
    for (size_t i = 0; i < c.n; i++) {
        c.e[i] = e[i];
        c.e[i].name = strdup(e[i].name);
        ASSERT_NOT_NULL(c.e[i].name);
    }
    lb_symindex_release_all(dwfl);
    dwfl_end(dwfl);
    return c;
}

/* a and b hold the same entries, b's starts `shift` above a's. */
static void assert_same(const copy_t *a, const copy_t *b, uintptr_t shift)
{
    ASSERT_EQ(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        ASSERT_UEQ(a->e[i].lo + shift, b->e[i].lo);
        ASSERT_UEQ(a->e[i].size, b->e[i].size);
        ASSERT_STR_EQ(a->e[i].name, b->e[i].name);
        ASSERT_EQ(a->e[i].rank, b->e[i].rank);
    }
}

/* A cache directory of the test's own (XDG_CACHE_HOME=base, made), the
 * cache turned on there; base is removed by remove_tree. */
static void cache_at(char base[64])
{
    snprintf(base, 64, "/tmp/lb_symindex.XXXXXX");
    ASSERT_NOT_NULL(mkdtemp(base));
    ASSERT_OK(setenv("XDG_CACHE_HOME", base, 1));
    unsetenv("LOCKBLAME_CACHE");
    lb_symindex_cache_use();
    ASSERT_TRUE(lb_symindex_cache_on());
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void remove_tree(const char *base)
{
    ASSERT_EQ(nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void key_file(char *path, size_t size, const char *base, const lb_symindex_key_t *key)
{
    char hex[2 * LB_SYMINDEX_CACHE_MAX_BUILD_ID + 1];
    lb_hex_encode(key->build_id, key->build_id_len, hex);
    static const char *const kinds[] = { "symtab", "dynsym", "libdwfl" };
    snprintf(path, size, "%s/lockblame/symindex/%s.%s", base, hex, kinds[key->table]);
}

/* The bytes of the file at path (malloc), its size in *size; NULL when
 * it is not there. */
static unsigned char *file_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    ASSERT_EQ(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    ASSERT_GE(len, 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)len + 1);
    ASSERT_NOT_NULL(buf);
    ASSERT_EQ(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *size = (size_t)len;
    return buf;
}

static void put_file(const char *path, const unsigned char *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    ASSERT_NOT_NULL(f);
    ASSERT_EQ(fwrite(bytes, 1, size, f), size);
    ASSERT_EQ(fclose(f), 0);
}

/* Files in dir, "." and ".." aside (-1: no such directory). */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* want's entries with every name prefixed (a planted file's names). */
static copy_t renamed_copy(const copy_t *want, const char *prefix)
{
    copy_t c = { malloc(want->n * sizeof *want->e), want->n };
    ASSERT_NOT_NULL(c.e);
    for (size_t i = 0; i < want->n; i++) {
        c.e[i] = want->e[i];
        ASSERT_GE(asprintf((char **)&c.e[i].name, "%s%s", prefix, want->e[i].name), 0);
    }
    return c;
}

/* The cold build of path's index with the cache off (the reference). */
static copy_t cold_index(const char *path, lb_symindex_key_t *key,
                         unsigned char id[LB_SYMINDEX_CACHE_MAX_BUILD_ID])
{
    ASSERT_OK(setenv("LOCKBLAME_CACHE", "0", 1));
    lb_symindex_cache_use();
    ASSERT_FALSE(lb_symindex_cache_on());
    copy_t c = index_copy(path, BIAS, key, id);
    unsetenv("LOCKBLAME_CACHE");
    lb_symindex_cache_use();
    return c;
}

/* path's index: cold, written to the cache, read back at two biases
 * with the same entries, the file not written again; a file planted
 * through the cache's writer with other names gives those names (the
 * index came from the file). */
static void check_cache_round_trip(const char *path, lb_symindex_table_t table)
{
    char base[64], file[256];
    cache_at(base);
    lb_symindex_key_t key;
    unsigned char id[LB_SYMINDEX_CACHE_MAX_BUILD_ID];
    copy_t want = cold_index(path, &key, id);
    ASSERT_EQ(key.table, table);
    ASSERT_GT(key.count, (uint64_t)LB_SYMINDEX_CACHE_MIN_SYMBOLS);
    key_file(file, sizeof file, base, &key);
    ASSERT_EQ(access(file, F_OK), -1); /* the reference wrote nothing */

    copy_t cold = index_copy(path, BIAS, &key, id);
    assert_same(&want, &cold, 0);
    struct stat written, after;
    ASSERT_EQ(stat(file, &written), 0);
    size_t size;
    unsigned char *bytes = file_bytes(file, &size);
    ASSERT_NOT_NULL(bytes);

    copy_t warm = index_copy(path, BIAS, &key, id);
    assert_same(&want, &warm, 0);
    copy_t moved = index_copy(path, OTHER_BIAS, &key, id);
    assert_same(&want, &moved, OTHER_BIAS - BIAS);
    ASSERT_EQ(stat(file, &after), 0);
    ASSERT_UEQ(after.st_ino, written.st_ino); /* read, not written again */
    size_t size_after;
    unsigned char *bytes_after = file_bytes(file, &size_after);
    ASSERT_EQ(size_after, size);
    ASSERT_EQ(memcmp(bytes, bytes_after, size), 0);

    copy_t planted = renamed_copy(&want, "cached:");
    lb_symindex_cache_store(&key, BIAS, planted.e, planted.n);
    copy_t read = index_copy(path, OTHER_BIAS, &key, id);
    assert_same(&planted, &read, OTHER_BIAS - BIAS);

    printf("# %s: %zu entries, a %zu-byte file\n", path, want.n, size);
    copy_free(&want);
    copy_free(&cold);
    copy_free(&warm);
    copy_free(&moved);
    copy_free(&planted);
    copy_free(&read);
    free(bytes);
    free(bytes_after);
    remove_tree(base);
}

static void test_cache_hit_is_cold_build_symtab(void)
{
    ASSERT_TRUE(lb_debuginfo_libs_open());
    char self[4096];
    self_path(self, sizeof self);
    check_cache_round_trip(self, LB_SYMINDEX_TABLE_SYMTAB);
}

static void test_cache_hit_is_cold_build_dynsym(void)
{
    ASSERT_TRUE(lb_debuginfo_libs_open());
    ASSERT_EQ(access(LIBSTDCXX, R_OK), 0); /* the CLI links it */
    check_cache_round_trip(LIBSTDCXX, LB_SYMINDEX_TABLE_DYNSYM);
}

/* A module whose table libdwfl assembles (here, where a separate debug
 * file is installed: libc's and ld.so's, with libc6-dbg). */
static void test_cache_hit_is_cold_build_libdwfl(void)
{
    ASSERT_TRUE(lb_debuginfo_libs_open());
    const char *libs[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2" };
    int checked = 0;
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        if (access(libs[i], R_OK) != 0)
            continue;
        Dwfl *dwfl = dwfl_begin(&lb_file_dwfl_callbacks);
        ASSERT_NOT_NULL(dwfl);
        Dwfl_Module *mod = dwfl_report_elf(dwfl, libs[i], libs[i], -1, BIAS, false);
        ASSERT_NOT_NULL(mod);
        dwfl_report_end(dwfl, NULL, NULL);
        bool assembled =
            !own_table_read(mod) && dwfl_module_getsymtab(mod) > LB_SYMINDEX_CACHE_MIN_SYMBOLS;
        dwfl_end(dwfl);
        if (assembled) {
            check_cache_round_trip(libs[i], LB_SYMINDEX_TABLE_LIBDWFL);
            checked++;
        }
    }
    printf("# %d libraries with a table libdwfl assembles\n", checked);
}

/* The test program's own index, cold (cache off), and a cache of its
 * own: the path of the index's file there and its directory. */
typedef struct self_cache {
    char self[4096], base[64], file[256], dir[128];
    lb_symindex_key_t key;
    unsigned char id[LB_SYMINDEX_CACHE_MAX_BUILD_ID];
    copy_t want;
} self_cache_t;

static void self_cache_open(self_cache_t *f)
{
    ASSERT_TRUE(lb_debuginfo_libs_open());
    self_path(f->self, sizeof f->self);
    cache_at(f->base);
    f->want = cold_index(f->self, &f->key, f->id);
    key_file(f->file, sizeof f->file, f->base, &f->key);
    snprintf(f->dir, sizeof f->dir, "%s/lockblame/symindex", f->base);
}

static void self_cache_close(self_cache_t *f)
{
    copy_free(&f->want);
    remove_tree(f->base);
}

/* Each spoiled file is ignored: the index is the cold build's, and the
 * file is written again, the same bytes as the first time. */
static void test_bad_file_is_ignored_and_rewritten(void)
{
    self_cache_t f;
    self_cache_open(&f);
    copy_t cold = index_copy(f.self, BIAS, &f.key, f.id);
    copy_free(&cold);
    key_file(f.file, sizeof f.file, f.base, &f.key);
    size_t size;
    unsigned char *good = file_bytes(f.file, &size);
    ASSERT_NOT_NULL(good);
    ASSERT_GT(size, 256u);
    unsigned char *bad = malloc(size);
    ASSERT_NOT_NULL(bad);
    /* The header's layout (symindex_cache.c): magic at 0, version at 8,
     * build f.id at 24, table count at 96, content sum at 104; the entries
     * from 136. */
    enum {
        TRUNCATED,
        EMPTY,
        MAGIC,
        VERSION,
        BUILD_ID,
        COUNT,
        CONTENT,
        ENTRY_BYTE,
        NAME_BYTE,
        SPOILS
    };
    for (int spoil = 0; spoil < SPOILS; spoil++) {
        memcpy(bad, good, size);
        size_t bad_size = size;
        switch (spoil) {
        case TRUNCATED:
            bad_size = size - 8;
            break;
        case EMPTY:
            bad_size = 0;
            break;
        case MAGIC:
            bad[0] ^= 1;
            break;
        case VERSION:
            bad[8] += 1;
            break;
        case BUILD_ID:
            bad[24] ^= 1;
            break;
        case COUNT:
            bad[96] += 1;
            break;
        case CONTENT: /* the module's table rewritten under its build f.id */
            bad[104] ^= 1;
            break;
        case ENTRY_BYTE:
            bad[136] ^= 0x10;
            break;
        case NAME_BYTE:
            bad[size - 16] ^= 0x20;
            break;
        }
        put_file(f.file, bad, bad_size);
        copy_t got = index_copy(f.self, BIAS, &f.key, f.id);
        assert_same(&f.want, &got, 0);
        copy_free(&got);
        size_t again_size;
        unsigned char *again = file_bytes(f.file, &again_size);
        ASSERT_NOT_NULL(again);
        ASSERT_EQ(again_size, size);
        ASSERT_EQ(memcmp(again, good, size), 0);
        free(again);
    }
    free(bad);
    free(good);
    self_cache_close(&f);
}

/* A cache whose directory cannot be made (its parent is a file), and no
 * cache at all (neither XDG_CACHE_HOME nor HOME): the same index, not a
 * byte on stderr. */
static void test_unwritable_cache_is_silent(void)
{
    self_cache_t f;
    self_cache_open(&f);
    char blocker[128], errors[128];
    snprintf(blocker, sizeof blocker, "%s/f.file", f.base);
    put_file(blocker, (const unsigned char *)"x", 1);
    snprintf(errors, sizeof errors, "%s/stderr", f.base);
    fflush(stderr);
    int saved = dup(2), fd = open(errors, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(saved, 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(dup2(fd, 2), 2);

    ASSERT_OK(setenv("XDG_CACHE_HOME", blocker, 1));
    lb_symindex_cache_use();
    ASSERT_TRUE(lb_symindex_cache_on());
    copy_t got = index_copy(f.self, BIAS, &f.key, f.id);
    assert_same(&f.want, &got, 0);
    copy_free(&got);

    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    lb_symindex_cache_use();
    ASSERT_FALSE(lb_symindex_cache_on());
    got = index_copy(f.self, BIAS, &f.key, f.id);
    assert_same(&f.want, &got, 0);
    copy_free(&got);

    fflush(stderr);
    ASSERT_EQ(dup2(saved, 2), 2);
    close(fd);
    close(saved);
    struct stat st;
    ASSERT_EQ(stat(errors, &st), 0);
    ASSERT_EQ(st.st_size, 0);
    self_cache_close(&f);
}

/* A cache directory that is not this user's alone (others may write it;
 * as root, another user owns it) is neither read (a planted file's names
 * do not come back) nor written; a FIFO at a file's name holds nothing
 * up. Each time the cold build's names. */
static void test_cache_dir_not_ours_and_fifo(void)
{
    self_cache_t f;
    self_cache_open(&f);
    copy_t made = index_copy(f.self, BIAS, &f.key, f.id); /* makes the directory and the f.file */
    copy_free(&made);
    key_file(f.file, sizeof f.file, f.base, &f.key);
    snprintf(f.dir, sizeof f.dir, "%s/lockblame/symindex", f.base);
    copy_t planted = renamed_copy(&f.want, "planted:");
    lb_symindex_cache_store(&f.key, BIAS, planted.e, planted.n);
    copy_t read = index_copy(f.self, BIAS, &f.key, f.id);
    assert_same(&planted, &read, 0); /* ours: read */
    copy_free(&read);

    ASSERT_EQ(chmod(f.dir, 0777), 0);
    read = index_copy(f.self, BIAS, &f.key, f.id);
    assert_same(&f.want, &read, 0); /* others may write it: not read */
    copy_free(&read);
    ASSERT_EQ(unlink(f.file), 0);
    read = index_copy(f.self, BIAS, &f.key, f.id);
    copy_free(&read);
    ASSERT_EQ(files_in(f.dir), 0); /* nor written */
    ASSERT_EQ(chmod(f.dir, 0700), 0);
    if (geteuid() == 0) {
        lb_symindex_cache_store(&f.key, BIAS, planted.e, planted.n);
        ASSERT_EQ(chown(f.dir, 65534, 65534), 0);
        read = index_copy(f.self, BIAS, &f.key, f.id);
        assert_same(&f.want, &read, 0); /* another user's: not read */
        copy_free(&read);
        ASSERT_EQ(chown(f.dir, 0, 0), 0);
        ASSERT_EQ(unlink(f.file), 0);
    }

    ASSERT_EQ(mkfifo(f.file, 0600), 0);
    read = index_copy(f.self, BIAS, &f.key, f.id); /* returns: the FIFO is not waited on */
    assert_same(&f.want, &read, 0);
    copy_free(&read);
    copy_free(&planted);
    self_cache_close(&f);
}

/* LOCKBLAME_CACHE=0: a planted file is not read (the cold names) nor
 * written again, and a missing one is not written. */
static void test_cache_off_reads_and_writes_nothing(void)
{
    self_cache_t f;
    self_cache_open(&f);
    ASSERT_EQ(files_in(f.dir), -1);

    copy_t planted = renamed_copy(&f.want, "cached:");
    lb_symindex_cache_store(&f.key, BIAS, planted.e, planted.n);
    size_t size;
    unsigned char *bytes = file_bytes(f.file, &size);
    ASSERT_NOT_NULL(bytes);

    ASSERT_OK(setenv("LOCKBLAME_CACHE", "0", 1));
    lb_symindex_cache_use();
    copy_t got = index_copy(f.self, BIAS, &f.key, f.id);
    assert_same(&f.want, &got, 0); /* not the planted names */
    copy_free(&got);
    size_t size_after;
    unsigned char *after = file_bytes(f.file, &size_after);
    ASSERT_EQ(size_after, size);
    ASSERT_EQ(memcmp(after, bytes, size), 0);

    ASSERT_EQ(unlink(f.file), 0);
    got = index_copy(f.self, BIAS, &f.key, f.id);
    assert_same(&f.want, &got, 0);
    copy_free(&got);
    ASSERT_EQ(files_in(f.dir), 0);

    free(bytes);
    free(after);
    copy_free(&planted);
    self_cache_close(&f);
}

CHECK_MAIN(test_index_is_libdwfl_symbols, test_cache_hit_is_cold_build_symtab,
           test_cache_hit_is_cold_build_dynsym, test_cache_hit_is_cold_build_libdwfl,
           test_bad_file_is_ignored_and_rewritten, test_unwritable_cache_is_silent,
           test_cache_off_reads_and_writes_nothing, test_cache_dir_not_ours_and_fifo)

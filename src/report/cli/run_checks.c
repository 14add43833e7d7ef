/*
 * run_checks.c - what `lockblame run` finds out before it starts PROG:
 * whether the loader will honour LD_PRELOAD for it at all (a static binary
 * has no loader; a setuid/setgid one run by another user is loaded in
 * secure mode, which drops the library), and what is at the output path.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/db_merge.h"
#include "common/path_search.h"
#include "report/cli/db.h"
#include "report/cli/run_checks.h"
#include "report/cli/util.h"

/* Where resolve puts what it finds. */
typedef struct found_path {
    char *out;
    size_t size;
} found_path_t;

/* A candidate this process may execute, copied out. */
static bool keep_executable(const char *candidate, void *arg)
{
    found_path_t *f = arg;
    if (access(candidate, X_OK) != 0)
        return false;
    snprintf(f->out, f->size, "%s", candidate);
    return true;
}

/* PROG as execvp would find it (the same candidates and the same list
 * where PATH is unset, common/path_search.h); false when it is not
 * found. */
static bool resolve(const char *prog, char *out, size_t size)
{
    found_path_t f = { out, size };
    return lb_path_search(prog, LB_EXEC_DEFAULT_PATH, keep_executable, &f);
}

/* true when the ELF program at path has no PT_INTERP: statically linked
 * (static-pie included), so no loader runs to preload anything. Scripts
 * and unreadable files: false. */
static bool is_static_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    bool is_static = false;

    if (fd < 0)
        return false;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        is_static = true;
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;

            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (size_t)i * sizeof ph)) !=
                (ssize_t)sizeof ph) {
                is_static = false;
                break;
            }
            if (ph.p_type == PT_INTERP) {
                is_static = false;
                break;
            }
        }
    }
    close(fd);
    return is_static;
}

const char *lb_run_unprofilable(const char *prog)
{
    char path[PATH_MAX];
    struct stat st;

    if (!resolve(prog, path, sizeof path) || stat(path, &st) != 0)
        return NULL; /* execvp reports it */
    if (is_static_elf(path))
        return "it is statically linked, so the dynamic loader cannot preload liblockblame.so";
    if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
        ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
        return "it is setuid/setgid, so the loader ignores LD_PRELOAD for it";
    return NULL;
}

int lb_run_output_state(const char *path)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        return LB_OUT_NONE;
    if (!S_ISREG(st.st_mode))
        return LB_OUT_FOREIGN;
    if (st.st_size == 0)
        return LB_OUT_NONE;
    sqlite3 *db = NULL;
    int version = -1;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) == SQLITE_OK)
        version = lb_db_version(db, "main");
    sqlite3_close(db);
    return version > 0 ? LB_OUT_LOCKBLAME : LB_OUT_FOREIGN;
}

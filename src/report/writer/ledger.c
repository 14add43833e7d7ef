/* This process's part in the tree's ledger (ledger.h, common/ledger.h).
 *
 * Invariants: the mapping is made once per image, before the program's
 * main (the constructor) and inherited by fork children, which claim a
 * slot of their own in the fork_child hook (no allocation, no lock: one
 * atomic add and plain stores to the new slot); `mine` is this image's
 * slot or NULL; in_final_write is the finishing thread's own (TLS). */
#include "report/writer/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "common/file_room.h"
#include "common/ledger.h"
#include "core/hooks.h"
#include "report/writer/output.h"
#include "report/writer/writer_int.h"
#include "util/lazy_deps.h"
#include "util/log.h"
#include "util/pages.h"
#include "util/proc_numbers.h"

static lb_ledger_t *ledger;
static lb_ledger_slot_t *mine LB_FORK_WRITTEN;

static lb_ledger_t *map_ledger(void)
{
    char path[PATH_MAX];
    lb_ledger_path(path, sizeof path, lb_output_path());
    /* The tree's root makes it (lockblame run, or the first profiled
     * process); a process that finds none starts after the root counted
     * the tree and removed it, and joins none: it adds its own profile. */
    bool root = lb_output_tree_root();
    if (lb_output_started_run()) /* not an exec'd image of it: its tree joined this one */
        unlink(path);            /* a ledger left by an earlier tree whose root was killed */
    int fd = open(path, O_RDWR | (root ? O_CREAT : 0) | O_CLOEXEC, 0666);
    if (fd < 0)
        return NULL;
    void *p =
        lb_file_room(fd, sizeof(lb_ledger_t)) ? lb_pages_map_shared(sizeof(lb_ledger_t), fd) : NULL;
    close(fd);
    lb_ledger_t *l = p;
    if (l) {
        uint32_t blank = 0; /* the first process writes the magic */
        __atomic_compare_exchange_n(&l->magic, &blank, LB_LEDGER_MAGIC, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        /* its maker, after the path's check (lb_output_setup): the run's */
        uint64_t none = 0;
        if (root)
            __atomic_compare_exchange_n(&l->run, &none, lb_ledger_run_hash(lb_output_run_key()),
                                        false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    return l;
}

/* A slot of ledger for this process (NULL when the ledger is full). */
static lb_ledger_slot_t *claim(void)
{
    uint32_t i = __atomic_fetch_add(&ledger->used, 1, __ATOMIC_ACQ_REL);
    if (i >= LB_LEDGER_SLOTS)
        return NULL;
    lb_ledger_slot_t *s = &ledger->slot[i];
    s->pid = (int32_t)lb_own_pid();     /* in a hook: stamped before (util/proc_numbers.h) */
    s->claimed_ns = lb_ledger_now_ns(); /* a clock read, not /proc/PID/stat */
    __atomic_store_n(&s->state, LB_LEDGER_RUNNING, __ATOMIC_RELEASE);
    return s;
}

static void ledger_join(void)
{
    int saved_errno = errno;
    ledger = map_ledger();
    mine = ledger ? claim() : NULL;
    errno = saved_errno;
}

/* The finishing thread's: a window write that another thread still makes
 * meanwhile (its quiesce timed out) says its own failure. */
static LB_TLS bool in_final_write;

void lb_ledger_final_write(bool on)
{
    in_final_write = on;
}

bool lb_ledger_failure_left(int code)
{
    /* (the spool still open: the root or run has not counted the tree
     * yet; a process that fails later says its own line) */
    if (!in_final_write || !ledger || !mine || !(lb_summary_by_root() || lb_summary_by_run()) ||
        !lb_ledger_spool_open())
        return false;
    if (!code)
        return true;
    /* The first failure is said by its own process too: one line even
     * where the summary never comes (a root killed outright). */
    uint32_t none = 0;
    return !__atomic_compare_exchange_n(&ledger->failure, &none, (uint32_t)code, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void lb_ledger_mark(uint32_t state)
{
    if (mine)
        __atomic_store_n(&mine->state, state, __ATOMIC_RELEASE);
}

lb_ledger_t *lb_ledger_shared(void)
{
    return ledger;
}

bool lb_ledger_spool_open(void)
{
    return ledger && !__atomic_load_n(&ledger->spool_closed, __ATOMIC_SEQ_CST);
}

void lb_ledger_close_spool(void)
{
    if (ledger)
        __atomic_store_n(&ledger->spool_closed, 1u, __ATOMIC_SEQ_CST);
}

void lb_ledger_settle(const char *path)
{
    lb_ledger_tally_t t;
    lb_ledger_tally(ledger, &t); /* (none counted without a ledger) */
    char ledger_path[PATH_MAX];
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    unlink(ledger_path);
    char line[512];
    lb_ledger_text(&t, line, sizeof line);
    if (line[0])
        lb_warn("%s", line);
    char why[256];
    if (lb_sqlite_open(why, sizeof why))
        lb_ledger_note(path, &t, lb_tables_command_line());
}

static void ledger_fork_child(lb_thread_t *self)
{
    (void)self;
    if (ledger)
        mine = claim();
}

LB_PROCESS_HOOKS(ledger_hooks) = {
    .rank = LB_RANK_WRITER,
    .setup = ledger_join,
    .fork_child = ledger_fork_child,
};

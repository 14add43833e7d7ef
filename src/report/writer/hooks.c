/* The writer's part of the process lifecycle (core/hooks.h): at finish,
 * add this process's profile to the run's database (one call, so that a
 * hook running the writer elsewhere, on a stack of its own, stays easy).
 *
 * The output path and run key are chosen earlier, in a constructor that
 * runs before core's (priority 150): when the path holds a file that is
 * not a lockblame database, it exports LOCKBLAME_DISABLE=1, and core's
 * constructor then never starts lockblame in this process or its tree.
 * A fork child keeps the path: it writes into the same database. */
#include <errno.h>

#include "blame/shared_objs.h"
#include "common/ledger.h"
#include "common/symbols_fallback.h"
#include "core/hooks.h"
#include "report/writer/ledger.h"
#include "report/writer/merger.h"
#include "report/writer/output.h"
#include "report/writer/profile_db.h"
#include "report/writer/summary.h"
#include "report/writer/window.h"
#include "report/writer/writer.h"
#include "common/go_program.h"
#include "util/lazy_deps.h"

/* errno kept: the program's main starts with errno 0 (C11 7.5), and the
 * output path's stat fails with ENOENT before a first run. */
__attribute__((constructor(150))) static void writer_choose_output(void)
{
    int saved_errno = errno;
    /* the naming code in common/ opens its libraries through these
     * (common/symbols_fallback.h) */
    lb_elf_libs_ready = lb_debuginfo_libs_open;
    lb_xz_lib_ready = lb_lzma_open;
    /* a Go program runs without lockblame (common/go_program.h): nothing
     * of a run is set up or passed on to its children */
    if (!lb_program_is_go() && lb_output_setup() == 0) {
        lb_summary_setup();
        lb_shared_objs_place(lb_output_path(), lb_output_tree_root());
    }
    errno = saved_errno;
}

static void writer_finish(const char *reason)
{
    lb_ledger_mark(LB_LEDGER_WRITING);
    int rc = lb_write_profile(reason);
    lb_window_finish(reason); /* the last window: what the whole-run write added */
    lb_ledger_mark(rc == 0 ? LB_LEDGER_DONE : LB_LEDGER_FAILED);
}

/* The window lock first: no window write is inside SQLite while the
 * template is built and the process copied (profile_db.h). */
static void writer_fork_prepare(void)
{
    lb_window_fork_prepare();
    lb_profile_db_fork_prepare();
    lb_merger_fork_prepare();
}

static void writer_setup(void)
{
    lb_window_setup();
    lb_merger_setup();
}

/* The window lock released first: a merger started here (merger.h) is a
 * copy of this process, which must hold none of lockblame's locks. */
static void writer_fork_parent(void)
{
    lb_window_fork_parent();
    lb_merger_fork_parent();
}

static void writer_fork_child(lb_thread_t *self)
{
    (void)self;
    lb_profile_db_fork_child();
    lb_window_fork_child();
    lb_merger_fork_child();
}

LB_PROCESS_HOOKS(writer_hooks) = {
    .rank = LB_RANK_WRITER,
    .setup = writer_setup,
    .quiesce = lb_window_quiesce,
    .finish = writer_finish,
    .fork_prepare = writer_fork_prepare,
    .fork_parent = writer_fork_parent,
    .fork_child = writer_fork_child,
};

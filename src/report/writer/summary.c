#include "report/writer/summary.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/db_summary.h"
#include "common/switches.h"
#include "report/writer/ledger.h"
#include "report/writer/output.h"
#include "util/env.h"
#include "util/lazy_deps.h"
#include "util/log.h"

static bool each_process; /* LOCKBLAME_QUIET=0 */

void lb_summary_setup(void)
{
    each_process = lb_switch_off(lb_getenv("LOCKBLAME_QUIET"));
}

/* The lines after the first: the top release site, the unseen waits. */
static void print_more(const lb_db_summary_t *s)
{
    char line[512];
    lb_db_summary_site_line(s, line, sizeof line);
    if (line[0])
        lb_warn("%s", line);
    lb_db_summary_unseen_line(s, line, sizeof line);
    if (line[0])
        lb_warn("%s", line);
}

/* One process's own profile, or the tree's database (processes > 1). */
static void print_summary(const lb_db_summary_t *s, const char *path)
{
    char effort[256];
    lb_db_summary_effort_text(s, effort, sizeof effort);
    if (s->processes > 1)
        lb_warn("%d processes profiled; %s; profile %s (lockblame report --by-process lists"
                " them)",
                s->processes, effort, path);
    else
        lb_warn("%s; profile %s", effort, path);
    print_more(s);
}

/* The tree's database as written so far; nothing if no process wrote. */
static void print_tree(const char *path)
{
    struct stat st;
    char why[256];
    if (stat(path, &st) != 0 || st.st_size == 0 || !lb_sqlite_open(why, sizeof why))
        return;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    sqlite3_busy_timeout(db, 10000);
    lb_db_summary_t s = { 0 };
    lb_db_summary(db, &s);
    sqlite3_close(db);
    if (s.processes > 0)
        print_summary(&s, path);
}

bool lb_summary_reads_own(void)
{
    return each_process && !lb_summary_by_run();
}

void lb_summary_after_write(sqlite3 *own, const char *path, bool process_ends)
{
    bool root_ends = process_ends && lb_output_tree_root();
    /* The tree's root ends: what is still pending goes in before it
     * counts (its own commit added the rest; a root that recorded nothing,
     * or whose write failed, made none). */
    if (root_ends)
        lb_output_merge_pending();
    if (lb_summary_by_run())
        return; /* run counts the tree's processes too */
    if (each_process) {
        if (own) {
            lb_db_summary_t s = { 0 };
            lb_db_summary(own, &s);
            s.processes = 1;
            print_summary(&s, path);
        }
    } else if (root_ends) {
        print_tree(path);
    }
    if (root_ends) {
        lb_ledger_settle(path); /* the processes gone without writing */
        lb_output_remove_spool();
    }
}

/*
 * views_process.c - `report --by-process`: one row per process image of
 * the database (pid, parent, exec generation, command), with its threads,
 * work, the idleness blamed on its code, its own waiting, its off-CPU time
 * in waits lockblame cannot see and its top release site. Rows follow the
 * database's order (start time).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

enum {
    C_PID,
    C_PPID,
    C_GEN,
    C_THREADS,
    C_WORK,
    C_IDLE,
    C_WAIT,
    C_UNSEEN,
    C_IDLE_SHARE,
    C_TOP_S,
    C_TOP,
    C_COMMAND,
    C_SHORT,
    C_NCOLS
};

static const struct lb_col process_cols[C_NCOLS] = {
    [C_PID] = { "pid", "Pid", LB_C_INT, 0 },
    [C_PPID] = { "ppid", "Parent", LB_C_INT, 0 },
    [C_GEN] = { "exec_gen", "Exec", LB_C_INT, 0 },
    [C_THREADS] = { "threads", "Thr", LB_C_INT, 0 },
    [C_WORK] = { "work_s", "Work s", LB_C_SEC, 0 },
    [C_IDLE] = { "idleness_s", "Blamed s", LB_C_SEC, 0 },
    [C_WAIT] = { "wait_s", "Wait s", LB_C_SEC, 0 },
    [C_UNSEEN] = { "unseen_s", "Unseen s", LB_C_SEC, 0 },
    [C_IDLE_SHARE] = { "idleness_share", "Idle%", LB_C_FRAC, 0 },
    [C_TOP_S] = { "top_site_s", "Top s", LB_C_SEC, LB_COL_NOTABLE },
    [C_TOP] = { "top_site", "Top release site", LB_C_STR, 0 },
    [C_COMMAND] = { "command", "Command", LB_C_STR, LB_COL_NOTABLE },
    [C_SHORT] = { "command_short", "Command", LB_C_STR, LB_COL_TABLEONLY | LB_COL_LABEL },
};

struct psum {
    double work, idle, wait;
    double unseen;     /* its threads' off CPU in no seen wait (common/unseen.h) */
    bool unseen_known; /* some thread has it (schema version 5) */
    double top_s;      /* idleness at the heaviest site */
    int32_t top_frame; /* a frame of that site, -1 none */
};

struct site_acc { /* idleness per (process, site key) */
    double idle;
    int32_t frame;
};

/* The command with argv[0] as its base name: tables are narrow. */
static const char *short_command(const char *command)
{
    size_t n = strcspn(command, " ");
    const char *start = command;

    for (size_t i = 0; i < n; i++)
        if (command[i] == '/' && i + 1 < n)
            start = command + i + 1;
    return start;
}

int lb_view_processes(struct lb_profile *p, const struct lb_report_opts *o)
{
    struct psum *s = lb_xcalloc((size_t)p->nprocs + 1, sizeof *s);
    struct lb_strtab keytab = { 0 };
    int32_t *keys = lb_frame_key_ids(p, &keytab);
    struct lb_map sites = { 0 };
    struct site_acc *acc = NULL;
    int32_t nacc = 0;
    size_t cap = 0;

    for (int32_t i = 0; i < p->nprocs; i++)
        s[i].top_frame = -1;
    for (int32_t i = 0; i < p->nmrows; i++) {
        const struct lb_mrow *r = &p->mrows[i];
        int32_t proc = lb_thread_process(p, r->thread_id);
        double idle = lb_mrow_idleness(r);

        if (proc < 0)
            continue;
        s[proc].work += r->work;
        s[proc].idle += idle;
        s[proc].wait += r->wait;
        /* the site: the innermost program frame, as the release-site
         * view names it (a futex wake's leaf is the runtime's) */
        int32_t frame = p->nodes[lb_site_node(p, r->node)].frame;

        if (idle <= 0 || frame < 0)
            continue;
        bool is_new;
        int32_t *slot = lb_map_slot(&sites, (uint64_t)proc << 32 | (uint32_t)keys[frame], &is_new);

        if (is_new) {
            lb_grow((void **)&acc, &cap, (size_t)nacc + 1, sizeof *acc);
            *slot = nacc;
            acc[nacc++] = (struct site_acc){ .frame = frame };
        }
        acc[*slot].idle += idle;
        if (acc[*slot].idle > s[proc].top_s) {
            s[proc].top_s = acc[*slot].idle;
            s[proc].top_frame = frame;
        }
    }
    for (int32_t i = 0; i < p->nthreads; i++) {
        const struct lb_thread *th = &p->threads[i];

        if (th->process < 0 || th->unseen_s < 0)
            continue;
        s[th->process].unseen += th->unseen_s;
        s[th->process].unseen_known = true;
    }
    struct lb_table *t = lb_table_new(process_cols, C_NCOLS);
    int32_t shown = 0;

    for (int32_t i = 0; i < p->nprocs; i++) {
        const struct lb_run *r = &p->procs[i];

        if (!r->selected || (o->n >= 0 && shown >= o->n))
            continue;
        shown++;
        int row = lb_table_add_row(t);

        lb_table_int(t, row, C_PID, r->pid);
        lb_table_int(t, row, C_PPID, r->ppid);
        lb_table_int(t, row, C_GEN, r->exec_gen);
        lb_table_int(t, row, C_THREADS, r->threads);
        lb_table_num(t, row, C_WORK, s[i].work);
        lb_table_num(t, row, C_IDLE, s[i].idle);
        lb_table_num(t, row, C_WAIT, s[i].wait);
        if (s[i].unseen_known)
            lb_table_num(t, row, C_UNSEEN, s[i].unseen);
        lb_table_num(t, row, C_IDLE_SHARE, lb_share(s[i].idle, s[i].work + s[i].idle));
        lb_table_num(t, row, C_TOP_S, s[i].top_s);
        lb_table_str(t, row, C_TOP, s[i].top_frame >= 0 ? lb_frame_label(p, s[i].top_frame) : "-");
        lb_table_str(t, row, C_COMMAND, *r->command ? r->command : "(unknown)");
        lb_table_str(t, row, C_SHORT, *r->command ? short_command(r->command) : "(unknown)");
    }
    if (o->format == LB_FMT_TABLE)
        lb_print_header(p, o, stdout);
    lb_table_print(t, o->format, stdout);
    lb_table_free(t);
    free(acc);
    lb_map_free(&sites);
    free(keys);
    lb_strtab_free(&keytab);
    free(s);
    return LB_EXIT_OK;
}

/*
 * views_threads.c - `report --by-thread`: per thread its start routine,
 * work, the blame it caused (others' waiting blamed on its release sites,
 * labelled "Caused", not to be read as its own waiting), the time it
 * waited itself, overhead, and blame caused as a share of its effort. Metric rows of a thread id with no thread row
 * still get a row, so totals add up.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

enum {
    C_ID,
    C_TID,
    C_WORK,
    C_IDLE,
    C_WAIT,
    C_UNSEEN,
    C_OVERHEAD,
    C_UNDIRECTED,
    C_IDLE_SHARE,
    C_CPU,
    C_START,
    C_NCOLS
};

static const struct lb_col thread_cols[C_NCOLS] = {
    [C_ID] = { "id", "Id", LB_C_INT, 0 },
    [C_TID] = { "tid", "Tid", LB_C_INT, 0 },
    [C_WORK] = { "work_s", "Work s", LB_C_SEC, 0 },
    [C_IDLE] = { "idleness_s", "Caused s", LB_C_SEC, 0 },
    [C_WAIT] = { "wait_s", "Waited s", LB_C_SEC, 0 },
    [C_UNSEEN] = { "unseen_s", "Unseen s", LB_C_SEC, 0 },
    [C_OVERHEAD] = { "overhead_s", "Overhd s", LB_C_SEC, 0 },
    [C_UNDIRECTED] = { "undirected_s", "Undir s", LB_C_SEC, 0 },
    [C_IDLE_SHARE] = { "idleness_share", "Caused%", LB_C_FRAC, 0 },
    [C_CPU] = { "cpu_s", "CPU s", LB_C_SEC, 0 },
    [C_START] = { "start_routine", "Start routine", LB_C_STR, LB_COL_LABEL },
};

struct tsum {
    int64_t id;
    int32_t thread; /* thread index or -1 */
    double work, idle, wait, overhead, undirected;
};

static int cmp_tsum(const void *a, const void *b)
{
    const struct tsum *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

int lb_view_threads(struct lb_profile *p, const struct lb_report_opts *o)
{
    struct lb_map map = { 0 };
    struct tsum *s = NULL;
    int32_t n = 0;
    size_t cap = 0;

    for (int32_t i = 0; i < p->nthreads + p->nmrows; i++) {
        bool from_row = i >= p->nthreads;
        const struct lb_mrow *r = from_row ? &p->mrows[i - p->nthreads] : NULL;
        int64_t id = from_row ? r->thread_id : p->threads[i].id;
        bool is_new;
        int32_t *slot = lb_map_slot(&map, (uint64_t)id, &is_new);

        if (is_new) {
            lb_grow((void **)&s, &cap, (size_t)n + 1, sizeof *s);
            *slot = n;
            s[n++] = (struct tsum){ .id = id, .thread = from_row ? -1 : i };
        }
        if (r) {
            s[*slot].work += r->work;
            s[*slot].idle += lb_mrow_idleness(r);
            s[*slot].wait += r->wait;
            s[*slot].overhead += r->overhead;
            s[*slot].undirected += r->undirected;
        }
    }
    lb_sort(s, (size_t)n, sizeof *s, cmp_tsum);
    if (o->n >= 0 && n > o->n)
        n = o->n;
    struct lb_table *t = lb_table_new(thread_cols, C_NCOLS);
    struct lb_buf label = { 0 };

    for (int32_t i = 0; i < n; i++) {
        const struct lb_thread *th = s[i].thread >= 0 ? &p->threads[s[i].thread] : NULL;
        int row = lb_table_add_row(t);

        lb_table_int(t, row, C_ID, s[i].id);
        if (th)
            lb_table_int(t, row, C_TID, th->tid);
        lb_table_num(t, row, C_WORK, s[i].work);
        lb_table_num(t, row, C_IDLE, s[i].idle);
        lb_table_num(t, row, C_WAIT, s[i].wait);
        if (th && th->unseen_s >= 0)
            lb_table_num(t, row, C_UNSEEN, th->unseen_s);
        lb_table_num(t, row, C_OVERHEAD, s[i].overhead);
        lb_table_num(t, row, C_UNDIRECTED, s[i].undirected);
        /* no share of two figures that both print as 0.000 (the cell stays empty) */
        if (s[i].work + s[i].idle >= 0.0005)
            lb_table_num(t, row, C_IDLE_SHARE, lb_share(s[i].idle, s[i].work + s[i].idle));
        if (th)
            lb_table_num(t, row, C_CPU, th->cpu_s);
        /* a process's initial thread has no start routine; a thread a
		 * runtime routine started (std::thread) is named by what it ran */
        lb_buf_reset(&label);
        if (th)
            lb_thread_label(p, s[i].thread, p->release_entry, &label);
        else
            lb_buf_puts(&label, s[i].id == 0 ? "main" : "(unknown)");
        lb_table_str(t, row, C_START, lb_buf_str(&label));
    }
    if (o->format == LB_FMT_TABLE)
        lb_print_header(p, o, stdout);
    lb_table_print(t, o->format, stdout);
    if (o->format == LB_FMT_TABLE)
        printf("\nCaused s: blame caused, others' waiting blamed on this thread's release sites;"
               " Caused%%: of work + caused.\nWaited s: time this thread spent waiting itself."
               " Unseen s: off CPU in no wait lockblame sees (glibc's internal locks, futex\n"
               "calls made inline, sleep, I/O). Undir s: undirected idleness (thesis ch. 5).\n"
               "Start routine: for a thread a runtime routine started (std::thread), the"
               " outermost function of the program it ran; \"start -> f\": threads that\n"
               "share a start routine (a trampoline) and ran different functions f below it.\n");
    lb_buf_free(&label);
    lb_table_free(t);
    free(s);
    lb_map_free(&map);
    return LB_EXIT_OK;
}

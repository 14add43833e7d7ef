/*
 * header.c - the run header printed above table-format reports: command,
 * event, threads, duration, the effort totals and the conservation line
 * (blame + hand-off + unattributed = total wait) with the waiters' own sum,
 * and off-CPU time in waits lockblame cannot see where it is notable.
 */
#include <inttypes.h>
#include <string.h>

#include "common/db_summary.h"
#include "common/unseen.h"
#include "report/cli/accounting.h"
#include "report/cli/cut_paths.h"
#include "report/cli/tree_notes.h"
#include "report/cli/sampling.h"
#include "report/cli/views.h"

double lb_share(double part, double whole)
{
    return whole != 0 ? part / whole : 0;
}

static const char *view_title(enum lb_view v)
{
    switch (v) {
    case LB_V_RELEASE_SITE:
        return "release sites";
    case LB_V_LOCK:
        return "contended objects";
    case LB_V_THREAD:
        return "threads";
    case LB_V_TOP_DOWN:
        return "top-down calling contexts";
    case LB_V_BOTTOM_UP:
        return "bottom-up (callers)";
    case LB_V_FLAT:
        return "flat procedures";
    case LB_V_PROCESS:
        return "processes";
    }
    return "";
}

void lb_print_conservation(const struct lb_profile *p, FILE *out)
{
    const struct lb_totals *t = &p->totals;
    double sum = t->sync_blame + t->sync_handoff + t->sync_unattributed;

    fprintf(out,
            "wait:     %.3f s = blame %.3f s + hand-off latency %.3f s + unattributed %.3f s"
            " (measured by the waiters: %.3f s)\n",
            sum, t->sync_blame, t->sync_handoff, t->sync_unattributed, t->sync_wait);
}

void lb_print_header(struct lb_profile *p, const struct lb_report_opts *o, FILE *out)
{
    const struct lb_run *r = &p->run;
    const struct lb_totals *t = &p->totals;

    fprintf(out, "lockblame report: %s (%s by %s)\n", p->path, view_title(o->view),
            lb_metric_names[o->metric]);
    fprintf(out, "command:  %s\n", *r->command ? r->command : "(unknown)");
    fprintf(out, "processes: %" PRId32, p->nselected);
    if (p->nselected != p->nprocs)
        fprintf(out, " of %" PRId32 " in the database (selected by --pid/--comm)", p->nprocs);
    if (p->nselected > 1)
        fprintf(out, " (command above: %s; --by-process lists them)",
                p->command_is_root ? "the tree's root" : "the first");
    fputc('\n', out);
    fprintf(out, "event:    %s", *r->event ? r->event : "(unknown)");
    if (r->period)
        fprintf(out, " every %" PRId64 " %s", r->period,
                *r->period_unit ? r->period_unit : "events");
    if (*r->event_requested && strcmp(r->event_requested, "default") != 0 &&
        strcmp(r->event_requested, r->event) != 0)
        fprintf(out, " (requested %s)", r->event_requested);
    fprintf(out, ", %" PRId64 " samples (%" PRId64 " dropped)\n", r->samples, r->samples_dropped);
    lb_print_sampling(p, out);
    lb_print_accounting(p, out);
    fprintf(out, "threads:  %" PRId64 ", duration %.3f s", r->threads ? r->threads : p->nthreads,
            r->duration_s);
    if (*r->exit_reason)
        fprintf(out, ", ended by %s", r->exit_reason);
    fputc('\n', out);
    fprintf(out, "effort:   %.3f s = work %.3f s + idleness %.3f s (idleness %.1f%% of effort)\n",
            t->effort, t->work, t->idleness, 100 * lb_share(t->idleness, t->effort));
    lb_print_conservation(p, out);
    lb_print_tree_notes(p, out);
    if (t->structural_join > 0 || t->structural_parked > 0 || t->structural_helper > 0 ||
        t->structural_open > 0) {
        char parts[160];
        lb_structural_parts_text(parts, sizeof parts, t->structural_join, t->structural_parked,
                                 t->structural_helper);
        fprintf(out,
                "structural: %.3f s%s%s (blame, reported apart); still parked at exit %.3f s"
                " (unattributed)\n",
                t->structural_join + t->structural_parked + t->structural_helper,
                *parts ? " = " : "", parts, t->structural_open);
    }
    lb_print_cut_paths(p, out);
    if (p->names_note)
        fprintf(out, "names:    %s\n", p->names_note);
    if (t->unseen_notable) {
        char text[512];
        lb_unseen_text(text, sizeof text, t->unseen, t->lifetime, t->wait);
        fprintf(out, "unseen:   %s (--by-thread: each thread's)\n", text);
    }
    fputc('\n', out);
}

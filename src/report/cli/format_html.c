/*
 * format_html.c - `report --format html`: one self-contained page with no
 * network fetches. It holds the run header, flame graphs (icicles) of
 * idleness blame and of work side by side, and the release-site, lock and
 * thread tables printed by their views as HTML tables.
 *
 * The flame data is the CCT itself: per metric, exclusive values from
 * lb_node_exclusive and inclusive ones from lb_node_inclusive, one entry
 * per node in preorder ([parent, name, inclusive, exclusive]). Nodes under
 * FLAME_MIN of the metric's total are left out (they would be under a pixel
 * wide), so a 1M-node profile still gives a page a browser opens. The page's
 * script (html/flame.js, embedded by html_assets.c) merges sibling contexts
 * with the same function name and draws the frames.
 *
 * Symbol names, file names and the command line are untrusted input: HTML
 * text goes through lb_html_text, and the JSON inside <script> escapes
 * < > & and U+2028/U+2029 as \uXXXX, so no name can close the script
 * element or open a comment.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/unseen.h"
#include "report/cli/accounting.h"
#include "report/cli/html_timeline.h"
#include "report/cli/views.h"
#include "report/cli/whatif.h"

#define FLAME_MIN 0.0005 /* of the metric's total */

/* Embedded by html_assets.c from src/report/cli/html/. */
extern const char lb_html_css[];
extern const char lb_html_js[];

void lb_html_text(FILE *out, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        switch (c) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        case '\t':
        case '\n':
            putc(c, out);
            break;
        default:
            if (c == 0xe2 && (unsigned char)s[1] == 0x80 &&
                ((unsigned char)s[2] == 0xa8 || (unsigned char)s[2] == 0xa9)) {
                fprintf(out, "&#x%x;", 0x2028 + ((unsigned char)s[2] - 0xa8));
                s += 2;
            } else if (c < 0x20 || c == 0x7f)
                fputs("&#xfffd;", out);
            else
                putc(c, out);
        }
    }
}

/* "file:line", or the module, or "" for one frame. */
static void frame_where(struct lb_profile *p, int32_t f, struct lb_buf *b)
{
    lb_buf_reset(b);
    if (f < 0)
        return;
    if (p->frames[f].file)
        lb_buf_printf(b, "%s:%" PRId64, p->frames[f].file, p->frames[f].line);
    else
        lb_buf_puts(b, lb_frame_module(p, f));
}

/* One flame graph's data: {"metric", "total", "nodes": [[parent, name,
 * inclusive, exclusive], ...]}. Names index the page's shared name table,
 * built in `names`/`name_of` (per frame; -1 = not yet named). */
static void flame_json(struct lb_profile *p, enum lb_metric m, int32_t *name_of, int32_t *nnames,
                       int32_t *name_frames, FILE *out)
{
    size_t nn = (size_t)p->nnodes + 1;
    double *excl = lb_xmalloc(nn * sizeof *excl), *incl = lb_xmalloc(nn * sizeof *incl);
    int32_t *idx = lb_xmalloc(nn * sizeof *idx), n = 0;
    double total = lb_metric_total(p, m);
    double floor_v = fabs(total) * FLAME_MIN;

    lb_node_exclusive(p, m, excl);
    lb_node_inclusive(p, excl, incl);
    fprintf(out, "{\"metric\": \"%s\", \"total\": ", lb_metric_names[m]);
    lb_json_number(out, total);
    fputs(", \"nodes\": [", out);
    for (int32_t i = 0; i < p->npreorder; i++) {
        int32_t v = p->preorder[i], par = p->nodes[v].parent, f = p->nodes[v].frame;
        int32_t name = -1;

        idx[v] = -1;
        if (v != p->root) {
            if (par < 0 || idx[par] < 0 || incl[v] <= 0 || incl[v] < floor_v)
                continue;
            if (f >= 0) {
                if (name_of[f] < 0) {
                    name_of[f] = *nnames;
                    name_frames[(*nnames)++] = f;
                }
                name = name_of[f];
            }
        }
        idx[v] = n++;
        fprintf(out, "%s[%d, %d, ", n > 1 ? ",\n" : "\n", v == p->root ? -1 : idx[par], name);
        lb_json_number(out, incl[v]);
        fputs(", ", out);
        lb_json_number(out, excl[v]);
        putc(']', out);
    }
    fputs("]}", out);
    free(idx);
    free(incl);
    free(excl);
}

static void print_data(struct lb_profile *p, FILE *out)
{
    int32_t *name_of = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *name_of);
    int32_t *name_frames = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *name_frames);
    int32_t nnames = 0;
    struct lb_buf b = { 0 };

    for (int32_t f = 0; f < p->nframes; f++)
        name_of[f] = -1;
    fputs("<script id=\"lb-data\" type=\"application/json\">{\"effort\": ", out);
    lb_json_number(out, p->totals.effort);
    fputs(",\n\"idleness\": ", out);
    flame_json(p, LB_M_IDLENESS, name_of, &nnames, name_frames, out);
    fputs(",\n\"work\": ", out);
    flame_json(p, LB_M_WORK, name_of, &nnames, name_frames, out);
    /* names: [function label, "file:line" or module] */
    fputs(",\n\"names\": [", out);
    for (int32_t i = 0; i < nnames; i++) {
        fputs(i ? ",\n[" : "\n[", out);
        lb_json_script_string(out, lb_frame_label(p, name_frames[i]));
        fputs(", ", out);
        frame_where(p, name_frames[i], &b);
        lb_json_script_string(out, lb_buf_str(&b));
        putc(']', out);
    }
    fputs("]}</script>\n", out);
    lb_buf_free(&b);
    free(name_frames);
    free(name_of);
}

static void header_row(FILE *out, const char *key, const char *text)
{
    fputs("<tr><th>", out);
    lb_html_text(out, key);
    fputs("</th><td>", out);
    lb_html_text(out, text);
    fputs("</td></tr>\n", out);
}

/* The run header: what lb_print_header shows above the tables. */
static void print_header(struct lb_profile *p, FILE *out)
{
    const struct lb_run *r = &p->run;
    const struct lb_totals *t = &p->totals;
    struct lb_buf b = { 0 };

    fputs("<table class=\"run\">\n", out);
    header_row(out, "database", p->path);
    header_row(out, "command", *r->command ? r->command : "(unknown)");
    lb_buf_puts(&b, *r->event ? r->event : "(unknown)");
    if (r->period)
        lb_buf_printf(&b, " every %" PRId64 " %s", r->period,
                      *r->period_unit ? r->period_unit : "events");
    if (*r->event_requested && strcmp(r->event_requested, "default") != 0 &&
        strcmp(r->event_requested, r->event) != 0)
        lb_buf_printf(&b, " (requested %s)", r->event_requested);
    lb_buf_printf(&b, ", %" PRId64 " samples (%" PRId64 " dropped)", r->samples,
                  r->samples_dropped);
    header_row(out, "event", lb_buf_str(&b));
    lb_buf_reset(&b);
    lb_buf_printf(&b, "%" PRId64 ", duration %.3f s", r->threads ? r->threads : p->nthreads,
                  r->duration_s);
    if (*r->exit_reason)
        lb_buf_printf(&b, ", ended by %s", r->exit_reason);
    header_row(out, "threads", lb_buf_str(&b));
    lb_buf_reset(&b);
    lb_buf_printf(&b, "%.3f s = work %.3f s + idleness %.3f s (idleness %.1f%% of effort)",
                  t->effort, t->work, t->idleness, 100 * lb_share(t->idleness, t->effort));
    header_row(out, "effort", lb_buf_str(&b));
    lb_buf_reset(&b);
    lb_buf_printf(&b,
                  "%.3f s = blame %.3f s + hand-off latency %.3f s + unattributed %.3f s"
                  " (measured by the waiters: %.3f s)",
                  t->sync_blame + t->sync_handoff + t->sync_unattributed, t->sync_blame,
                  t->sync_handoff, t->sync_unattributed, t->sync_wait);
    header_row(out, "wait", lb_buf_str(&b));
    struct lb_accounting a;
    if (lb_accounting_of(p, &a)) {
        lb_buf_reset(&b);
        lb_accounting_text(&a, &b);
        header_row(out, "accounting", lb_buf_str(&b));
        const char *warning = lb_accounting_warning(&a);
        if (warning)
            header_row(out, "warning", warning);
    }
    if (t->unseen_notable) {
        char text[512];
        lb_unseen_text(text, sizeof text, t->unseen, t->lifetime, t->wait);
        header_row(out, "unseen", text);
    }
    lb_buf_reset(&b);
    if (lb_waiters_hint(p, &b))
        header_row(out, "waiters", lb_buf_str(&b));
    fputs("</table>\n", out);
    lb_buf_free(&b);
}

static void flame_panel(FILE *out, const char *metric, const char *title, double total,
                        double effort)
{
    fprintf(out,
            "<div class=\"panel\" id=\"panel-%s\">\n<h2>%s <span class=\"sub\">"
            "%.3f s, %.1f%% of effort</span></h2>\n"
            "<div class=\"crumbs\" id=\"crumbs-%s\"></div>\n"
            "<div class=\"flame\" id=\"flame-%s\" data-metric=\"%s\"></div>\n"
            "<div class=\"info\" id=\"info-%s\">&nbsp;</div>\n</div>\n",
            metric, title, total, 100 * lb_share(total, effort), metric, metric, metric, metric);
}

static void table_section(struct lb_profile *p, const struct lb_report_opts *o, enum lb_view v,
                          const char *id, const char *title, const char *note)
{
    struct lb_report_opts so = *o;

    so.view = v;
    so.metric = LB_M_IDLENESS;
    so.format = LB_FMT_HTML;
    so.n = -1;
    printf("<section id=\"%s\">\n<h2>%s</h2>\n<p class=\"note\">%s</p>\n", id, title, note);
    fflush(stdout);
    switch (v) {
    case LB_V_LOCK:
        lb_view_locks(p, &so);
        break;
    case LB_V_THREAD:
        lb_view_threads(p, &so);
        break;
    default:
        lb_view_release_sites(p, &so);
        break;
    }
    fputs("</section>\n", stdout);
}

int lb_view_html(struct lb_profile *p, const struct lb_report_opts *o)
{
    FILE *out = stdout;

    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
          "<title>lockblame: ",
          out);
    lb_html_text(out, *p->run.command ? p->run.command : p->path);
    fputs("</title>\n<style>\n", out);
    fputs(lb_html_css, out);
    fputs("</style>\n</head>\n<body>\n<h1>lockblame report</h1>\n", out);
    print_header(p, out);
    lb_html_timeline(o->db, out);
    fputs("<p class=\"note\">Flame graphs (icicles: callers above callees). Idleness is "
          "blame received by the release, signal or post site that made threads wait; work "
          "is sampled CPU time. Click a frame to zoom in, click the top bar to zoom out; "
          "hover for seconds and shares. Contexts under 0.05% of a graph's total are "
          "left out.</p>\n<div class=\"flames\">\n",
          out);
    flame_panel(out, "idleness", "Idleness blame", p->totals.idleness, p->totals.effort);
    flame_panel(out, "work", "Work (CPU samples)", p->totals.work, p->totals.effort);
    fputs("</div>\n<noscript><p class=\"note\">The flame graphs need JavaScript; the tables "
          "below do not.</p></noscript>\n",
          out);
    table_section(p, o, LB_V_RELEASE_SITE, "sites", "Release sites",
                  "Blame by the release/signal/post site that caused it, with the callers "
                  "of its heaviest calling context (as <code>--by-release-site</code>).");
    table_section(p, o, LB_V_LOCK, "locks", "Contended objects",
                  "Per sync object: waits, blame, hand-off latency and its top holders' "
                  "release sites (as <code>--by-lock</code>).");
    table_section(p, o, LB_V_THREAD, "threads", "Threads",
                  "Work, idleness blamed on each thread, its own waiting and overhead "
                  "(as <code>--by-thread</code>).");
    fflush(stdout);
    lb_whatif_html(p->path, out);
    print_data(p, out);
    fputs("<script>\n", out);
    fputs(lb_html_js, out);
    fputs("</script>\n</body>\n</html>\n", out);
    return LB_EXIT_OK;
}

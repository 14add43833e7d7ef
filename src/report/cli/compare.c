/*
 * compare.c - `lockblame compare A.db B.db [C.db ...]`: where a run spends
 * effort beyond the first one (scaling loss, thesis ch. 7.2.1).
 *
 * Calling contexts are matched across runs by their frame path, each frame
 * keyed by function + file + line (module basename + offset when the
 * function is unknown); node ids and addresses are never compared. A
 * context's effort is its exclusive work + idleness summed over threads;
 * excess = effort(B) - effort(A), split into excess work and idleness, and
 * share = excess / the sum of the positive excesses.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/commands.h"
#include "report/cli/views.h"

static const char compare_usage[] =
	"usage: lockblame compare [--format table|csv|json] [--by-function] [-n N] A.db B.db [C.db ...]\n"
	"\n"
	"Compare runs of the same program (for example with 4 and 16 workers).\n"
	"For each calling context, matched by its path of frames (function, file,\n"
	"line), effort = work + idleness summed over threads; excess_s is the effort\n"
	"in B beyond A, split into excess work and excess idleness, and share is its\n"
	"part of all positive excess. With three or more runs, each is compared with\n"
	"the first: a scaling table, then the contexts whose excess grows.\n"
	"\n"
	"options:\n"
	"  --format F     table (default), csv or json (an array of rows)\n"
	"  --by-function  one row per function (innermost frame) instead of per context\n"
	"  -n N           table rows to show (default 20)\n"
	"  -h, --help     this help\n";

struct ctx {			/* a calling context (or a function), merged over runs */
	int32_t parent;		/* ctx index, -1 at the top */
	int32_t run, frame;	/* where its labels come from */
};

struct cmp {
	int nruns;
	struct lb_profile **runs;
	struct lb_strtab keys;	/* frame keys across runs */
	struct lb_map map;	/* (parent + 1) << 32 | key -> ctx */
	struct ctx *ctx;
	int32_t nctx;
	size_t cap;
	double **work, **idle;	/* [run][ctx] */
};

static int32_t ctx_get(struct cmp *c, int32_t parent, int32_t key, int run, int32_t frame)
{
	bool is_new;
	int32_t *slot = lb_map_slot(&c->map, (uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)key, &is_new);

	if (!is_new)
		return *slot;
	lb_grow((void **)&c->ctx, &c->cap, (size_t)c->nctx + 1, sizeof *c->ctx);
	*slot = c->nctx;
	c->ctx[c->nctx] = (struct ctx){ .parent = parent, .run = run, .frame = frame };
	return c->nctx++;
}

/* Map every node of run r to a ctx (by path, or by innermost function) and
 * return the mapping. */
static int32_t *map_run(struct cmp *c, int r, bool by_function)
{
	struct lb_profile *p = c->runs[r];
	int32_t *node_ctx = lb_xmalloc(((size_t)p->nnodes + 1) * sizeof *node_ctx);
	int32_t *fkey = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *fkey);
	struct lb_buf b = { 0 };

	for (int32_t f = 0; f < p->nframes; f++) {
		lb_buf_reset(&b);
		if (by_function)
			lb_frame_proc_key(p, f, &b);
		else
			lb_frame_key(p, f, &b);
		fkey[f] = lb_strtab_intern(&c->keys, lb_buf_str(&b));
	}
	for (int32_t i = 0; i < p->nnodes; i++)
		node_ctx[i] = -1;
	for (int32_t i = 0; i < p->npreorder; i++) {
		int32_t v = p->preorder[i], f = p->nodes[v].frame;

		if (v == p->root || f < 0) {
			node_ctx[v] = v == p->root ? -1 : node_ctx[p->nodes[v].parent];
			continue;
		}
		int32_t parent = by_function ? -1 : node_ctx[p->nodes[v].parent];

		node_ctx[v] = ctx_get(c, parent, fkey[f], r, f);
	}
	lb_buf_free(&b);
	free(fkey);
	return node_ctx;
}

static void accumulate(struct cmp *c, bool by_function)
{
	int32_t **maps = lb_xmalloc((size_t)c->nruns * sizeof *maps);

	for (int r = 0; r < c->nruns; r++)
		maps[r] = map_run(c, r, by_function);
	c->work = lb_xmalloc((size_t)c->nruns * sizeof *c->work);
	c->idle = lb_xmalloc((size_t)c->nruns * sizeof *c->idle);
	for (int r = 0; r < c->nruns; r++) {
		const struct lb_profile *p = c->runs[r];

		c->work[r] = lb_xcalloc((size_t)c->nctx + 1, sizeof **c->work);
		c->idle[r] = lb_xcalloc((size_t)c->nctx + 1, sizeof **c->idle);
		for (int32_t i = 0; i < p->nmrows; i++) {
			const struct lb_mrow *m = &p->mrows[i];
			int32_t x = maps[r][m->node];

			if (x < 0)
				x = c->nctx;	/* metrics at the root: kept in the totals slot */
			c->work[r][x] += m->work;
			c->idle[r][x] += lb_mrow_idleness(m);
		}
		free(maps[r]);
	}
	free(maps);
}

/* The frame path of a context, root to leaf, as "f1;f2;f3". */
static void ctx_path(struct cmp *c, int32_t x, struct lb_buf *b)
{
	int32_t chain[512], n = 0;

	for (int32_t y = x; y >= 0 && n < 512; y = c->ctx[y].parent)
		chain[n++] = y;
	for (int32_t i = n - 1; i >= 0; i--) {
		const struct ctx *k = &c->ctx[chain[i]];

		if (i != n - 1)
			lb_buf_putc(b, ';');
		lb_buf_puts(b, lb_frame_label(c->runs[k->run], k->frame));
	}
}

enum {
	C_EXCESS, C_SHARE, C_A, C_B, C_EXWORK, C_EXIDLE, C_EXCESS_BY_RUN, C_GROWS, C_LABEL,
	C_FUNCTION, C_FILE, C_LINE, C_MODULE, C_CONTEXT, C_VALUES, C_NCOLS
};

static struct lb_col cmp_cols[C_NCOLS] = {
	[C_EXCESS] = { "excess_s", "Excess s", LB_C_SEC, 0 },
	[C_SHARE] = { "share", "Share", LB_C_FRAC, 0 },
	[C_A] = { "a_s", "A s", LB_C_SEC, 0 },
	[C_B] = { "b_s", "B s", LB_C_SEC, 0 },
	[C_EXWORK] = { "excess_work_s", "Ex work", LB_C_SEC, 0 },
	[C_EXIDLE] = { "excess_idleness_s", "Ex idle", LB_C_SEC, 0 },
	[C_GROWS] = { "grows", "Grows", LB_C_BOOL, LB_COL_NOTABLE },
	[C_LABEL] = { "label", "Context (innermost frame; callers below)", LB_C_STR,
		      LB_COL_LABEL | LB_COL_TABLEONLY },
	[C_FUNCTION] = { "function", "", LB_C_STR, LB_COL_NOTABLE },
	[C_FILE] = { "file", "", LB_C_STR, LB_COL_NOTABLE },
	[C_LINE] = { "line", "", LB_C_INT, LB_COL_NOTABLE },
	[C_MODULE] = { "module", "", LB_C_STR, LB_COL_NOTABLE },
	[C_CONTEXT] = { "context", "", LB_C_STR, LB_COL_NOTABLE },
	[C_VALUES] = { "values_s", "Effort per run", LB_C_NUMLIST, LB_COL_NOTABLE },
	[C_EXCESS_BY_RUN] = { "excess_by_run_s", "Excess per run", LB_C_NUMLIST, LB_COL_NOTABLE },
};

static const double *sort_key;

static int cmp_desc(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	if (sort_key[x] != sort_key[y])
		return sort_key[x] < sort_key[y] ? 1 : -1;
	return x - y;
}

static void print_scaling(struct cmp *c, enum lb_format fmt)
{
	if (fmt != LB_FMT_TABLE)
		return;
	printf("%-4s %-28s %7s %10s %10s %10s %10s %7s\n", "Run", "Database", "Threads",
	       "Duration s", "Effort s", "Work s", "Idle s", "Idle%");
	for (int r = 0; r < c->nruns; r++) {
		const struct lb_profile *p = c->runs[r];
		const struct lb_totals *t = &p->totals;

		printf("%-4c %-28.28s %7" PRId64 " %10.3f %10.3f %10.3f %10.3f %6.1f%%\n", 'A' + (r < 26 ? r : 25),
		       lb_basename(p->path), p->run.threads ? p->run.threads : p->nthreads,
		       p->run.duration_s, t->effort, t->work, t->idleness,
		       100 * lb_share(t->idleness, t->effort));
	}
	putchar('\n');
}

int lb_cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "by-function", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int fmt = LB_FMT_TABLE, limit = 20, opt;
	bool by_function = false;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":hn:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(compare_usage, stdout);
			return LB_EXIT_OK;
		case 'f':
			fmt = lb_format_parse(optarg);
			if (fmt < 0 || fmt == LB_FMT_FOLDED || fmt == LB_FMT_HTML || fmt == LB_FMT_PPROF)
				lb_die(LB_EXIT_USAGE, "compare: unknown format '%s' (table, csv, json)", optarg);
			break;
		case 'F':
			by_function = true;
			break;
		case 'n': {
			char *end;

			limit = (int)strtol(optarg, &end, 10);
			if (!*optarg || *end || limit < 0)
				lb_die(LB_EXIT_USAGE, "compare: -n wants a number >= 0, not '%s'", optarg);
			break;
		}
		default:
			lb_bad_option("compare", opt == ':' ? ':' : optopt, argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		lb_die(LB_EXIT_USAGE, "compare: needs two or more databases (lockblame compare A.db B.db)");
	struct cmp c = { .nruns = argc - optind };

	c.runs = lb_xmalloc((size_t)c.nruns * sizeof *c.runs);
	for (int r = 0; r < c.nruns; r++)
		c.runs[r] = lb_profile_load(argv[optind + r]);
	accumulate(&c, by_function);

	int last = c.nruns - 1;
	double *excess = lb_xmalloc(((size_t)c.nctx + 1) * sizeof *excess), pos = 0;
	int32_t *order = lb_xmalloc(((size_t)c.nctx + 1) * sizeof *order), n = 0;

	for (int32_t x = 0; x < c.nctx; x++) {
		bool any = false;

		for (int r = 0; r < c.nruns; r++)
			any |= c.work[r][x] != 0 || c.idle[r][x] != 0;
		excess[x] = (c.work[last][x] + c.idle[last][x]) - (c.work[0][x] + c.idle[0][x]);
		if (excess[x] > 0)
			pos += excess[x];
		if (any)
			order[n++] = x;
	}
	sort_key = excess;
	qsort(order, (size_t)n, sizeof *order, cmp_desc);

	cmp_cols[C_A].title = c.nruns > 2 ? "First s" : "A s";
	cmp_cols[C_B].title = c.nruns > 2 ? "Last s" : "B s";
	cmp_cols[C_EXCESS_BY_RUN].flags = c.nruns > 2 ? 0 : LB_COL_NOTABLE;
	cmp_cols[C_LABEL].title = by_function ? "Function" : "Context (innermost frame; callers below)";
	struct lb_table *t = lb_table_new(cmp_cols, C_NCOLS);
	static const int col_order[] = { C_FUNCTION, C_FILE, C_LINE, C_A, C_B, C_EXCESS, C_SHARE,
					 C_EXWORK, C_EXIDLE, C_MODULE, C_CONTEXT, C_GROWS, C_VALUES };

	lb_table_order(t, col_order, (int)(sizeof col_order / sizeof *col_order));
	struct lb_buf b = { 0 };
	int shown = 0;

	for (int32_t i = 0; i < n; i++) {
		int32_t x = order[i];
		bool grows = true;
		double prev = 0;

		for (int r = 1; r < c.nruns; r++) {
			double e = (c.work[r][x] + c.idle[r][x]) - (c.work[0][x] + c.idle[0][x]);

			grows &= e >= prev && e > 0;
			prev = e;
		}
		if (fmt == LB_FMT_TABLE && (shown >= limit || (c.nruns > 2 && !grows)))
			continue;
		shown++;
		const struct ctx *k = &c.ctx[x];
		struct lb_profile *p = c.runs[k->run];
		int row = lb_table_add_row(t);

		lb_table_num(t, row, C_EXCESS, excess[x]);
		lb_table_num(t, row, C_SHARE, lb_share(excess[x], pos));
		lb_table_num(t, row, C_A, c.work[0][x] + c.idle[0][x]);
		lb_table_num(t, row, C_B, c.work[last][x] + c.idle[last][x]);
		lb_table_num(t, row, C_EXWORK, c.work[last][x] - c.work[0][x]);
		lb_table_num(t, row, C_EXIDLE, c.idle[last][x] - c.idle[0][x]);
		lb_table_bool(t, row, C_GROWS, grows);
		lb_table_str(t, row, C_FUNCTION, lb_frame_label(p, k->frame));
		lb_table_str(t, row, C_FILE, p->frames[k->frame].file);
		lb_table_int(t, row, C_LINE, by_function ? 0 : p->frames[k->frame].line);
		lb_table_str(t, row, C_MODULE, lb_frame_module(p, k->frame));
		lb_buf_reset(&b);
		if (by_function)
			lb_buf_puts(&b, lb_frame_label(p, k->frame));
		else
			ctx_path(&c, x, &b);
		lb_table_str(t, row, C_CONTEXT, lb_buf_str(&b));
		for (int r = 0; r < c.nruns; r++)
			lb_table_numlist_add(t, row, C_VALUES, c.work[r][x] + c.idle[r][x]);
		for (int r = 1; r < c.nruns; r++)
			lb_table_numlist_add(t, row, C_EXCESS_BY_RUN,
					     (c.work[r][x] + c.idle[r][x]) - (c.work[0][x] + c.idle[0][x]));
		lb_buf_reset(&b);
		if (by_function)
			lb_buf_printf(&b, "%s%s%s", lb_frame_label(p, k->frame),
				      *lb_frame_module(p, k->frame) ? " in " : "", lb_frame_module(p, k->frame));
		else
			lb_frame_describe(p, k->frame, &b);
		lb_table_str(t, row, C_LABEL, lb_buf_str(&b));
		for (int32_t y = k->parent, d = 0; !by_function && y >= 0 && d < 3; y = c.ctx[y].parent, d++) {
			lb_buf_reset(&b);
			lb_buf_puts(&b, "<- ");
			lb_frame_describe(c.runs[c.ctx[y].run], c.ctx[y].frame, &b);
			lb_table_detail(t, row, lb_buf_str(&b));
		}
	}
	if (fmt == LB_FMT_TABLE) {
		print_scaling(&c, (enum lb_format)fmt);
		double ea = c.runs[0]->totals.effort, eb = c.runs[last]->totals.effort;

		printf("excess effort: %.3f s (%s %.3f s -> %s %.3f s), positive excess %.3f s\n",
		       eb - ea, lb_basename(c.runs[0]->path), ea, lb_basename(c.runs[last]->path), eb, pos);
		if (c.nruns > 2)
			printf("contexts whose excess over the first run grows with each run:\n");
		putchar('\n');
		if (!shown)
			printf("(no context with excess)\n");
		else
			lb_table_print(t, LB_FMT_TABLE, stdout);
	} else {
		lb_table_print(t, (enum lb_format)fmt, stdout);
	}
	lb_table_free(t);
	lb_buf_free(&b);
	for (int r = 0; r < c.nruns; r++) {
		free(c.work[r]);
		free(c.idle[r]);
		lb_profile_free(c.runs[r]);
	}
	free(c.work);
	free(c.idle);
	free(c.runs);
	free(c.ctx);
	free(excess);
	free(order);
	lb_map_free(&c.map);
	lb_strtab_free(&c.keys);
	if (fflush(stdout) != 0 || ferror(stdout))
		lb_die(LB_EXIT_FAIL, "compare: cannot write the output");
	return LB_EXIT_OK;
}

/*
 * views_locks.c - `report --by-lock`: one row per contended sync object
 * (address not NULL), where it was first seen, its counts and times, and
 * the three release contexts (grouped by frame) that took most of its blame.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

enum {
	C_KIND, C_ADDRESS, C_ACQ, C_CONT, C_CONT_SHARE, C_WAIT, C_BLAME, C_HANDOFF, C_UNATTR,
	C_FIRST, C_ID, C_FIRST_FUNCTION, C_FIRST_FILE, C_FIRST_LINE, C_HOLDERS, C_NCOLS
};

static const struct lb_col lock_cols[C_NCOLS] = {
	[C_KIND] = { "object", "Kind", LB_C_STR, 0 },
	[C_ADDRESS] = { "address", "Address", LB_C_STR, 0 },
	[C_ACQ] = { "acquisitions", "Acq", LB_C_INT, 0 },
	[C_CONT] = { "contended", "Contended", LB_C_INT, LB_COL_NOTABLE },
	[C_CONT_SHARE] = { "contended_share", "Cont%", LB_C_FRAC, 0 },
	[C_WAIT] = { "wait_s", "Wait s", LB_C_SEC, 0 },
	[C_BLAME] = { "blame_s", "Blame s", LB_C_SEC, 0 },
	[C_HANDOFF] = { "handoff_s", "Handoff", LB_C_SEC, 0 },
	[C_UNATTR] = { "unattributed_s", "Unattr", LB_C_SEC, 0 },
	[C_FIRST] = { "first_seen", "First seen at (holders below)", LB_C_STR, LB_COL_LABEL },
	[C_ID] = { "id", "Id", LB_C_INT, LB_COL_NOTABLE },
	[C_FIRST_FUNCTION] = { "first_function", "", LB_C_STR, LB_COL_NOTABLE },
	[C_FIRST_FILE] = { "first_file", "", LB_C_STR, LB_COL_NOTABLE },
	[C_FIRST_LINE] = { "first_line", "", LB_C_INT, LB_COL_NOTABLE },
	[C_HOLDERS] = { "holders", "", LB_C_LIST, LB_COL_NOTABLE },
};

struct holder {
	int32_t object;	/* syncobj index */
	int32_t frame;	/* representative frame of the release site */
	double blame;
	int64_t count;
};

static int cmp_holders(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;

	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	if (x->blame != y->blame)
		return x->blame < y->blame ? 1 : -1;
	return x->frame - y->frame;
}

static const struct lb_profile *sort_profile;

static int cmp_objs(const void *a, const void *b)
{
	const struct lb_syncobj *x = &sort_profile->objs[*(const int32_t *)a];
	const struct lb_syncobj *y = &sort_profile->objs[*(const int32_t *)b];

	if (x->wait_s != y->wait_s)
		return x->wait_s < y->wait_s ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* object_blame grouped by (object, release frame key); sorted by object,
 * then blame descending. *first[obj] is the first entry of each object. */
static struct holder *group_holders(struct lb_profile *p, int32_t *nout, int32_t **first)
{
	struct lb_strtab tab = { 0 };
	int32_t *keys = lb_frame_key_ids(p, &tab);
	struct lb_map map = { 0 };
	struct holder *h = NULL;
	int32_t n = 0;
	size_t cap = 0;

	for (int32_t i = 0; i < p->noblame; i++) {
		const struct lb_objblame *ob = &p->oblame[i];
		int32_t f = p->nodes[lb_site_node(p, ob->node)].frame;	/* the program's frame */
		uint64_t key = (uint64_t)ob->object << 32 | (uint32_t)(f >= 0 ? keys[f] : INT32_MAX);
		bool is_new;
		int32_t *slot = lb_map_slot(&map, key, &is_new);

		if (is_new) {
			lb_grow((void **)&h, &cap, (size_t)n + 1, sizeof *h);
			*slot = n;
			h[n++] = (struct holder){ .object = ob->object, .frame = f };
		}
		h[*slot].blame += ob->blame_s;
		h[*slot].count += ob->count;
	}
	qsort(h, (size_t)n, sizeof *h, cmp_holders);
	*first = lb_xmalloc(((size_t)p->nobjs + 1) * sizeof **first);
	memset(*first, 0xff, ((size_t)p->nobjs + 1) * sizeof **first);
	for (int32_t i = n - 1; i >= 0; i--)
		(*first)[h[i].object] = i;
	*nout = n;
	free(keys);
	lb_map_free(&map);
	lb_strtab_free(&tab);
	return h;
}

int lb_view_locks(struct lb_profile *p, const struct lb_report_opts *o)
{
	int32_t nh, *first, *order = lb_xmalloc(((size_t)p->nobjs + 1) * sizeof *order), n = 0;
	struct holder *h = group_holders(p, &nh, &first);
	struct lb_table *t = lb_table_new(lock_cols, C_NCOLS);
	struct lb_buf b = { 0 };
	static const int col_order[] = { C_ID, C_KIND, C_ADDRESS };

	lb_table_order(t, col_order, 3);

	for (int32_t i = 0; i < p->nobjs; i++)
		if (p->objs[i].has_address)
			order[n++] = i;
	sort_profile = p;
	qsort(order, (size_t)n, sizeof *order, cmp_objs);
	if (o->n >= 0 && n > o->n)
		n = o->n;
	for (int32_t i = 0; i < n; i++) {
		const struct lb_syncobj *ob = &p->objs[order[i]];
		int row = lb_table_add_row(t);
		int32_t f = ob->first_node >= 0 ? p->nodes[lb_site_node(p, ob->first_node)].frame : -1;

		lb_table_int(t, row, C_ID, ob->id);
		lb_table_str(t, row, C_KIND, ob->kind >= 0 ? lb_obj_kind_names[ob->kind] : "?");
		lb_buf_reset(&b);
		lb_buf_printf(&b, "0x%" PRIx64, ob->address);
		lb_table_str(t, row, C_ADDRESS, lb_buf_str(&b));
		lb_table_int(t, row, C_ACQ, ob->acquisitions);
		lb_table_int(t, row, C_CONT, ob->contended);
		lb_table_num(t, row, C_CONT_SHARE, lb_share((double)ob->contended, (double)ob->acquisitions));
		lb_table_num(t, row, C_WAIT, ob->wait_s);
		lb_table_num(t, row, C_BLAME, ob->blame_s);
		lb_table_num(t, row, C_HANDOFF, ob->handoff_s);
		lb_table_num(t, row, C_UNATTR, ob->unattributed_s);
		if (ob->first_node >= 0) {
			lb_buf_reset(&b);
			lb_frame_describe(p, f, &b);
			lb_table_str(t, row, C_FIRST, lb_buf_str(&b));
			lb_table_str(t, row, C_FIRST_FUNCTION, lb_frame_label(p, f));
			lb_table_str(t, row, C_FIRST_FILE, f >= 0 ? p->frames[f].file : NULL);
			lb_table_int(t, row, C_FIRST_LINE, f >= 0 ? p->frames[f].line : 0);
		} else {
			lb_table_str(t, row, C_FIRST, "(unknown)");
		}
		for (int32_t j = first[order[i]], k = 0; j >= 0 && j < nh && h[j].object == order[i] && k < 3; j++, k++) {
			lb_buf_reset(&b);
			lb_frame_describe(p, h[j].frame, &b);
			lb_buf_printf(&b, ": %.6g s in %" PRId64 " releases", h[j].blame, h[j].count);
			lb_table_list_add(t, row, C_HOLDERS, lb_buf_str(&b));
			lb_buf_reset(&b);
			lb_buf_printf(&b, "holder %.3f s (%.1f%%) x%" PRId64 "  ", h[j].blame,
				      100 * lb_share(h[j].blame, ob->blame_s), h[j].count);
			lb_frame_describe(p, h[j].frame, &b);
			lb_table_detail(t, row, lb_buf_str(&b));
		}
	}
	if (o->format == LB_FMT_TABLE) {
		lb_print_header(p, o, stdout);
		if (!n)
			printf("(no contended objects recorded)\n");
		else
			lb_table_print(t, o->format, stdout);
	} else {
		lb_table_print(t, o->format, stdout);
	}
	lb_table_free(t);
	lb_buf_free(&b);
	free(order);
	free(first);
	free(h);
	return LB_EXIT_OK;
}

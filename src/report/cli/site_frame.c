/*
 * site_frame.c - which frame of a path is the release site (DESIGN.md
 * rule 5): the innermost frame of the program's own code. Inline frames
 * from system headers (gthr-default.h, std::lock_guard, std::mutex) and
 * frames in the C/C++ runtime libraries are not the site; they stay in
 * the call path, below it.
 */
#include <string.h>

#include "report/cli/profile.h"

/* Source files of the C/C++ runtime: installed headers. */
static bool runtime_file(const char *file)
{
	return strncmp(file, "/usr/include/", 13) == 0 || strncmp(file, "/usr/lib/gcc/", 13) == 0 ||
	       strstr(file, "/include/c++/") != NULL;
}

/* Runtime libraries, by module base name. */
static bool runtime_module(const char *base)
{
	static const char *const prefixes[] = { "libc.so", "libc-", "libpthread", "libstdc++",
						"libgcc_s", "ld-linux", "libc++", "libm.so",
						"liblockblame" };

	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

bool lb_frame_is_runtime(const struct lb_profile *p, int32_t frame)
{
	if (frame < 0)
		return false;
	const struct lb_frame *f = &p->frames[frame];

	if (f->file && runtime_file(f->file))
		return true;
	return runtime_module(lb_frame_module(p, frame));
}

/* The writer stores the source frames of one address with consecutive
 * ids, outermost (the real function) first. */
int32_t lb_frame_program(const struct lb_profile *p, int32_t frame)
{
	int32_t f = frame;

	while (f > 0 && lb_frame_is_runtime(p, f)) {
		const struct lb_frame *a = &p->frames[f], *b = &p->frames[f - 1];

		if (b->id != a->id - 1 || b->module != a->module || b->offset != a->offset)
			return frame;
		f--;
	}
	return lb_frame_is_runtime(p, f) ? frame : f;
}

int32_t lb_site_node(const struct lb_profile *p, int32_t node)
{
	for (int32_t v = node; v >= 0 && v != p->root; v = p->nodes[v].parent)
		if (!lb_frame_is_runtime(p, p->nodes[v].frame))
			return v;
	return node;
}

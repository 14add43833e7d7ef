/*
 * symbols.c - frame labels for display and keys for matching: C++ names
 * and Rust names demangled (common/demangle.h), unknown functions shown
 * as module+0xOFFSET, grouped by module ("[module]") in by-function
 * views, and absolute source paths shortened for display. gcc's clones
 * (NAME.constprop.N, .isra.N, .part.N, .cold) are shown and matched as NAME
 * (docs/DESIGN.md rule 5); the frame table keeps the raw symbol.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clone_name.h"
#include "common/demangle.h"
#include "report/cli/profile.h"

/* From the C++ ABI (libstdc++/libsupc++); declared here so that the CLI
 * stays a C program and its link keeps libstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *lb_demangle(const char *name)
{
    char *d = lb_demangle_dup_with(name, __cxa_demangle);
    return d ? d : lb_xstrdup(name);
}

/* The function's name with gcc clone suffixes folded (malloc'd). */
static char *folded_name(const char *name)
{
    size_t n = lb_clone_base_len(name);
    char *s = lb_xmalloc(n + 1);

    memcpy(s, name, n);
    s[n] = '\0';
    return s;
}

const char *lb_frame_module(const struct lb_profile *p, int32_t frame)
{
    if (frame < 0 || p->frames[frame].module < 0)
        return "";
    return p->modules[p->frames[frame].module].base_name;
}

void lb_put_module_bracketed(struct lb_buf *out, const char *module)
{
    if (module[0] == '[')
        lb_buf_puts(out, module);
    else
        lb_buf_printf(out, "[%s]", module);
}

const char *lb_frame_label(struct lb_profile *p, int32_t frame)
{
    if (frame < 0)
        return p->root_label ? p->root_label : "[root]";
    struct lb_frame *f = &p->frames[frame];

    if (f->label)
        return f->label;
    if (f->function) {
        char *base = folded_name(f->function);

        f->label = lb_demangle(base);
        free(base);
    } else {
        struct lb_buf b = { 0 };
        const char *mod = lb_frame_module(p, frame);

        lb_buf_printf(&b, "%s+0x%" PRIx64, *mod ? mod : "[unknown]", f->offset);
        f->label = b.s;
    }
    return f->label;
}

void lb_put_short_path(struct lb_buf *out, const char *path)
{
    static char cwd[4096];
    static size_t cwd_len = (size_t)-1;

    if (!path || path[0] != '/') {
        lb_buf_puts(out, path ? path : "");
        return;
    }
    if (cwd_len == (size_t)-1)
        cwd_len = getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") != 0 ? strlen(cwd) : 0;
    if (cwd_len && strncmp(path, cwd, cwd_len) == 0 && path[cwd_len] == '/') {
        lb_buf_puts(out, path + cwd_len + 1);
        return;
    }
    /* elsewhere: the last two components, directory and file */
    const char *prev = strrchr(path, '/');

    while (prev > path && prev[-1] != '/')
        prev--;
    if (prev > path + 1) {
        lb_buf_puts(out, ".../");
        lb_buf_puts(out, prev);
    } else {
        lb_buf_puts(out, path);
    }
}

void lb_put_frame_file(struct lb_buf *out, const struct lb_profile *p, int32_t frame, bool line)
{
    if (frame < 0 || !p->frames[frame].file)
        return;
    lb_buf_puts(out, " (");
    lb_put_short_path(out, p->frames[frame].file);
    if (line)
        lb_buf_printf(out, ":%" PRId64, p->frames[frame].line);
    lb_buf_putc(out, ')');
}

void lb_frame_describe(struct lb_profile *p, int32_t frame, struct lb_buf *out)
{
    lb_buf_puts(out, lb_frame_label(p, frame));
    lb_put_frame_file(out, p, frame, true);
}

const char *lb_frame_desc(struct lb_profile *p, int32_t frame)
{
    if (frame < 0)
        return lb_frame_label(p, frame);
    if (!p->frames[frame].desc) {
        struct lb_buf b = { 0 };

        lb_frame_describe(p, frame, &b);
        p->frames[frame].desc = b.s ? b.s : lb_xstrdup("");
    }
    return p->frames[frame].desc;
}

void lb_frame_key(struct lb_profile *p, int32_t frame, struct lb_buf *out)
{
    if (frame < 0) {
        lb_buf_puts(out, "[root]");
        return;
    }
    const struct lb_frame *f = &p->frames[frame];

    if (f->function)
        lb_buf_printf(out, "%.*s\t%s\t%" PRId64, (int)lb_clone_base_len(f->function), f->function,
                      f->file ? f->file : "", f->line);
    else
        lb_buf_puts(out, lb_frame_label(p, frame));
}

const char *lb_frame_proc_label(struct lb_profile *p, int32_t frame)
{
    if (frame < 0 || p->frames[frame].function)
        return lb_frame_label(p, frame);
    struct lb_frame *f = &p->frames[frame];

    if (!f->proc_label) {
        struct lb_buf b = { 0 };
        const char *mod = lb_frame_module(p, frame);

        lb_put_module_bracketed(&b, *mod ? mod : "unknown");
        f->proc_label = b.s;
    }
    return f->proc_label;
}

void lb_frame_proc_key(struct lb_profile *p, int32_t frame, struct lb_buf *out)
{
    lb_buf_printf(out, "%s\t%s", lb_frame_proc_label(p, frame), lb_frame_module(p, frame));
}

/* gcc clone names (docs/DESIGN.md rule 5): NAME.constprop.N, NAME.isra.N,
 * NAME.part.N, NAME.cold (and chains such as NAME.isra.0.cold) are the
 * source function NAME. Reports fold them; the frame table keeps the raw
 * symbol. Header-only: used by the CLI and by unit tests. */
#ifndef LB_CLONE_NAME_H
#define LB_CLONE_NAME_H
#include <stddef.h>
#include <string.h>

/* Length of one clone suffix component at s (which starts at a dot), or 0:
 * ".constprop.N", ".isra.N", ".part.N", ".cold[.N]", ".localalias",
 * ".lto_priv.N". */
static inline size_t lb_clone_suffix_len(const char *s)
{
    static const char *const kinds[] = { "constprop", "isra",       "part",
                                         "cold",      "localalias", "lto_priv" };
    if (*s != '.')
        return 0;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(s + 1, kinds[i], n) != 0)
            continue;
        const char *e = s + 1 + n;
        if (*e == '.' && e[1] >= '0' && e[1] <= '9')
            for (e++; *e >= '0' && *e <= '9'; e++)
                ;
        if (*e == '\0' || *e == '.')
            return (size_t)(e - s);
    }
    return 0;
}

/* Length of name without its clone suffixes: "f.isra.0.cold" -> 1; the
 * whole length when it has none ("f.c" stays "f.c"). */
static inline size_t lb_clone_base_len(const char *name)
{
    for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
        const char *e = dot;
        size_t n;
        while ((n = lb_clone_suffix_len(e)) > 0)
            e += n;
        if (*e == '\0' && e != dot)
            return (size_t)(dot - name);
    }
    return strlen(name);
}
#endif

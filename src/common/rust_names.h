/* Rust symbol names, as rustc mangles them: which ones are the standard
 * library's (std, core, alloc: runtime frames, never a release site,
 * docs/DESIGN.md rule 5), and the hash that legacy-mangled names end in.
 * Header-only; depends on nothing. */
#ifndef LB_COMMON_RUST_NAMES_H
#define LB_COMMON_RUST_NAMES_H
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether the identifier of n bytes at s is std, core or alloc. */
static inline bool lb_rust_std_crate(const char *s, size_t n)
{
    return (n == 3 && strncmp(s, "std", 3) == 0) || (n == 4 && strncmp(s, "core", 4) == 0) ||
           (n == 5 && strncmp(s, "alloc", 5) == 0);
}

/* The crate of a v0-mangled symbol ("_R..."): the first crate root of its
 * path, past the nesting (N and its namespace tag), impl (M, X, with
 * their disambiguator) and generic-argument (I) prefixes; it names the
 * crate that defines the function or its impl. Its identifier in *crate
 * and *len; false if the name does not start that way. */
static inline bool lb_rust_v0_crate(const char *sym, const char **crate, size_t *len)
{
    const char *p = sym + 2;
    for (;;) {
        if (*p == 'N' && p[1]) {
            p += 2; /* N and its namespace tag */
        } else if (*p == 'M' || *p == 'X') {
            p++;
            if (*p == 's') /* disambiguator: s <base-62> _ */
                while (*p && *p++ != '_')
                    ;
        } else if (*p == 'I') {
            p++;
        } else {
            break;
        }
    }
    if (*p++ != 'C')
        return false;
    if (*p == 's')
        while (*p && *p++ != '_')
            ;
    if (!isdigit((unsigned char)*p))
        return false;
    char *end;
    unsigned long n = strtoul(p, &end, 10);
    if (*end == '_') /* (an identifier that starts with a digit) */
        end++;
    if (strnlen(end, n) < n)
        return false;
    *crate = end;
    *len = n;
    return true;
}

/* A symbol of Rust's standard library: legacy-mangled ("_ZN3std...",
 * "_ZN4core...", "_ZN5alloc...", an impl "_ZN<n>_$LT$std.."), v0-mangled
 * (its crate std, core or alloc) or already demangled ("std::...",
 * "<core::... as ...>"). */
static inline bool lb_rust_std_symbol(const char *name)
{
    if (strncmp(name, "_ZN", 3) == 0) {
        const char *p = name + 3;
        char *end;
        unsigned long n = strtoul(p, &end, 10);
        if (end == p)
            return false;
        if (strncmp(end, "_$LT$", 5) == 0) { /* <Type as Trait>: the type's crate */
            const char *c = end + 5;
            size_t k = strcspn(c, ".$");
            return strncmp(c + k, "..", 2) == 0 && lb_rust_std_crate(c, k);
        }
        return lb_rust_std_crate(end, n);
    }
    const char *crate;
    size_t len;
    if (strncmp(name, "_R", 2) == 0)
        return lb_rust_v0_crate(name, &crate, &len) && lb_rust_std_crate(crate, len);
    if (*name == '<')
        name++;
    size_t k = strcspn(name, ":");
    return strncmp(name + k, "::", 2) == 0 && lb_rust_std_crate(name, k);
}

/* The length of a demangled legacy Rust name without the hash it ends
 * in ("gt::slow_holder::h0123456789abcdef" -> "gt::slow_holder"); the
 * whole length for any other name. */
static inline size_t lb_rust_hash_len(const char *name)
{
    size_t n = strlen(name);
    if (n < 19 || strncmp(name + n - 19, "::h", 3) != 0)
        return n;
    for (size_t i = n - 16; i < n; i++)
        if (!isxdigit((unsigned char)name[i]))
            return n;
    return n - 19;
}
/* Rust's legacy escapes in a demangled name, undone in place:
 * "_$LT$std..sync..Mutex$LT$T$GT$" -> "<std::sync::Mutex<T>",
 * "_$u7b$$u7b$closure$u7d$$u7d$" -> "{{closure}}". */
static inline void lb_rust_unescape(char *name)
{
    static const struct {
        const char *from;
        char to;
    } escapes[] = { { "$LT$", '<' },  { "$GT$", '>' },   { "$RF$", '&' },  { "$BP$", '*' },
                    { "$C$", ',' },   { "$SP$", '@' },   { "$LP$", '(' },  { "$RP$", ')' },
                    { "$u20$", ' ' }, { "$u27$", '\'' }, { "$u5b$", '[' }, { "$u5d$", ']' },
                    { "$u7b$", '{' }, { "$u7d$", '}' },  { "$u7e$", '~' }, { "$u3b$", ';' },
                    { "$u2b$", '+' }, { "$u22$", '"' } };
    const size_t n = sizeof escapes / sizeof *escapes;
    char *out = name;
    const char *p = name;
    bool segment_start = true; /* a segment that starts with an escape has a '_' before it */
    while (*p) {
        if (segment_start && p[0] == '_' && p[1] == '$')
            p++;
        segment_start = false;
        if ((p[0] == '.' && p[1] == '.') || (p[0] == ':' && p[1] == ':')) {
            *out++ = ':';
            *out++ = ':';
            p += 2;
            segment_start = true;
            continue;
        }
        size_t i = 0;
        while (*p == '$' && i < n && strncmp(p, escapes[i].from, strlen(escapes[i].from)) != 0)
            i++;
        if (*p == '$' && i < n) {
            *out++ = escapes[i].to;
            p += strlen(escapes[i].from);
            continue;
        }
        *out++ = *p++;
    }
    *out = '\0';
}

/* A legacy-mangled Rust name ("_ZN", length-prefixed segments, the last
 * one its hash "h<16 hex digits>", "E"), demangled into out without the
 * hash and with its escapes undone. False for any other name (C++'s), or
 * if out is too small; out is then garbage. */
static inline bool lb_rust_legacy_demangle(const char *sym, char *out, size_t size)
{
    if (strncmp(sym, "_ZN", 3) != 0)
        return false;
    const char *p = sym + 3;
    size_t len = 0;
    while (isdigit((unsigned char)*p)) {
        char *end;
        unsigned long k = strtoul(p, &end, 10);
        if (strnlen(end, k) < k || len + k + 3 > size)
            return false;
        if (len)
            out[len++] = ':', out[len++] = ':';
        memcpy(out + len, end, k);
        len += k;
        p = end + k;
    }
    if (*p != 'E' || p[1] != '\0' || len == 0)
        return false;
    out[len] = '\0';
    size_t named = lb_rust_hash_len(out);
    if (named == len) /* no hash: a C++ name */
        return false;
    out[named] = '\0';
    lb_rust_unescape(out);
    return true;
}
#endif

/* rust_v0.c - see rust_v0.h. A recursive-descent reader of the v0 grammar
 * (rustc's symbol-mangling RFC 2603): paths (crate roots, nested paths,
 * inherent and trait impls, generic arguments), types, consts and
 * backreferences, printed as it reads. Backreferences may only point
 * backwards and the nesting is bounded, so a malformed name ends in
 * false, never in a loop or a deep recursion. */
#include "common/rust_v0.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
    V0_MAX_DEPTH = 256
};

struct v0_reader {
    const char *sym; /* past "_R": backreferences count from here */
    size_t len, pos;
    char *out;
    size_t size, used;
    unsigned depth;
    unsigned quiet; /* > 0: parse without printing (impl paths) */
    bool ok;
};

static void v0_print_n(struct v0_reader *r, const char *s, size_t n)
{
    if (r->quiet || !r->ok)
        return;
    if (r->used + n >= r->size) {
        r->ok = false;
        return;
    }
    memcpy(r->out + r->used, s, n);
    r->used += n;
}

static void v0_print(struct v0_reader *r, const char *s)
{
    v0_print_n(r, s, strlen(s));
}

static void v0_print_u64(struct v0_reader *r, uint64_t value)
{
    char digits[24];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
    v0_print(r, digits);
}

static char v0_peek(const struct v0_reader *r)
{
    return r->ok && r->pos < r->len ? r->sym[r->pos] : '\0';
}

static bool v0_eat(struct v0_reader *r, char c)
{
    if (v0_peek(r) != c || c == '\0')
        return false;
    r->pos++;
    return true;
}

static char v0_next(struct v0_reader *r)
{
    char c = v0_peek(r);
    if (c == '\0')
        r->ok = false;
    else
        r->pos++;
    return c;
}

/* <base-62-number>: "_" is 0, digits then "_" are their value plus 1. */
static uint64_t v0_base62(struct v0_reader *r)
{
    if (v0_eat(r, '_'))
        return 0;
    uint64_t value = 0;
    for (;;) {
        char c = v0_next(r);
        if (c == '_')
            return value + 1;
        int digit = isdigit((unsigned char)c)   ? c - '0'
                    : islower((unsigned char)c) ? 10 + c - 'a'
                    : isupper((unsigned char)c) ? 36 + c - 'A'
                                                : -1;
        if (digit < 0 || value > (UINT64_MAX - 61) / 62) {
            r->ok = false;
            return 0;
        }
        value = value * 62 + (uint64_t)digit;
    }
}

/* [<disambiguator>]: "s" <base-62-number>, its value plus 1; 0 if absent. */
static uint64_t v0_disambiguator(struct v0_reader *r)
{
    return v0_eat(r, 's') ? v0_base62(r) + 1 : 0;
}

static uint64_t v0_decimal(struct v0_reader *r)
{
    if (!isdigit((unsigned char)v0_peek(r))) {
        r->ok = false;
        return 0;
    }
    if (v0_eat(r, '0')) /* "0" is a number of its own: "00" is two */
        return 0;
    uint64_t value = 0;
    while (isdigit((unsigned char)v0_peek(r))) {
        if (value > UINT64_MAX / 10 - 9) {
            r->ok = false;
            return 0;
        }
        value = value * 10 + (uint64_t)(v0_next(r) - '0');
    }
    return value;
}

struct v0_ident {
    const char *bytes;
    size_t len;
    bool punycode;
};

/* <undisambiguated-identifier>: ["u"] <decimal> ["_"] <bytes>. */
static struct v0_ident v0_identifier(struct v0_reader *r)
{
    struct v0_ident id = { "", 0, v0_eat(r, 'u') };
    uint64_t n = v0_decimal(r);
    v0_eat(r, '_');
    if (!r->ok || n > r->len - r->pos) {
        r->ok = false;
        return id;
    }
    id.bytes = r->sym + r->pos;
    id.len = (size_t)n;
    r->pos += (size_t)n;
    return id;
}

static void v0_print_ident(struct v0_reader *r, struct v0_ident id)
{
    if (id.punycode)
        v0_print(r, "punycode{");
    v0_print_n(r, id.bytes, id.len);
    if (id.punycode)
        v0_print(r, "}");
}

static void v0_path(struct v0_reader *r, bool in_value);
static void v0_type(struct v0_reader *r);

/* Follows a "B" backreference: parses what it points at with fn, then
 * goes on after it. */
static void v0_backref(struct v0_reader *r, void (*fn)(struct v0_reader *, bool), bool arg)
{
    size_t at = r->pos - 1; /* the 'B' */
    uint64_t target = v0_base62(r);
    if (!r->ok || target >= at || r->depth >= V0_MAX_DEPTH) {
        r->ok = false;
        return;
    }
    size_t resume = r->pos;
    r->pos = (size_t)target;
    fn(r, arg);
    r->pos = resume;
}

static void v0_type_arg(struct v0_reader *r, bool unused)
{
    (void)unused;
    v0_type(r);
}

/* A basic type's name, or NULL for a letter that is not one. */
static const char *v0_basic_type(char c)
{
    switch (c) {
    case 'a':
        return "i8";
    case 'b':
        return "bool";
    case 'c':
        return "char";
    case 'd':
        return "f64";
    case 'e':
        return "str";
    case 'f':
        return "f32";
    case 'h':
        return "u8";
    case 'i':
        return "isize";
    case 'j':
        return "usize";
    case 'l':
        return "i32";
    case 'm':
        return "u32";
    case 'n':
        return "i128";
    case 'o':
        return "u128";
    case 's':
        return "i16";
    case 't':
        return "u16";
    case 'u':
        return "()";
    case 'v':
        return "...";
    case 'x':
        return "i64";
    case 'y':
        return "u64";
    case 'z':
        return "!";
    case 'p':
        return "_";
    default:
        return NULL;
    }
}

static void v0_lifetime(struct v0_reader *r)
{
    v0_base62(r);
    v0_print(r, "'_");
}

/* <const>: "p" (a placeholder), a backreference, or a basic type and its
 * value in hex digits ("n" first when negative) ended by "_". */
static void v0_const(struct v0_reader *r, bool unused)
{
    (void)unused;
    if (v0_eat(r, 'p')) {
        v0_print(r, "_");
        return;
    }
    if (v0_eat(r, 'B')) {
        v0_backref(r, v0_const, false);
        return;
    }
    char type = v0_next(r);
    if (!v0_basic_type(type) || type == 'e' || type == 'p') {
        r->ok = false;
        return;
    }
    bool negative = v0_eat(r, 'n');
    uint64_t value = 0;
    unsigned digits = 0;
    while (isxdigit((unsigned char)v0_peek(r))) {
        char c = v0_next(r);
        if (++digits > 16) {
            r->ok = false;
            return;
        }
        value =
            value * 16 + (uint64_t)(isdigit((unsigned char)c) ? c - '0' : tolower(c) - 'a' + 10);
    }
    if (!v0_eat(r, '_')) {
        r->ok = false;
        return;
    }
    if (type == 'b') {
        v0_print(r, value ? "true" : "false");
    } else if (type == 'c' && value >= 0x20 && value < 0x7f) {
        char quoted[4] = { '\'', (char)value, '\'', '\0' };
        v0_print(r, quoted);
    } else {
        if (negative)
            v0_print(r, "-");
        v0_print_u64(r, value);
    }
}

/* <generic-arg>s up to "E", printed between < and >. */
static void v0_generic_args(struct v0_reader *r)
{
    v0_print(r, "<");
    for (bool first = true; r->ok && !v0_eat(r, 'E'); first = false) {
        if (!first)
            v0_print(r, ", ");
        if (v0_eat(r, 'L'))
            v0_lifetime(r);
        else if (v0_eat(r, 'K'))
            v0_const(r, false);
        else
            v0_type(r);
    }
    v0_print(r, ">");
}

/* <fn-sig>: [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type>. */
static void v0_fn_sig(struct v0_reader *r)
{
    if (v0_eat(r, 'G'))
        v0_base62(r);
    if (v0_eat(r, 'U'))
        v0_print(r, "unsafe ");
    if (v0_eat(r, 'K')) {
        v0_print(r, "extern \"");
        if (v0_eat(r, 'C')) {
            v0_print(r, "C");
        } else {
            struct v0_ident abi = v0_identifier(r);
            for (size_t i = 0; i < abi.len; i++)
                v0_print_n(r, abi.bytes[i] == '_' ? "-" : abi.bytes + i, 1);
        }
        v0_print(r, "\" ");
    }
    v0_print(r, "fn(");
    for (bool first = true; r->ok && !v0_eat(r, 'E'); first = false) {
        if (!first)
            v0_print(r, ", ");
        v0_type(r);
    }
    v0_print(r, ")");
    if (v0_eat(r, 'u'))
        return; /* returns () */
    v0_print(r, " -> ");
    v0_type(r);
}

/* <dyn-bounds> <lifetime>: "dyn Trait<Assoc = T> + Other". */
static void v0_dyn_bounds(struct v0_reader *r)
{
    if (v0_eat(r, 'G'))
        v0_base62(r);
    v0_print(r, "dyn ");
    for (bool first = true; r->ok && !v0_eat(r, 'E'); first = false) {
        if (!first)
            v0_print(r, " + ");
        bool generic = v0_peek(r) == 'I';
        v0_path(r, false);
        for (bool first_binding = true; r->ok && v0_eat(r, 'p'); first_binding = false) {
            /* the bindings join the trait's own arguments: Fn<(), Output = ()> */
            if (first_binding && generic && !r->quiet && r->used && r->out[r->used - 1] == '>')
                r->used--, first_binding = false;
            v0_print(r, first_binding ? "<" : ", ");
            v0_print_ident(r, v0_identifier(r));
            v0_print(r, " = ");
            v0_type(r);
            if (v0_peek(r) != 'p')
                v0_print(r, ">");
        }
    }
    if (!v0_eat(r, 'L')) {
        r->ok = false;
        return;
    }
    v0_base62(r);
}

static void v0_type(struct v0_reader *r)
{
    if (++r->depth > V0_MAX_DEPTH) {
        r->ok = false;
        return;
    }
    char c = v0_peek(r);
    const char *basic = v0_basic_type(c);
    if (basic) {
        r->pos++;
        v0_print(r, basic);
    } else if (v0_eat(r, 'A') || v0_eat(r, 'S')) {
        bool array = r->sym[r->pos - 1] == 'A';
        v0_print(r, "[");
        v0_type(r);
        if (array) {
            v0_print(r, "; ");
            v0_const(r, false);
        }
        v0_print(r, "]");
    } else if (v0_eat(r, 'T')) {
        v0_print(r, "(");
        unsigned n = 0;
        for (; r->ok && !v0_eat(r, 'E'); n++) {
            if (n)
                v0_print(r, ", ");
            v0_type(r);
        }
        v0_print(r, n == 1 ? ",)" : ")");
    } else if (v0_eat(r, 'R') || v0_eat(r, 'Q')) {
        v0_print(r, r->sym[r->pos - 1] == 'R' ? "&" : "&mut ");
        if (v0_eat(r, 'L'))
            v0_base62(r); /* erased in what people read */
        v0_type(r);
    } else if (v0_eat(r, 'P') || v0_eat(r, 'O')) {
        v0_print(r, r->sym[r->pos - 1] == 'P' ? "*const " : "*mut ");
        v0_type(r);
    } else if (v0_eat(r, 'F')) {
        v0_fn_sig(r);
    } else if (v0_eat(r, 'D')) {
        v0_dyn_bounds(r);
    } else if (v0_eat(r, 'B')) {
        v0_backref(r, v0_type_arg, false);
    } else {
        v0_path(r, false);
    }
    r->depth--;
}

/* A nested path's last segment: "::name" in a value or type namespace
 * (lower-case tag), "::{closure#N}", "::{shim:name#N}" in a special one. */
static void v0_nested_segment(struct v0_reader *r, char ns, uint64_t dis, struct v0_ident id)
{
    if (islower((unsigned char)ns)) {
        if (id.len) {
            v0_print(r, "::");
            v0_print_ident(r, id);
        }
        return;
    }
    v0_print(r, "::{");
    if (ns == 'C')
        v0_print(r, "closure");
    else if (ns == 'S')
        v0_print(r, "shim");
    else
        v0_print_n(r, &ns, 1);
    if (id.len) {
        v0_print(r, ":");
        v0_print_ident(r, id);
    }
    v0_print(r, "#");
    v0_print_u64(r, dis);
    v0_print(r, "}");
}

/* An impl's own path (its parent module and disambiguator) is there for
 * uniqueness only: parsed, not printed. */
static void v0_impl_path(struct v0_reader *r)
{
    v0_disambiguator(r);
    r->quiet++;
    v0_path(r, false);
    r->quiet--;
}

static void v0_path(struct v0_reader *r, bool in_value)
{
    if (++r->depth > V0_MAX_DEPTH) {
        r->ok = false;
        return;
    }
    char c = v0_next(r);
    switch (c) {
    case 'C': /* crate root */
        v0_disambiguator(r);
        v0_print_ident(r, v0_identifier(r));
        break;
    case 'M': /* <Type> */
        v0_impl_path(r);
        v0_print(r, "<");
        v0_type(r);
        v0_print(r, ">");
        break;
    case 'X': /* <Type as Trait> */
        v0_impl_path(r);
        /* fall through */
    case 'Y':
        v0_print(r, "<");
        v0_type(r);
        v0_print(r, " as ");
        v0_path(r, false);
        v0_print(r, ">");
        break;
    case 'N': {
        char ns = v0_next(r);
        if (!isalpha((unsigned char)ns)) {
            r->ok = false;
            break;
        }
        v0_path(r, in_value);
        uint64_t dis = v0_disambiguator(r);
        v0_nested_segment(r, ns, dis, v0_identifier(r));
        break;
    }
    case 'I': /* path<args>, path::<args> in a value */
        v0_path(r, in_value);
        if (in_value)
            v0_print(r, "::");
        v0_generic_args(r);
        break;
    case 'B':
        v0_backref(r, v0_path, in_value);
        break;
    default:
        r->ok = false;
    }
    r->depth--;
}

bool lb_rust_v0_demangle(const char *sym, char *out, size_t size)
{
    if (size)
        out[0] = '\0';
    if (!sym || strncmp(sym, "_R", 2) != 0 || size == 0)
        return false;
    struct v0_reader r = { .sym = sym + 2, .out = out, .size = size, .ok = true };
    /* a vendor suffix (".llvm.123") ends the mangled part */
    r.len = strcspn(r.sym, ".$");
    if (isdigit((unsigned char)v0_peek(&r)))
        v0_decimal(&r); /* the encoding version */
    v0_path(&r, true);
    if (r.ok && r.pos < r.len) { /* the instantiating crate */
        r.quiet++;
        v0_path(&r, false);
        r.quiet--;
    }
    if (!r.ok || r.pos != r.len) {
        out[0] = '\0';
        return false;
    }
    out[r.used] = '\0';
    return true;
}

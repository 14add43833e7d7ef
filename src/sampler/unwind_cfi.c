/* Frame rules from .eh_frame (contract in unwind_cfi.h).
 *
 * Finding the FDE: _dl_find_object gives the object's PT_GNU_EH_FRAME
 * segment (.eh_frame_hdr), whose sorted table (initial location, FDE) is
 * binary-searched. Only the table encoding every linker writes
 * (DW_EH_PE_datarel | DW_EH_PE_sdata4) is read; another gives
 * LB_RULE_UNKNOWN. Then the CIE's initial instructions and the FDE's
 * instructions run up to the pc, tracking only the CFA, rbp and the
 * return-address column.
 *
 * The cache: LB_RULE_SLOTS words, slot = pc's low bits, the rest of the pc
 * as a tag in the high bits of the word, the rule packed below it. Rules
 * whose offsets do not fit the packing are recomputed on every look-up
 * (correct, slower). A page of the cache is written only from its
 * LB_RULE_FILL_AFTER-th miss in the process on: each first write of a page
 * is a page fault (in a fork child a copy of the parent's page and a TLB
 * flush), and a short process, a fork child above all, computes most of
 * its rules once or twice; a fork child starts counting afresh
 * (lb_unwind_cfi_fork_child). A page no rule was written to is not read
 * either: its bit in rule_counts.pages_written is clear, and a look-up
 * there is a miss without touching it (a first read of an untouched page
 * is a fault of its own, which maps the zero page: ~20 a compiler of
 * `make -j4`, for pages most of which the compiler wrote later anyway).
 * A fork child inherits the bits with the pages they name. A rule a fork
 * child computes where its cache held nothing is also offered to its
 * later siblings (rule_share.h): the parent imports such rules into empty
 * slots at its next fork (take_shared), and its later children inherit
 * them. Invariants: a word is written whole by one relaxed atomic store
 * and read whole by one relaxed atomic load; a page's miss count only
 * grows, by CAS, up to LB_RULE_FILL_AFTER (async-signal-
 * safe: the sampling handler looks rules up), except in the fork child's
 * reset, when the forking thread is the only thread; a page's written bit
 * is set (relaxed atomic OR) after a word of the page is stored, and never
 * cleared: a look-up that sees it clear, or sees it set before the word, is
 * a miss, which computes the rule again. */
#include "sampler/unwind_cfi.h"

#include <dlfcn.h>
#include <string.h>

#include "sampler/rule_share.h"
#include "util/common.h"
#include "util/fork_pages.h"

/* DWARF register numbers on x86-64. */
enum {
    DW_RBP = 6,
    DW_RSP = 7,
    DW_RA = 16
};

/* Pointer encodings (DW_EH_PE_*). */
enum {
    PE_ABSPTR = 0x00,
    PE_ULEB128 = 0x01,
    PE_UDATA2 = 0x02,
    PE_UDATA4 = 0x03,
    PE_UDATA8 = 0x04,
    PE_SLEB128 = 0x09,
    PE_SDATA2 = 0x0a,
    PE_SDATA4 = 0x0b,
    PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10,
    PE_DATAREL = 0x30,
    PE_INDIRECT = 0x80,
    PE_OMIT = 0xff,
};

/* How a tracked register is recovered. */
enum {
    HOW_SAME = 0,
    HOW_OFFSET = 1,
    HOW_UNDEF = 2,
    HOW_OTHER = 3,
    HOW_AT_RBP = 4 /* rbp only: saved at rbp + rbp_off (DW_OP_breg6) */
};

typedef struct cfa_state {
    int64_t cfa_off;
    uint8_t cfa_reg; /* DW_RSP or DW_RBP; anything else is unsupported */
    bool cfa_expr;   /* DW_CFA_def_cfa_expression seen (not understood) */
    bool cfa_deref;  /* the CFA is *(cfa_reg + cfa_off) (breg6 N; deref) */
    uint8_t rbp_how, ra_how;
    int64_t rbp_off, ra_off;
} cfa_state_t;

typedef struct cie_info {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    bool has_z;
    bool signal_frame;
    const uint8_t *insns, *insns_end;
} cie_info_t;

/* A bounded reader: running past `end` sets bad and yields zeros. */
typedef struct reader {
    const uint8_t *p, *end;
    bool bad;
} reader_t;

static uint8_t rd_u8(reader_t *r)
{
    if (r->p >= r->end) {
        r->bad = true;
        return 0;
    }
    return *r->p++;
}

static uint64_t rd_fixed(reader_t *r, unsigned bytes)
{
    if ((size_t)(r->end - r->p) < bytes) {
        r->bad = true;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, bytes); /* little-endian */
    r->p += bytes;
    return v;
}

static uint64_t rd_uleb(reader_t *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = rd_u8(r);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = true;
    return v;
}

static int64_t rd_sleb(reader_t *r)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = rd_u8(r);
        v |= (int64_t)(b & 0x7f) << shift;
        shift += 7;
    } while ((b & 0x80) && shift < 64);
    if (shift < 64 && (b & 0x40))
        v |= -((int64_t)1 << shift);
    return v;
}

/* A pointer in encoding enc. data_base: for DW_EH_PE_datarel (the
 * .eh_frame_hdr start). Indirect and other applications set bad. */
static uintptr_t rd_encoded(reader_t *r, uint8_t enc, uintptr_t data_base)
{
    uintptr_t field = (uintptr_t)r->p;
    uint64_t v;
    switch (enc & 0x0f) {
    case PE_ABSPTR:
        v = rd_fixed(r, 8);
        break;
    case PE_ULEB128:
        v = rd_uleb(r);
        break;
    case PE_UDATA2:
        v = rd_fixed(r, 2);
        break;
    case PE_UDATA4:
        v = rd_fixed(r, 4);
        break;
    case PE_UDATA8:
        v = rd_fixed(r, 8);
        break;
    case PE_SLEB128:
        v = (uint64_t)rd_sleb(r);
        break;
    case PE_SDATA2:
        v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2);
        break;
    case PE_SDATA4:
        v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4);
        break;
    case PE_SDATA8:
        v = rd_fixed(r, 8);
        break;
    default:
        r->bad = true;
        return 0;
    }
    switch (enc & 0x70) {
    case 0:
        break;
    case PE_PCREL:
        v += field;
        break;
    case PE_DATAREL:
        v += data_base;
        break;
    default:
        r->bad = true;
        return 0;
    }
    if (enc & PE_INDIRECT)
        r->bad = true; /* never used for FDE addresses; not worth a read */
    return (uintptr_t)v;
}

/* Parse the CIE at cie (its length word). */
static bool parse_cie(const uint8_t *cie, cie_info_t *out)
{
    uint32_t len;
    memcpy(&len, cie, 4);
    if (len == 0 || len == 0xffffffffu)
        return false;
    reader_t r = { cie + 4, cie + 4 + len, false };
    if (rd_fixed(&r, 4) != 0) /* CIE id */
        return false;
    uint8_t version = rd_u8(&r);
    if (version != 1 && version != 3)
        return false;
    const char *aug = (const char *)r.p;
    size_t aug_len = strnlen(aug, (size_t)(r.end - r.p));
    r.p += aug_len + 1;
    out->code_align = rd_uleb(&r);
    out->data_align = rd_sleb(&r);
    out->ra_reg = version == 1 ? rd_u8(&r) : rd_uleb(&r);
    out->fde_enc = PE_ABSPTR;
    out->has_z = aug[0] == 'z';
    out->signal_frame = false;
    if (out->has_z) {
        uint64_t zlen = rd_uleb(&r);
        const uint8_t *zend = r.p + zlen;
        for (size_t i = 1; i < aug_len && !r.bad; i++) {
            switch (aug[i]) {
            case 'R':
                out->fde_enc = rd_u8(&r);
                break;
            case 'L':
                (void)rd_u8(&r);
                break;
            case 'P': {
                uint8_t penc = rd_u8(&r);
                (void)rd_encoded(&r, penc & (uint8_t)~PE_INDIRECT, 0);
                break;
            }
            case 'S':
                out->signal_frame = true;
                break;
            default:
                r.p = zend;
                i = aug_len;
                break; /* unknown: skip the rest */
            }
        }
        if (zend > r.end)
            return false;
        r.p = zend;
    } else if (aug_len != 0) {
        return false; /* e.g. "eh": a layout we do not know */
    }
    out->insns = r.p;
    out->insns_end = r.end;
    return !r.bad;
}

#define LB_CFA_STACK 4 /* DW_CFA_remember_state depth (gcc nests 1-2) */

typedef struct cfa_program {
    const cie_info_t *cie;
    uintptr_t loc;       /* address the current row starts at */
    uintptr_t target;    /* stop once a row starts after this */
    cfa_state_t initial; /* after the CIE, for DW_CFA_restore */
    cfa_state_t stack[LB_CFA_STACK];
    int depth;
} cfa_program_t;

static void set_reg(cfa_state_t *s, uint64_t reg, uint8_t how, int64_t off)
{
    if (reg == DW_RBP) {
        s->rbp_how = how;
        s->rbp_off = off;
    } else if (reg == DW_RA) {
        s->ra_how = how;
        s->ra_off = off;
    }
}

static void restore_reg(cfa_state_t *s, const cfa_state_t *init, uint64_t reg)
{
    if (reg == DW_RBP) {
        s->rbp_how = init->rbp_how;
        s->rbp_off = init->rbp_off;
    } else if (reg == DW_RA) {
        s->ra_how = init->ra_how;
        s->ra_off = init->ra_off;
    }
}

/* The CFA expression ld writes for .plt entries: rsp + 8, plus 8 once
 * the stub has pushed its index, i.e. from byte k of each 16-byte entry
 * (k = 11; 10 in the IBT layout). Returns k, or 0 for any other
 * expression. */
static int plt_expression(const uint8_t *e, uint64_t n)
{
    static const uint8_t plt[] = {
        0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
    };
    if (n != sizeof plt)
        return 0;
    for (size_t i = 0; i < sizeof plt; i++) {
        if (i == 6 && (e[i] == 0x3b || e[i] == 0x3a))
            continue; /* DW_OP_lit11 / DW_OP_lit10 */
        if (e[i] != plt[i])
            return 0;
    }
    return e[6] - 0x30;
}

/* A DWARF expression `DW_OP_breg6 (rbp) N`, optionally followed by
 * DW_OP_deref (want_deref): true with *off = N. */
static bool rbp_expression(const uint8_t *e, uint64_t n, bool want_deref, int64_t *off)
{
    reader_t r = { .p = e, .end = e + n };
    if (n < 2 || rd_u8(&r) != 0x76) /* DW_OP_breg6 */
        return false;
    *off = rd_sleb(&r);
    if (want_deref && (r.p >= r.end || rd_u8(&r) != 0x06)) /* DW_OP_deref */
        return false;
    return !r.bad && r.p == r.end;
}

/* Advance the row; false once the new row starts beyond the target. */
static bool advance(cfa_program_t *pg, uint64_t delta)
{
    pg->loc += delta * pg->cie->code_align;
    return pg->loc <= pg->target;
}

/* Run the instructions in [p, end) on *s. Returns false on anything not
 * understood (the rule is then unknown). */
static bool run_cfa(cfa_program_t *pg, const uint8_t *p, const uint8_t *end, cfa_state_t *s)
{
    reader_t r = { p, end, false };
    int64_t da = pg->cie->data_align;
    while (r.p < r.end && !r.bad) {
        uint8_t op = rd_u8(&r);
        uint8_t low = op & 0x3f;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            if (!advance(pg, low))
                return true;
            continue;
        case 2: /* DW_CFA_offset */
            set_reg(s, low, HOW_OFFSET, (int64_t)rd_uleb(&r) * da);
            continue;
        case 3: /* DW_CFA_restore */
            restore_reg(s, &pg->initial, low);
            continue;
        }
        switch (op) {
        case 0x00:
            break;   /* nop */
        case 0x01: { /* set_loc */
            uintptr_t to = rd_encoded(&r, pg->cie->fde_enc, 0);
            if (to > pg->target)
                return !r.bad;
            pg->loc = to;
            break;
        }
        case 0x02:
            if (!advance(pg, rd_fixed(&r, 1)))
                return !r.bad;
            break;
        case 0x03:
            if (!advance(pg, rd_fixed(&r, 2)))
                return !r.bad;
            break;
        case 0x04:
            if (!advance(pg, rd_fixed(&r, 4)))
                return !r.bad;
            break;
        case 0x05: { /* offset_extended */
            uint64_t reg = rd_uleb(&r);
            set_reg(s, reg, HOW_OFFSET, (int64_t)rd_uleb(&r) * da);
            break;
        }
        case 0x06:
            restore_reg(s, &pg->initial, rd_uleb(&r));
            break;
        case 0x07:
            set_reg(s, rd_uleb(&r), HOW_UNDEF, 0);
            break;
        case 0x08:
            set_reg(s, rd_uleb(&r), HOW_SAME, 0);
            break;
        case 0x09: { /* register: reg saved in another register */
            uint64_t reg = rd_uleb(&r);
            (void)rd_uleb(&r);
            set_reg(s, reg, HOW_OTHER, 0);
            break;
        }
        case 0x0a: /* remember_state */
            if (pg->depth == LB_CFA_STACK)
                return false;
            pg->stack[pg->depth++] = *s;
            break;
        case 0x0b: /* restore_state */
            if (pg->depth == 0)
                return false;
            *s = pg->stack[--pg->depth];
            break;
        case 0x0c: /* def_cfa */
            s->cfa_reg = (uint8_t)rd_uleb(&r);
            s->cfa_off = (int64_t)rd_uleb(&r);
            s->cfa_expr = s->cfa_deref = false;
            break;
        case 0x0d:
            s->cfa_reg = (uint8_t)rd_uleb(&r);
            s->cfa_expr = s->cfa_deref = false;
            break;
        case 0x0e:
            s->cfa_off = (int64_t)rd_uleb(&r);
            break;
        case 0x0f: { /* def_cfa_expression */
            uint64_t n = rd_uleb(&r);
            if (n > (uint64_t)(r.end - r.p))
                return false;
            int k = plt_expression(r.p, n);
            int64_t off;
            s->cfa_deref = rbp_expression(r.p, n, true, &off); /* a realigned frame's */
            r.p += n;
            s->cfa_expr = k == 0 && !s->cfa_deref;
            if (s->cfa_deref) {
                s->cfa_reg = DW_RBP;
                s->cfa_off = off;
            }
            if (k) { /* the lazy PLT stub's rule, evaluated at the target pc */
                s->cfa_reg = DW_RSP;
                s->cfa_off = 8 + ((pg->target & 15) >= (uintptr_t)k ? 8 : 0);
            }
            break;
        }
        case 0x10:
        case 0x16: { /* expression, val_expression */
            uint64_t reg = rd_uleb(&r);
            uint64_t n = rd_uleb(&r);
            int64_t off;
            if (n > (uint64_t)(r.end - r.p))
                return false;
            if (op == 0x10 && reg == DW_RBP && rbp_expression(r.p, n, false, &off))
                set_reg(s, reg, HOW_AT_RBP, off); /* a realigned frame's saved rbp */
            else
                set_reg(s, reg, HOW_OTHER, 0);
            r.p += n;
            break;
        }
        case 0x11: { /* offset_extended_sf */
            uint64_t reg = rd_uleb(&r);
            set_reg(s, reg, HOW_OFFSET, rd_sleb(&r) * da);
            break;
        }
        case 0x12: /* def_cfa_sf */
            s->cfa_reg = (uint8_t)rd_uleb(&r);
            s->cfa_off = rd_sleb(&r) * da;
            s->cfa_expr = s->cfa_deref = false;
            break;
        case 0x13:
            s->cfa_off = rd_sleb(&r) * da;
            break; /* def_cfa_offset_sf */
        case 0x14:
        case 0x15: { /* val_offset(_sf): a value, not a slot */
            uint64_t reg = rd_uleb(&r);
            if (op == 0x14)
                (void)rd_uleb(&r);
            else
                (void)rd_sleb(&r);
            set_reg(s, reg, HOW_OTHER, 0);
            break;
        }
        case 0x2e:
            (void)rd_uleb(&r);
            break;   /* GNU_args_size */
        case 0x2f: { /* GNU_negative_offset_extended */
            uint64_t reg = rd_uleb(&r);
            set_reg(s, reg, HOW_OFFSET, -(int64_t)rd_uleb(&r) * da);
            break;
        }
        default:
            return false;
        }
    }
    return !r.bad;
}

/* The FDE covering pc in the object whose .eh_frame_hdr is hdr; NULL if
 * none or the table has an encoding we do not read. */
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t pc)
{
    if (hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4))
        return NULL;
    reader_t r = { hdr + 4, hdr + 4 + 16, false };
    if (hdr[1] == PE_OMIT)
        return NULL;
    (void)rd_encoded(&r, hdr[1], (uintptr_t)hdr);
    if (hdr[2] == PE_OMIT)
        return NULL;
    uint64_t count = rd_encoded(&r, hdr[2], (uintptr_t)hdr);
    if (r.bad || count == 0)
        return NULL;
    const int32_t *table = (const int32_t *)r.p;
    intptr_t want = (intptr_t)(pc - (uintptr_t)hdr);
    if (want < table[0])
        return NULL;
    uint64_t lo = 0, hi = count; /* table[2*lo] <= want < table[2*hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (table[2 * mid] <= want)
            lo = mid;
        else
            hi = mid;
    }
    return hdr + table[2 * lo + 1];
}

/* The rule at pc; *dlfo: the object holding pc, if *in_object. */
static lb_frame_rule_t rule_compute(uintptr_t pc, struct dl_find_object *dlfo, bool *in_object)
{
    lb_frame_rule_t unknown = { .kind = LB_RULE_UNKNOWN };
    *in_object = _dl_find_object((void *)pc, dlfo) == 0;
    if (!*in_object || !dlfo->dlfo_eh_frame)
        return unknown;
    const uint8_t *fde = find_fde(dlfo->dlfo_eh_frame, pc);
    if (!fde)
        return unknown;
    uint32_t len;
    memcpy(&len, fde, 4);
    if (len == 0 || len == 0xffffffffu)
        return unknown;
    int32_t cie_delta;
    memcpy(&cie_delta, fde + 4, 4);
    cie_info_t cie;
    if (cie_delta <= 0 || !parse_cie(fde + 4 - cie_delta, &cie) || cie.ra_reg != DW_RA)
        return unknown;
    reader_t r = { fde + 8, fde + 4 + len, false };
    uintptr_t begin = rd_encoded(&r, cie.fde_enc, 0);
    uintptr_t range = rd_encoded(&r, cie.fde_enc & 0x0f, 0);
    if (r.bad || pc < begin || pc - begin >= range)
        return unknown;
    if (cie.signal_frame)
        return (lb_frame_rule_t){ .kind = LB_RULE_SIGNAL };
    if (cie.has_z) {
        uint64_t zlen = rd_uleb(&r);
        if (zlen > (uint64_t)(r.end - r.p))
            return unknown;
        r.p += zlen;
    }
    cfa_program_t pg = { .cie = &cie, .loc = begin, .target = pc };
    cfa_state_t s = { .cfa_reg = DW_RSP, .cfa_off = 8, .ra_how = HOW_SAME };
    /* The CIE's rows apply at every pc of the function. */
    uintptr_t saved_target = pg.target;
    pg.target = UINTPTR_MAX;
    if (!run_cfa(&pg, cie.insns, cie.insns_end, &s))
        return unknown;
    pg.target = saved_target;
    pg.loc = begin;
    pg.initial = s;
    if (!run_cfa(&pg, r.p, r.end, &s))
        return unknown;
    if (s.ra_how == HOW_UNDEF)
        return (lb_frame_rule_t){ .kind = LB_RULE_END };
    if (s.cfa_deref) /* a realigned frame: rbp saved where rbp points */
        return s.cfa_reg == DW_RBP && s.ra_how == HOW_OFFSET && s.ra_off == -8 &&
                       s.rbp_how == HOW_AT_RBP && s.rbp_off == 0 && s.cfa_off < 0 &&
                       s.cfa_off >= INT32_MIN
                   ? (lb_frame_rule_t){ .kind = LB_RULE_DEREF,
                                        .cfa_rbp = true,
                                        .cfa_off = (int32_t)s.cfa_off }
                   : unknown;
    if (s.cfa_expr || (s.cfa_reg != DW_RSP && s.cfa_reg != DW_RBP) || s.ra_how != HOW_OFFSET ||
        s.ra_off != -8 || s.rbp_how == HOW_OTHER || s.rbp_how == HOW_UNDEF ||
        s.rbp_how == HOW_AT_RBP || s.cfa_off < 8 || s.cfa_off > INT32_MAX ||
        s.rbp_off < INT32_MIN || s.rbp_off > 0)
        return unknown;
    return (lb_frame_rule_t){ .kind = LB_RULE_STEP,
                              .cfa_rbp = s.cfa_reg == DW_RBP,
                              .cfa_off = (int32_t)s.cfa_off,
                              .rbp_off = s.rbp_how == HOW_OFFSET ? (int32_t)s.rbp_off : 0 };
}

/* --- the cache ------------------------------------------------------------ */

#define LB_RULE_SLOT_BITS 14
#define LB_RULE_SLOTS     (1u << LB_RULE_SLOT_BITS)
/* word: tag (pc >> SLOT_BITS) in bits 31..63; bit 0 valid; bits 1-2 kind;
 * bit 3 cfa_rbp; bits 4-20 cfa_off / 8 (LB_RULE_DEREF: -cfa_off / 8); bits 21-30
 * -rbp_off / 8. */
#define TAG_SHIFT         31
#define CFA_BITS          17
#define RBP_BITS          10

#define LB_RULE_PAGE_SLOTS (4096u / sizeof(uint64_t))
#define LB_RULE_PAGES      (LB_RULE_SLOTS / LB_RULE_PAGE_SLOTS)
#define LB_RULE_FILL_AFTER 4 /* misses on a page before the page is written */

static uint64_t rule_cache[LB_RULE_SLOTS] __attribute__((aligned(4096)));
/* One line, written at each miss. */
static struct {
    uint64_t misses;
    uint32_t pages_written;             /* bit p: a rule was stored on page p */
    uint8_t page_misses[LB_RULE_PAGES]; /* up to LB_RULE_FILL_AFTER */
} rule_counts LB_FORK_WRITTEN;
_Static_assert(LB_RULE_PAGES <= 32, "one bit a page of the cache in pages_written");

static size_t page_of(const uint64_t *slot)
{
    return (size_t)(slot - rule_cache) / LB_RULE_PAGE_SLOTS;
}

/* The word in slot, or 0 where its page holds no rule yet (not read). */
static uint64_t slot_word(const uint64_t *slot)
{
    if (!(__atomic_load_n(&rule_counts.pages_written, __ATOMIC_RELAXED) & (1u << page_of(slot))))
        return 0;
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

static void store_rule(uint64_t *slot, uint64_t word)
{
    __atomic_store_n(slot, word, __ATOMIC_RELAXED);
    uint32_t bit = 1u << page_of(slot);
    if (!(__atomic_load_n(&rule_counts.pages_written, __ATOMIC_RELAXED) & bit))
        __atomic_or_fetch(&rule_counts.pages_written, bit, __ATOMIC_RELAXED);
}

uint64_t lb_frame_rule_misses(void)
{
    return __atomic_load_n(&rule_counts.misses, __ATOMIC_RELAXED);
}

/* An imported rule (rule_share.h) goes into an empty slot only. */
static void take_shared(uintptr_t pc, uint64_t word)
{
    uint64_t *slot = &rule_cache[pc & (LB_RULE_SLOTS - 1)];
    if ((word & 1) && (word >> TAG_SHIFT) == (uint64_t)(pc >> LB_RULE_SLOT_BITS) &&
        slot_word(slot) == 0)
        store_rule(slot, word);
}

void lb_unwind_cfi_fork_prepare(void)
{
    lb_rule_share_fork_prepare(take_shared);
}

void lb_unwind_cfi_fork_child(void)
{
    lb_zero_changed(rule_counts.page_misses, sizeof rule_counts.page_misses);
    lb_rule_share_fork_child();
}

/* Counts a miss on slot's page; true once the page has had enough misses
 * in this process to be written. */
static bool page_fill_due(const uint64_t *slot)
{
    uint8_t *n = &rule_counts.page_misses[page_of(slot)];
    uint8_t seen = __atomic_load_n(n, __ATOMIC_RELAXED);
    while (seen < LB_RULE_FILL_AFTER) {
        if (__atomic_compare_exchange_n(n, &seen, (uint8_t)(seen + 1), true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return seen + 1 >= LB_RULE_FILL_AFTER;
    }
    return true;
}

static bool encode(uintptr_t pc, lb_frame_rule_t rule, uint64_t *word)
{
    if (rule.kind > 3) /* two bits of kind: a signal frame is looked up each time */
        return false;
    int64_t cfa = rule.kind == LB_RULE_DEREF ? -(int64_t)rule.cfa_off : rule.cfa_off;
    uint64_t cfa8 = (uint64_t)cfa / 8, rbp8 = (uint64_t)(-(int64_t)rule.rbp_off) / 8;
    if ((cfa & 7) || (rule.rbp_off & 7) || cfa8 >= (1u << CFA_BITS) || rbp8 >= (1u << RBP_BITS) ||
        (pc >> (LB_RULE_SLOT_BITS + 64 - TAG_SHIFT)) != 0)
        return false;
    *word = (uint64_t)(pc >> LB_RULE_SLOT_BITS) << TAG_SHIFT | rbp8 << 21 | cfa8 << 4 |
            (uint64_t)rule.cfa_rbp << 3 | (uint64_t)rule.kind << 1 | 1u;
    return true;
}

lb_frame_rule_t lb_frame_rule(uintptr_t pc)
{
    uint64_t *slot = &rule_cache[pc & (LB_RULE_SLOTS - 1)];
    uint64_t w = slot_word(slot);
    if (lb_likely((w & 1) && (w >> TAG_SHIFT) == (uint64_t)(pc >> LB_RULE_SLOT_BITS))) {
        uint8_t kind = (uint8_t)((w >> 1) & 3);
        int32_t cfa = (int32_t)(((w >> 4) & ((1u << CFA_BITS) - 1)) * 8);
        return (lb_frame_rule_t){ .kind = kind,
                                  .cfa_rbp = (w >> 3) & 1,
                                  .cfa_off = kind == LB_RULE_DEREF ? -cfa : cfa,
                                  .rbp_off = -(int32_t)(((w >> 21) & ((1u << RBP_BITS) - 1)) * 8) };
    }
    __atomic_add_fetch(&rule_counts.misses, 1, __ATOMIC_RELAXED);
    struct dl_find_object dlfo;
    bool in_object;
    lb_frame_rule_t rule = rule_compute(pc, &dlfo, &in_object);
    uint64_t was = w;
    if (encode(pc, rule, &w)) {
        if (in_object && was == 0)
            lb_rule_share_offer(pc, w, &dlfo);
        if (page_fill_due(slot))
            store_rule(slot, w);
    }
    return rule;
}

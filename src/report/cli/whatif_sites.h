/*
 * whatif_sites.h - the release sites `lockblame whatif` experiments on:
 * the top rows of the loaded profile's release-site view (site_rows.h),
 * the same rows with the same blame, with the call instructions of their
 * releases and lock calls.
 */
#ifndef LB_CLI_WHATIF_SITES_H
#define LB_CLI_WHATIF_SITES_H
#include "report/cli/util.h"

/* The share of a site's wait (blame + hand-off latency) from which
 * whatif says that its waiters' wake-ups are not sped up. */
#define LB_WHATIF_WAKEUP_SHARE 0.1

struct lb_whatif_site {
    char *name;                /* the release site's function (its name in the binary) */
    char *label;               /* its name in the whatif table: demangled, and where two
                                * rows share a function, "function (file:line)" */
    int row_kind;              /* lb_obj_kind of the row */
    int kind;                  /* of the holds its experiment shortens (a signal's row:
                                * its function's lock, else the signal's own kind: the
                                * code before it), -1: none */
    double blame_s;            /* the row's blame */
    double blame_share;        /* its share of all blame, as the report gives it */
    const char *unsupported;   /* NULL: its holds can be sped up; else why not, in words */
    char *module;              /* path of the module its release calls are in */
    unsigned long long fstart; /* the function's start in it, 0 if unknown */
    struct lb_buf offsets;     /* its release calls, "OFF,OFF" in hex */
    struct lb_buf acquires;    /* its lock and cond-wait calls, the same way */
    int nrel, nacq;            /* how many of each (the library takes 64) */
    double handoff_s;          /* a lock row's: its locks' hand-off latency, each lock's by
                                * the share of its blame falling here (0 for other rows) */
};

/* The sites of the profile at path, in the release-site view's order
 * (rows a user can act on, structural waits left out): the top k rows
 * whose holds can be sped up (a mutex, spin lock or rwlock row: its own;
 * a signal's or post's: its function's lock holds), with under 1% of the
 * top row's blame left out, and the rows ranked above the last of them
 * that cannot, marked unsupported; a row whose experiment would repeat a
 * site's above it is left out; or, with only, every row of the function
 * named so (its name in the binary or demangled). Returns how many, in
 * *out. */
int lb_whatif_pick_sites(const char *path, const char *only, int k, struct lb_whatif_site **out);
void lb_whatif_sites_free(struct lb_whatif_site *sites, int n);
/* The start of function `name` in the ELF file at path (its symbol
 * value: an offset from the load base for PIE and shared objects), 0 if
 * it has no such symbol. */
unsigned long long lb_whatif_function_start(const char *path, const char *name);
#endif

/*
 * whatif_sites.h - the release sites `lockblame whatif` experiments on,
 * found in a profile: named as the release-site view names them, with
 * the call instructions of their releases and lock calls.
 */
#ifndef LB_CLI_WHATIF_SITES_H
#define LB_CLI_WHATIF_SITES_H
#include <sqlite3.h>

#include "report/cli/util.h"

struct lb_whatif_site {
    char *name;
    double blame_s;
    char *module;              /* path of the module its release calls are in */
    unsigned long long fstart; /* the function's start in it, 0 if unknown */
    struct lb_buf offsets;     /* its release calls, "OFF,OFF" in hex */
    struct lb_buf acquires;    /* its lock and cond-wait calls, the same way */
    int nrel, nacq;            /* how many of each (the library takes 64) */
};

/* The top k release sites by blame, every kind but joins, among those
 * that release a mutex (or the one named: by its name in the binary or
 * demangled), with their calls; sites with under 1% of the top site's
 * blame are left out. Returns how many, in *out. */
int lb_whatif_pick_sites(sqlite3 *db, const char *path, const char *only, int k,
                         struct lb_whatif_site **out);
/* All blame in the profile, every kind. */
double lb_whatif_total_blame(sqlite3 *db);
/* The start of function `name` in the ELF file at path (its symbol
 * value: an offset from the load base for PIE and shared objects), 0 if
 * it has no such symbol. */
unsigned long long lb_whatif_function_start(const char *path, const char *name);
#endif

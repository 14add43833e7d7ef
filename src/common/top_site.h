/* The exit line's top release site, chosen as `lockblame report` ranks
 * its default view (docs/DESIGN.md rules 5, 6). */
#ifndef LB_TOP_SITE_H
#define LB_TOP_SITE_H
#include <sqlite3.h>
#include <stddef.h>

/* From the written database: the release site with the most blame a user
 * can act on (joins and the structural share of a site left out), at the
 * innermost program frame (runtime frames skipped), sites with the same
 * function (clone names folded), file and line summed. Writes
 * "function (file:line)" (or module+0xOFF) into site, its kind into kind
 * and its blame into *seconds; site[0] = '\0' when there is none. */
void lb_top_site(sqlite3 *db, char *site, size_t site_size, char *kind, size_t kind_size,
                 double *seconds);
#endif

/*
 * accounting.h - the report header's "accounting:" line: how many
 * contended events lockblame accounted (releases and signals that carried
 * blame, completed waits) and at what rate, with a warning where that rate
 * is high enough for the accounting itself to lengthen the program's
 * critical sections (docs/PERFORMANCE.md, "Fourth pass").
 */
#ifndef LB_CLI_ACCOUNTING_H
#define LB_CLI_ACCOUNTING_H
#include <stdio.h>

#include "report/cli/profile.h"

/* Accounted events a second of one process above which the header warns:
 * each costs two clock reads and ~100-300 instructions inside a critical
 * section (~100 ns on the 2-core VM of docs/PERFORMANCE.md), so 500K a
 * second is ~5% of a core spent inside the program's holds. */
#define LB_ACCOUNTING_WARN_RATE 500000.0

/* Prints the line for the selected processes (the busiest one's rate when
 * several are selected); nothing when none had a contended event. */
void lb_print_accounting(const struct lb_profile *p, FILE *out);
#endif

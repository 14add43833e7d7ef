/*
 * accounting.h - the run header's accounting figures: how many contended
 * events lockblame accounted (releases and signals that carried blame,
 * completed waits) and at what rate, with a warning where that rate is
 * high enough for the accounting itself to lengthen the program's
 * critical sections (docs/PERFORMANCE.md, "Contended holds: the blame clock"). Shown by the
 * table header ("accounting:" and "warning:" lines) and the HTML header.
 */
#ifndef LB_CLI_ACCOUNTING_H
#define LB_CLI_ACCOUNTING_H
#include <stdbool.h>
#include <stdio.h>

#include "report/cli/profile.h"
#include "report/cli/util.h"

/* Accounted events a second of one process above which the header warns:
 * each costs two clock reads and ~100-300 instructions inside a critical
 * section (~100 ns on the 2-core VM of docs/PERFORMANCE.md), so 500K a
 * second is ~5% of a core spent inside the program's holds. */
#define LB_ACCOUNTING_WARN_RATE 500000.0

struct lb_accounting {
    int64_t blamed; /* releases and signals that carried blame */
    int64_t waits;  /* completed waits (contended acquisitions, cond/sem/barrier) */
    double rate;    /* (blamed + waits) a second, of the busiest selected process */
    int64_t busiest_pid;
    bool several; /* more than one process selected */
    /* Waits that put nothing inside a critical section (not in waits):
	 * spin waits measured by CPU samples, and mutex waits blamed by
	 * their holders' CPU samples (sync_object.sampled_waits). */
    int64_t spin_sampled_waits, spin_sampled_locks;
    int64_t mutex_sampled_waits, mutex_sampled_locks;
    /* cond and semaphore waits (timed, so still counted in waits) whose
	 * blame was estimated from sampled signal intervals */
    int64_t signal_sampled_waits, signal_sampled_objects;
};

/* The figures of the selected processes; false when none had a contended
 * event (then nothing is shown). */
bool lb_accounting_of(const struct lb_profile *p, struct lb_accounting *a);
/* "N contended events (...), R a second[ in the busiest process (pid P)]". */
void lb_accounting_text(const struct lb_accounting *a, struct lb_buf *b);
/* The warning's text, or NULL below the threshold. */
const char *lb_accounting_warning(const struct lb_accounting *a);
/* The table header's lines. */
void lb_print_accounting(const struct lb_profile *p, FILE *out);
#endif

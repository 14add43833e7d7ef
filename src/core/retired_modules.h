/* Libraries the program unloaded (dlclose) before the profile is
 * written. The profile is symbolized at the final write, from the
 * process's maps then: a library unloaded earlier (7-Zip's 7z.so, where
 * all its threads run, goes just before exit) is no longer there, and
 * the libraries the writer loads may take its addresses, so its frames
 * came out as "[unknown]+0x7f..." or named after libdw or libsqlite3.
 * Each library is recorded as it is closed (its path, load bias and
 * address range), and the writer symbolizes an address in such a range
 * from that file.
 *
 * Invariants: entries are appended under a lock and never removed (a
 * library opened and closed again at the same place is one entry); the
 * writer reads them on the finishing thread. When the program maps
 * another library into a freed range and runs it, its addresses are
 * named after the closed one: the samples do not say which came first. */
#ifndef LB_CORE_RETIRED_MODULES_H
#define LB_CORE_RETIRED_MODULES_H
#include <stdbool.h>
#include <stdint.h>

/* The program is about to dlclose handle: record its module. */
void lb_retired_record(void *handle);

typedef struct lb_retired {
    const char *path;
    uintptr_t bias;   /* load bias (link_map.l_addr) */
    uintptr_t lo, hi; /* its PT_LOAD segments' span */
} lb_retired_t;

/* The recorded modules (count in *n). */
const lb_retired_t *lb_retired_all(uint32_t *n);
/* Is pc in a recorded module's span? */
bool lb_retired_contains(uintptr_t pc);
#endif

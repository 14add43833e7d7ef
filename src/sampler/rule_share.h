/* Frame rules handed from fork children to their later siblings.
 *
 * A forking parent's children run its code at its addresses, so a rule one
 * child computes (unwind_cfi.h) holds for its siblings in every module the
 * children inherited. A forking process maps a small shared region at a
 * fork (fork_prepare, never in a signal handler); its fork children append
 * the rules they compute for pcs in the modules the region lists (the
 * parent's modules when it mapped the region); at its next fork the parent
 * imports the complete entries into its own rule cache, so that its later
 * children inherit them as ordinary cached rules.
 *
 * Invariants:
 *  - Appending (lb_rule_share_offer) is async-signal-safe and wait-free:
 *    one fetch-and-add claims an entry that no other writer ever claims,
 *    the entry's rule is stored, then its key (the pc and a nonzero hash
 *    of pc and rule) with release order. The importer reads the key with acquire
 *    order and takes the entry only if the hash matches the rule: an
 *    entry whose writer died or was killed midway has no key and is
 *    never read as valid. Entries are never reused; a full region is
 *    replaced by a fresh one at a later fork.
 *  - A process appends only for a pc whose module (by _dl_find_object:
 *    its link map, range and .eh_frame_hdr) is one the region lists; the
 *    first pc in a module the list does not hold (one loaded after the
 *    fork) stops its appending until it maps a region of its own. A parent
 *    whose loader has loaded or unloaded an object since it mapped the
 *    region (dl_iterate_phdr's dlpi_adds / dlpi_subs), or that met such a
 *    module itself, maps a fresh one instead of importing.
 *  - No system call, lock or allocation in the append; the import and the
 *    mapping run in fork_prepare only. A region this process appends to is
 *    unmapped only when no append of its own is under way.
 *  - The importer writes only empty cache slots (never evicts), and only
 *    for a pc inside a listed module.
 *  - The region is MAP_SHARED and anonymous: an exec'd image drops it, and
 *    only the process that mapped it and its fork children see it.
 *  - LOCKBLAME_SHARE_RULES=0: no region is mapped, nothing is appended or
 *    imported, and the rule cache behaves as without this file. */
#ifndef LB_RULE_SHARE_H
#define LB_RULE_SHARE_H
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

/* Reads LOCKBLAME_SHARE_RULES. At setup, before any fork. */
void lb_rule_share_setup(void);
/* In a fork child, while the forking thread is the only thread. */
void lb_rule_share_fork_child(void);
/* Before a fork, never in a signal handler: hands each complete entry its
 * children appended since the last import, for a pc in a listed module, to
 * take (the pc, the rule cache's word for it); then maps a fresh region if
 * this process has none, or its modules changed, or it is full. */
void lb_rule_share_fork_prepare(void (*take)(uintptr_t pc, uint64_t word));
/* A fork child computed the cache word for pc, in the object dlfo
 * describes, where its cache held nothing: appended for its later siblings
 * if the module is one its parent listed. Async-signal-safe. */
void lb_rule_share_offer(uintptr_t pc, uint64_t word, const struct dl_find_object *dlfo);
#endif

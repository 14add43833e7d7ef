/* Shared basics for liblockblame: the one export macro, branch hints and
 * the naming rule. Every non-static internal name starts with lb_; only the
 * interposed pthread_ and sem_ symbols are exported (LB_EXPORT), because the
 * library is built with -fvisibility=hidden. */
#ifndef LB_COMMON_H
#define LB_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_EXPORT        __attribute__((visibility("default")))
#define lb_likely(x)     __builtin_expect(!!(x), 1)
#define lb_unlikely(x)   __builtin_expect(!!(x), 0)
#define LB_NOINLINE      __attribute__((noinline))
#define LB_ALWAYS_INLINE inline __attribute__((always_inline))
#define LB_COLD          __attribute__((cold, noinline))
/* Thread-locals of a preloaded library are in the static TLS block, so the
 * initial-exec model is valid and costs one %fs-relative load. */
#define LB_TLS           __thread __attribute__((tls_model("initial-exec")))
#define LB_CACHELINE     64
/* Process state that a fork child writes (its fork hooks, its first
 * threads, its exit), gathered on a few pages of its own: the child copies
 * each page it writes at its first write (a page fault, a copy and a TLB
 * flush), and scattered among the modules these writes copied a page each.
 * A cache line per group, not per variable: a lock goes in one struct with
 * the data it guards (and variables always written together in one
 * struct), so that a contended allocation moves one line between CPUs,
 * not one per variable; what is unrelated stays on lines of its own. Only
 * small variables: the section starts a page of its own
 * (src/liblockblame.ld) and fits in it (tests/integration/
 * fork_written_layout.sh), so that the parent copies one page after each
 * fork, and a child one for all of these. */
#define LB_FORK_WRITTEN  __attribute__((section("lb_fork_written"), aligned(LB_CACHELINE)))
/* An array a fork child writes a few elements of (a thread's start block,
 * a wait shard), in a section of their own: LB_FORK_WRITTEN's variables,
 * written by the forking parent at each fork too (its locks, its fork
 * count), then share a page, one copy for the parent after each fork, not
 * one for each page the arrays spread them over. */
#define LB_FORK_WRITTEN_ARRAY \
    __attribute__((section("lb_fork_written_arrays"), aligned(LB_CACHELINE)))

/* The return address of the exported wrapper: the program's call site. */
#define LB_CALLER() ((uintptr_t)__builtin_return_address(0))

#endif

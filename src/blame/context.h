/* The calling context of the current wrapper call (a release, signal,
 * post or completed wait), as a node of the calling thread's CCT, with a
 * per-thread cache so that a context already seen costs no unwind.
 *
 * Key: the registers at a fixed point of lb_context_here (rsp, rbp) and
 * the value in the slot that held the program's call-site return address.
 * Verification on a hit: a checksum of every stack slot the filling walk
 * read (return addresses and saved rbp, at fixed offsets from that rsp).
 * A walk is a pure function of its starting registers and those slots, so
 * a hit yields exactly the path a full walk would (up to a 64-bit checksum
 * collision). Reading those slots is safe: they lie between our own rsp
 * and the top of this thread's stack, which were both the same when the
 * entry was filled.
 *
 * Invariants: the cache and the walk's scratch arrays live in the
 * thread's tables (core/thread_tables.h), or in a block of their own
 * mapped on first use and unmapped by lb_context_thread_exit; only the owning thread touches them, with
 * lb_thread.busy raised (so neither the sampling handler nor a re-entrant
 * wrapper runs a second walk on them). No system call on a hit; a miss
 * walks (unwind.h) and inserts into the CCT. No cancellation point, no
 * pthread key, no file descriptor. Stack use: a few hundred bytes. */
#ifndef LB_CONTEXT_H
#define LB_CONTEXT_H
#include "core/thread.h"
#include "sampler/cct.h"

/* The calling context of the wrapper call in progress on self, in
 * self->cct (which must be non-NULL), and its node id in *id. Never fails:
 * without memory for the cache it returns the CCT's root. Caller holds
 * self->busy. The node stays valid while the thread lives. Leaves errno
 * as it found it. */
lb_cct_node_t *lb_context_here(lb_thread_t *self, uint32_t *id);
/* The calling thread (self) ends: unmap its cache, or note the pages of
 * self's thread tables it wrote (idempotent). */
void lb_context_thread_exit(lb_thread_t *self);
/* Cache hits (of exited threads and the caller) and misses (all threads)
 * so far; for diagnostics and benches. */
void lb_context_counts(uint64_t *hits, uint64_t *misses);
#endif

/* Threads that no pthread_create of ours started: a thread created through
 * libc's own pthread_create (found with dlsym(RTLD_NEXT, ...), as jemalloc
 * does for its background threads, or through a handle of libc) never ran
 * lockblame's start trampoline, so it has no record and is not sampled.
 * It is adopted at its first monitored call: a record attached there
 * (sampling starts), its start routine found on its stack (the frame
 * below libc's thread start), and detached at its exit by a thread exit
 * destructor (__cxa_thread_atexit_impl, not a pthread key: the program's
 * keys stay its own), as the trampoline would.
 *
 * lockblame's own threads (the time windows' thread) are never adopted:
 * each calls lb_thread_never_adopt first, so its SQLite and libdw calls
 * neither record it as a program thread nor count its CPU as work.
 *
 * Invariants: only a thread with no record, in a running lockblame and
 * not lockblame's own, adopts (a vfork child runs on its parent's thread, record and all), and
 * never while it adopts or attaches by any other way (the attach's own
 * calls, the program's allocator among them, come back here: thread-local
 * flags, lb_thread_attaching for every attach). */
#ifndef LB_SAMPLER_ADOPT_H
#define LB_SAMPLER_ADOPT_H
#include "core/thread.h"

/* The calling thread's record, adopting the thread if it has none; NULL
 * when it cannot be (see above). Out of line: for the paths taken when
 * lb_self is NULL. */
lb_thread_t *lb_thread_adopt(void);

/* The calling thread is one of lockblame's own: never adopted. */
void lb_thread_never_adopt(void);
#endif

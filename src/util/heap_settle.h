/* Settling malloc's free chunks before fork children copy them. glibc
 * keeps freed chunks in an "unsorted" list until a malloc that misses the
 * thread's cache sorts them into their bins, writing each chunk's links.
 * A forking parent that leaves many there (lockblame's own frees: the
 * profile template's build) makes every fork child sort them again at its
 * first such malloc (pthread_create's calloc of the thread's TLS vector):
 * a copy-on-write page fault per page they lie in, in each child. Sorting
 * them once in the parent spares the children. No locks of lockblame's;
 * calls malloc, so not for signal handlers or fast paths. */
#ifndef LB_UTIL_HEAP_SETTLE_H
#define LB_UTIL_HEAP_SETTLE_H

/* Sort the calling thread's arena's unsorted free chunks into their bins
 * (a no-op beyond one allocation where there are none). errno unchanged
 * unless memory is short. */
void lb_heap_settle(void);
#endif

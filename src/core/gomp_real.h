/* The real libgomp functions that the OpenMP wrappers (interpose/gomp.c)
 * forward to, and the few that lockblame asks libgomp itself (the team's
 * size, the calling thread's number in it).
 *
 * Invariants: a field goes from NULL to libgomp's function once, on the
 * first call that needs it (dlsym(RTLD_NEXT), never before): a program
 * that does not use OpenMP never resolves anything here and pays nothing.
 * Racing first calls store the same value. Every field is resolved from
 * its default version (libgomp keeps OMP_1.0 aliases of the lock calls
 * for the same functions). */
#ifndef LB_CORE_GOMP_REAL_H
#define LB_CORE_GOMP_REAL_H

typedef struct lb_gomp_table {
    void (*parallel)(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
    void (*parallel_sections)(void (*fn)(void *), void *data, unsigned num_threads, unsigned count,
                              unsigned flags);
    void (*barrier)(void);
    void (*loop_end)(void);
    void (*sections_end)(void);
    void (*critical_start)(void);
    void (*critical_end)(void);
    void (*critical_name_start)(void **pptr);
    void (*critical_name_end)(void **pptr);
    void (*set_lock)(void *lock);
    void (*unset_lock)(void *lock);
    int (*test_lock)(void *lock);
    void (*set_nest_lock)(void *lock);
    void (*unset_nest_lock)(void *lock);
    int (*test_nest_lock)(void *lock);
    int (*get_num_threads)(void);
    int (*get_thread_num)(void);
    int (*get_level)(void);
} lb_gomp_table_t;

extern lb_gomp_table_t lb_gomp;

/* The address of libgomp's `name`, resolved into *slot on first use.
 * Never returns NULL: a program that calls an OpenMP entry point has
 * libgomp loaded, so a missing one is a broken installation and the
 * process aborts with one `lockblame:` line. */
void *lb_gomp_resolve(void **slot, const char *name);

/* lb_gomp.FIELD, resolved first if needed. */
#define LB_GOMP(field, name) \
    ((__typeof__(lb_gomp.field))lb_gomp_resolve((void **)&lb_gomp.field, name))
#endif

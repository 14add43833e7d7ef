/* Libraries opened on first use instead of at every process start.
 *
 * The exit write needs SQLite, libdw/libelf and liblzma, and a named PMU
 * event needs libpfm4; linked as DT_NEEDED they cost every preloaded
 * process ~1 ms of loading and relocation before main (libpfm4 alone
 * carries ~41,000 relocations), in `sh -c`, `make -j` and every short
 * child of a process tree, most of which never write or never name an
 * event. So the library does not link them: each function it calls is a
 * hidden stub of the same name and prototype (LB_LAZY_FN) that resolves
 * the lb_lazy_real_ one with dlopen + dlsym on its first call. Hidden: the stubs
 * never interpose on a program's own copy of those libraries, and
 * dlopen returns that copy when the program already loaded one. (libpfm4's
 * header declares its functions with default visibility, which a
 * definition cannot narrow: src/liblockblame.map keeps every stub's name
 * local.) The stubs are util/lazy_*.c, their checks util/lazy_deps.h.
 *
 * Failure contract: callers ask lb_lazy_lib_open first, on a path where
 * failure is allowed (the writer warns and writes nothing; the sampler
 * falls back). A stub whose library or symbol is missing returns a zero
 * value of its type (NULL, 0) and never calls through NULL.
 *
 * Invariants: a library's state and each stub's pointer go from unset to
 * set once; racing first calls may each dlopen (reference-counted, same
 * handle) and store the same pointer, so relaxed atomics suffice. Not for
 * signal handlers (dlopen takes the loader's lock). */
#ifndef LB_LAZY_LIB_H
#define LB_LAZY_LIB_H
#include <stdbool.h>

typedef struct lb_lazy_lib {
    const char *soname; /* e.g. "libsqlite3.so.0" */
    void *handle;       /* dlopen's handle once opened */
    int failed;         /* dlopen failed once: do not retry */
} lb_lazy_lib_t;

#define LB_LAZY_LIB(var, so) lb_lazy_lib_t var = { .soname = (so) }

/* Open lib now if not yet; false (with the reason in why) if it cannot be. */
bool lb_lazy_lib_open(lb_lazy_lib_t *lib, char *why, unsigned whylen);
/* The address of name in lib (opening it first), or NULL. */
void *lb_lazy_sym(lb_lazy_lib_t *lib, const char *name);

/* Inside a stub: lib's definition of the function being defined (name),
 * resolved on the first call and kept, or NULL if lib or name is missing. */
#define LB_LAZY_REAL_(lib, name)                                                           \
    ({                                                                                     \
        static __typeof__(&name) lb_lazy_real_;                                            \
        __typeof__(&name) lb_lazy_fn_ = __atomic_load_n(&lb_lazy_real_, __ATOMIC_RELAXED); \
        if (__builtin_expect(lb_lazy_fn_ == 0, 0)) {                                       \
            lb_lazy_fn_ = (__typeof__(&name))lb_lazy_sym(&(lib), #name);                   \
            if (lb_lazy_fn_)                                                               \
                __atomic_store_n(&lb_lazy_real_, lb_lazy_fn_, __ATOMIC_RELAXED);           \
        }                                                                                  \
        lb_lazy_fn_;                                                                       \
    })

/* A stub `ret name params` forwarding `args` to lib's definition of name. */
#define LB_LAZY_FN(lib, ret, name, params, args)                    \
    ret name params                                                 \
    {                                                               \
        __typeof__(&name) lb_lazy_call_ = LB_LAZY_REAL_(lib, name); \
        return lb_lazy_call_ ? lb_lazy_call_ args : (ret){ 0 };     \
    }

/* The same for a function returning void. */
#define LB_LAZY_VOID(lib, name, params, args)                       \
    void name params                                                \
    {                                                               \
        __typeof__(&name) lb_lazy_call_ = LB_LAZY_REAL_(lib, name); \
        if (lb_lazy_call_)                                          \
            lb_lazy_call_ args;                                     \
    }
#endif

/* Threads start in lb_thread_trampoline, which attaches an lb_thread,
 * runs the start routine, and detaches on return, pthread_exit or
 * cancellation (cleanup handler). The initial thread, which has no
 * trampoline, detaches in its pthread_exit (lb_thread_exit); at exit()
 * it stays attached, since the profile is written on it then.
 *
 * Invariants: the start block is one of start_blocks, claimed by the
 * creator (CAS 0 -> 1) and released by the new thread once it copied it
 * (or by the creator if creation failed); with every block in flight it is
 * malloc'd and freed the same way. Not malloc'd as a rule: a thread's
 * first free makes glibc give the thread a malloc arena of its own (a
 * 64 MiB reservation, mprotect, munmap at its end), which a program whose
 * threads never allocate does not pay natively. A fork child releases the
 * blocks its parent's other threads held: those threads are not in it.
 * The creator's context is recorded once per create, outside any lock. */
#include "interpose/thread_create.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/hooks.h"
#include "core/real.h"
#include "core/runtime.h"
#include "core/phase.h"
#include "common/path_base.h"
#include "core/thread.h"
#include "core/whatif.h"
#include "sampler/cct.h"
#include "sampler/unwind.h"
#include "util/fork_pages.h"
#include "util/own_memory.h"
#include "util/pages.h"
#include "util/proc_numbers.h"

typedef struct lb_start {
    void *(*fn)(void *);
    void *arg;
    uintptr_t ran; /* the function the thread runs, as the thread's start routine */
    uint32_t creator_id;
    uint32_t creator_node;
    uint64_t whatif_local; /* the creator's what-if count (core/whatif.h) */
} lb_start_t;

#define LB_START_BLOCKS 64

static struct start_block {
    uint32_t taken;
    lb_start_t start;
} start_blocks[LB_START_BLOCKS] LB_FORK_WRITTEN_ARRAY;

static lb_start_t *start_block_claim(void)
{
    for (uint32_t i = 0; i < LB_START_BLOCKS; i++) {
        uint32_t free_block = 0;
        if (!__atomic_load_n(&start_blocks[i].taken, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&start_blocks[i].taken, &free_block, 1, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return &start_blocks[i].start;
    }
    int saved_errno = errno;
    lb_start_t *start = malloc(sizeof *start);
    errno = saved_errno;
    return start;
}

static void start_block_release(lb_start_t *start)
{
    uintptr_t at = (uintptr_t)start, first = (uintptr_t)start_blocks;
    if (at >= first && at < first + sizeof start_blocks) {
        struct start_block *b = (struct start_block *)(at - offsetof(struct start_block, start));
        __atomic_store_n(&b->taken, 0, __ATOMIC_RELEASE);
    } else {
        free(start);
    }
}

/* Whether this process wrote the pages of the lb_fork_written_arrays
 * section (util/common.h) before it had a thread to share them with:
 * its threads write their shards and bits there (a wait's shard, the
 * object map's page bits), most often after reading them, and in a
 * process with threads running a page's first write after a read costs
 * a TLB flush on every CPU (lb_pages_write_first), in a fork child a
 * copy of the parent's page as well. */
static bool arrays_written LB_FORK_WRITTEN;
extern char __start_lb_fork_written_arrays[], __stop_lb_fork_written_arrays[];

static void write_arrays_first(void)
{
    if (__atomic_load_n(&arrays_written, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&arrays_written, true, __ATOMIC_RELAXED);
    lb_pages_write_first(__start_lb_fork_written_arrays,
                         (size_t)(__stop_lb_fork_written_arrays - __start_lb_fork_written_arrays));
}

static void thread_create_fork_child(lb_thread_t *self)
{
    (void)self;
    for (uint32_t i = 0; i < LB_START_BLOCKS; i++)
        LB_STORE_CHANGED(&start_blocks[i].taken, 0u);
    LB_STORE_CHANGED(&arrays_written, false);
}

static void detach_cleanup(void *self)
{
    lb_thread_detach(self);
}

/* The trampoline sits alone in section lb_thread_root, whose bounds the
 * linker provides: unwinding stops there, dropping libc's thread start. */
__attribute__((section("lb_thread_root"), noinline)) static void *lb_thread_trampoline(void *p)
{
    lb_start_t start = *(lb_start_t *)p;
    start_block_release(p);
    if (lb_whatif_on)
        lb_whatif_thread_begin(start.whatif_local);
    lb_thread_t *self = lb_thread_attach(start.ran, start.creator_id, start.creator_node);
    if (!self)
        return start.fn(start.arg);
    void *ret;
    pthread_cleanup_push(detach_cleanup, self);
    ret = start.fn(start.arg);
    pthread_cleanup_pop(1);
    return ret;
}

/* A function pointer held in the first words after a std::thread
 * state's vtable pointer (its callable and arguments: a thread started
 * with a function, std::thread(f, args...)): the word that is exactly the
 * address of a function symbol of some module (dladdr1), or 0. */
static uintptr_t state_function_pointer(const uintptr_t *state)
{
    for (int i = 1; i <= 4; i++) {
        uintptr_t w = 0;
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (!lb_read_own(&state[i], &w, sizeof w) || !w)
            continue;
        if (dladdr1((void *)w, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
            ELF64_ST_TYPE(sym->st_info) == STT_FUNC && (uintptr_t)info.dli_saddr == w)
            return w;
    }
    return 0;
}

/* The function a new thread runs: its start routine, but for a
 * std::thread, which libstdc++ starts in execute_native_thread_routine
 * with its std::thread::_State as the argument (libstdc++ is often
 * stripped, and that routine would name every std::thread alike, by an
 * offset): the function it was given where that is a pointer to a
 * function a module exports (state_function_pointer), else the state's
 * _M_run (the third entry of its vtable, after the two destructors), an
 * instantiation in the code that made the thread, named after the
 * callable's type (a lambda's names its enclosing function). The object
 * is read with lb_read_own (no fault if it is not what it seems). */
static uintptr_t function_run(uintptr_t fn, void *arg)
{
    /* One object look-up per start routine, mostly: a pool starts its threads
     * with one routine (each word read and written whole; the three read
     * together, on one cache line). */
    static struct {
        uintptr_t libstdcxx_base, libstdcxx_routine, last_other_routine;
    } seen LB_FORK_WRITTEN;
    if (fn == __atomic_load_n(&seen.last_other_routine, __ATOMIC_RELAXED))
        return fn;
    bool in_libstdcxx = fn == __atomic_load_n(&seen.libstdcxx_routine, __ATOMIC_RELAXED);
    /* The routine's object by _dl_find_object, as the unwinder finds a
     * pc's (a lock-free search of the loader's ranges), not dladdr,
     * which also looks up the nearest symbol: its code and the object's
     * symbol table are pages a fork child creating its first thread has
     * not touched. */
    struct dl_find_object object;
    if (!in_libstdcxx && _dl_find_object((void *)fn, &object) == 0 && object.dlfo_link_map &&
        object.dlfo_link_map->l_name) {
        in_libstdcxx = (uintptr_t)object.dlfo_map_start == seen.libstdcxx_base ||
                       strncmp(lb_path_base(object.dlfo_link_map->l_name), "libstdc++", 9) == 0;
        if (in_libstdcxx) {
            __atomic_store_n(&seen.libstdcxx_base, (uintptr_t)object.dlfo_map_start,
                             __ATOMIC_RELAXED);
            __atomic_store_n(&seen.libstdcxx_routine, fn, __ATOMIC_RELAXED);
        }
    }
    if (!in_libstdcxx) {
        __atomic_store_n(&seen.last_other_routine, fn, __ATOMIC_RELAXED);
        return fn;
    }
    uintptr_t vtable = 0, run = 0;
    if (!arg || !lb_read_own(arg, &vtable, sizeof vtable) || !vtable ||
        !lb_read_own((void *)(vtable + 2 * sizeof(void *)), &run, sizeof run) || !run)
        return fn;
    uintptr_t given = state_function_pointer(arg);
    return given ? given : run;
}

/* The creator's calling context, as a node id in its own CCT. */
static uint32_t creator_context(lb_thread_t *self)
{
    if (!self || !self->cct)
        return 0;
    lb_enter(self);
    uintptr_t pcs[LB_MAX_DEPTH];
    int n = lb_unwind_here(pcs, LB_MAX_DEPTH);
    uint32_t node = lb_cct_id(self->cct, lb_cct_insert(self->cct, pcs, n));
    lb_leave(self);
    return node;
}

int lb_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                     uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (!lb_runtime_monitoring() || (self && self->busy))
        return lb_real.create(thread, attr, fn, arg);
    write_arrays_first();
    lb_start_t *start = start_block_claim();
    if (!start)
        return lb_real.create(thread, attr, fn, arg);
    start->fn = fn;
    start->arg = arg;
    start->ran = function_run((uintptr_t)fn, arg);
    start->creator_id = self ? self->id : 0;
    start->creator_node = creator_context(self);
    start->whatif_local = lb_whatif_on ? lb_whatif_local() : 0;
    int rc = lb_real.create(thread, attr, lb_thread_trampoline, start);
    if (rc != 0)
        start_block_release(start);
    return rc;
}

void lb_thread_exit(void *ret)
{
    if (lb_unlikely(lb_real.thread_exit == NULL))
        lb_real_resolve();
    /* Only the initial thread's record: any other's ends in its
     * trampoline's cleanup or its adoption destructor as the unwinding
     * reaches them. Not in a vfork child, whose lb_self is its parent's. */
    lb_thread_t *self = lb_self;
    if (self && self == lb_runtime_initial_thread() && lb_runtime_is_own_process())
        lb_thread_detach(self);
    lb_real.thread_exit(ret);
    __builtin_unreachable();
}

extern char __start_lb_thread_root[], __stop_lb_thread_root[];

/* At start: the unwinder stops at the trampoline, the root of every
 * thread's stack. */
static void thread_create_setup(void)
{
    lb_unwind_set_stop_range((uintptr_t)__start_lb_thread_root, (uintptr_t)__stop_lb_thread_root);
}

LB_PROCESS_HOOKS(thread_create_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .setup = thread_create_setup,
    .fork_prepare = lb_proc_numbers_fork_prepare, /* for the children's threads' exits */
    .fork_child = thread_create_fork_child,
};

/* Unit tests for release-site symbolization at -O2 (docs/DESIGN.md rule 5):
 * tail-called releases (src/report/writer/tailcall.c), inlined helpers
 * (src/report/writer/symbolize.c) and gcc clone names
 * (src/common/clone_name.h).
 *
 * The code under test is this file's own, built -O2 -g by tests/tests.mak:
 * release_entry() stands for a lockblame wrapper and records its return
 * address, as the release-site walk would see it. tail_release() ends in a
 * call to it, which gcc emits as a jump, so that return address lies in
 * the caller; inline_release() reaches it through an always-inline
 * helper. A write's cache reads through block copies, made once;
 * stub_like_entry() is an entry that looks like a PLT stub, reached
 * through one. A window writer's answers last until a library is
 * unloaded. */
#include "check.h"

#include <pthread.h>

#include <dlfcn.h>

#include "common/clone_name.h"
#include "report/writer/modmap.h"
#include "report/writer/symbolize.h"
#include "report/writer/tailcall.h"
#include "report/writer/writer_int.h"

static uintptr_t seen_ra;
static int tail_line, helper_line, helper_call_line;
static volatile int sink;

__attribute__((noipa)) static void release_entry(pthread_mutex_t *m)
{
    seen_ra = (uintptr_t)__builtin_return_address(0);
    sink += m != NULL;
}

static bool is_release_entry(uintptr_t addr)
{
    return addr == (uintptr_t)release_entry;
}

__attribute__((noinline)) static void tail_release(pthread_mutex_t *m)
{
    sink++;
    tail_line = __LINE__ + 1;
    release_entry(m);
}

__attribute__((noinline)) static void caller(pthread_mutex_t *m)
{
    tail_release(m);
    sink++; /* keeps the call to tail_release a call */
}

static inline __attribute__((always_inline)) void helper(pthread_mutex_t *m)
{
    helper_line = __LINE__ + 1;
    release_entry(m);
}

__attribute__((noinline)) static void inline_release(pthread_mutex_t *m)
{
    sink++;
    helper_call_line = __LINE__ + 1;
    helper(m);
    sink++;
}

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static void test_tail_call_sited_in_jumping_function(void)
{
    lb_symbolizer_t *s = lb_symbolizer_open();
    ASSERT_NOT_NULL(s);
    caller(&mutex);
    uintptr_t call_pc = seen_ra - 1;
    lb_symbol_t at_call;
    lb_symbolize(s, call_pc, &at_call);
    ASSERT_EQ(strncmp(at_call.function, "caller", 6), 0); /* what the walk saw */
    uintptr_t jump = lb_tailcall_jump(s, call_pc, is_release_entry, NULL);
    ASSERT_NE(jump, 0);
    /* the same through a write's cache: its reads copy blocks, and the
     * second look-up reads those copies and copies nothing more */
    lb_tailcall_cache_t cache = { 0 };
    ASSERT_EQ(lb_tailcall_jump(s, call_pc, is_release_entry, &cache), jump);
    ASSERT_NOT_NULL(cache.blocks.room);
    lb_own_blocks_t first = cache.blocks;
    ASSERT_GE(lb_own_blocks_held(&first), 1u);
    ASSERT_EQ(lb_tailcall_jump(s, call_pc, is_release_entry, &cache), jump);
    ASSERT_EQ(memcmp(cache.blocks.block, first.block, sizeof first.block), 0);
    ASSERT_EQ(cache.blocks.next, first.next);
    lb_tailcall_cache_free(&cache);
    lb_symbol_t at_jump;
    lb_symbolize(s, jump, &at_jump);
    ASSERT_EQ(strncmp(at_jump.function, "tail_release", 12), 0); /* maybe a clone */
    ASSERT_EQ(at_jump.line, tail_line);
    lb_symbolizer_close(s);
}

#if defined(__x86_64__)
/* A release entry that looks like a PLT stub, as a wrapper that forwards
 * in one jump through a pointer does (jmp *wrapper_forward(%rip)), and a
 * PLT stub of the program's that leads to it (jmp *stub_slot(%rip)): a
 * tail call reaches the entry through the stub, and the entry goes on to
 * release_entry, which records the return address. */
void stub_like_entry(pthread_mutex_t *m);
void program_stub(pthread_mutex_t *m);
void (*wrapper_forward)(pthread_mutex_t *) = release_entry;
void (*stub_slot)(pthread_mutex_t *) = stub_like_entry;
__asm__(".text\n"
        ".type stub_like_entry, @function\n"
        "stub_like_entry:\n"
        "    jmp *wrapper_forward(%rip)\n"
        ".size stub_like_entry, . - stub_like_entry\n"
        ".type program_stub, @function\n"
        "program_stub:\n"
        "    jmp *stub_slot(%rip)\n"
        ".size program_stub, . - program_stub\n");

static bool is_stub_like_entry(uintptr_t addr)
{
    return addr == (uintptr_t)stub_like_entry;
}

static int stub_tail_line;

__attribute__((noinline)) static void tail_through_stub(pthread_mutex_t *m)
{
    sink++;
    stub_tail_line = __LINE__ + 1;
    program_stub(m);
}

__attribute__((noinline)) static void stub_caller(pthread_mutex_t *m)
{
    tail_through_stub(m);
    sink++; /* keeps the call to tail_through_stub a call */
}

/* The look-up follows the program's stub to the entry and stops there:
 * followed on, the entry's own jump would lead past it, to a function
 * that is no entry, and the tail call would be missed. */
static void test_stub_not_followed_on_from_an_entry(void)
{
    lb_symbolizer_t *s = lb_symbolizer_open();
    ASSERT_NOT_NULL(s);
    stub_caller(&mutex);
    uintptr_t call_pc = seen_ra - 1;
    lb_symbol_t at_call;
    lb_symbolize(s, call_pc, &at_call);
    ASSERT_EQ(strncmp(at_call.function, "stub_caller", 11), 0);
    uintptr_t jump = lb_tailcall_jump(s, call_pc, is_stub_like_entry, NULL);
    ASSERT_NE(jump, 0);
    lb_tailcall_cache_t cache = { 0 };
    ASSERT_EQ(lb_tailcall_jump(s, call_pc, is_stub_like_entry, &cache), jump);
    lb_tailcall_cache_free(&cache);
    lb_symbol_t at_jump;
    lb_symbolize(s, jump, &at_jump);
    ASSERT_EQ(strncmp(at_jump.function, "tail_through_stub", 17), 0);
    ASSERT_EQ(at_jump.line, stub_tail_line);
    lb_symbolizer_close(s);
}
#else
static void test_stub_not_followed_on_from_an_entry(void)
{
    printf("# not x86-64: skipped\n");
}
#endif

/* A time window's writer keeps its tail-call answers from one window to
 * the next (cct_merge.c), and the stubs they followed, until the loader
 * unloads an object: a library loaded at its addresses since may hold
 * other code there. Here the answers are stand-ins; the unload is a
 * small library of the C library's, opened and closed. */
static void test_unload_drops_tail_call_answers(void)
{
    static const char *const libraries[] = { "libanl.so.1", "libBrokenLocale.so.1",
                                             "libutil.so.1" };
    writer_t w = { 0 };
    unsigned long long counts[2];
    lb_modmap_loader_counts(counts);
    ASSERT_NE(counts[1], ~0ull);
    w.unloads = counts[1];
    ASSERT_EQ(lb_u64map_put(&w.jump_of_pc, 0x1234, 7), 0);
    w.nfar = 1;
    w.tailcall.n = 1;
    lb_merge_forget_unloaded(&w); /* nothing unloaded: all kept */
    ASSERT_EQ(w.jump_of_pc.used, 1u);
    ASSERT_EQ(w.nfar, 1u);
    ASSERT_EQ(w.tailcall.n, 1u);
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof libraries / sizeof libraries[0]; i++)
        h = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("# none of the C library's small libraries opens here: skipped\n");
        lb_u64map_free(&w.jump_of_pc);
        return;
    }
    lb_merge_forget_unloaded(&w); /* loaded, not unloaded: all kept */
    ASSERT_EQ(w.jump_of_pc.used, 1u);
    ASSERT_EQ(dlclose(h), 0);
    lb_merge_forget_unloaded(&w);
    ASSERT_EQ(w.jump_of_pc.used, 0u);
    ASSERT_EQ(w.nfar, 0u);
    ASSERT_EQ(w.tailcall.n, 0u);
    lb_u64map_free(&w.jump_of_pc);
}

static void test_direct_call_is_its_own_site(void)
{
    lb_symbolizer_t *s = lb_symbolizer_open();
    ASSERT_NOT_NULL(s);
    release_entry(&mutex);
    sink++;
    ASSERT_EQ(lb_tailcall_jump(s, seen_ra - 1, is_release_entry, NULL), 0);
    lb_tailcall_cache_t cache = { 0 };
    ASSERT_EQ(lb_tailcall_jump(s, seen_ra - 1, is_release_entry, &cache), 0);
    lb_tailcall_cache_free(&cache);
    lb_symbolizer_close(s);
}

static void test_inlined_helper_has_file_and_line(void)
{
    lb_symbolizer_t *s = lb_symbolizer_open();
    ASSERT_NOT_NULL(s);
    inline_release(&mutex);
    lb_symbol_t sym;
    lb_symbolize(s, seen_ra - 1, &sym);
    ASSERT_EQ(strncmp(sym.function, "inline_release", 14), 0);
    ASSERT_GE(sym.n_inline, 1);
    ASSERT_STR_EQ(sym.inline_frames[0].function, "helper");
    ASSERT_NOT_NULL(sym.inline_frames[0].file);
    ASSERT_NOT_NULL(strstr(sym.inline_frames[0].file, "report_symbolize.c"));
    ASSERT_EQ(sym.inline_frames[0].line, helper_line);
    ASSERT_NOT_NULL(sym.file);
    ASSERT_EQ(sym.line, helper_call_line);
    lb_symbolizer_close(s);
}

static void test_clone_names_fold(void)
{
    ASSERT_EQ(lb_clone_base_len("gt_slow_release.constprop.0"), 15);
    ASSERT_EQ(lb_clone_base_len("gt_slow_release.isra.0"), 15);
    ASSERT_EQ(lb_clone_base_len("gt_slow_release.part.0"), 15);
    ASSERT_EQ(lb_clone_base_len("gt_slow_release.cold"), 15);
    ASSERT_EQ(lb_clone_base_len("f.isra.0.cold"), 1);
    ASSERT_EQ(lb_clone_base_len("f.constprop.0.isra.0"), 1);
    ASSERT_EQ(lb_clone_base_len("_ZN3foo3barEv.part.0"), 13);
    ASSERT_EQ(lb_clone_base_len("plain"), 5);
    ASSERT_EQ(lb_clone_base_len("f.coldish"), 9);   /* not a clone suffix */
    ASSERT_EQ(lb_clone_base_len("f.constprop"), 1); /* numberless forms too */
    ASSERT_EQ(lb_clone_base_len("x.c"), 3);
}

CHECK_MAIN(test_tail_call_sited_in_jumping_function, test_direct_call_is_its_own_site,
           test_stub_not_followed_on_from_an_entry, test_unload_drops_tail_call_answers,
           test_inlined_helper_has_file_and_line, test_clone_names_fold)

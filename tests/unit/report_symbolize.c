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
 * helper. */
#include "check.h"

#include <pthread.h>

#include "common/clone_name.h"
#include "report/writer/symbolize.h"
#include "report/writer/tailcall.h"

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
    /* the same through a write's cache, again from its copies */
    lb_tailcall_cache_t cache = { 0 };
    ASSERT_EQ(lb_tailcall_jump(s, call_pc, is_release_entry, &cache), jump);
    ASSERT_EQ(lb_tailcall_jump(s, call_pc, is_release_entry, &cache), jump);
    lb_tailcall_cache_free(&cache);
    lb_symbol_t at_jump;
    lb_symbolize(s, jump, &at_jump);
    ASSERT_EQ(strncmp(at_jump.function, "tail_release", 12), 0); /* maybe a clone */
    ASSERT_EQ(at_jump.line, tail_line);
    lb_symbolizer_close(s);
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
           test_inlined_helper_has_file_and_line, test_clone_names_fold)

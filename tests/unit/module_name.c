/* Unit tests for src/common/module_name.h: libdwfl's "[vdso: PID]" is
 * "[vdso]" whatever the pid; every other name, "[vdso]" itself included,
 * is returned as it is (the same pointer: nothing is allocated).
 */
#include "check.h"

#include "common/module_name.h"

static void test_vdso_with_pid(void)
{
    ASSERT_STR_EQ(lb_module_name("[vdso: 9850]"), "[vdso]");
    ASSERT_STR_EQ(lb_module_name("[vdso: 1]"), "[vdso]");
    ASSERT_STR_EQ(lb_module_name("[vdso:4194304]"), "[vdso]");
}

static void test_other_names_unchanged(void)
{
    const char *names[] = { "[vdso]",
                            "/usr/lib/x86_64-linux-gnu/libc.so.6",
                            "vdso_clock",
                            "[vdso: 12",
                            "[vdsox]",
                            "linux-vdso.so.1",
                            "" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        ASSERT_PTR_EQ(lb_module_name(names[i]), names[i]);
    ASSERT_NULL(lb_module_name(NULL));
}

CHECK_MAIN(test_vdso_with_pid, test_other_names_unchanged)

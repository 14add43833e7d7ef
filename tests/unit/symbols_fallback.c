/* Unit tests for the stripped-binary name fallback
 * (src/common/symbols_fallback.c).
 *
 * test_libc_dynsym: the fallback's .dynsym lookup names an address inside
 * libc's qsort with a symbol that the dynamic linker resolves to the same
 * address (ground truth from dladdr/dlsym; the build-id root is a
 * directory that does not exist, so only .dynsym can answer).
 *
 * test_cases_file: tests/integration/stripped_names.sh builds stripped
 * binaries (MiniDebugInfo, a build-id debug file, .dynsym only, nothing)
 * and names them in the file $LB_FALLBACK_CASES, one case a line:
 *   PATH ELF_ADDR_HEX EXPECTED_NAME_OR_- DEBUG_ROOT
 * Without that variable there are no cases to run (it says so).
 */
#include "check.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "common/symbols_fallback.h"

static void test_libc_dynsym(void)
{
    void *fn = (void *)&qsort;
    Dl_info info;
    ASSERT_TRUE(dladdr(fn, &info) != 0);
    ASSERT_NOT_NULL(info.dli_fname);
    uint64_t addr = (uint64_t)((uintptr_t)fn - (uintptr_t)info.dli_fbase) + 1;
    const char *name = lb_symbols_fallback_file(info.dli_fname, addr, "/nonexistent-debug-root");
    ASSERT_NOT_NULL(name);
    void *again = dlsym(RTLD_DEFAULT, name);
    printf("  %s+0x%" PRIx64 " -> %s (%p, qsort %p)\n", info.dli_fname, addr, name, again, fn);
    ASSERT_TRUE(again == fn);
    /* an address before any function has no name */
    ASSERT_TRUE(lb_symbols_fallback_file(info.dli_fname, 0, "/nonexistent-debug-root") == NULL);
}

static void test_cases_file(void)
{
    const char *cases = getenv("LB_FALLBACK_CASES");
    if (!cases) {
        printf("  no $LB_FALLBACK_CASES (stripped_names.sh sets it): nothing to do here\n");
        return;
    }
    FILE *f = fopen(cases, "r");
    ASSERT_NOT_NULL(f);
    char path[1024], want[256], root[1024];
    uint64_t addr;
    int n = 0, bad = 0;
    while (fscanf(f, "%1023s %" SCNx64 " %255s %1023s", path, &addr, want, root) == 4) {
        const char *got = lb_symbols_fallback_file(path, addr, root);
        bool ok = strcmp(want, "-") == 0 ? got == NULL : got && strcmp(got, want) == 0;
        printf("  %s %s+0x%" PRIx64 ": want %s, got %s\n", ok ? "ok" : "WRONG", path, addr, want,
               got ? got : "-");
        bad += !ok;
        n++;
    }
    fclose(f);
    ASSERT_GT(n, 0);
    ASSERT_EQ(bad, 0);
}

CHECK_MAIN(test_libc_dynsym, test_cases_file)

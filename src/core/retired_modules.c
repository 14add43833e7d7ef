/* Libraries unloaded before the final write: see retired_modules.h. */
#include "core/retired_modules.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "util/meta_lock.h"

#define LB_RETIRED_MAX 256

static lb_retired_t retired[LB_RETIRED_MAX];
static uint32_t n_retired;
static lb_meta_lock_t retired_lock;

typedef struct span_search {
    uintptr_t bias;
    uintptr_t lo, hi;
    bool found;
} span_search_t;

static int find_span(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    span_search_t *s = arg;
    if (info->dlpi_addr != s->bias || !info->dlpi_name || !info->dlpi_name[0])
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (lo >= hi)
        return 0;
    s->lo = lo;
    s->hi = hi;
    s->found = true;
    return 1;
}

void lb_retired_record(void *handle)
{
    int saved_errno = errno;
    struct link_map *lm = NULL;
    span_search_t span = { 0 };
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0) {
        dlerror(); /* (its message is not the program's to read) */
        goto out;
    }
    if (!lm || !lm->l_name || lm->l_name[0] != '/')
        goto out; /* the main program, or a name we cannot open again */
    span.bias = lm->l_addr;
    dl_iterate_phdr(find_span, &span);
    if (!span.found)
        goto out;
    lb_meta_lock(&retired_lock);
    bool known = false;
    for (uint32_t i = 0; i < n_retired && !known; i++)
        known = retired[i].bias == span.bias && retired[i].lo == span.lo &&
                strcmp(retired[i].path, lm->l_name) == 0;
    if (!known && n_retired < LB_RETIRED_MAX) {
        char *path = strdup(lm->l_name);
        if (path)
            retired[n_retired++] = (lb_retired_t){ path, span.bias, span.lo, span.hi };
    }
    lb_meta_unlock(&retired_lock);
out:
    errno = saved_errno;
}

const lb_retired_t *lb_retired_all(uint32_t *n)
{
    *n = __atomic_load_n(&n_retired, __ATOMIC_ACQUIRE);
    return retired;
}

bool lb_retired_contains(uintptr_t pc)
{
    uint32_t n;
    const lb_retired_t *r = lb_retired_all(&n);
    for (uint32_t i = 0; i < n; i++)
        if (pc >= r[i].lo && pc < r[i].hi)
            return true;
    return false;
}

/* See next_symbol.h. The section's bounds come from the linker. */
#include "util/next_symbol.h"

#include <stdbool.h>

extern lb_next_symbol_t __start_lb_next_symbols[] __attribute__((weak));
extern lb_next_symbol_t __stop_lb_next_symbols[] __attribute__((weak));

static bool settled; /* every entry was looked up once */

void lb_next_symbols_settle(void)
{
    if (__atomic_load_n(&settled, __ATOMIC_ACQUIRE))
        return;
    for (lb_next_symbol_t *e = __start_lb_next_symbols; e < __stop_lb_next_symbols; e++)
        lb_next_symbol(e);
    __atomic_store_n(&settled, true, __ATOMIC_RELEASE);
}

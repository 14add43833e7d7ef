/* In-place reads of the images never unloaded (own_memory.h). */
#include "util/own_memory.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

/* lockblame's own ELF header, as the linker places it (mapped: the first
 * PT_LOAD segment holds it). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

/* [addr, addr + len) lies in one readable PT_LOAD segment of the module
 * whose n program headers are ph, loaded at bias. */
static bool in_segment(const ElfW(Phdr) * ph, size_t n, uintptr_t bias, uintptr_t addr, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R))
            continue;
        uintptr_t lo = bias + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
        if (addr >= lo && addr < hi && len <= hi - addr)
            return true;
    }
    return false;
}

/* In the main program's image (its headers from the auxiliary vector,
 * its bias from PT_PHDR) or lockblame's (its bias from the segment that
 * maps its ELF header). No system call, no lock. */
static bool in_fixed_image(uintptr_t addr, size_t len)
{
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t n = (size_t)getauxval(AT_PHNUM);
    for (size_t i = 0; ph && i < n; i++)
        if (ph[i].p_type == PT_PHDR) {
            if (in_segment(ph, n, (uintptr_t)ph - ph[i].p_vaddr, addr, len))
                return true;
            break;
        }
    const ElfW(Ehdr) *eh = &__ehdr_start;
    ph = (const ElfW(Phdr) *)((uintptr_t)eh + eh->e_phoff);
    n = eh->e_phnum;
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
            return in_segment(ph, n, (uintptr_t)eh - ph[i].p_vaddr, addr, len);
    return false;
}

bool lb_read_image(uintptr_t addr, void *out, size_t len)
{
    if (in_fixed_image(addr, len)) {
        memcpy(out, (const void *)addr, len);
        return true;
    }
    return lb_read_own((const void *)addr, out, len);
}

/* See go_program.h. */
#include "common/go_program.h"

#include <elf.h>
#include <link.h>

/* dl_iterate_phdr's first object is the main program. */
static int main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    bool *go = arg;
    for (unsigned i = 0; i < info->dlpi_phnum && !*go; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE && ph->p_memsz >= sizeof(Elf64_Nhdr))
            *go = lb_go_notes((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
    }
    return 1;
}

bool lb_program_is_go(void)
{
    static int known = -1; /* the writer's constructor asks first, then core's */
    if (known < 0) {
        bool go = false;
        dl_iterate_phdr(main_program, &go);
        known = go;
    }
    return known;
}

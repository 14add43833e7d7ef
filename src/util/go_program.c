/* See go_program.h. */
#include "util/go_program.h"

#include <elf.h>
#include <link.h>

#include "util/elf_note.h"

#define GO_NOTE_BUILD_ID 4 /* the Go linker's note type in the "Go" owner */

/* dl_iterate_phdr's first object is the main program. */
static int main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    bool *go = arg;
    for (unsigned i = 0; i < info->dlpi_phnum && !*go; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE && ph->p_memsz >= sizeof(Elf64_Nhdr)) {
            const unsigned char *desc;
            uint32_t desc_size;
            *go =
                lb_elf_note_find((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
                                 ph->p_memsz, GO_NOTE_BUILD_ID, "Go", 2, &desc, &desc_size) != NULL;
        }
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

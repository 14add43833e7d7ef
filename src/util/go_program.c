/* See go_program.h. */
#include "util/go_program.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#define GO_NOTE_BUILD_ID 4 /* the Go linker's note type in the "Go" owner */

/* Whether the notes in [at, end) hold the Go linker's build id note. */
static bool has_go_note(uintptr_t at, uintptr_t end)
{
    while (end - at >= sizeof(Elf64_Nhdr)) {
        const Elf64_Nhdr *n = (const Elf64_Nhdr *)at;
        uintptr_t name = at + sizeof *n, desc = name + ((n->n_namesz + 3u) & ~3u),
                  next = desc + ((n->n_descsz + 3u) & ~3u);
        if (next > end || next <= at)
            return false;
        if (n->n_type == GO_NOTE_BUILD_ID && (n->n_namesz == 3 || n->n_namesz == 4) &&
            memcmp((const void *)name, "Go", 3) == 0)
            return true;
        at = next;
    }
    return false;
}

/* dl_iterate_phdr's first object is the main program. */
static int main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    bool *go = arg;
    for (unsigned i = 0; i < info->dlpi_phnum && !*go; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE && ph->p_memsz >= sizeof(Elf64_Nhdr)) {
            uintptr_t at = info->dlpi_addr + ph->p_vaddr;
            *go = has_go_note(at, at + ph->p_memsz);
        }
    }
    return 1;
}

bool lb_program_is_go(void)
{
    bool go = false;
    dl_iterate_phdr(main_program, &go);
    return go;
}

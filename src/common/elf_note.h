/* The notes of a PT_NOTE segment as mapped in memory: the one of a given
 * owner and type. No allocation, no system call: usable anywhere,
 * including before the program's main. */
#ifndef LB_ELF_NOTE_H
#define LB_ELF_NOTE_H
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The first note in [p, p + size) whose type is `type` and whose owner is
 * `owner` (a name of owner_len bytes before its NUL: the name's padding
 * may or may not count its NUL), or NULL; *desc and *desc_size its
 * description. The walk stops at the first note that runs past the end. */
static inline const Elf64_Nhdr *lb_elf_note_find(const unsigned char *p, size_t size, uint32_t type,
                                                 const char *owner, size_t owner_len,
                                                 const unsigned char **desc, uint32_t *desc_size)
{
    const unsigned char *end = p + size;
    while (end - p >= (ptrdiff_t)sizeof(Elf64_Nhdr)) {
        const Elf64_Nhdr *n = (const Elf64_Nhdr *)(const void *)p;
        const unsigned char *name = p + sizeof *n;
        const unsigned char *d = name + ((n->n_namesz + 3u) & ~3u);
        const unsigned char *next = d + ((n->n_descsz + 3u) & ~3u);
        if (next > end || next <= p)
            return NULL;
        if (n->n_type == type && (n->n_namesz == owner_len + 1 || n->n_namesz == owner_len + 2) &&
            memcmp(name, owner, owner_len) == 0 && name[owner_len] == '\0') {
            *desc = d;
            *desc_size = n->n_descsz;
            return n;
        }
        p = next;
    }
    return NULL;
}
#endif

/* Whether the program is a Go program. A Go program is preloadable only
 * when built with cgo (dynamically linked), and lockblame sees nothing of
 * it even then: its goroutines' locks (sync.Mutex, channels) are the Go
 * runtime's own, on futexes it calls directly; it ends with a direct
 * exit_group, so no profile would be written; and the runtime takes a
 * handler for every signal, which the sampler's signal would chase down
 * the real-time range (a line each), while a handler of lockblame's on a
 * goroutine's small stack crashed the program in one start of ten. So the
 * library stays inactive in a Go program (core/runtime.c), with one line.
 *
 * Read from the main program's notes (the Go linker's build id note,
 * owner "Go") once per image, in the constructors (one thread). */
#ifndef LB_GO_PROGRAM_H
#define LB_GO_PROGRAM_H
#include <stdbool.h>
#include <stddef.h>

#include "common/elf_note.h"

#define LB_GO_NOTE_BUILD_ID 4 /* the Go linker's note type in the "Go" owner */

/* Whether the notes in [p, p + size) (a PT_NOTE segment's) hold the Go
 * linker's build id note. */
static inline bool lb_go_notes(const unsigned char *p, size_t size)
{
    const unsigned char *desc;
    uint32_t desc_size;
    return lb_elf_note_find(p, size, LB_GO_NOTE_BUILD_ID, "Go", 2, &desc, &desc_size) != NULL;
}

bool lb_program_is_go(void);
#endif

/* Tail-called releases (docs/DESIGN.md rule 5). At -O2 an unlock, signal or
 * post that ends a function F is a jump, not a call, so F leaves no frame:
 * the release-site walk ends at F's caller, whose return address follows
 * `call F`. Given that call address, this finds F's jump to the release
 * function so the site can be F (with the jump's file:line) and the caller
 * chain stays above it.
 *
 * Works on the mapped code of this process, at the final write: decodes
 * the call before the return address (call rel32, call *disp(%rip)),
 * follows PLT stubs through their resolved GOT slots, and scans F's bytes
 * (bounds from the symbol table) for a jump (jmp rel32, jcc rel32,
 * jmp *disp(%rip)) whose destination is a release entry. Every read goes
 * through process_vm_readv (util/own_blocks.h), so a wrong guess never
 * faults. x86-64 only; elsewhere it always answers 0. */
#ifndef LB_TAILCALL_H
#define LB_TAILCALL_H
#include <stdbool.h>
#include <stdint.h>

#include "report/writer/symbolize.h"
#include "util/own_blocks.h"

/* True if code at addr is where a path we recorded ended: one of
 * lockblame's exported wrappers (or, in tests, the real function). */
typedef bool (*lb_release_entry_fn)(uintptr_t addr);

/* What a writer's look-ups keep: the PLT stubs that recorded calls went
 * through, with where they led (the stubs of a few functions serve every
 * call site), until a module is unloaded; and for one write, copies of
 * the blocks the look-ups read: the stubs, GOT slots and functions of
 * nearby call sites lie in a few blocks, and each read of one is a
 * system call (util/own_blocks.h). Zeroed before its first use;
 * lb_tailcall_cache_free after its last. */
typedef struct lb_tailcall_cache {
    uintptr_t stub[16], dest[16];
    unsigned n;
    lb_own_blocks_t blocks; /* room taken at the first read (common/scratch.h) */
} lb_tailcall_cache_t;

/* Drops the block copies (kept: the stubs followed), for a later write
 * to read the blocks as they are then: a module may be unloaded, a GOT
 * slot bound, in between. */
void lb_tailcall_cache_forget_blocks(lb_tailcall_cache_t *cache);
/* Drops the stubs followed too, where a module was unloaded: a stub's
 * address may be another module's code since. */
void lb_tailcall_cache_forget_stubs(lb_tailcall_cache_t *cache);
/* Frees what the cache holds and zeroes it. */
void lb_tailcall_cache_free(lb_tailcall_cache_t *cache);

/* call_pc is a call-instruction address (return address - 1) at the
 * innermost program frame of a path that ended in a release entry; cache
 * the write's (NULL: none).
 * Returns the address of the tail jump inside the function that call
 * reached, or 0 when the call went to a release entry directly, the
 * call is indirect through a register, or no unique jump is found. */
uintptr_t lb_tailcall_jump(lb_symbolizer_t *s, uintptr_t call_pc, lb_release_entry_fn is_entry,
                           lb_tailcall_cache_t *cache);
#endif

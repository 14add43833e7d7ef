/* Frame rules from the DWARF call-frame information (.eh_frame) of the
 * loaded objects, for x86-64: how to get from a frame to its caller.
 *
 * Only the rules compiled code uses are understood: the CFA is rsp or rbp
 * plus a constant, the return address is saved at CFA-8, and rbp is either
 * unchanged or saved at a constant offset from the CFA; or, in a function
 * that realigns its stack (gcc's DRAP: AVX code, `-mstackrealign`), the
 * CFA is read from a slot at rbp minus a constant and rbp is saved at rbp
 * (LB_RULE_DEREF: DW_CFA_def_cfa_expression `breg6 N; deref` with rbp's
 * DW_CFA_expression `breg6 0`). Anything else
 * (CFA expressions as in PLT stubs, registers saved in registers) is
 * LB_RULE_UNKNOWN, and a walk stops there cleanly. The sigreturn
 * trampoline's FDE, marked as a signal frame, is LB_RULE_SIGNAL: its CFA
 * expression is not read, as the frame's layout is the kernel's ABI. An undefined return address (_start, clone) is
 * LB_RULE_END: the outermost frame.
 *
 * Invariants: no malloc, no lock, no system call, no pthread key, no file
 * descriptor; async-signal-safe. The object holding a pc is found with
 * glibc's _dl_find_object (lock-free, async-signal-safe). Rules are cached
 * in one process-wide direct-mapped table of 64-bit words, each written and
 * read with one relaxed atomic access, so racing threads (and a handler
 * interrupting its own thread) can only evict, never tear, an entry. A rule
 * is a pure function of the loaded code: an object unloaded and another
 * loaded at the same address could leave stale rules (a walk through them
 * ends early or at a wrong caller; the per-frame checks in unwind.c bound
 * where it may read). Stack use: under 300 bytes. */
#ifndef LB_UNWIND_CFI_H
#define LB_UNWIND_CFI_H
#include <stdbool.h>
#include <stdint.h>

enum lb_rule_kind {
    LB_RULE_UNKNOWN = 0, /* no usable CFI here: stop */
    LB_RULE_STEP = 1,    /* a frame with a caller, see fields */
    LB_RULE_END = 2,     /* the outermost frame (return address undefined) */
    LB_RULE_DEREF = 3,   /* CFA = *(rbp + cfa_off), cfa_off < 0; rbp saved at rbp;
                          * the return address at CFA-8 */
    LB_RULE_SIGNAL = 4,  /* the kernel's signal frame (an FDE whose CIE says 'S':
                          * glibc's __restore_rt): the interrupted registers are in
                          * the ucontext at the handler's CFA. Never cached. */
};

typedef struct lb_frame_rule {
    uint8_t kind;    /* enum lb_rule_kind */
    bool cfa_rbp;    /* CFA = rbp + cfa_off; else rsp + cfa_off */
    int32_t cfa_off; /* bytes */
    int32_t rbp_off; /* rbp saved at CFA + rbp_off (negative); 0: rbp unchanged */
} lb_frame_rule_t;

/* The rule for the instruction at pc (for a caller frame pass the return
 * address minus one). Never fails: unknown code gives LB_RULE_UNKNOWN. */
lb_frame_rule_t lb_frame_rule(uintptr_t pc);
/* Rule look-ups that had to parse CFI (cache misses), for diagnostics. */
uint64_t lb_frame_rule_misses(void);
/* In a fork child, while the forking thread is the only thread: the pages
 * of the rule cache it shares with its parent are written only once the
 * child itself misses on them often enough. */
void lb_unwind_cfi_fork_child(void);
/* Before a fork: the rules earlier fork children computed imported into
 * empty slots (rule_share.h), then every page of the rule cache mapped
 * (read), so that the child inherits the mappings and its look-ups read
 * without a fault. */
void lb_unwind_cfi_fork_prepare(void);
#endif

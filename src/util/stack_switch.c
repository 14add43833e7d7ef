/* See stack_switch.h. A top-level asm block in a C file, so that every
 * build that compiles the files in src/util (the library, the unit tests,
 * the sampler bench) has it without a rule of its own.
 *
 * The CFI: the frame is an rbp frame (CFA = rbp + 16) whose caller is on
 * the old stack. From the switch to the switch back the return address is
 * undefined, which ends every unwinder's walk from fn here, cleanly, as
 * glibc's clone and makecontext's __start_context end theirs. A CFA that
 * led back to the old stack would take a walk into the caller's frames:
 * gdb then stops with "previous frame inner to this frame (corrupt
 * stack?)" wherever the old stack lies below the new one (a thread's
 * stack mapped below it); and nothing needs those frames: fn is
 * exit-time work of lockblame's, called by lockblame. */
#include "util/stack_switch.h"

/* rdi: fn, rsi: arg, rdx: top */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl lb_stack_switch_call\n"
        ".hidden lb_stack_switch_call\n"
        ".type lb_stack_switch_call, @function\n"
        "lb_stack_switch_call:\n"
        ".cfi_startproc\n"
        "    pushq %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbp, 0\n"
        "    movq %rsp, %rbp\n" /* the old stack's pointer, kept by fn */
        ".cfi_def_cfa_register %rbp\n"
        ".cfi_remember_state\n"
        "    andq $-16, %rdx\n"
        "    movq %rdx, %rsp\n"
        ".cfi_undefined %rip\n"
        "    movq %rdi, %rax\n"
        "    movq %rsi, %rdi\n"
        "    call *%rax\n"
        "    movq %rbp, %rsp\n"
        ".cfi_restore_state\n"
        "    popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        ".cfi_restore %rbp\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size lb_stack_switch_call, .-lb_stack_switch_call\n");

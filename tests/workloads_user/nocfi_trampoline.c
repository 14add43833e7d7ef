/* Release sites called through hand-written assembly without unwind
 * information (no .cfi directives), built -O2 -g as users build. Two
 * threads take turns on one mutex, each through a trampoline of its own:
 *   worker_fp   -> asm_trampoline_fp   -> release_fp_path    (the
 *                  trampoline keeps a frame pointer: push rbp; mov rsp, rbp)
 *   worker_nofp -> asm_trampoline_nofp -> release_nofp_path  (it keeps none)
 * A walk from either release site passes a frame it has no CFI for. It
 * must either continue correctly (to the worker) or end in a frame that
 * says the path was cut there, never skip to a wrong caller. Prints the
 * rounds made. */
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>

#define ROUNDS 20

void asm_trampoline_fp(void (*fn)(void));
void asm_trampoline_nofp(void (*fn)(void));

__asm__(".text\n"
        ".globl asm_trampoline_fp\n"
        ".type asm_trampoline_fp, @function\n"
        "asm_trampoline_fp:\n"
        "    push %rbp\n"
        "    mov %rsp, %rbp\n"
        "    call *%rdi\n"
        "    pop %rbp\n"
        "    ret\n"
        ".size asm_trampoline_fp, .-asm_trampoline_fp\n"
        ".globl asm_trampoline_nofp\n"
        ".type asm_trampoline_nofp, @function\n"
        "asm_trampoline_nofp:\n"
        "    sub $8, %rsp\n"
        "    call *%rdi\n"
        "    add $8, %rsp\n"
        "    ret\n"
        ".size asm_trampoline_nofp, .-asm_trampoline_nofp\n");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
/* Rounds alternate: in round r one thread holds the lock long while the
 * other waits for it (phase 3r: round r begins; 3r + 1: its holder holds
 * the lock; 3r + 2: its waiter is about to call lock; 3r + 3: the waiter
 * has had the lock too), so that each release site carries blame, however
 * the threads are scheduled. */
static unsigned phase;
static __thread bool holding;

static void compute(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned long)i;
}

static void wait_phase(unsigned want)
{
    while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != want)
        sched_yield();
}

/* Inside the lock: the holder announces it and holds until the waiter is
 * on its way into pthread_mutex_lock, then 2 ms more; the waiter ends
 * the round. */
static void hold_turn(void)
{
    unsigned p = __atomic_add_fetch(&phase, 1, __ATOMIC_ACQ_REL);
    if (!holding)
        return;
    wait_phase(p + 1);
    compute(2000000);
}

void release_fp_path(void);
void release_nofp_path(void);

__attribute__((noinline)) void release_fp_path(void)
{
    pthread_mutex_lock(&lock);
    hold_turn();
    pthread_mutex_unlock(&lock);
    compute(1000); /* the unlock is not a tail jump */
}

__attribute__((noinline)) void release_nofp_path(void)
{
    pthread_mutex_lock(&lock);
    hold_turn();
    pthread_mutex_unlock(&lock);
    compute(1000); /* the unlock is not a tail jump */
}

/* Thread `me` (0 or 1) holds in the rounds of its parity, waits in the
 * others; every acquisition goes through its trampoline, called directly
 * (inlined into each worker: a frame-pointer step is trusted only after a
 * direct call into the code without CFI). */
static inline __attribute__((always_inline)) void
take_turns(int me, void (*trampoline)(void (*)(void)), void (*release)(void))
{
    for (unsigned r = 0; r < ROUNDS; r++) {
        holding = r % 2 == (unsigned)me;
        if (holding) {
            wait_phase(3 * r);
        } else {
            wait_phase(3 * r + 1);
            __atomic_add_fetch(&phase, 1, __ATOMIC_ACQ_REL);
        }
        trampoline(release);
    }
}

static void *worker_fp(void *arg)
{
    (void)arg;
    take_turns(0, asm_trampoline_fp, release_fp_path);
    return NULL;
}

static void *worker_nofp(void *arg)
{
    (void)arg;
    take_turns(1, asm_trampoline_nofp, release_nofp_path);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker_fp, NULL);
    pthread_create(&b, NULL, worker_nofp, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%d rounds\n", ROUNDS);
    return 0;
}

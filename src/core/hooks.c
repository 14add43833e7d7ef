/* Running the upper layers' hooks; see hooks.h. The hook tables are
 * read-only data the linker gathered, so this file has no state. */
#include "core/hooks.h"

#include <stdbool.h>

/* The section bounds (weak: a unit test may link no hooks at all). The
 * version script keeps them out of liblockblame.so's dynamic symbols. */
extern const lb_thread_hooks_t __start_lb_thread_hooks[] __attribute__((weak));
extern const lb_thread_hooks_t __stop_lb_thread_hooks[] __attribute__((weak));
extern const lb_process_hooks_t __start_lb_process_hooks[] __attribute__((weak));
extern const lb_process_hooks_t __stop_lb_process_hooks[] __attribute__((weak));

static enum lb_rank nth_rank(int i, bool down)
{
    return (enum lb_rank)(down ? LB_RANKS - 1 - i : i);
}

int lb_hooks_thread(enum lb_thread_step step, lb_thread_t *t)
{
    bool down = step == LB_THREAD_STOP || step == LB_THREAD_COMPACT;
    for (int i = 0; i < LB_RANKS; i++) {
        enum lb_rank rank = nth_rank(i, down);
        for (const lb_thread_hooks_t *h = __start_lb_thread_hooks; h < __stop_lb_thread_hooks;
             h++) {
            if (h->rank != rank)
                continue;
            void (*fn)(lb_thread_t *) = NULL;
            switch (step) {
            case LB_THREAD_INIT:
                if (h->init && h->init(t) != 0)
                    return -1;
                break;
            case LB_THREAD_START:
                fn = h->start;
                break;
            case LB_THREAD_START_FOREIGN:
                fn = h->start_foreign;
                break;
            case LB_THREAD_STOP:
                fn = h->stop;
                break;
            case LB_THREAD_COMPACT:
                fn = h->compact;
                break;
            }
            if (fn)
                fn(t);
        }
    }
    return 0;
}

void lb_hooks_process(enum lb_process_step step, const char *reason, lb_thread_t *self)
{
    bool down = step == LB_PROCESS_QUIESCE || step == LB_PROCESS_FORK_PREPARE;
    for (int i = 0; i < LB_RANKS; i++) {
        enum lb_rank rank = nth_rank(i, down);
        for (const lb_process_hooks_t *h = __start_lb_process_hooks; h < __stop_lb_process_hooks;
             h++) {
            if (h->rank != rank)
                continue;
            void (*fn)(void) = NULL;
            switch (step) {
            case LB_PROCESS_SETUP:
                fn = h->setup;
                break;
            case LB_PROCESS_QUIESCE:
                fn = h->quiesce;
                break;
            case LB_PROCESS_FORK_PREPARE:
                fn = h->fork_prepare;
                break;
            case LB_PROCESS_FORK_PARENT:
                fn = h->fork_parent;
                break;
            case LB_PROCESS_FINISH:
                if (h->finish)
                    h->finish(reason);
                break;
            case LB_PROCESS_FORK_CHILD:
                if (h->fork_child)
                    h->fork_child(self);
                break;
            }
            if (fn)
                fn();
        }
    }
}

/* Samples that do not beat with the program's own timers.
 *
 * The CPU-time timer (backend_timer.c), the default without a PMU, fires
 * only at the scheduler tick. A program whose work is periodic at the
 * tick's rate or a multiple of it (a SIGALRM handler every 4 ms on a
 * HZ=250 kernel, a game loop, a periodic flush) keeps a fixed phase
 * against the tick, so the samples find it always, or never, in the same
 * part of its period: its share of the work comes out anywhere from near
 * zero to double (the issue this file exists for). A perf task-clock
 * event fires on a high-resolution timer, but at a fixed period of CPU
 * time it can beat the same way.
 *
 * So when the program arms a periodic timer (setitimer or timer_settime
 * with an interval, seen by src/interpose/timers.c), sampling moves, for
 * that process, from the CPU-time timer to task-clock at the same mean
 * period, each period drawn at random from [P/2, 3P/2) (one ioctl per
 * sample): samples at random instants of CPU time estimate each part's
 * share without bias. One `lockblame:` line says so. An event the user
 * chose (LOCKBLAME_EVENT, -e) is left alone, and so is perf already in
 * use.
 *
 * Invariants: lb_tick_alias_switched goes 0 -> 1 once, after
 * lb_sampler_cfg's ops, event and why were rewritten (by the one thread
 * that won the exchange on `tried`); handlers read it relaxed and then
 * act only on their own thread's events. Each thread moves its own timer
 * to a perf event in its next sample's handler (perf_event_open, fcntl,
 * mmap, ioctl: system calls, no allocation, no lock), or in the call that
 * armed the program's timer for the calling thread. */
#ifndef LB_SAMPLER_TICK_ALIAS_H
#define LB_SAMPLER_TICK_ALIAS_H
#include <stdbool.h>
#include <stdint.h>

#include "core/thread.h"

extern uint32_t lb_tick_alias_switched;

/* The program armed a periodic timer (what: "setitimer(ITIMER_REAL)",
 * ...; interval_ns its period). Not async-signal-safe (it may print and
 * prepare the perf event); errno preserved. */
void lb_tick_alias_program_timer(const char *what, uint64_t interval_ns);

/* In t's sampling handler after a sample: move t's timer to a perf event
 * if sampling has switched, and draw the next period. Async-signal-safe. */
void lb_tick_alias_after_sample(lb_thread_t *t);
#endif

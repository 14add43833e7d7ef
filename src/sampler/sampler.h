/* CPU sampling: one perf_event (or CPU-time timer) per thread, delivered as
 * a signal to that thread, whose handler unwinds into the thread's CCT.
 *
 * Backends sit behind one ops table (backend_perf.c, backend_timer.c):
 * perf_event with the event encoded by libpfm4 (default cycles, else
 * task-clock at 1 ms), then timer_create(CLOCK_THREAD_CPUTIME_ID).
 *
 * Invariants: the handler never allocates, never takes a lock, preserves
 * errno, and touches only the interrupted thread's own lb_thread. It drops
 * (and counts) a sample that arrives while that thread is inside lockblame
 * (busy) or while sampling is being stopped. */
#ifndef LB_SAMPLER_H
#define LB_SAMPLER_H
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct lb_thread;

/* An all-zero record is a valid "not sampled" state: has_perf/has_timer say
 * whether perf_fd/timer are live, so a zeroed perf_fd is never closed. */
typedef struct lb_sampler_thread {
    int perf_fd;            /* perf_event fd, -1 if none (valid only while has_perf) */
    bool has_perf;          /* perf_fd is open and owned by this record */
    void *perf_ring;        /* perf_fd's mmap'd ring (header + 1 data page); NULL: REFRESH mode */
    bool has_timer;         /* the timer backend armed timer */
    timer_t timer;
    uint32_t in_handler;    /* nonzero while the handler runs on this thread */
    uint64_t samples;       /* samples recorded, in periods (a late timer
                               signal counts 1 + its overruns) */
    uint64_t dropped;       /* samples that could not be recorded (all causes) */
    uint64_t busy_samples;  /* of dropped: those that found busy set, i.e. the
                               thread was inside lockblame (its own cost) */
} lb_sampler_thread_t;

/* Choose the event and install the handler. Reads LOCKBLAME_EVENT,
 * LOCKBLAME_FREQ and LOCKBLAME_SIGNAL. Prints one lockblame: line on any
 * fallback. Returns 0 when some backend works, -1 when sampling is off
 * (the rest of lockblame still runs). Call once, from one thread, before
 * any lb_sampler_thread_start, with that thread's busy held if it has a
 * record (libunwind's one-time init takes a pthread mutex); later calls
 * return the first call's result. */
int lb_sampler_setup(void);
/* Start sampling the calling thread. Failure leaves it unsampled (counted,
 * one lockblame: line per process). Starting twice is harmless. */
void lb_sampler_thread_start(struct lb_thread *self);
/* Stop sampling the calling thread and close its fd/timer. Idempotent. */
void lb_sampler_thread_stop(struct lb_thread *self);
/* Stop all sample recording process-wide and wait until no handler is
 * inside any CCT. After this, CCTs can be read by any thread. */
void lb_sampler_quiesce(void);
/* Re-open after fork in the child for the calling thread. Also closes the
 * inherited event fds of the other records still in the registry (without
 * touching the parent's events), so call it before pruning the registry. */
void lb_sampler_after_fork_child(struct lb_thread *self);

/* What was actually used, for the run table. */
const char *lb_sampler_event_name(void);   /* "cycles", "task-clock", "timer:thread-cputime", "none" */
const char *lb_sampler_event_requested(void);
uint64_t lb_sampler_period(void);
const char *lb_sampler_period_unit(void);  /* "ns" or "events" */
bool lb_sampler_period_is_time(void);
/* Frequency mode (cycles by default): samples per second of running time,
 * else 0; lb_sampler_period() is then 0. */
uint64_t lb_sampler_freq(void);
/* CPU nanoseconds one sample stands for: the period of a time event, 1e9/freq
 * in frequency mode, 0 when unknown (a count event with a fixed period). */
double lb_sampler_ns_per_sample(void);
/* The signal samples arrive on, 0 when sampling is off. */
int lb_sampler_signal(void);
/* Threads whose sampling could not be started. */
uint64_t lb_sampler_start_failures(void);
#endif

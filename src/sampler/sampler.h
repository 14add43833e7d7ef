/* CPU sampling: one perf_event (or CPU-time timer) per thread, delivered as
 * a signal to that thread, whose handler unwinds into the thread's CCT.
 *
 * Backends sit behind one ops table (backend_perf.c, backend_timer.c):
 * perf_event with the event encoded by libpfm4 (default cycles, else
 * task-clock at 1 ms), then timer_create(CLOCK_THREAD_CPUTIME_ID).
 *
 * Invariants: the handler never allocates, never takes a lock, preserves
 * errno, and touches only the interrupted thread's own lb_thread (and,
 * in a sampled spin wait, the lock's figures by atomic adds: see
 * lb_sampler_spin_hook). It drops
 * (and counts) a sample that arrives while that thread is inside lockblame
 * (busy) or while sampling is being stopped. */
#ifndef LB_SAMPLER_H
#define LB_SAMPLER_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct lb_thread;

/* An all-zero record is a valid "not sampled" state: has_perf/has_timer say
 * whether perf_fd/timer are live, so a zeroed perf_fd is never closed. */
typedef struct lb_sampler_thread {
    int perf_fd;     /* perf_event fd, -1 if none (valid only while has_perf) */
    bool has_perf;   /* perf_fd is open and owned by this record */
    void *perf_ring; /* perf_fd's mmap'd ring (header + 1 data page); NULL: REFRESH mode */
    bool has_timer;  /* the timer backend armed timer */
    timer_t timer;
    uint32_t in_handler;   /* nonzero while the handler runs on this thread */
    uint64_t samples;      /* samples recorded, in periods (a late timer
                               signal counts 1 + its overruns) */
    uint64_t dropped;      /* samples that could not be recorded (all causes) */
    uint64_t busy_samples; /* of samples: those that found busy set, i.e. the
                               thread was inside lockblame (its own cost,
                               recorded as overhead at the root) */
    /* unsampled CPU time (unsampled.c): written by the thread itself, and
     * by the finishing thread once sampling is quiesced */
    bool unsampled;           /* not sampled now (signal blocked, no event) */
    bool unsampled_seen;      /* it has been unsampled at some time */
    uint8_t unsampled_why;    /* lb_unsampled_reason of the latest interval */
    uint64_t unsampled_since; /* thread CPU ns when the current interval began */
    uint64_t unsampled_ns;    /* CPU ns of the closed intervals; after the
                                 final credit, with the residue */
    uint64_t residue_ns;      /* of unsampled_ns after the final credit: the
                                 residue, CPU time no sample saw although the
                                 thread was sampled (not a blocked interval) */
    uint32_t unsampled_node;  /* CCT node (start routine -> marker) credited, 0 = none yet */
    uint32_t credited;        /* 1 once the final credit is claimed (exchange) */
    uint64_t cpu_at_stop_ns;  /* a live thread's CPU clock when sampling stopped
                               (quiesce), 0 if not read: the profile's CPU
                               time, without the final write's own cost */
    uint64_t at_stop_ns;      /* lb_now_ns() as cpu_at_stop_ns was read, 0 if
                               it was not: where a live thread's time in the
                               profile ends, its CPU time's with it */
    /* with at_stop_ns: the live thread's run delay then (util/run_delay.h),
     * UINT64_MAX if not read (off CPU under 1 ms, or no schedstat) */
    uint64_t run_delay_at_stop_ns;
} lb_sampler_thread_t;

/* Choose the event and install the handler. Reads LOCKBLAME_EVENT,
 * LOCKBLAME_FREQ and LOCKBLAME_SIGNAL. Prints one lockblame: line on any
 * fallback. Returns 0 when some backend works, -1 when sampling is off
 * (the rest of lockblame still runs). Call once, from one thread, before
 * any lb_sampler_thread_start, with that thread's busy held if it has a
 * record (setup calls libc functions that lock, such as dl_iterate_phdr); later calls
 * return the first call's result. */
int lb_sampler_setup(void);
/* Start sampling the calling thread. Failure leaves it unsampled (counted,
 * one lockblame: line per process). Starting twice is harmless. */
void lb_sampler_thread_start(struct lb_thread *self);
/* Stop sampling the calling thread and close its fd/timer; its unsampled
 * CPU time is credited up to its clock at self->cpu_ns (read by
 * lb_thread_detach before its stop hooks). Idempotent. */
void lb_sampler_thread_stop(struct lb_thread *self);
/* Whether t ran enough CPU time to have been sampled, whether a sample saw
 * it or not: at least one sampling period and LB_SAMPLED_WORK_MIN_NS
 * between lockblame's start in this image (or the fork) and quiesce (its
 * exit, for a thread that ended): t->cpu_ns or cpu_at_stop_ns. A CPU-time timer is checked only on a scheduler tick the
 * thread is running at, so a thread that runs in short bursts on a busy
 * machine, or that blocks the sampling signal, may have no sample at all;
 * its work is credited as unsampled (unsampled.c). False when a sample
 * stands for no known CPU time (an event counted by a fixed period).
 * Valid after lb_sampler_quiesce. */
bool lb_sampler_ran_sampled_work(const struct lb_thread *t);
/* The CPU time that counts as work without a sample: the longest scheduler
 * tick (HZ=100), far more than a wrapper (a shell, env, make waiting for
 * its jobs) runs between lockblame's start and its exit. */
#define LB_SAMPLED_WORK_MIN_NS 10000000u
/* Stop all sample recording process-wide and wait until no handler is
 * inside any CCT. After this, CCTs can be read by any thread. */
void lb_sampler_quiesce(void);
/* Re-open after fork in the child for the calling thread. Also closes the
 * inherited event fds of the other records still in the registry (without
 * touching the parent's events), so call it before pruning the registry. */
void lb_sampler_after_fork_child(struct lb_thread *self);

/* The calling thread changed its signal mask with (how, set) from old
 * (after a successful sigprocmask/pthread_sigmask of the program; set is
 * the program's set as it was before the call): when it blocks the sampling
 * signal, sampling of this thread pauses and its CPU time from then on is
 * credited to its start routine; when it unblocks it, sampling resumes.
 * Cheap when nothing changes (no system call). */
void lb_sampler_mask_changed(struct lb_thread *self, int how, const sigset_t *set,
                             const sigset_t *old);
/* The calling thread's mask changed in a way only the kernel knows (sigset
 * with SIG_HOLD): re-read it. */
void lb_sampler_mask_reread(struct lb_thread *self);
/* The sampling signal, for the signal wrappers: nonzero only while
 * sampling is on. */
int lb_sampler_signal_now(void);
/* The program sets a disposition for signo, the sampling signal: move
 * sampling to a free signal (or stop it) and give signo back with the
 * disposition the program had before lockblame, so that the program's own
 * call then acts natively. Prints one lockblame: line. */
void lb_sampler_release_signal(int signo);
/* What sigaction(signo, NULL, &old) must show the program for the
 * sampling signal. */
void lb_sampler_program_view(int signo, struct sigaction *old);
/* The program asks for the default action (handler) on the sampling
 * signal, whose disposition is the default in its view already: nothing
 * changes for the program, so sampling stays where it is (a fork child
 * resetting every signal before exec, as git's start_command does, moved
 * it back and forth between two signals with a line each time). */
bool lb_sampler_default_kept(sighandler_t handler, int flags);

/* Run metadata (meta table), valid after lb_sampler_quiesce. */
typedef struct lb_sampler_summary {
    const char *mechanism; /* "perf_event", "timer", "none" */
    const char *why;       /* why this mechanism */
    bool with_kernel;      /* kernel-mode CPU time is sampled */
    double rate_hz;        /* samples taken + dropped per CPU second (effective rate) */
    double cpu_s;          /* CPU time of all threads */
    uint64_t samples, dropped;
    double unsampled_s; /* CPU time credited to start routines, unsampled */
    uint32_t unsampled_threads;
    double unsampled_blocked_s; /* of it, in threads that blocked the signal or had
                                     * no event (the rest: the tails of sampled threads) */
    uint32_t unsampled_blocked_threads;
    uint32_t timer_fallbacks; /* threads sampled by the timer for want of an fd */
} lb_sampler_summary_t;
void lb_sampler_summarize(lb_sampler_summary_t *out);
/* The summary as meta rows (docs/SCHEMA.md): put(ctx, key, value) for
 * each. */
void lb_sampler_meta_each(void (*put)(void *ctx, const char *key, const char *value), void *ctx);

/* What was actually used, for the run table. */
const char *
lb_sampler_event_name(void); /* "cycles", "task-clock", "timer:thread-cputime", "none" */
const char *lb_sampler_event_requested(void);
uint64_t lb_sampler_period(void);
const char *lb_sampler_period_unit(void); /* "ns" or "events" */
bool lb_sampler_period_is_time(void);
/* Frequency mode (cycles by default): samples per second of running time,
 * else 0; lb_sampler_period() is then 0. */
uint64_t lb_sampler_freq(void);
/* CPU nanoseconds one sample stands for: the period of a time event, 1e9/freq
 * in frequency mode, 0 when unknown (a count event with a fixed period). */
double lb_sampler_ns_per_sample(void);
/* Set once at setup by the layer that measures spin waits by samples
 * (locks/spin_ops.c): called by the handler, on a thread whose
 * lb_thread.spin_sampled is set, with the sample's calling context and
 * the CPU time it stands for. Async-signal-safe. */
struct lb_cct_node;
extern void (*lb_sampler_spin_hook)(struct lb_thread *t, struct lb_cct_node *node, uint64_t ns);
/* Set once at setup by the layer that blames hot mutexes by samples of
 * their holders (blame/mutex_sampled.c): called by the handler for every
 * sample it records (a thread's own code, a wait, lockblame's own), with
 * the CPU time it stands for and whether a CPU-time timer took it (at a
 * scheduler tick). Async-signal-safe: atomic adds, a clock read, and
 * stores to the sampled thread's own record. */
extern void (*lb_sampler_holder_hook)(struct lb_thread *t, uint64_t ns, bool at_tick);
/* The signal samples arrive on, 0 when sampling is off. */
int lb_sampler_signal(void);
/* Threads whose sampling could not be started. */
uint64_t lb_sampler_start_failures(void);
#endif

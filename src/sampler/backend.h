/* Internal to src/sampler: the backend ops table, the configuration chosen
 * at setup, and the functions the sampler's files share.
 *
 * Invariants:
 *  - lb_sampler_cfg is written by lb_sampler_setup, on one thread,
 *    before any thread starts sampling; afterwards it is read-only (the
 *    handler reads it without synchronisation), but for one move from the
 *    CPU-time timer to task-clock (tick_alias.h), which rewrites ops,
 *    event, why, is_time and with_kernel, and only then publishes it.
 *  - lb_sampler_stopping goes 0 -> 1 once (lb_sampler_quiesce) and never
 *    back; handlers read it with seq_cst after publishing in_handler.
 *  - A thread's event (perf fd or timer) is owned by whoever clears its
 *    has_perf/has_timer flag with an atomic exchange: the thread itself
 *    (stop), or the quiescing thread. Only the owner disarms and frees it. */
#ifndef LB_SAMPLER_BACKEND_H
#define LB_SAMPLER_BACKEND_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/thread.h"
#include "sampler/sampler.h"
#include "sampler/sigreal.h"

typedef struct lb_sampler_ops {
    const char *name;
    /* Open and arm an event that signals the calling thread t.
     * Returns 0, or -errno with t left unsampled. */
    int (*thread_start)(lb_thread_t *t);
    /* Disarm and free t's event. Callable from any thread; idempotent. */
    void (*thread_stop)(lb_thread_t *t);
    /* Make t's live event (if any) signal signo from now on. Callable
     * from any thread. Returns 0, or -errno with t's event gone. */
    int (*retarget)(lb_thread_t *t, int signo);
    /* In t's signal handler after a sample: let the next one come.
     * Async-signal-safe; a no-op for a periodic timer. */
    void (*rearm)(lb_thread_t *t, const siginfo_t *info);
    /* How many periods the sample in info stands for (>= 1): a CPU-time
     * timer only fires on a scheduler tick and reports the periods it
     * skipped as overruns. Async-signal-safe. */
    uint32_t (*weight)(const siginfo_t *info);
} lb_sampler_ops_t;

extern const lb_sampler_ops_t lb_sampler_perf_ops;
extern const lb_sampler_ops_t lb_sampler_timer_ops;

#define LB_EVENT_NAME_MAX 64

/* What LOCKBLAME_EVENT / _FREQ / _SIGNAL asked for (0 / "" = default). */
typedef struct lb_sampler_request {
    char event[LB_EVENT_NAME_MAX]; /* "" = default */
    char raw[128];                 /* LOCKBLAME_EVENT as given, "default" if unset */
    uint64_t period;               /* @PERIOD, 0 = none */
    uint64_t freq;                 /* LOCKBLAME_FREQ in Hz, 0 = none */
    int signo;                     /* LOCKBLAME_SIGNAL, 0 = default */
} lb_sampler_request_t;

/* What setup chose. */
typedef struct lb_sampler_config {
    const lb_sampler_ops_t *ops;   /* NULL: sampling off */
    char event[LB_EVENT_NAME_MAX]; /* event used, "none" when off */
    char requested[128];
    uint64_t period;  /* sample period (ns if is_time), 0 in freq mode */
    uint64_t freq;    /* Hz in frequency mode, else 0 */
    bool is_time;     /* period counts nanoseconds */
    bool with_kernel; /* kernel-mode CPU time is sampled too */
    int signo;        /* 0 when off; changes only in sigconflict.c */
    char why[192];    /* why this mechanism (run metadata) */
} lb_sampler_config_t;

extern lb_sampler_config_t lb_sampler_cfg;
extern uint32_t lb_sampler_stopping;

/* event.c: parse the environment into req. Each bad value prints one
 * lockblame: line and is replaced by its default. Never fails. */
void lb_sampler_read_env(lb_sampler_request_t *req);
/* event.c: probe backends in order (requested event or cycles, task-clock,
 * timer) and fill cfg->ops/event/period/freq/is_time. Prints at most one
 * lockblame: line. Returns 0, or -1 with cfg->ops NULL (sampling off). */
int lb_sampler_choose(const lb_sampler_request_t *req, lb_sampler_config_t *cfg);

/* backend_perf.c: encode name with libpfm4, set the period (period != 0)
 * or frequency, and open it once for the calling thread as a probe. On
 * success the encoding is kept for thread_start and *is_time is set.
 * Returns 0, or -1 with a reason in why. */
int lb_perf_prepare(const char *name, uint64_t period, uint64_t freq, bool *is_time,
                    bool *with_kernel, char *why, size_t whylen);
/* backend_timer.c: check that a thread CPU-time timer can be created and
 * keep the period for thread_start. Returns 0, or -1 with a reason. */
int lb_timer_prepare(uint64_t period_ns, char *why, size_t whylen);

/* sampler.c: open t's event with the chosen backend; when perf runs out
 * of file descriptors, the timer instead (said once). 0 or -errno. */
int lb_sampler_event_start(lb_thread_t *self);
/* sampler.c: stop t's event, whichever backend holds it (a thread may
 * hold a timer after a fallback). Any thread; idempotent. */
void lb_sampler_event_stop(lb_thread_t *t);
/* sigmask.c: whether the calling thread blocks signo now (one syscall). */
bool lb_sampler_signal_blocked_here(int signo);

/* handler.c: put the sampling handler on signo (no checks). Returns 0 or
 * -1 with errno. */
int lb_sampler_handler_on(int signo);
/* handler.c: whether signo has no disposition (SIG_DFL, no handler). */
bool lb_sampler_signal_is_free(int signo);
/* handler.c: a free real-time signal other than avoid, 0 if none. */
int lb_sampler_find_free_signal(int avoid);
/* handler.c: the disposition the program had on the sampling signal
 * before lockblame took it (what the program must see). */
const struct sigaction *lb_sampler_program_action(void);

/* handler.c: sampling now runs on signo, a free signal: it becomes the
 * signal to give back, with SIG_DFL as the program's view of it. */
void lb_sampler_handler_moved(int signo);

/* handler.c: install the handler on want (0 = SIGRTMIN+5), or on another
 * free real-time signal if want already has a disposition (one line).
 * Returns the signal, or -1 (one line) when none could be installed. */
int lb_sampler_install_handler(int want);
/* handler.c: put back what the program had before, when sampling is off. */
void lb_sampler_uninstall_handler(void);
/* handler.c: parse "39", "SIGPROF", "RTMIN+3"...; 0 if not acceptable. */
int lb_sampler_parse_signal(const char *s);
/* A perf event's mmap'd ring: the control page plus one data page
 * (1 + 2^0 pages), enough for the records between two signals. */
#define LB_PERF_RING_BYTES (2u * 4096u)

#endif

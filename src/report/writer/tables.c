/* The per-thread, per-object and per-process tables of the in-memory
 * profile: thread, site, object_blame, sync_object and run. Reads the
 * library's state on the finishing thread after the sampler is quiesced;
 * other threads may still run but no longer write what is read here,
 * except live objects' accrual, which is settled under their meta lock. */
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blame/object_blame.h"
#include "blame/object_stats.h"
#include "blame/shared_objs.h"
#include "blame/sites.h"
#include "blame/spin_sampled.h"
#include "core/phase.h"
#include "locks/lifecycle.h"
#include "report/writer/output.h"
#include "report/writer/writer_int.h"
#include "sampler/sampler.h"
#include "sampler/unsampled.h"
#include "util/clock.h"
#include "util/proc_numbers.h"
#include "util/run_delay.h"

void lb_tables_span(const lb_thread_t *t, uint64_t now, uint64_t *end_ns, uint64_t *cpu_ns)
{
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) {
        *end_ns = t->end_ns;
        *cpu_ns = t->cpu_ns;
    } else if (t->sampler->at_stop_ns) { /* before this write's own cost */
        *end_ns = t->sampler->at_stop_ns;
        *cpu_ns = t->sampler->cpu_at_stop_ns;
    } else {
        *end_ns = now;
        *cpu_ns = lb_unsampled_cpu_used(t);
    }
}

uint64_t lb_tables_cpu_ns(const lb_thread_t *t)
{
    uint64_t end_ns, cpu_ns;
    lb_tables_span(t, 0, &end_ns, &cpu_ns);
    return cpu_ns;
}

double lb_tables_run_delay_s(const lb_thread_t *t, double unseen_without_s)
{
    uint64_t ns = UINT64_MAX;
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
        ns = t->run_delay_ns;
    else if (unseen_without_s < LB_RUN_DELAY_MIN_UNSEEN_NS / 1e9)
        ns = UINT64_MAX;
    else if (t->sampler->at_stop_ns) /* its lifetime's end (lb_tables_span) */
        ns = t->sampler->run_delay_at_stop_ns;
    else if (!lb_run_delay_ns(lb_thread_os_tid(t), &ns))
        ns = UINT64_MAX;
    return ns == UINT64_MAX ? -1 : ns / 1e9;
}

/* thread.unseen_s: the time the thread was neither on a CPU, nor
 * runnable waiting for one, nor in a wait lockblame saw (docs/SCHEMA.md),
 * from its row's figures and its metric rows' wait_s (all written before
 * the thread rows). Spin waits are on CPU and in wait_s both, which can
 * only lower the figure; a run delay not given (run_delay_s -1) stays in
 * it: under 1 ms where lb_tables_run_delay_s left it unread, all of it
 * where the kernel does not say. */
static double unseen_s(const writer_t *w, const lb_thread_t *t, double start_s, double end_s,
                       double cpu_s, double run_delay_s)
{
    double unseen = end_s - start_s - cpu_s - (run_delay_s >= 0 ? run_delay_s : 0);
    if (unseen < 0)
        unseen = 0;
    if (t->id < w->thread_slots && w->waits_s)
        unseen -= w->waits_s[t->id];
    return unseen > 0 ? unseen : 0;
}

void lb_tables_threads(writer_t *w)
{
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_THREAD);
    uint64_t start = lb_runtime_start_ns(), now = lb_now_ns();
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        lb_wbind_int(st, 1, t->id);
        lb_wbind_int(st, 2, lb_thread_os_tid(t));
        if (t->start_routine) {
            lb_wbind_int(st, 3, lb_merge_frame(w, t->start_routine));
            lb_wbind_int(st, 4, lb_merge_mapped_node(w, t->creator_id, t->creator_node));
        }
        double start_s = t->start_ns > start ? (t->start_ns - start) / 1e9 : 0;
        uint64_t end, cpu;
        lb_tables_span(t, now, &end, &cpu);
        double end_s = end > start ? (end - start) / 1e9 : 0, cpu_s = cpu / 1e9;
        lb_wbind_double(st, 5, start_s);
        lb_wbind_double(st, 6, end_s);
        lb_wbind_double(st, 7, cpu_s);
        lb_wbind_int(st, 8, (int64_t)t->sampler->samples);
        lb_wbind_int(st, 9, (int64_t)t->sampler->dropped);
        double unseen = unseen_s(w, t, start_s, end_s, cpu_s, -1);
        double run_delay = lb_tables_run_delay_s(t, unseen);
        if (run_delay >= 0) {
            lb_wbind_double(st, 10, run_delay);
            unseen = unseen_s(w, t, start_s, end_s, cpu_s, run_delay);
        }
        lb_wbind_double(st, 11, unseen);
        lb_wstep(st);
    }
}

/* One site row, added to the row already there (another thread image's,
 * or a cond wait's mutex releases). */
static void insert_site(writer_t *w, uint32_t frame, uint32_t thread, lb_obj_kind kind,
                        uint64_t acquisitions, uint64_t contended, uint64_t releases)
{
    lb_wstmt_t *st = w->ins_site;
    lb_wbind_int(st, 1, frame);
    lb_wbind_int(st, 2, thread);
    lb_wbind_text(st, 3, lb_obj_kind_name(kind));
    lb_wbind_int(st, 4, (int64_t)acquisitions); /* at lock sites */
    lb_wbind_int(st, 5, (int64_t)contended);
    lb_wbind_int(st, 6, (int64_t)releases);
    lb_wstep(st);
}

void lb_tables_sites(writer_t *w, lb_thread_t *t)
{
    const lb_site_t *slots = t->sites ? t->sites->slot : t->kept_sites;
    uint32_t n = t->sites ? LB_SITE_SLOTS : t->n_kept_sites;
    for (uint32_t i = 0; i < n; i++) {
        const lb_site_t *s = &slots[i];
        if (t->sites ? !lb_site_in_use(t, i) : !s->key)
            continue; /* a live table's pages no claim wrote are not read */
        uint32_t frame = lb_merge_frame(w, lb_merge_site_pc(w, lb_site_ra(s->key) - 1));
        lb_obj_kind kind = lb_site_kind(s->key);
        insert_site(w, frame, t->id, kind, s->acquisitions, s->contended, s->releases);
        /* Each completed cond wait (an acquisition at its call site) released
         * its mutex there, inside glibc: counted here rather than by the
         * wait, whose bookkeeping runs inside the caller's hold. */
        if (kind == LB_OBJ_COND && s->acquisitions)
            insert_site(w, frame, t->id, LB_OBJ_MUTEX, 0, 0, s->acquisitions);
    }
}

void lb_tables_object_blame(writer_t *w, lb_thread_t *t)
{
    const lb_object_blame_table_t *table = t->object_blame;
    for (uint32_t i = 0; i < table->capacity; i++) {
        const lb_object_blame_t *e = &table->slot[i];
        if (!e->object)
            continue;
        lb_wstmt_t *st = w->ins_blame;
        lb_wbind_int(st, 1, e->object);
        lb_wbind_int(st, 2, lb_merge_leaf_node(w, t->id, e->node));
        lb_wbind_int(st, 3, t->id);
        lb_wbind_double(st, 4, e->blame_ns / 1e9);
        lb_wbind_int(st, 5, (int64_t)e->count);
        lb_wstep(st);
    }
}

/* Waits on process-shared objects that a process outside the tree ended
 * (blame/shared_objs.h): integer keys, which add up over the tree's
 * processes. */
static void shared_count_meta(writer_t *w, const char *prefix, uint64_t waits, uint64_t ns)
{
    if (!waits)
        return;
    char key[64], value[32];
    snprintf(key, sizeof key, "%s_us", prefix);
    snprintf(value, sizeof value, "%llu", (unsigned long long)(ns / 1000));
    lb_wmeta(w, key, value);
    snprintf(key, sizeof key, "%s_waits", prefix);
    snprintf(value, sizeof value, "%llu", (unsigned long long)waits);
    lb_wmeta(w, key, value);
}

/* ... and waits in progress of processes killed outright, which this
 * process dropped from the tree's records: never written. */
static void shared_outside_meta(writer_t *w)
{
    shared_count_meta(w, "shared_outside", lb_shared_outside_waits(), lb_shared_outside_ns());
    shared_count_meta(w, "shared_killed", lb_shared_killed_waits(), lb_shared_killed_ns());
}

void lb_tables_shared_accrual(const lb_object_stats_t *s, double *held, double *handoff)
{
    /* Its waits accrued across the tree's processes; this process's part
     * is what its releases took, the hand-off its waits took, the
     * idleness of its waits ended from outside the tree, of its waits
     * that ran out of time, and what the tree still owed at its end
     * (blame/shared_objs.h). Atomic loads: a time window reads it while
     * the program runs. */
    double blamed, outside, settled, expired;
    __atomic_load(&s->blamed_ns, &blamed, __ATOMIC_RELAXED);
    __atomic_load(&s->outside_ns, &outside, __ATOMIC_RELAXED);
    __atomic_load(&s->settled_ns, &settled, __ATOMIC_RELAXED);
    __atomic_load(&s->expired_ns, &expired, __ATOMIC_RELAXED);
    __atomic_load(&s->shared_handoff_ns, handoff, __ATOMIC_RELAXED);
    *held = blamed + outside + settled + expired;
}

void lb_tables_objects(writer_t *w)
{
    uint64_t now = w->now;
    lb_mon_for_each(lb_mon_settle_live, &now);
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
        lb_spin_sampled_flush(t); /* the sampled spin waits threads still keep */
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_OBJECT);
    uint32_t count = lb_object_stats_count();
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        uint64_t sampled_waits = s ? lb_object_stats_fold_sampled(s) : 0;
        if (!s || !s->addr ||
            (!s->acquisitions && !s->contended && !s->wait_ns && s->blamed_ns <= 0 &&
             s->settled_ns <= 0))
            continue; /* forgotten in a fork child (fork_forget.c); a process that only
                       * posted a shared semaphore keeps its blame's row */
        if (s->shared)
            lb_tables_shared_accrual(s, &s->accrued_held_ns, &s->handoff_ns);
        double unattributed = s->accrued_held_ns - s->blamed_ns;
        lb_wbind_int(st, 1, i);
        lb_wbind_text(st, 2, lb_obj_kind_name((lb_obj_kind)s->kind));
        lb_wbind_int(st, 3, (int64_t)s->addr);
        if (s->first_node)
            lb_wbind_int(st, 4, lb_merge_mapped_node(w, s->first_thread, s->first_node));
        if (!s->acquisitions_lost) /* else unknown (object_stats.h): NULL */
            lb_wbind_int(st, 5, (int64_t)s->acquisitions);
        lb_wbind_int(st, 6, (int64_t)s->contended);
        lb_wbind_double(st, 7, s->wait_ns / 1e9);
        lb_wbind_double(st, 8, s->blamed_ns / 1e9);
        lb_wbind_double(st, 9, s->handoff_ns / 1e9);
        lb_wbind_double(st, 10, (unattributed > 0 ? unattributed : 0) / 1e9);
        lb_wbind_int(st, 11, (int64_t)sampled_waits);
        lb_wstep(st);
    }
    for (int k = 0; k < LB_OBJ_KINDS; k++) {
        uint64_t acquisitions = lb_object_totals_unbound((lb_obj_kind)k);
        for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
            acquisitions += t->unrecorded_acquisitions[k];
        if ((int64_t)acquisitions <= 0)
            continue; /* (below 0 only if a count was folded twice: memcpy'd mutexes) */
        lb_wbind_int(st, 1, count + (uint32_t)k);
        lb_wbind_text(st, 2, lb_obj_kind_name((lb_obj_kind)k));
        lb_wbind_int(st, 5, (int64_t)acquisitions);
        for (int c = 6; c <= 11; c++)
            lb_wbind_int(st, c, 0);
        lb_wstep(st);
    }
    shared_outside_meta(w);
}

/* The command line as the process began. A program may rewrite its argv
 * strings for a process title (redis-server shows "redis-server *:6379"),
 * and /proc/self/cmdline would read that title at exit. glibc passes every
 * shared object's constructors argc and argv (a preloaded one's too). */
static char started_command[4096];

__attribute__((constructor(150))) static void remember_command_line(int argc, char **argv,
                                                                    char **envp)
{
    (void)envp;
    size_t used = 0;
    for (int i = 0; argv && i < argc && argv[i]; i++) {
        size_t len = strlen(argv[i]);
        if (used + len + (i > 0) >= sizeof started_command)
            break;
        if (i > 0)
            started_command[used++] = ' ';
        memcpy(started_command + used, argv[i], len);
        used += len;
    }
    started_command[used] = '\0';
}

const char *lb_tables_command_line(void)
{
    static char buf[4096];
    if (started_command[0])
        return started_command;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strcpy(buf, "?");
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return strcpy(buf, "?");
    for (ssize_t i = 0; i < n - 1; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\0'))
        buf[--n] = '\0'; /* a process title pads with spaces */
    return buf;
}

/* The image's executable, read from /proc once per image: a fork child
 * runs its parent's (the first read of /proc in a fresh process costs
 * hundreds of microseconds on the VMs measured), and only an exec
 * changes it. */
static char executable[PATH_MAX];
static int executable_state; /* 0 unread, 1 being read, 2 read */

static void read_executable(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
}

const char *lb_tables_executable(char *own, size_t size)
{
    int state = 0;
    if (__atomic_load_n(&executable_state, __ATOMIC_ACQUIRE) == 2)
        return executable;
    if (!__atomic_compare_exchange_n(&executable_state, &state, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        read_executable(own, size); /* another thread is reading it */
        return own;
    }
    read_executable(executable, sizeof executable);
    __atomic_store_n(&executable_state, 2, __ATOMIC_RELEASE);
    return executable;
}

void lb_tables_run(writer_t *w, const char *reason, uint64_t samples, uint64_t dropped)
{
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_RUN);
    char own[PATH_MAX];
    lb_wbind_text(st, 1, lb_tables_command_line());
    lb_wbind_text(st, 2, lb_tables_executable(own, sizeof own));
    lb_wbind_int(st, 3, lb_own_pid());
    lb_wbind_text(st, 4, lb_sampler_event_name());
    lb_wbind_text(st, 5, lb_sampler_event_requested());
    lb_wbind_int(st, 6, (int64_t)lb_sampler_period());
    lb_wbind_text(st, 7, lb_sampler_period_unit());
    lb_wbind_double(st, 8, w->ns_per_sample);
    lb_wbind_double(st, 9, lb_runtime_start_unix());
    lb_wbind_double(st, 10, (lb_now_ns() - lb_runtime_start_ns()) / 1e9);
    /* Threads of this process: the registry (a fork child's holds only
     * its own), not the id counter, which a child inherits. */
    int64_t threads = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
        threads++;
    lb_wbind_int(st, 11, threads);
    lb_wbind_int(st, 12, (int64_t)samples);
    lb_wbind_int(st, 13, (int64_t)dropped);
    lb_wbind_text(st, 14, reason);
    lb_wbind_int(st, 15, getppid());
    lb_wbind_int(st, 16, (int64_t)lb_runtime_proc_start(lb_own_pid()));
    lb_wbind_text(st, 17, lb_output_run_key());
    lb_wstep(st);
}

/* CPU nanoseconds per sample: the period for clock events; measured CPU
 * time over samples taken for counter events (cycles). */
double lb_tables_ns_per_sample(uint64_t *samples_out, uint64_t *dropped_out)
{
    uint64_t samples = 0, dropped = 0, cpu = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        samples += t->sampler->samples;
        dropped += t->sampler->dropped;
        cpu += lb_tables_cpu_ns(t);
    }
    *samples_out = samples;
    *dropped_out = dropped;
    if (lb_sampler_period_is_time())
        return (double)lb_sampler_period();
    return samples + dropped ? (double)cpu / (double)(samples + dropped) : 0;
}

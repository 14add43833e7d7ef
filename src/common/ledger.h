/* The tree's ledger of processes: which of a profiled tree's processes
 * wrote their profile. A process killed outright (SIGKILL, as a server's
 * immediate shutdown sends once its grace period runs out) cannot write,
 * and nothing else would say it existed; the ledger lets the tree's root
 * (`lockblame run`, or the first profiled process) count such processes
 * when it ends, say how many in its summary, and note them in the
 * database (meta processes_unwritten, processes_unwritten_writing) for the
 * report's header.
 *
 * The ledger is a file beside the database (lb_ledger_path), mapped shared
 * by every process of the tree: each claims one slot at its start (at
 * the library's start, and again in a fork child), with its pid and the
 * boot-time clock read then (no /proc read: see lb_ledger_same_process),
 * marks it writing when its final write begins and done when
 * that ends (written, or nothing to write; an exec hands on to the next
 * image, which claims a slot of its own), or failed when the write could
 * not be made (SQLite busy past the timeout, a full disk, a foreign
 * file: the process said why in its own lockblame: line, or, in a tree
 * whose summary its root or `lockblame run` prints, left the line to that
 * summary, the first such reason kept in `failure`). Whoever counts
 * removes the file.
 *
 * Invariants: `used` only grows (atomic add); a slot is written only by
 * the process that claimed it, its state by atomic stores, in the order
 * RUNNING -> WRITING -> DONE or FAILED. A process is gone when /proc has
 * no process of that pid that started by the slot's claim (in the same
 * clock tick or before), or it is a zombie; a FAILED slot counts whether
 * its process is gone or not.
 *
 * The ledger also holds the spool's counters and the duty word of its
 * bound (report/writer/spool_bound.h, which states their invariants). */
#ifndef LB_COMMON_LEDGER_H
#define LB_COMMON_LEDGER_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LB_LEDGER_SLOTS 4096u
#define LB_LEDGER_MAGIC 0x6c62706cu /* "lbpl" */

enum {
    LB_LEDGER_FREE,
    LB_LEDGER_RUNNING,
    LB_LEDGER_WRITING,
    LB_LEDGER_DONE,
    LB_LEDGER_FAILED
};

typedef struct lb_ledger_slot {
    int32_t pid;
    uint32_t state;
    uint64_t claimed_ns; /* CLOCK_BOOTTIME at the claim: after the process started */
} lb_ledger_slot_t;

typedef struct lb_ledger {
    uint32_t magic;
    uint32_t used; /* slots claimed (may exceed LB_LEDGER_SLOTS: the rest went unrecorded) */
    /* Set once, by the tree's root as it ends, before it adds the run's
     * pending profiles (common/spool.h): a process that ends later adds
     * its profile itself. */
    uint32_t spool_closed;
    /* The spool's bound (report/writer/spool_bound.h): records the
     * tree's processes wrote into the spool, and records commits (the
     * library's and the CLI's) took out of it (each counter wraps; their difference is an
     * estimate of what is pending), and the process that holds the duty
     * to commit when the spool is full (0: none). */
    uint32_t spooled;
    uint32_t merged;
    /* Why the tree's first failed write failed, where its process left
     * the line to the tree's summary (report/writer/ledger.h,
     * lb_ledger_failure_left): that write's SQLite result code, set once
     * (CAS from 0); 0 while none did. */
    uint32_t failure;
    uint64_t committer; /* pid | its kernel start time's low 32 bits << 32 */
    /* The run the file was made for (lb_ledger_run_hash of its key), set
     * once by its maker, `lockblame run` or the tree's root, after the
     * database's path passed its check; 0 in a ledger of an earlier
     * build. */
    uint64_t run;
    uint32_t pad[6];
    lb_ledger_slot_t slot[LB_LEDGER_SLOTS];
} lb_ledger_t;
/* The layout every build of a tree shares (a library upgraded while a
 * tree runs maps the same file). */
_Static_assert(offsetof(lb_ledger_t, committer) == 24 && offsetof(lb_ledger_t, run) == 32 &&
                   offsetof(lb_ledger_t, slot) == 64,
               "the ledger's layout is shared by every build");

/* The processes the ledger says ended without writing their profile. */
typedef struct lb_ledger_tally {
    int before_writing; /* killed before their final write began */
    int while_writing;  /* killed while it ran */
    int failed;         /* whose write failed */
    int failure;        /* the first failure left to the summary: an SQLite
                         * result code (0: each failed process said why) */
    int running;        /* still running (a daemon that left the tree's root):
                         * each adds its profile when it ends */
} lb_ledger_tally_t;

/* The ledger's file for the database at db_path. */
void lb_ledger_path(char *buf, size_t size, const char *db_path);
/* Whether the file system of the database at db_path has room for its
 * ledger now: false (why says so) where a file of the ledger's size in
 * its directory cannot have its blocks (no space, over quota, past the
 * process's file size limit), the disk too full for the tree's profiles
 * as well; true where it can, or where the test itself cannot be made (a
 * write will say why). A tree's maker (its
 * root, `lockblame run`) asks before profiling anything: without the
 * ledger each process of the tree would say its own failed write. */
bool lb_ledger_room(const char *db_path, char *why, size_t size);
/* The ledger's `run` for run_key: a hash of it, never 0. */
uint64_t lb_ledger_run_hash(const char *run_key);
/* Whether the ledger beside the database at db_path was made for the run
 * run_key: its maker made it after the path passed the run's check (a
 * file there that is not a lockblame database keeps a run from
 * starting), so a file there that is not (yet) an SQLite database is the
 * run's own, being made or torn by a write that failed (a full disk),
 * not a foreign one. A read of the file's head, no mapping. */
bool lb_ledger_of_run(const char *db_path, const char *run_key);
/* Whether the database at db_path, which SQLite refused with `code` (its
 * extended code from a failed read), is the run run_key's own torn by a
 * write that failed: no database (SQLITE_NOTADB) or a corrupt one
 * (SQLITE_CORRUPT), beside a ledger made for the run. */
bool lb_ledger_torn_own(int code, const char *db_path, const char *run_key);
/* What the tree's root says where /proc names it by another number than
 * getpid() (a /proc of another pid namespace: `unshare --pid --fork`
 * without --mount-proc): the tree's look-ups by pid below then find other
 * processes. */
#define LB_PROC_NUMBERS_OTHER_LINE                                                             \
    "/proc here is another pid namespace's: processes of the tree killed before writing their" \
    " profile may go uncounted, and a process-shared object's waits in processes that end may" \
    " be dropped; mount a /proc for this namespace (unshare --mount-proc) for whole figures"
/* The kernel start time of process pid (its /proc/PID/stat field 22), 0
 * if there is none or it is a zombie (not one whose leader thread alone
 * has ended: its other threads run on); with parent, its parent's pid too
 * (field 4) where it returns nonzero. */
uint64_t lb_proc_start_and_parent(pid_t pid, pid_t *parent);
static inline uint64_t lb_proc_start_of(pid_t pid)
{
    return lb_proc_start_and_parent(pid, NULL);
}
/* CLOCK_BOOTTIME now, in ns: a slot's claimed_ns. */
uint64_t lb_ledger_now_ns(void);
/* boot_ns of CLOCK_BOOTTIME in the kernel's clock ticks, the unit of a
 * process's start (lb_proc_start_of); 0 where the tick rate is unknown. */
uint64_t lb_ledger_ticks(uint64_t boot_ns);
/* Whether the process that claimed a slot at claimed_ns is the one that
 * has its pid now, which started at start_ticks (lb_proc_start_of, in
 * clock ticks of the same boot-time clock). It is if it started no later
 * than the claim's tick: a process that reused the pid started after this
 * one ended, after the claim, so only within the claim's own tick (a
 * 10 ms window in which the kernel would have to hand the pid out again,
 * which it does only after cycling through all the others). */
bool lb_ledger_same_process(uint64_t claimed_ns, uint64_t start_ticks);
/* Count the processes of l that are gone without having written, those
 * whose write failed, and those still running. */
void lb_ledger_tally(const lb_ledger_t *l, lb_ledger_tally_t *t);
/* One view of l: its header and its claimed slots, each read once, into
 * copy (its magic 0 for a NULL or foreign l), so that counts made from it
 * agree with each other (lb_ledger_tally_copy, lb_ledger_records) though
 * the tree's processes go on claiming and marking slots of l. */
void lb_ledger_copy(const lb_ledger_t *l, lb_ledger_t *copy);
/* lb_ledger_tally of copy (lb_ledger_copy of live), where a slot's
 * process that is gone has its state read again from live (NULL: copy's
 * own): one that wrote and ended since the copy is not counted lost. */
void lb_ledger_tally_copy(const lb_ledger_t *copy, const lb_ledger_t *live, lb_ledger_tally_t *t);
/* Whether process pid, which started at start_ticks (lb_proc_start_of),
 * holds a slot of l that is still running or writing: a process that
 * adds its profile when it ends. False for a NULL or foreign l. */
bool lb_ledger_records(const lb_ledger_t *l, pid_t pid, uint64_t start_ticks);
/* At the tree's end, in the database at path if it exists: t (meta
 * processes_unwritten, processes_unwritten_writing,
 * processes_unwritten_failed and processes_unwritten_failure, where some
 * are)
 * and the command line of the tree's root, the program the user ran
 * (meta root_command; the report's command: line). */
void lb_ledger_note(const char *path, const lb_ledger_tally_t *t, const char *root_command);
/* "N processes ended without writing their profile (...)", or "" for none. */
void lb_ledger_text(const lb_ledger_tally_t *t, char *buf, size_t size);
/* The spool's counters (report/writer/spool_bound.h states their
 * invariants), for every merger, the library's and the CLI's: the mark a
 * merger reads before it lists the spool, and what it took after its
 * commit (`taken` records added, dropped as added before, or renamed
 * .bad; drained: it took every record it listed after the mark). */
uint32_t lb_ledger_spool_mark(lb_ledger_t *l);
void lb_ledger_spool_took(lb_ledger_t *l, uint32_t mark, unsigned taken, bool drained);
#endif

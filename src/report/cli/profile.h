/*
 * profile.h - an in-memory copy of one lockblame database (schema versions
 * 1..LB_SCHEMA_VERSION of common/schema.h, see docs/SCHEMA.md), loaded with
 * one SELECT per table and indexed in C so that the views never run
 * per-node queries.
 *
 * All cross references are array indices (int32_t, -1 = none), resolved from
 * the database ids at load time. The tree is kept as a CSR child list and a
 * preorder, computed by walking from the root, so a corrupt parent cycle can
 * never loop a view.
 */
#ifndef LB_CLI_PROFILE_H
#define LB_CLI_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/kinds.h"
#include "common/schema.h"
#include "report/cli/util.h"

enum lb_metric {
    LB_M_IDLENESS,
    LB_M_WORK,
    LB_M_WAIT,
    LB_M_OVERHEAD,
    LB_NMETRICS
};
extern const char *const lb_metric_names[LB_NMETRICS];
int lb_metric_parse(const char *s); /* -1 if unknown */

/* One profiled process image (a row of run): the whole run in a
 * version-2 database. p->run sums the selected ones. */
struct lb_run {
    int64_t id;             /* run.id */
    int64_t ppid, exec_gen; /* 0 when unknown (version 2) */
    bool selected;          /* by --pid/--comm (all when none given) */
    char *command;          /* argv joined, trailing spaces trimmed, "" if unknown */
    char *event;            /* event actually used */
    char *event_requested;
    char *period_unit;
    char *exit_reason;
    char *executable; /* "" if unknown */
    int64_t pid, period, threads, samples, samples_dropped;
    double ns_per_sample, start_unix, duration_s;
};

struct lb_module {
    int64_t id;
    char *path;
    const char *base_name; /* points into path */
    char *build_id;        /* hex; NULL when unknown (schema < 6, or none) */
};

struct lb_frame {
    int64_t id;
    int32_t module;   /* module index, -1 unknown */
    uint64_t offset;  /* address - module base */
    char *function;   /* raw (mangled) name, NULL if unknown */
    char *file;       /* NULL without debug info */
    int64_t line;     /* 0 without debug info */
    char *label;      /* demangled name or "module+0xOFF", lazily */
    char *desc;       /* "label (file:line)", lazily */
    char *proc_label; /* "[module]" for unnamed frames, lazily */
};

struct lb_node {
    int64_t id;
    int32_t parent; /* node index, -1 for the root */
    int32_t frame;  /* frame index, -1 for the root or unknown */
    int32_t depth;  /* computed from the root, not read */
};

struct lb_mrow {  /* one metric row: exclusive values of (node, thread) */
    int32_t node; /* node index */
    int64_t thread_id;
    double work, overhead, wait;
    double idle[LB_OBJ_KINDS]; /* blame received, by object kind */
    int64_t blamed_count;
    double undirected; /* undirected idleness (thesis ch. 5), 0 in version-1 databases */
};

struct lb_thread {
    int64_t id, tid;
    int32_t process;     /* index into p->procs */
    int32_t start_frame; /* frame index, -1 for main/unknown */
    double start_s, end_s, cpu_s;
    int64_t samples, samples_dropped;
    double unseen_s; /* off CPU in no seen wait (common/unseen.h); -1: unknown (schema < 5) */
};

struct lb_site {
    int32_t frame; /* frame index */
    int64_t thread_id;
    int kind; /* lb_obj_kind */
    int64_t acquisitions, contended, releases;
};

struct lb_syncobj {
    int64_t id;
    int kind;         /* lb_obj_kind, -1 if unknown */
    bool has_address; /* false for the per-kind aggregate rows */
    uint64_t address;
    int32_t first_node;              /* node index, -1 unknown */
    int64_t acquisitions, contended; /* acquisitions -1: unknown */
    double wait_s, blame_s, handoff_s, unattributed_s;
    int64_t sampled_waits; /* of contended: spin waits measured by CPU samples */
    int32_t proc;          /* process index, -1 unknown (one-process databases) */
};

struct lb_objblame {
    int32_t object; /* syncobj index */
    int32_t node;   /* node index */
    int64_t thread_id;
    double blame_s;
    int64_t count;
};

/* A structural wait (docs/DESIGN.md rule 6; table structural_wait, optional):
 * a thread parked on a cond/sem until shutdown. */
struct lb_structural {
    int64_t thread_id;     /* the parked thread */
    int32_t object;        /* syncobj index, -1 unknown */
    int kind;              /* lb_obj_kind */
    double start_s, end_s; /* since the run's start */
    bool open;             /* still waiting when the profile was taken */
    int32_t node;          /* release site node its blame went to, -1 none */
    double blame_s;        /* of that node's idleness, the structural part */
    bool helper;           /* an idle helper's row (none before schema version 10) */
};

struct lb_totals {
    double work, overhead, wait, idleness, effort;
    double idle_kind[LB_OBJ_KINDS];
    double sync_wait, sync_blame, sync_handoff, sync_unattributed;
    /* structural waits (rule 6): blame on joins, blame of parked waits,
	 * and the time of parked waits still open at exit (unattributed) */
    double structural_join, structural_parked, structural_helper, structural_open;
    /* off-CPU time in waits lockblame cannot see (common/unseen.h), the
     * threads' lifetimes, and whether the header says so */
    double unseen, lifetime;
    bool unseen_notable;
};

/* Which processes a report covers: all (pid 0, comm NULL), or those with
 * this pid and/or this command name (argv[0]'s or the executable's base
 * name). */
struct lb_select {
    int64_t pid;
    const char *comm;
    const char *window;        /* --window N or N-M: time windows by number (windows.h) */
    const char *since, *until; /* --since/--until T: the windows that overlap */
};

struct lb_profile {
    char *path;
    struct lb_run run; /* the selected processes together: the first's command and
				 * event, summed threads and samples, their time span */
    struct lb_run *procs;
    int32_t nprocs; /* every process of the database */
    int32_t nselected;
    bool command_is_root; /* run.command is the tree's root's (meta root_command) */
    struct lb_module *modules;
    int32_t nmodules;
    struct lb_frame *frames;
    int32_t nframes;
    struct lb_node *nodes;
    int32_t nnodes;
    struct lb_mrow *mrows;
    int32_t nmrows; /* sorted by node */
    struct lb_thread *threads;
    int32_t nthreads;           /* of the selected processes */
    struct lb_map thread_index; /* thread id -> index in threads */
    struct lb_site *sites;
    int32_t nsites;
    struct lb_syncobj *objs;
    int32_t nobjs;
    struct lb_objblame *oblame;
    int32_t noblame;
    struct lb_structural *structural;
    int32_t nstructural;

    uint8_t *frame_runtime; /* per frame, lb_frame_is_runtime (at load; NULL before) */
    int32_t *release_entry; /* per thread, lb_release_entries (at load; NULL before) */
    int32_t root;           /* node index of the root */
    const char *root_label; /* lb_frame_label(p, -1); NULL: "[root]" */
    int32_t *mrow_start;    /* nnodes + 1: rows of node i are [start[i], start[i+1]) */
    int32_t *child_start;   /* nnodes + 1: CSR offsets into child_idx */
    int32_t *child_idx;
    int32_t *preorder; /* nodes reachable from root, parents first */
    int32_t npreorder;
    struct lb_totals totals;
    char *names_note; /* modules still without names, how to get them; NULL: none */
};

/* Keep only the object kinds in mask (bit 1 << lb_obj_kind): idleness of
 * other kinds, their objects, sites and structural waits are dropped and
 * the totals recomputed (kinds.c). Work, wait and overhead are kept. */
void lb_profile_keep_kinds(struct lb_profile *p, unsigned mask);
/* Parse "mutex,cond,..." into a mask; 0 if any name is unknown. */
unsigned lb_kinds_parse(const char *list);
/* Structural idleness per node and kind (rule 6): joins entirely, plus the
 * parked waits' share of their release sites. out[nnodes * LB_OBJ_KINDS]. */
void lb_node_structural(const struct lb_profile *p, double *out);
/* Per node and kind (out: nnodes * LB_OBJ_KINDS): the releases whose blame
 * is the structural part of lb_node_structural's parked waits, one per
 * object whose parked waits the node's signal/post ended (joins aside:
 * each join's blame is one release of its own, its blamed_count). */
void lb_node_structural_releases(const struct lb_profile *p, int64_t *out);
void lb_profile_totals(struct lb_profile *p); /* tree.c: recompute p->totals */
/* The process (index into p->procs) of a thread id, -1 when the thread is
 * not one of the selected processes' (load.c). */
int32_t lb_thread_process(const struct lb_profile *p, int64_t thread_id);

/* Open, validate and load the database at `path`. Bad input (missing,
 * empty, not SQLite, corrupt, too new, missing tables) exits with status 2
 * and one "lockblame:" line; never returns NULL. */
struct lb_profile *lb_profile_load(const char *path);
/* The same, keeping only the processes sel selects (rows of other
 * processes are not loaded); exits 2 with one line when none matches. */
struct lb_profile *lb_profile_load_select(const char *path, const struct lb_select *sel);
void lb_profile_free(struct lb_profile *p);

/* Newest lockblame.*.db in the current directory by mtime; exits with 2
 * when there is none. Returns a malloc'd name. */
char *lb_find_default_db(void);

/* The value of one metric in a row. */
double lb_mrow_value(const struct lb_mrow *r, enum lb_metric m);
double lb_mrow_idleness(const struct lb_mrow *r);

/* Exclusive value of metric m per node (summed over threads) into out[nnodes]. */
void lb_node_exclusive(const struct lb_profile *p, enum lb_metric m, double *out);
/* Inclusive from exclusive, via the preorder, into incl[nnodes]. */
void lb_node_inclusive(const struct lb_profile *p, const double *excl, double *incl);
double lb_metric_total(const struct lb_profile *p, enum lb_metric m);

/* Labels and keys (symbols.c). */
const char *lb_frame_label(struct lb_profile *p, int32_t frame);        /* "[root]" for -1 */
const char *lb_frame_module(const struct lb_profile *p, int32_t frame); /* basename or "" */
/* "[module]" for display; a pseudo-module already in brackets ("[vdso]")
 * as it is. */
void lb_put_module_bracketed(struct lb_buf *out, const char *module);
/* A source path for display: relative paths as they are, absolute ones
 * relative to the current directory when under it, else ".../dir/file". */
void lb_put_short_path(struct lb_buf *out, const char *path);
/* "function (file:line)" or the bare label when file is unknown. */
void lb_frame_describe(struct lb_profile *p, int32_t frame, struct lb_buf *out);
/* " (short/path.c:LINE)", or without ":LINE", for a frame with a file;
 * nothing otherwise (lb_frame_describe's tail). */
void lb_put_frame_file(struct lb_buf *out, const struct lb_profile *p, int32_t frame, bool line);
/* The same, cached in the frame: valid as long as the profile. */
const char *lb_frame_desc(struct lb_profile *p, int32_t frame);
/* Matching key across runs: function\tfile\tline, or module+0xOFF. */
void lb_frame_key(struct lb_profile *p, int32_t frame, struct lb_buf *out);
/* Procedure label: the function, or "[module]" for an unnamed frame, so
 * that by-function views group unnamed code by module. */
const char *lb_frame_proc_label(struct lb_profile *p, int32_t frame);
/* Procedure key: procedure label\tmodule. */
void lb_frame_proc_key(struct lb_profile *p, int32_t frame, struct lb_buf *out);
/* Release sites (site_frame.c): a frame of the C/C++ runtime (system
 * header inline frame or runtime library); the innermost program frame at
 * the same address as frame (frame itself if none); the innermost node
 * from node up whose frame is the program's (node itself if none). */
bool lb_frame_is_runtime(const struct lb_profile *p, int32_t frame);
int32_t lb_frame_program(const struct lb_profile *p, int32_t frame);
int32_t lb_site_node(const struct lb_profile *p, int32_t node);
/* At load, once frames and modules are in: lb_frame_is_runtime of every
 * frame, kept in p->frame_runtime (release-site walks ask it per node). */
void lb_profile_runtime_frames(struct lb_profile *p);
/* The frame that names the release site of node in the blame of thread
 * thread_id: its innermost program frame (lb_site_node); for a context
 * with none (a std::thread's end is in libstdc++ alone), the function the
 * thread ran (entry: from lb_release_entries, views.h; or NULL). */
int32_t lb_release_frame(struct lb_profile *p, int32_t node, int64_t thread_id,
                         const int32_t *entry);
char *lb_demangle(const char *name); /* malloc'd; copy of name if not C++ */

#endif

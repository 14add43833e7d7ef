/* Writing the profile: one SQLite database per process (docs/SCHEMA.md),
 * written atomically (temporary file in the same directory, then rename)
 * at exit, on SIGINT/SIGTERM, and before exec.
 *
 * Failure contract: lb_write_profile returns 0, or -1 after printing one
 * lockblame: line; it never changes the program's exit status, and it
 * leaves no partial file at `path`. */
#ifndef LB_WRITER_H
#define LB_WRITER_H

typedef struct lb_summary {
    double effort_s;          /* work + idleness, all threads (as the CLI's header) */
    double work_s;            /* CPU samples while not waiting */
    double idleness_s;        /* idleness blamed on calling contexts */
    double wait_s;            /* measured by the waiters */
    char top_site[256];       /* "function (file:line)" of the top release site, or "" */
    double top_site_s;
    const char *top_object;   /* kind of the top site */
    const char *path;         /* where the profile was written (malloc'd) */
} lb_summary_t;

int lb_write_profile(const char *requested_path, const char *reason, lb_summary_t *summary);
#endif

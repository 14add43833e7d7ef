/* The figures of the one-to-five-line stderr summary, read from a
 * lockblame database (any version): the library prints them for its
 * own process, `lockblame run` for the whole run. Depends on nothing but
 * SQLite. */
#ifndef LB_COMMON_DB_SUMMARY_H
#define LB_COMMON_DB_SUMMARY_H
#include <sqlite3.h>
#include <stddef.h>

typedef struct lb_db_summary {
    double effort_s;    /* work + idleness, all threads (as the CLI's header) */
    double work_s;      /* CPU samples while not waiting */
    double idleness_s;  /* idleness blamed on calling contexts */
    double wait_s;      /* measured by the waiters */
    char top_site[256]; /* "function (file:line)" of the top release site, or "" */
    double top_site_s;
    char top_object[16]; /* kind of the top site */
    int processes;       /* rows of run */
    double structural_s; /* of idleness: joins + parked until shutdown + idle helpers */
    double structural_join_s, structural_parked_s, structural_helper_s; /* its parts */
    double unseen_s;    /* off CPU in no seen wait, all threads (common/unseen.h);
                          * 0 in databases older than schema version 5 */
    double lifetime_s;  /* the threads' lifetimes, summed */
    double seen_wait_s; /* the waits lockblame saw, as the threads timed them */
} lb_db_summary_t;

/* Fill *out from the database in db's main schema. Fields it cannot read
 * stay zero/empty; never fails otherwise. */
void lb_db_summary(sqlite3 *db, lb_db_summary_t *out);
/* The summary's figures, into buf: "effort X s = work Y s + idleness Z s
 * (P% idle); threads waited W s". */
void lb_db_summary_effort_text(const lb_db_summary_t *s, char *buf, size_t size);
/* The summary's release-site line, into buf (empty: none to print): the
 * top release site, and where structural waits (reported apart) outweigh
 * it, how much of the idleness they are. */
void lb_db_summary_site_line(const lb_db_summary_t *s, char *buf, size_t size);
/* The structural figure's parts that are not zero, into buf: "joins X s
 * + parked until shutdown Y s + idle helpers Z s" (empty: none). */
void lb_structural_parts_text(char *buf, size_t size, double join_s, double parked_s,
                              double helper_s);
/* The summary's unseen-waits line, into buf (empty: none to print): when
 * the threads were off CPU in waits lockblame cannot see for a notable
 * share of their lives (common/unseen.h). */
void lb_db_summary_unseen_line(const lb_db_summary_t *s, char *buf, size_t size);
#endif

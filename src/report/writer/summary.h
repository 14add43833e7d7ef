/* The stderr summary of one process under plain LD_PRELOAD: at most two
 * lockblame: lines. Under `lockblame run` the run prints one for the whole
 * database instead (util/log.h, lb_summary_by_run). */
#ifndef LB_WRITER_SUMMARY_H
#define LB_WRITER_SUMMARY_H
#include <sqlite3.h>

/* Print the summary of the profile in db's main schema, written to path. */
void lb_summary_print(sqlite3 *db, const char *path);
#endif

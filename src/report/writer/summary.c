#include "report/writer/summary.h"

#include "common/db_summary.h"
#include "util/log.h"

void lb_summary_print(sqlite3 *db, const char *path)
{
    lb_db_summary_t s = { 0 };
    lb_db_summary(db, &s);
    double pct = s.effort_s > 0 ? 100.0 * s.idleness_s / s.effort_s : 0;
    lb_warn("effort %.3f s = work %.3f s + idleness %.3f s (%.1f%% idle); threads waited %.3f s;"
            " profile %s",
            s.effort_s, s.work_s, s.idleness_s, pct, s.wait_s, path);
    char line[512];
    lb_db_summary_site_line(&s, line, sizeof line);
    if (line[0])
        lb_warn("%s", line);
    lb_db_summary_unseen_line(&s, line, sizeof line);
    if (line[0])
        lb_warn("%s", line);
}

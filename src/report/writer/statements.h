/* The inserts of a process's exit write, by name: the writer's files
 * prepare them by these names, and the template (profile_db.h) prepares
 * them ahead, before the fork, so that a fork child's write steps them
 * without parsing them again. */
#ifndef LB_WRITER_STATEMENTS_H
#define LB_WRITER_STATEMENTS_H

#define LB_SQL_INSERT_FRAME  "INSERT INTO frame VALUES(?,?,?,?,?,?)"
#define LB_SQL_INSERT_MODULE "INSERT INTO module VALUES(?,?,?,?)"
#define LB_SQL_INSERT_NODE   "INSERT INTO node VALUES(?,?,?,?)"
#define LB_SQL_INSERT_METRIC "INSERT INTO metric VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
#define LB_SQL_ADD_SITE                                              \
    "INSERT INTO site VALUES(?,?,?,?,?,?) ON CONFLICT DO UPDATE SET" \
    " acquisitions = acquisitions + excluded.acquisitions,"          \
    " contended = contended + excluded.contended,"                   \
    " releases = releases + excluded.releases"
#define LB_SQL_ADD_BLAME                                        \
    "INSERT INTO object_blame VALUES(?,?,?,?,?) ON CONFLICT DO" \
    " UPDATE SET blame_s = blame_s + excluded.blame_s,"         \
    " count = count + excluded.count"
#define LB_SQL_INSERT_THREAD     "INSERT INTO thread VALUES(?,?,?,?,?,?,?,?,?,1,?,?)"
#define LB_SQL_INSERT_OBJECT     "INSERT INTO sync_object VALUES(?,?,?,?,?,?,?,?,?,?,1,?)"
#define LB_SQL_INSERT_RUN        "INSERT INTO run VALUES(1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?)"
#define LB_SQL_INSERT_STRUCTURAL "INSERT INTO structural_wait VALUES(?,?,?,?,?,?,?,?,?)"
#define LB_SQL_ADD_SYMBOL        "INSERT OR IGNORE INTO symbol VALUES(?,?,?,?,?,?,?)"
#define LB_SQL_ADD_FUNCTIONS     "INSERT OR IGNORE INTO module_function VALUES(?,?,?)"
#endif

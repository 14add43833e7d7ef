/* The names of a run's files: the default database name,
 * lockblame.<prog>.<pid>.db, built in one place for the library (first
 * profiled process of a tree) and for `lockblame run` (which names it
 * after PROG's pid), and the shared table's file beside it. Depends on
 * nothing. */
#ifndef LB_COMMON_DB_NAME_H
#define LB_COMMON_DB_NAME_H
#include <stdbool.h>
#include <stddef.h>

/* Write the name for program prog (its base name is used) and pid into
 * out; returns what snprintf returns. */
int lb_default_db_name(char *out, size_t size, const char *prog, int pid);
/* The file beside the database at db_path that holds the tree's shared
 * table of process-shared objects (blame/shared_objs.h), which the tree's
 * processes map, exec'd ones included; removed at the tree's end. */
int lb_shared_table_path(char *out, size_t size, const char *db_path);
/* The directory of the database at path into dir ("/" for one at the
 * root, "." for a name without a slash); false when it does not fit. */
bool lb_db_dir(const char *path, char *dir, size_t size);
/* Whether a profile can be written at path (absolute): its directory is
 * there, searchable and writable (the database, its journal and the
 * tree's files beside it are made there), and the file, if there, is
 * writable. false with why[] saying why (strerror) otherwise. */
bool lb_db_writable(const char *path, char *why, size_t size);
#endif

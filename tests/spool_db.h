/* A run's database in a fresh directory for the unit tests that spool
 * records (common/spool.h), and its removal with its spool. Include
 * after check.h. */
#ifndef LB_TESTS_SPOOL_DB_H
#define LB_TESTS_SPOOL_DB_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/spool.h"

/* A fresh directory's database path in db[size] (no file made). */
static inline void spool_db_fresh(char *db, size_t size)
{
    char dir[] = "/tmp/lockblame-spool-test.XXXXXX";
    ASSERT_NOT_NULL(mkdtemp(dir));
    snprintf(db, size, "%s/run.db", dir);
}

/* db, its spool and its directory removed. */
static inline void spool_db_remove(const char *db)
{
    char spool[4200], path[4500];
    lb_spool_dir(spool, sizeof spool, db);
    DIR *d = opendir(spool);
    for (struct dirent *e; d && (e = readdir(d));) {
        snprintf(path, sizeof path, "%s/%s", spool, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(spool);
    unlink(db);
    snprintf(path, sizeof path, "%s", db);
    *strrchr(path, '/') = '\0';
    rmdir(path);
}
#endif

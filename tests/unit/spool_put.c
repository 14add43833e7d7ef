/* Unit tests for lb_spool_put (src/common/spool.h) when the disk fills
 * up under a write: this program's own writev (which the spool's calls
 * bind to, linked into the program) writes part of a frame and returns
 * the short count, as a full file system does. The writer then adds its
 * profile itself (lb_spool_put returns -1), and the log must not keep the
 * part: a merger would take it for a damaged record and say that a
 * profile could not be read, though the writer added it.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "spool_db.h"

#include "common/spool.h"

/* The bytes the next writev may write (negative: all of them). */
static long writev_room = -1;

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    if (writev_room < 0)
        return syscall(SYS_writev, fd, iov, n);
    struct iovec cut[8];
    size_t room = (size_t)writev_room;
    int k = 0;
    for (int i = 0; i < n && i < 8 && room; i++, k++) {
        cut[k] = iov[i];
        if (cut[k].iov_len > room)
            cut[k].iov_len = room;
        room -= cut[k].iov_len;
    }
    writev_room = -1;
    return k ? syscall(SYS_writev, fd, cut, k) : 0;
}

/* The size of run_key's open log (-1: none). */
static long log_size(const char *db, const char *run_key)
{
    char spool[4200], log[4400];
    lb_spool_dir(spool, sizeof spool, db);
    snprintf(log, sizeof log, "%s/%s.lblog", spool, run_key);
    struct stat st;
    return stat(log, &st) == 0 ? (long)st.st_size : -1;
}

static void test_short_write_leaves_nothing(void)
{
    char db[4096], record[3000];
    spool_db_fresh(db, sizeof db);
    memset(record, 'r', sizeof record);
    ASSERT_EQ(lb_spool_put(db, "k1", record, 100), 0); /* a whole frame first */
    long whole = log_size(db, "k1");
    ASSERT_GT(whole, 100);
    writev_room = 1000; /* the disk fills up inside the next frame */
    ASSERT_EQ(lb_spool_put(db, "k1", record, sizeof record), -1);
    ASSERT_EQ(log_size(db, "k1"), whole);
    ASSERT_EQ(lb_spool_put(db, "k1", record, 200), 0); /* the next writer's frame follows */
    ASSERT_EQ(log_size(db, "k1"), 2 * whole + 100);
    spool_db_remove(db);
}

static void test_no_room_at_all(void)
{
    char db[4096], record[500];
    spool_db_fresh(db, sizeof db);
    memset(record, 'r', sizeof record);
    writev_room = 0;
    ASSERT_EQ(lb_spool_put(db, "k2", record, sizeof record), -1);
    ASSERT_EQ(log_size(db, "k2"), 0);
    spool_db_remove(db);
}

CHECK_MAIN(test_short_write_leaves_nothing, test_no_room_at_all)

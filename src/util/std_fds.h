/* Holding the program's closed standard descriptors while SQLite has a
 * file open. SQLite's unix VFS never keeps a database on descriptor 0, 1
 * or 2: where open() returns one of them (the program started with stdin,
 * stdout or stderr closed), it closes it, opens /dev/null there for good
 * (not close-on-exec) and opens the file again. The program's own first
 * open() would then get another number than natively. lb_std_fds_hold
 * fills each closed one of 0, 1, 2 with /dev/null (close-on-exec), so that
 * SQLite's files get 3 or more; lb_std_fds_release closes those again.
 *
 * Invariants: only descriptors that were closed are filled, and only those
 * that hold fills are closed, and only while they are still its /dev/null
 * (close-on-exec, the null device): a descriptor that another thread took
 * between the check and the fill, or put there since (dup2), is left to
 * it. Both keep errno. */
#ifndef LB_STD_FDS_H
#define LB_STD_FDS_H

/* A mask of the descriptors filled (bit fd), for lb_std_fds_release. */
unsigned lb_std_fds_hold(void);
void lb_std_fds_release(unsigned held);
#endif

/* Room in a file that processes map shared (the tree's ledger, its table
 * of process-shared objects). A file grown with ftruncate is sparse: the
 * first write to each page through a mapping allocates its block, and on
 * a full file system that write is a SIGBUS, in the program lockblame
 * profiles or in `lockblame run`. Blocks allocated up front
 * (posix_fallocate) are written without one. Depends on nothing of ours;
 * not for signal handlers. */
#ifndef LB_COMMON_FILE_ROOM_H
#define LB_COMMON_FILE_ROOM_H
#include <stdbool.h>
#include <sys/types.h>

/* Whether fd's file is at least `size` bytes long with its blocks
 * allocated: grown and allocated here when it is shorter (a file already
 * that long is taken as its maker left it). false when the room cannot
 * be had (the disk is full, or the size is past the process's file size
 * limit; errno says why): the caller then does without the file. */
bool lb_file_room(int fd, off_t size);
#endif

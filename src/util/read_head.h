/* Reading a small file (/proc, /sys) in one go, with raw system calls:
 * no stdio, no malloc, no cancellation point, usable in any thread state
 * lockblame runs in (thread exit included). Its descriptor lives only
 * for the call. */
#ifndef LB_UTIL_READ_HEAD_H
#define LB_UTIL_READ_HEAD_H
#include <stddef.h>

/* Up to size-1 bytes of path into buf, NUL-terminated. Returns the length
 * read, or -1 when path cannot be opened (buf untouched). errno may
 * change: callers on the program's behalf save it. */
long lb_read_head(const char *path, char *buf, size_t size);
#endif

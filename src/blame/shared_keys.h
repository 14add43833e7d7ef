/* The keys of process-shared objects across a profiled tree
 * (blame/shared_objs.h): an object in a file mapped MAP_SHARED (a file,
 * a POSIX shared memory object from shm_open, a memfd) is named by the
 * file and its offset in it, which every process that maps the file
 * shares, whatever the address it maps it at and whether or not it was
 * exec'd; any other object (anonymous shared memory, inherited by fork at
 * the same address) by its address.
 *
 * How: the program's mmap and munmap calls (interpose/mmap.c) keep a
 * table of this process's shared mappings of regular files, with their
 * file (st_dev, st_ino) and offset. A fork child inherits it with the
 * mappings; an exec'd image starts empty, as its address space does.
 *
 * Invariants: ranges change under one lb_meta_lock, taken only by mmap
 * and munmap (never on a lock path); a lookup reads a range lock-free,
 * each range guarded by a sequence count (odd while it changes), and
 * retries a torn read. A named semaphore, which glibc maps itself, is
 * entered by interpose/sem_open.c with its file's identity. Mappings made
 * before the library's start or otherwise by libc itself are not in the
 * table: their objects keep address keys. */
#ifndef LB_BLAME_SHARED_KEYS_H
#define LB_BLAME_SHARED_KEYS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct lb_shared_key {
    uint64_t file; /* 0: an address key; else the file's st_dev + 1 */
    uint64_t ino;  /* the file's st_ino (0 for an address key) */
    uint64_t at;   /* the object's address, or its offset in the file */
} lb_shared_key_t;

/* obj's key in this process. */
lb_shared_key_t lb_shared_key_of(const void *obj);
static inline bool lb_shared_key_eq(const lb_shared_key_t *a, const lb_shared_key_t *b)
{
    return a->at == b->at && a->file == b->file && a->ino == b->ino;
}
/* [addr, addr + len) maps the file (dev, ino) from offset off, shared
 * (the program's mmap of a regular file, or a named semaphore's, which
 * libc mapped): the range is now in the table, replacing those it
 * overlaps. */
void lb_shared_keys_add(void *addr, size_t len, dev_t dev, ino_t ino, off_t off);
/* The program unmapped [addr, addr + len): the ranges it overlaps leave
 * the table. */
void lb_shared_keys_unmapped(void *addr, size_t len);
#endif

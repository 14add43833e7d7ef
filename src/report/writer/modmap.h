/* This process's load modules as /proc/self/maps and the dynamic loader
 * give them, without opening a file: each module's path, its address range
 * (the first to the last mapping of the file, as libdwfl reports it) and
 * its GNU build id, read from the PT_NOTE segment mapped in memory. The
 * writer's symbol cache (symcache.h) keys names by (build id, path,
 * offset), so a process whose frames all lie in modules another process
 * of the run already named loads neither libdw nor any module's symbols.
 *
 * Built once per write, on the finishing thread; uses malloc freely. */
#ifndef LB_WRITER_MODMAP_H
#define LB_WRITER_MODMAP_H
#include <stdbool.h>
#include <stdint.h>

typedef struct lb_modmap_entry {
    uintptr_t low, high; /* [low, high): first mapping's start to last's end */
    char *path;          /* as /proc/self/maps names it ("[vdso]" for the vDSO) */
    char build_id[41];   /* lowercase hex, "" when the loader does not list it or it has none */
} lb_modmap_entry_t;

typedef struct lb_modmap {
    lb_modmap_entry_t *modules; /* sorted by low, not overlapping */
    uint32_t count;
} lb_modmap_t;

/* Reads /proc/self/maps and the loader's list; false (and an empty map)
 * when the maps cannot be read. */
bool lb_modmap_read(lb_modmap_t *map);
/* The module holding pc, or NULL (anonymous memory, a deleted file). */
const lb_modmap_entry_t *lb_modmap_find(const lb_modmap_t *map, uintptr_t pc);
void lb_modmap_free(lb_modmap_t *map);

/* The dynamic loader's counts of objects loaded (counts[0]) and unloaded
 * (counts[1]) so far, dl_iterate_phdr's dlpi_adds and dlpi_subs: a map
 * read when they were the same as now is this process's still; ~0 each
 * where the loader does not say. */
void lb_modmap_loader_counts(unsigned long long counts[2]);
#endif

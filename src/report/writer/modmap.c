/* See modmap.h. Modules are grouped the way libdwfl's
 * dwfl_linux_proc_report groups them: consecutive mappings of one file
 * make one module, from the first one's start to the last one's end. A
 * file mapped again after another file is a module of its own. The
 * symbol cache checks on its first use of a module that libdwfl gives the
 * same path and start (symcache.c), so a difference here costs speed,
 * never a name. */
#include "report/writer/modmap.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf_note.h"
#include "common/hex.h"

/* Adds one mapping; extends the last module when it maps the same file. */
static bool add_mapping(lb_modmap_t *map, uint32_t *cap, uintptr_t start, uintptr_t end,
                        const char *path)
{
    lb_modmap_entry_t *last = map->count ? &map->modules[map->count - 1] : NULL;
    if (last && strcmp(last->path, path) == 0) {
        last->high = end;
        return true;
    }
    if (map->count == *cap) {
        uint32_t n = *cap ? *cap * 2 : 32;
        lb_modmap_entry_t *m = realloc(map->modules, n * sizeof *m);
        if (!m)
            return false;
        map->modules = m;
        *cap = n;
    }
    char *copy = strdup(path);
    if (!copy)
        return false;
    map->modules[map->count++] = (lb_modmap_entry_t){ .low = start, .high = end, .path = copy };
    return true;
}

/* The build id in one PT_NOTE segment at [p, p + size), as hex. */
static bool note_build_id(const unsigned char *p, size_t size, char hex[41])
{
    const unsigned char *desc;
    uint32_t n;
    if (!lb_elf_note_find(p, size, NT_GNU_BUILD_ID, "GNU", 3, &desc, &n) || n == 0 || n > 20)
        return false;
    lb_hex_encode(desc, n, hex);
    return true;
}

static int take_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    lb_modmap_t *map = arg;
    uintptr_t first_load = 0;
    bool have_load = false;
    for (int i = 0; i < info->dlpi_phnum && !have_load; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            first_load = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            have_load = true;
        }
    lb_modmap_entry_t *mod =
        have_load ? (lb_modmap_entry_t *)lb_modmap_find(map, first_load) : NULL;
    if (!mod || mod->build_id[0])
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE &&
            note_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
                          mod->build_id))
            break;
    }
    return 0;
}

/* One line of /proc/self/maps: "start-end perms offset dev inode   path".
 * Sets the range and where the path starts (at the line's end when it has
 * none); false for a line not of that form. By hand: sscanf was half of
 * what reading the maps cost a process's write, strtoul most of the rest. */
static bool parse_maps_line(char *line, unsigned long *start, unsigned long *end, char **path)
{
    const char *after;
    char *p = line;
    *start = lb_hex_parse(p, &after);
    if (after == p || *after != '-')
        return false;
    p = (char *)after + 1;
    *end = lb_hex_parse(p, &after);
    if (after == p)
        return false;
    p = (char *)after;
    for (int field = 0; field < 4; field++) { /* perms, offset, dev, inode */
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t\n");
        if (n == 0)
            return false;
        p += n;
    }
    *path = p + strspn(p, " \t\n");
    return true;
}

bool lb_modmap_read(lb_modmap_t *map)
{
    *map = (lb_modmap_t){ 0 };
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return false;
    uint32_t cap = 0;
    char *line = NULL;
    size_t len = 0;
    bool ok = true;
    while (ok && getline(&line, &len, f) > 0) {
        unsigned long start, end;
        char *path;
        if (!parse_maps_line(line, &start, &end, &path))
            continue;
        path[strcspn(path, "\n")] = '\0';
        /* files and the vDSO; not [heap], [stack], anonymous memory, nor a
         * deleted file (libdwfl names it its own way) */
        if ((path[0] != '/' && strcmp(path, "[vdso]") != 0) || strstr(path, " (deleted)"))
            continue;
        ok = add_mapping(map, &cap, start, end, path);
    }
    free(line);
    fclose(f);
    if (!ok) {
        lb_modmap_free(map);
        return false;
    }
    dl_iterate_phdr(take_build_id, map);
    return true;
}

const lb_modmap_entry_t *lb_modmap_find(const lb_modmap_t *map, uintptr_t pc)
{
    uint32_t lo = 0, hi = map->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pc < map->modules[mid].low)
            hi = mid;
        else if (pc >= map->modules[mid].high)
            lo = mid + 1;
        else
            return &map->modules[mid];
    }
    return NULL;
}

void lb_modmap_free(lb_modmap_t *map)
{
    for (uint32_t i = 0; i < map->count; i++)
        free(map->modules[i].path);
    free(map->modules);
    *map = (lb_modmap_t){ 0 };
}

static int read_loader_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *counts = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        counts[0] = info->dlpi_adds;
        counts[1] = info->dlpi_subs;
    }
    return 1; /* the first object says it */
}

void lb_modmap_loader_counts(unsigned long long counts[2])
{
    counts[0] = counts[1] = ~0ull;
    dl_iterate_phdr(read_loader_counts, counts);
}

/* See debuginfo_find.h. Runs in the writer only (malloc, files). */
#include "common/debuginfo_find.h"

#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/symbols_fallback.h"

/* The ELF file open at fd carries the build id bits[0..len). */
static bool has_build_id(int fd, const unsigned char *bits, int len)
{
    Elf *e = elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    if (!e)
        return false;
    unsigned char id[64];
    size_t n = lb_elf_build_id(e, id, sizeof id);
    elf_end(e);
    return n == (size_t)len && memcmp(id, bits, n) == 0;
}

int lb_find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                            const char *file_name, const char *debuglink_file,
                            GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    int bits_len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (bits_len <= 0)
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                            debuglink_crc, debuginfo_file_name);
    int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                          debuglink_crc, debuginfo_file_name);
    if (fd >= 0 || !file_name || !debuglink_file || !*debuglink_file)
        return fd;
    char dir[PATH_MAX];
    const char *slash = strrchr(file_name, '/');
    size_t dlen = slash ? (size_t)(slash - file_name) : 0;
    if (dlen >= sizeof dir)
        return -1;
    memcpy(dir, file_name, dlen);
    dir[dlen] = '\0';
    /* DIR/NAME, DIR/.debug/NAME, DEBUG_ROOT/DIR/NAME */
    static const char *const prefix[] = { "", "", LB_DEBUG_ROOT };
    static const char *const middle[] = { "/", "/.debug/", "/" };
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s%s%s%s", prefix[i], dir, middle[i], debuglink_file);
        if (n <= 0 || (size_t)n >= sizeof path || strcmp(path, file_name) == 0)
            continue;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (has_build_id(fd, bits, bits_len)) {
            *debuginfo_file_name = strdup(path);
            return fd;
        }
        close(fd);
    }
    return -1;
}

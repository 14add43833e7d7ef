/* The name the program was started by, when it differs from the file's.
 * A program exec'd through a symlink (redis-server -> redis-check-rdb,
 * busybox applets) maps the link's target, and /proc/PID/maps names the
 * target: its frames would read "redis-check-rdb+0x..." in a report of
 * redis-server. The writer names the main executable by the path the
 * exec used instead (AT_EXECFN), when that path leads to the same file
 * and names it in any process (not /proc/self/exe or /dev/fd/N: the
 * merger of a pending profile opens the module by its path). */
#ifndef LB_WRITER_EXE_ALIAS_H
#define LB_WRITER_EXE_ALIAS_H

/* module_path itself, or the exec's path to it if module_path is the
 * main executable reached through a link of another name. Resolved on
 * the first call (the final write, or a forking parent's template, which
 * its fork children inherit resolved), not at start-up. */
const char *lb_exe_alias(const char *module_path);
#endif

/* The LOCKBLAME_* switches: settings that are 1 (the default; unset or
 * empty too) or 0. Any other value means the default, and is said in one
 * line for the whole tree by whoever starts it: the image that started
 * the run (report/writer/output.c), or `lockblame run`, under which no
 * process of the tree starts it. The processes read their switches
 * silently. Shared by the library and the CLI, so that both judge the
 * same values. Depends on nothing. */
#ifndef LB_COMMON_SWITCHES_H
#define LB_COMMON_SWITCHES_H
#include <stdbool.h>
#include <stddef.h>

/* Whether a switch's value (NULL: unset) is 0. */
bool lb_switch_off(const char *value);

/* For each listed switch whose value (read with get) is neither 0 nor 1,
 * in turn: its line, without the "lockblame: " prefix, passed to say. */
void lb_switches_check(const char *(*get)(const char *name), void (*say)(const char *line));
#endif

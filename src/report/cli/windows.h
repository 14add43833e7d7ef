/*
 * windows.h - the time-window selection of `report` and `compare`
 * (--window, --since, --until; select.h), applied while loading (load.c).
 */
#ifndef LB_CLI_WINDOWS_H
#define LB_CLI_WINDOWS_H

#include <sqlite3.h>
#include <stdbool.h>

#include "report/cli/profile.h"

/* The run's window numbers, temp.lb_window_slots(id, slot): 0, 1, ... in
 * time order, one number for the windows of a tree's processes that end
 * together; temp.lb_windows_numbered is time_window with its slot. Exits
 * 1 with one line if SQLite cannot. */
void lb_windows_number(sqlite3 *db, const char *path);

/* Whether sel selects time windows. */
bool lb_windows_selected(const struct lb_select *sel);

/* Make db's plain table names read the selected windows (temporary views
 * over the window tables); nothing without a window selection. Exits 2
 * with one line when the database has no windows, a value is bad, or no
 * window matches. */
void lb_windows_apply(sqlite3 *db, const char *path, const struct lb_select *sel);
/* Undo lb_windows_apply: the plain names read the whole run again. */
void lb_windows_drop(sqlite3 *db);
#endif

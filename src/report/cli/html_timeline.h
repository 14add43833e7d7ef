/*
 * html_timeline.h - the HTML page's timeline of the time windows
 * (html_timeline.c).
 */
#ifndef LB_CLI_HTML_TIMELINE_H
#define LB_CLI_HTML_TIMELINE_H

#include <stdio.h>

/* A <section id="timeline"> for the database at path when it holds time
 * windows; nothing otherwise. */
void lb_html_timeline(const char *path, FILE *out);
#endif

/* Names for people: C++ names through the C++ runtime's __cxa_demangle,
 * found with dlsym (in a profiled process, a program with mangled names
 * has libstdc++ loaded, a C program has neither; the CLI links it), and
 * Rust's legacy and v0 names through common/rust_names.h and
 * common/rust_v0.h. Used by the report and the stderr summaries, never in
 * a signal handler or a lock wrapper. */
#ifndef LB_COMMON_DEMANGLE_H
#define LB_COMMON_DEMANGLE_H
#include <stddef.h>

/* The C++ runtime's demangler, as libstdc++ defines it. */
typedef char *lb_cxx_demangler(const char *mangled, char *buf, size_t *len, int *status);

/* The demangled form of name, malloc'd (legacy Rust names without their
 * hash); NULL when name is NULL, not mangled, or cannot be demangled. C++
 * names go through cxx, or the one dlsym finds where cxx is NULL (the
 * CLI passes its own, so that its link keeps libstdc++). */
char *lb_demangle_dup_with(const char *name, lb_cxx_demangler *cxx);
char *lb_demangle_dup(const char *name);

/* The same in a static buffer (truncated to 255 bytes), or name itself
 * where lb_demangle_dup gives NULL. Not thread-safe: the writer runs on
 * one thread at a time. */
const char *lb_demangled(const char *name);
#endif

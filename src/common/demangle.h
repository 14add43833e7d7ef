/* C++ names for the stderr summaries: the C++ runtime's __cxa_demangle,
 * found with dlsym (in a profiled process, a program with mangled names
 * has libstdc++ loaded, a C program has neither; the CLI links it).
 * Depends on nothing. */
#ifndef LB_COMMON_DEMANGLE_H
#define LB_COMMON_DEMANGLE_H

/* The demangled form of name in a static buffer (a legacy-mangled Rust
 * name too, without its hash: common/rust_names.h), or name itself when it is
 * not a mangled C++ name, cannot be demangled, or is NULL. Not
 * thread-safe: the writer runs on one thread at a time. */
const char *lb_demangled(const char *name);
#endif

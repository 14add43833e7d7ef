/* Rust's v0 symbol mangling ("_R..."), demangled for people. Depends on
 * nothing; no allocation, no global state, so the writer and the CLI may
 * both call it. */
#ifndef LB_COMMON_RUST_V0_H
#define LB_COMMON_RUST_V0_H
#include <stdbool.h>
#include <stddef.h>

/* The v0-mangled name sym demangled into out (size bytes), in the form
 * people read and rustc-demangle prints without hashes: the path with its
 * generic arguments ("std::sync::mutex::Mutex<T>::lock",
 * "<gt::Queue as core::ops::Drop>::drop", "gt::main::{closure#0}"),
 * crate disambiguators and the instantiating crate left out; lifetimes are
 * erased. False if sym is not a well-formed v0 name or out is too small;
 * out is then an empty string. */
bool lb_rust_v0_demangle(const char *sym, char *out, size_t size);
#endif

/* Decimal text of numbers without stdio. A process's exit write formats
 * its counters with these, so that a fork child's exit path never enters
 * vfprintf: its code, its floating-point conversion and its kilobytes of
 * stack are pages the child has not touched, each a page fault (tens of
 * microseconds a child on a VM whose page tables are shadowed). No
 * allocation, no locale, async-signal-safe. */
#ifndef LB_DECIMAL_H
#define LB_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* v's decimal digits into out (at most LB_DECIMAL_U64_MAX bytes, no
 * terminator); returns their count. */
#define LB_DECIMAL_U64_MAX 20
size_t lb_decimal_u64(char *out, uint64_t v);

/* v's digits as a NUL-terminated string in out[size] ("%llu"); false,
 * out untouched, where size is too small. */
bool lb_decimal_u64_str(char *out, size_t size, uint64_t v);

/* v as printf's "%.*f" writes it with `places` decimals (at most 9) in
 * the C locale and the default rounding mode: the exact binary value
 * rounded to nearest, ties to even, a '-' for a negative v (and -0.0).
 * (printf would follow the program's LC_NUMERIC and fesetround; a
 * profile's text does not.) NUL-terminated in out[size]. false, out
 * untouched, for a value it does not take (not finite, |v| >= 2^64) or a
 * size too small: the caller formats it some other way. */
bool lb_decimal_fixed(char *out, size_t size, double v, unsigned places);

#endif

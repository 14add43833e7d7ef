/* A decimal number as users write it in a LOCKBLAME_* setting: digits
 * only, no sign, no spaces, no unit. Shared by the library and the CLI,
 * so that both accept the same values. Depends on nothing. */
#ifndef LB_COMMON_PARSE_U64_H
#define LB_COMMON_PARSE_U64_H
#include <stdbool.h>
#include <stdint.h>

/* s as a number in lo..hi in *out; false (and *out untouched) when s is
 * not one. errno is kept. */
bool lb_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
#endif

/* The one hash of lockblame's tables: Fibonacci hashing (multiply by
 * 2^64/phi and keep the product's top bits, the best mixed). Keys that
 * differ only in low bits (consecutive ids) or only in high bits
 * (addresses, (parent << 32 | child) pairs) spread evenly. Depends on
 * nothing; async-signal-safe. */
#ifndef LB_COMMON_HASH_H
#define LB_COMMON_HASH_H
#include <stdint.h>

#define LB_HASH_MUL 0x9E3779B97F4A7C15ull

/* The home slot of key in a table of 2^bits slots; bits in 1..32. */
static inline uint32_t lb_hash_index(uint64_t key, unsigned bits)
{
    return (uint32_t)((key * LB_HASH_MUL) >> (64 - bits));
}
#endif

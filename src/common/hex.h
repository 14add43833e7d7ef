/* Bytes as lowercase hex (a build id's usual spelling: 0a1b...), by a
 * table: snprintf("%02x") per byte was ~800 instructions a byte, and an
 * exec'd image's exit write spells out the build id of every module it
 * has mapped. Depends on nothing. */
#ifndef LB_COMMON_HEX_H
#define LB_COMMON_HEX_H
#include <stddef.h>

/* n bytes into out as 2n hex digits and a NUL: out holds 2n + 1 chars. */
static inline void lb_hex_encode(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * n] = '\0';
}
#endif

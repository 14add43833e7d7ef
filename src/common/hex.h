/* Hex both ways, by hand: bytes as lowercase hex (a build id's usual
 * spelling: 0a1b...), where snprintf("%02x") was ~800 instructions a
 * byte, and a hex number read (an address of /proc/self/maps), where
 * strtoul was ~700 a call. An exec'd image's exit write spells out the
 * build id of every module it has mapped and reads every line of its
 * maps. Depends on nothing. */
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

/* The hex number at p (digits of either case, no prefix, at most 16 of
 * them meaningful), *after the first character past it (p: none). */
static inline unsigned long lb_hex_parse(const char *p, const char **after)
{
    unsigned long v = 0;
    for (;; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a' + 10);
        else if (*p >= 'A' && *p <= 'F')
            d = (unsigned)(*p - 'A' + 10);
        else
            break;
        v = v * 16 + d;
    }
    *after = p;
    return v;
}
#endif

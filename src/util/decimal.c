/* See decimal.h. */
#include "util/decimal.h"

#include <string.h>

size_t lb_decimal_u64(char *out, uint64_t v)
{
    char digits[LB_DECIMAL_U64_MAX];
    size_t n = 0, len = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        out[len++] = digits[--n];
    return len;
}

bool lb_decimal_u64_str(char *out, size_t size, uint64_t v)
{
    char digits[LB_DECIMAL_U64_MAX];
    size_t len = lb_decimal_u64(digits, v);
    if (len + 1 > size)
        return false;
    memcpy(out, digits, len);
    out[len] = '\0';
    return true;
}

/* value * 10^places, rounded to nearest with ties to even, where value =
 * mantissa * 2^exponent (mantissa < 2^53, value < 2^64): exact in 128
 * bits, since mantissa * 10^9 < 2^83. */
static unsigned __int128 scaled_rounded(uint64_t mantissa, int exponent, uint64_t scale)
{
    unsigned __int128 x = (unsigned __int128)mantissa * scale;
    if (exponent >= 0)
        return x << exponent; /* value < 2^64: at most 2^94 */
    unsigned shift = (unsigned)-exponent;
    if (shift >= 100) /* x < 2^83: below half of one unit */
        return 0;
    unsigned __int128 q = x >> shift;
    unsigned __int128 rest = x - (q << shift), half = (unsigned __int128)1 << (shift - 1);
    if (rest > half || (rest == half && (q & 1)))
        q++;
    return q;
}

bool lb_decimal_fixed(char *out, size_t size, double v, unsigned places)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bool negative = bits >> 63;
    unsigned biased = (unsigned)(bits >> 52) & 0x7ffu;
    uint64_t mantissa = bits & ((1ull << 52) - 1);
    if (places > 9 || biased == 0x7ffu || biased >= 1023u + 64u) /* not finite, or >= 2^64 */
        return false;
    int exponent = -1074; /* a subnormal */
    if (biased) {
        mantissa |= 1ull << 52;
        exponent = (int)biased - 1075;
    }
    uint64_t scale = 1;
    for (unsigned i = 0; i < places; i++)
        scale *= 10;
    unsigned __int128 q = scaled_rounded(mantissa, exponent, scale);
    uint64_t whole = (uint64_t)(q / scale), fraction = (uint64_t)(q % scale);
    char text[1 + LB_DECIMAL_U64_MAX + 1 + 9];
    size_t len = 0;
    if (negative)
        text[len++] = '-';
    len += lb_decimal_u64(text + len, whole);
    if (places) {
        text[len++] = '.';
        for (unsigned i = places; i-- > 0; fraction /= 10)
            text[len + i] = (char)('0' + fraction % 10);
        len += places;
    }
    if (len + 1 > size)
        return false;
    memcpy(out, text, len);
    out[len] = '\0';
    return true;
}

/* util/decimal: the same text as printf's "%llu" and "%.*f", checked
 * against snprintf over ties, edges and a million pseudo-random values. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "util/decimal.h"

static unsigned mismatches;

static void expect_fixed(double v, unsigned places)
{
    char want[64], got[64];
    snprintf(want, sizeof want, "%.*f", (int)places, v);
    if (!lb_decimal_fixed(got, sizeof got, v, places)) {
        if (fabs(v) < 18446744073709551616.0 && isfinite(v) && mismatches++ < 10)
            printf("# refused %.17g with %u places (printf: %s)\n", v, places, want);
        return;
    }
    if (strcmp(want, got) != 0 && mismatches++ < 10)
        printf("# %.17g with %u places: printf %s, lb_decimal_fixed %s\n", v, places, want, got);
}

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static void test_fixed_matches_printf_on_ties_and_edges(void)
{
    static const double values[] = { 0.0,
                                     -0.0,
                                     0.5,
                                     1.5,
                                     2.5,
                                     0.125,
                                     0.375,
                                     0.0625,
                                     1e-9,
                                     5e-10,
                                     4.9999e-7,
                                     0.05,
                                     0.15,
                                     0.25,
                                     0.35,
                                     999.95,
                                     9.5,
                                     99.995,
                                     1e15,
                                     123.456,
                                     1.0 / 3,
                                     2.0 / 3,
                                     DBL_MIN,
                                     DBL_TRUE_MIN,
                                     1e-300,
                                     18446744073709549568.0,
                                     4503599627370495.5,
                                     9007199254740993.0,
                                     -2.5,
                                     -0.001 };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        for (unsigned places = 0; places <= 9; places++)
            expect_fixed(values[i], places);
    ASSERT_EQ(mismatches, 0);
}

static void test_fixed_matches_printf_on_random_values(void)
{
    static const unsigned places_used[] = { 1, 2, 6, 0, 9 };
    for (int i = 0; i < 1000000; i++) {
        uint64_t r = next_random();
        double v;
        switch (i % 4) {
        case 0: /* any mantissa and sign, exponents from 2^-40 to 2^63 */
            v = ldexp((double)((r >> 11) | 1), (int)(r % 104) - 40 - 53);
            if (r & 1)
                v = -v;
            break;
        case 1: /* seconds from nanoseconds, as the profile's are */
            v = (double)(r % 100000000000000ull) / 1e9;
            break;
        case 2: /* percentages */
            v = 100.0 * (double)(r % 1000003) / 1000003.0;
            break;
        default: /* decimal ties in binary's reach: k / 2^n */
            v = (double)(r % 100000) / (double)(1u << (r % 12));
            break;
        }
        expect_fixed(v, places_used[i % 5]);
    }
    ASSERT_EQ(mismatches, 0);
}

static void test_fixed_refuses_what_it_cannot_write(void)
{
    char out[8] = "keep";
    ASSERT_FALSE(lb_decimal_fixed(out, sizeof out, INFINITY, 1));
    ASSERT_FALSE(lb_decimal_fixed(out, sizeof out, NAN, 1));
    ASSERT_FALSE(lb_decimal_fixed(out, sizeof out, 18446744073709551616.0, 1));
    ASSERT_FALSE(lb_decimal_fixed(out, sizeof out, 1.0, 10));
    ASSERT_FALSE(lb_decimal_fixed(out, 4, 123.5, 1)); /* "123.5" needs 6 bytes */
    ASSERT_STR_EQ(out, "keep");
    ASSERT_TRUE(lb_decimal_fixed(out, 6, 123.5, 1));
    ASSERT_STR_EQ(out, "123.5");
    ASSERT_FALSE(lb_decimal_fixed(out, 0, 1.0, 0));
    /* the longest text: a sign, 20 digits, a point and 9 decimals */
    char longest[32];
    ASSERT_FALSE(lb_decimal_fixed(longest, 31, -18446744073709549568.0, 9));
    ASSERT_TRUE(lb_decimal_fixed(longest, 32, -18446744073709549568.0, 9));
    ASSERT_STR_EQ(longest, "-18446744073709549568.000000000");
}

static void test_u64_matches_printf(void)
{
    static const uint64_t values[] = { 0,           1,           9,
                                       10,          99,          100,
                                       4294967295u, 4294967296u, 18446744073709551615ull };
    char want[32], got[32];
    for (size_t i = 0; i < sizeof values / sizeof values[0] + 100000; i++) {
        uint64_t v = i < sizeof values / sizeof values[0] ? values[i] : next_random() >> (i % 64);
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        ASSERT_TRUE(lb_decimal_u64_str(got, sizeof got, v));
        ASSERT_STR_EQ(got, want);
    }
    ASSERT_FALSE(lb_decimal_u64_str(got, 3, 100));
    ASSERT_TRUE(lb_decimal_u64_str(got, 4, 100));
    ASSERT_STR_EQ(got, "100");
}

CHECK_MAIN(test_fixed_matches_printf_on_ties_and_edges, test_fixed_matches_printf_on_random_values,
           test_fixed_refuses_what_it_cannot_write, test_u64_matches_printf)

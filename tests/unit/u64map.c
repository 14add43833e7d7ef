/* Unit tests for the u64 map shared by the writer and the CLI
 * (src/common/u64map.c): get/put/overwrite, key 0, the slot interface,
 * growth, and agreement with a reference (a sorted array built by the
 * test) over many keys, including keys that share home slots.
 */
#include "check.h"

#include "common/u64map.h"

static void test_empty_and_overwrite(void)
{
    lb_u64map_t map;
    ASSERT_EQ(lb_u64map_init(&map, 0), 0);
    uint32_t v = 7;
    ASSERT_FALSE(lb_u64map_get(&map, 42, &v));
    ASSERT_EQ(v, 7);
    ASSERT_EQ(lb_u64map_put(&map, 42, 1), 0);
    ASSERT_EQ(lb_u64map_put(&map, 42, 2), 0);
    ASSERT_TRUE(lb_u64map_get(&map, 42, &v));
    ASSERT_EQ(v, 2);
    ASSERT_EQ(map.used, 1);
    ASSERT_EQ(lb_u64map_put(&map, 5, (uint32_t)INT32_MAX + 1), -1); /* not a value */
    ASSERT_EQ(lb_u64map_find(&map, 5), -1);
    ASSERT_EQ(lb_u64map_put(&map, UINT64_MAX, 3), 0);
    ASSERT_TRUE(lb_u64map_get(&map, UINT64_MAX, &v));
    ASSERT_EQ(v, 3);
    lb_u64map_free(&map);
    ASSERT_FALSE(lb_u64map_get(&map, 42, &v)); /* a freed map is empty, not dangling */
}

/* Key 0 is a key like any other (the CLI maps database id 0); a
 * zero-initialized map is empty and grows on first insert. */
static void test_key_zero_and_slots(void)
{
    lb_u64map_t map = { 0 };
    ASSERT_EQ(lb_u64map_find(&map, 0), -1);
    bool is_new = false;
    int32_t *slot = lb_u64map_slot(&map, 0, &is_new);
    ASSERT_NOT_NULL(slot);
    ASSERT_TRUE(is_new);
    ASSERT_EQ(*slot, -1);
    *slot = 11;
    slot = lb_u64map_slot(&map, 0, &is_new);
    ASSERT_FALSE(is_new);
    ASSERT_EQ(*slot, 11);
    ASSERT_EQ(lb_u64map_find(&map, 0), 11);
    ASSERT_EQ(lb_u64map_find(&map, 1), -1);
    for (uint32_t k = 1; k < 1000; k++) {
        slot = lb_u64map_slot(&map, k, &is_new);
        ASSERT_TRUE(is_new);
        *slot = (int32_t)k * 2;
    }
    ASSERT_EQ(map.used, 1000);
    ASSERT_EQ(lb_u64map_find(&map, 0), 11);
    for (uint32_t k = 1; k < 1000; k++)
        ASSERT_EQ(lb_u64map_find(&map, k), (int32_t)k * 2);
    lb_u64map_free(&map);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 200K keys: random ones, and multiples of a large power of two (they
 * differ only in high bits, the hash's hard case). Every key maps to the
 * value last put; absent keys are absent. */
static void test_many_keys_match_reference(void)
{
    enum {
        N = 200000
    };
    uint64_t *keys = malloc(N * sizeof *keys);
    ASSERT_NOT_NULL(keys);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        if (i % 2) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            keys[i] = x | 1; /* nonzero */
        } else {
            keys[i] = (uint64_t)(i + 2) << 40;
        }
    }
    qsort(keys, N, sizeof *keys, cmp_u64);
    int n = 0;
    for (int i = 0; i < N; i++) {
        if (n == 0 || keys[i] != keys[n - 1])
            keys[n++] = keys[i];
    }
    lb_u64map_t map;
    ASSERT_EQ(lb_u64map_init(&map, 16), 0); /* far too small: it must grow */
    for (int i = 0; i < n; i++)
        ASSERT_EQ(lb_u64map_put(&map, keys[i], (uint32_t)i), 0);
    for (int i = 0; i < n; i += 3)
        ASSERT_EQ(lb_u64map_put(&map, keys[i], (uint32_t)i + 1000000u), 0);
    ASSERT_EQ(map.used, n);
    ASSERT_LE(map.used * 2, map.capacity);
    for (int i = 0; i < n; i++) {
        uint32_t v;
        ASSERT_TRUE(lb_u64map_get(&map, keys[i], &v));
        ASSERT_EQ(v, i % 3 == 0 ? (uint32_t)i + 1000000u : (uint32_t)i);
        uint64_t absent = keys[i] + 1;
        if (i + 1 < n && absent == keys[i + 1])
            continue;
        ASSERT_FALSE(lb_u64map_get(&map, absent, &v));
    }
    lb_u64map_free(&map);
    free(keys);
}

CHECK_MAIN(test_empty_and_overwrite, test_key_zero_and_slots, test_many_keys_match_reference)

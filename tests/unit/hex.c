/* Unit tests for src/common/hex.h: bytes spelled as a build id is
 * (lowercase, two digits a byte, NUL-terminated), checked against
 * snprintf's "%02x"; hex numbers read as /proc/self/maps writes them. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "common/hex.h"

static void test_encode(void)
{
    const unsigned char id[] = { 0x00, 0x0a, 0x1b, 0x7f, 0x80, 0xc3, 0xff };
    char out[2 * sizeof id + 1];
    memset(out, 'x', sizeof out);
    lb_hex_encode(id, sizeof id, out);
    ASSERT_EQ(strcmp(out, "000a1b7f80c3ff"), 0);
    memset(out, 'x', sizeof out);
    lb_hex_encode(id, 0, out);
    ASSERT_EQ(out[0], '\0');
}

static void test_every_byte(void)
{
    for (unsigned b = 0; b < 256; b++) {
        unsigned char byte = (unsigned char)b;
        char got[3], want[3];
        lb_hex_encode(&byte, 1, got);
        snprintf(want, sizeof want, "%02x", b);
        ASSERT_EQ(strcmp(got, want), 0);
    }
}

static void test_parse(void)
{
    const char *after;
    ASSERT_UEQ(lb_hex_parse("7f1c2a3b4000-7f1c2a3b5000 r-xp", &after), 0x7f1c2a3b4000ul);
    ASSERT_EQ(*after, '-');
    ASSERT_UEQ(lb_hex_parse("ffffffffff600000 ", &after), 0xffffffffff600000ul);
    ASSERT_EQ(*after, ' ');
    ASSERT_UEQ(lb_hex_parse("DeadBEEF\n", &after), 0xdeadbeeful);
    ASSERT_EQ(*after, '\n');
    const char *none = "-1";
    ASSERT_UEQ(lb_hex_parse(none, &after), 0);
    ASSERT_TRUE(after == none);
    ASSERT_UEQ(lb_hex_parse("", &after), 0);
}

CHECK_MAIN(test_encode, test_every_byte, test_parse)

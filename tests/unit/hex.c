/* Unit tests for src/common/hex.h: bytes spelled as a build id is
 * (lowercase, two digits a byte, NUL-terminated), checked against
 * snprintf's "%02x". */
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

CHECK_MAIN(test_encode, test_every_byte)

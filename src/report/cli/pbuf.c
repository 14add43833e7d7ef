/*
 * pbuf.c - protocol-buffer wire encoding (see pbuf.h). Varints are
 * little-endian base-128; a tag is field << 3 | wire type.
 */
#include <stdlib.h>
#include <string.h>

#include "report/cli/pbuf.h"
#include "report/cli/util.h"

static void put(struct lb_pbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;

        while (cap < b->len + n)
            cap *= 2;
        b->data = lb_xrealloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void varint(struct lb_pbuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;

    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    put(b, tmp, n);
}

static void tag(struct lb_pbuf *b, uint32_t field, unsigned wire)
{
    varint(b, (uint64_t)field << 3 | wire);
}

void lb_pb_uint(struct lb_pbuf *b, uint32_t field, uint64_t v)
{
    tag(b, field, 0);
    varint(b, v);
}

void lb_pb_int(struct lb_pbuf *b, uint32_t field, int64_t v)
{
    lb_pb_uint(b, field, (uint64_t)v);
}

void lb_pb_bytes(struct lb_pbuf *b, uint32_t field, const void *data, size_t len)
{
    tag(b, field, 2);
    varint(b, len);
    if (len)
        put(b, data, len);
}

void lb_pb_string(struct lb_pbuf *b, uint32_t field, const char *s)
{
    lb_pb_bytes(b, field, s, s ? strlen(s) : 0);
}

void lb_pb_message(struct lb_pbuf *b, uint32_t field, const struct lb_pbuf *msg)
{
    lb_pb_bytes(b, field, msg->data, msg->len);
}

void lb_pb_packed(struct lb_pbuf *b, uint32_t field, const uint64_t *v, size_t n)
{
    struct lb_pbuf tmp = { 0 };

    if (!n)
        return;
    for (size_t i = 0; i < n; i++)
        varint(&tmp, v[i]);
    lb_pb_message(b, field, &tmp);
    lb_pb_free(&tmp);
}

void lb_pb_reset(struct lb_pbuf *b)
{
    b->len = 0;
}

void lb_pb_free(struct lb_pbuf *b)
{
    free(b->data);
    *b = (struct lb_pbuf){ 0 };
}

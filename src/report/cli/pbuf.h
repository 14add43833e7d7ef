/*
 * pbuf.h - just enough protocol-buffer encoding to write pprof's
 * profile.proto by hand: varints, length-delimited fields and packed
 * repeated integers, into a growable byte buffer.
 *
 * A nested message is built in its own struct lb_pbuf and appended to its
 * parent with lb_pb_message(). Allocation failure exits (lb_xrealloc).
 */
#ifndef LB_CLI_PBUF_H
#define LB_CLI_PBUF_H

#include <stddef.h>
#include <stdint.h>

struct lb_pbuf {
    uint8_t *data;
    size_t len, cap;
};

/* Field `field` as a varint (wire type 0); zero values are written too
 * (callers skip proto3 defaults themselves when they want to). */
void lb_pb_uint(struct lb_pbuf *b, uint32_t field, uint64_t v);
void lb_pb_int(struct lb_pbuf *b, uint32_t field, int64_t v); /* int64: two's complement */
/* Length-delimited field (wire type 2). */
void lb_pb_bytes(struct lb_pbuf *b, uint32_t field, const void *data, size_t len);
void lb_pb_string(struct lb_pbuf *b, uint32_t field, const char *s);
void lb_pb_message(struct lb_pbuf *b, uint32_t field, const struct lb_pbuf *msg);
/* Packed repeated integers (one length-delimited field); nothing if n == 0. */
void lb_pb_packed(struct lb_pbuf *b, uint32_t field, const uint64_t *v, size_t n);
void lb_pb_reset(struct lb_pbuf *b); /* len = 0, keeps memory */
void lb_pb_free(struct lb_pbuf *b);

#endif

/* A minimal protocol buffers encoder (pb_write.c): varints, length-delimited fields and
 * nested messages written into one growable buffer, enough for pprof's profile.proto; and the
 * gzip step that pprof files need (gzip_out.c). No schema, no reflection: the caller names
 * each field by number. */
#ifndef HR_PB_H
#define HR_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hr_pb {
    uint8_t *buf;
    size_t len, cap;
    int failed; /* an allocation failed: every later write is dropped */
};

/* Field numbers are at most 2^29 - 1; wire types are those of the protobuf encoding. */
enum hr_pb_wire { HR_PB_VARINT = 0, HR_PB_LEN = 2 };

void hr_pb_free(struct hr_pb *b);
void hr_pb_raw(struct hr_pb *b, const void *p, size_t n);
void hr_pb_varint(struct hr_pb *b, uint64_t v);
/* Scalar fields; zero is the default and is not written (proto3). An int64 goes as its two's
 * complement, as protobuf's int64 type does (10 bytes when negative). */
void hr_pb_uint(struct hr_pb *b, uint32_t field, uint64_t v);
void hr_pb_int(struct hr_pb *b, uint32_t field, int64_t v);
void hr_pb_bool(struct hr_pb *b, uint32_t field, int v);
/* A string or bytes field, written even when empty (repeated string entries must be). */
void hr_pb_bytes(struct hr_pb *b, uint32_t field, const void *p, size_t n);

/* A nested message or packed repeated field: begin writes the tag and reserves the length,
 * end fills it in (moving the body when the length needs more than one byte). Returns the
 * mark end needs. Nesting is allowed: each end pairs with its begin. */
size_t hr_pb_begin(struct hr_pb *b, uint32_t field);
void hr_pb_end(struct hr_pb *b, size_t mark);

/* Compresses n bytes as one gzip member (RFC 1952) onto out. Returns 0, or -1 when zlib could
 * not get memory (write errors are left in out's error flag). */
int hr_gzip_write(FILE *out, const uint8_t *data, size_t n);

#endif

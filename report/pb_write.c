/* The protocol buffers encoder of hr_pb.h: pprof output is built with it in memory, then
 * gzipped. */
#include <stdlib.h>
#include <string.h>

#include "hr_pb.h"

static int hr_pb_reserve(struct hr_pb *b, size_t n)
{
    if (b->failed)
        return -1;
    if (b->len + n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *nb = realloc(b->buf, cap);
    if (!nb) {
        b->failed = 1;
        return -1;
    }
    b->buf = nb;
    b->cap = cap;
    return 0;
}

void hr_pb_free(struct hr_pb *b)
{
    free(b->buf);
    *b = (struct hr_pb){0};
}

void hr_pb_raw(struct hr_pb *b, const void *p, size_t n)
{
    if (n == 0 || hr_pb_reserve(b, n))
        return;
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}

static unsigned hr_varint_encode(uint8_t out[10], uint64_t v)
{
    unsigned n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

void hr_pb_varint(struct hr_pb *b, uint64_t v)
{
    uint8_t tmp[10];
    hr_pb_raw(b, tmp, hr_varint_encode(tmp, v));
}

static void hr_pb_tag(struct hr_pb *b, uint32_t field, enum hr_pb_wire wire)
{
    hr_pb_varint(b, (uint64_t)field << 3 | wire);
}

void hr_pb_uint(struct hr_pb *b, uint32_t field, uint64_t v)
{
    if (v == 0)
        return;
    hr_pb_tag(b, field, HR_PB_VARINT);
    hr_pb_varint(b, v);
}

void hr_pb_int(struct hr_pb *b, uint32_t field, int64_t v)
{
    hr_pb_uint(b, field, (uint64_t)v);
}

void hr_pb_bool(struct hr_pb *b, uint32_t field, int v)
{
    hr_pb_uint(b, field, v != 0);
}

void hr_pb_bytes(struct hr_pb *b, uint32_t field, const void *p, size_t n)
{
    hr_pb_tag(b, field, HR_PB_LEN);
    hr_pb_varint(b, n);
    hr_pb_raw(b, p, n);
}

size_t hr_pb_begin(struct hr_pb *b, uint32_t field)
{
    hr_pb_tag(b, field, HR_PB_LEN);
    hr_pb_raw(b, "", 1); /* one byte for the length: most messages are shorter than 128 */
    return b->len;
}

void hr_pb_end(struct hr_pb *b, size_t mark)
{
    if (b->failed)
        return;
    size_t body = b->len - mark;
    uint8_t tmp[10];
    unsigned n = hr_varint_encode(tmp, body);
    if (n > 1) {
        if (hr_pb_reserve(b, n - 1))
            return;
        memmove(b->buf + mark + n - 1, b->buf + mark, body);
        b->len += n - 1;
    }
    memcpy(b->buf + mark - 1, tmp, n);
}

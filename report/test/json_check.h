/* Test helper: a strict JSON syntax checker (RFC 8259), so tests can assert that whatever the
 * report tool printed would parse in any consumer, without depending on a JSON library. */
#ifndef HT_JSON_CHECK_H
#define HT_JSON_CHECK_H

#include <string.h>

struct ht_json {
    const unsigned char *p;
    int depth;
};

static inline int ht_json_value(struct ht_json *j);

static inline void ht_json_ws(struct ht_json *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')
        j->p++;
}

static inline int ht_json_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int ht_json_string(struct ht_json *j)
{
    if (*j->p++ != '"')
        return 0;
    for (;;) {
        unsigned char c = *j->p;
        if (c == '"') {
            j->p++;
            return 1;
        }
        if (c < 0x20)
            return 0; /* includes the terminating NUL */
        if (c == '\\') {
            c = j->p[1];
            if (c == 'u') {
                for (int i = 2; i < 6; i++)
                    if (!ht_json_hex(j->p[i]))
                        return 0;
                j->p += 6;
            } else if (strchr("\"\\/bfnrt", c) && c) {
                j->p += 2;
            } else {
                return 0;
            }
            continue;
        }
        if (c < 0x80) {
            j->p++;
            continue;
        }
        /* UTF-8: lead byte decides the length; continuation bytes must be 10xxxxxx. Strict
         * enough for the tests (overlong checks live in the unit under test). */
        int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
        if (!n)
            return 0;
        for (int i = 1; i < n; i++)
            if ((j->p[i] & 0xc0) != 0x80)
                return 0;
        j->p += n;
    }
}

static inline int ht_json_number(struct ht_json *j)
{
    if (*j->p == '-')
        j->p++;
    if (*j->p == '0')
        j->p++;
    else if (*j->p >= '1' && *j->p <= '9')
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    else
        return 0;
    if (*j->p == '.') {
        j->p++;
        if (!(*j->p >= '0' && *j->p <= '9'))
            return 0;
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-')
            j->p++;
        if (!(*j->p >= '0' && *j->p <= '9'))
            return 0;
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    return 1;
}

static inline int ht_json_container(struct ht_json *j, unsigned char close, int object)
{
    if (++j->depth > 64)
        return 0;
    j->p++;
    ht_json_ws(j);
    if (*j->p == close) {
        j->p++;
        j->depth--;
        return 1;
    }
    for (;;) {
        ht_json_ws(j);
        if (object) {
            if (!ht_json_string(j))
                return 0;
            ht_json_ws(j);
            if (*j->p++ != ':')
                return 0;
        }
        if (!ht_json_value(j))
            return 0;
        ht_json_ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p++ != close)
            return 0;
        j->depth--;
        return 1;
    }
}

static inline int ht_json_value(struct ht_json *j)
{
    ht_json_ws(j);
    switch (*j->p) {
    case '{': return ht_json_container(j, '}', 1);
    case '[': return ht_json_container(j, ']', 0);
    case '"': return ht_json_string(j);
    case 't': return strncmp((const char *)j->p, "true", 4) == 0 ? (j->p += 4, 1) : 0;
    case 'f': return strncmp((const char *)j->p, "false", 5) == 0 ? (j->p += 5, 1) : 0;
    case 'n': return strncmp((const char *)j->p, "null", 4) == 0 ? (j->p += 4, 1) : 0;
    default: return ht_json_number(j);
    }
}

/* 1 if s is exactly one JSON value (surrounding whitespace allowed). */
static inline int ht_json_valid(const char *s)
{
    struct ht_json j = {(const unsigned char *)s, 0};
    if (!ht_json_value(&j))
        return 0;
    ht_json_ws(&j);
    return *j.p == 0;
}

#endif

/* Number and string formatting into a caller's buffer (rt.h: hp_fmt), a vsnprintf subset that
 * never allocates. */
#include "rt/rt.h"

#include <stdarg.h>
#include <stdint.h>

struct hp_out {
    char *buf;
    size_t cap, len;
};

static void out_c(struct hp_out *o, char c)
{
    if (o->len + 1 < o->cap)
        o->buf[o->len] = c;
    o->len++;
}

static void out_u(struct hp_out *o, unsigned long long v, unsigned base, int min_digits)
{
    char tmp[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    while (n < min_digits)
        tmp[n++] = '0';
    while (n)
        out_c(o, tmp[--n]);
}

size_t hp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
    struct hp_out o = {buf, cap, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            out_c(&o, *fmt);
            continue;
        }
        fmt++;
        int lng = 0;
        while (*fmt == 'l' || *fmt == 'z') {
            lng++;
            fmt++;
        }
        switch (*fmt) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            while (*s)
                out_c(&o, *s++);
            break;
        }
        case 'c':
            out_c(&o, (char)va_arg(ap, int));
            break;
        case 'd': {
            long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
            if (v < 0) {
                out_c(&o, '-');
                out_u(&o, (unsigned long long)0 - (unsigned long long)v, 10, 1);
            } else {
                out_u(&o, (unsigned long long)v, 10, 1);
            }
            break;
        }
        case 'u':
            out_u(&o, lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 10, 1);
            break;
        case 'x':
            out_u(&o, lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 16, 1);
            break;
        case 'p':
            out_c(&o, '0');
            out_c(&o, 'x');
            out_u(&o, (uintptr_t)va_arg(ap, void *), 16, 1);
            break;
        case '%':
            out_c(&o, '%');
            break;
        default:
            out_c(&o, '?');
            if (!*fmt)
                fmt--;
            break;
        }
    }
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t hp_fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = hp_vfmt(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

/* Escaping of profile strings (paths, argv, symbol names: arbitrary bytes) for JSON and for the
 * text report, so neither output can be broken by what a program put in its command line. */
#include "hr_output.h"

size_t hr_utf8_seq_len(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        if (c == 0xed)
            hi = 0x9f; /* UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0; /* continuation byte, overlong C0/C1, or F5..FF */
    }
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

void hr_json_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    putc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        }
        if (esc) {
            fputs(esc, out);
            i++;
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
            i++;
        } else {
            size_t n = hr_utf8_seq_len(u + i, len - i);
            if (n) {
                fwrite(u + i, 1, n, out);
                i += n;
            } else {
                fputs("\\ufffd", out);
                i++;
            }
        }
    }
    putc('"', out);
}

void hr_text_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = u[i] < 0x20 || u[i] == 0x7f ? 0 : hr_utf8_seq_len(u + i, len - i);
        if (n) {
            fwrite(u + i, 1, n, out);
            i += n;
        } else {
            fprintf(out, "\\x%02x", u[i]);
            i++;
        }
    }
}

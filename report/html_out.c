/* The HTML output (--format html): report/html/template.html with its @@NAME@@ markers
 * replaced by the style sheet, the script and the profile's data, so the page needs no
 * network and no file beside it. */
#include <string.h>

#include "html_internal.h"

static const struct hr_asset *hr_asset_find(const char *name, size_t len)
{
    for (size_t i = 0; i < hr_html_nassets; i++)
        if (strlen(hr_html_assets[i].name) == len && memcmp(hr_html_assets[i].name, name, len) == 0)
            return &hr_html_assets[i];
    return NULL;
}

/* The page title: the command's first words, HTML-escaped. */
static void hr_html_title(FILE *out, const struct hr_profile *p)
{
    fputs("heapprof: ", out);
    size_t room = 120;
    for (uint32_t i = 0, argc = hr_argc_shown(p); i < argc && room; i++) {
        if (i)
            fputc(' ', out);
        for (uint32_t k = 0; k < p->argv[i].len && room; k++, room--) {
            unsigned char ch = (unsigned char)p->argv[i].ptr[k];
            switch (ch) {
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '&': fputs("&amp;", out); break;
            case '"': fputs("&quot;", out); break;
            default: fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, out);
            }
        }
    }
}

int hr_write_html(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts)
{
    const struct hr_asset *tpl = hr_asset_find("template.html", 13);
    if (!tpl)
        return -1; /* cannot happen: the Makefile embeds it */
    const char *s = (const char *)tpl->data, *end = s + tpl->len;
    while (s < end) {
        const char *m = strstr(s, "@@");
        const char *e = m ? strstr(m + 2, "@@") : NULL;
        if (!m || !e) {
            fwrite(s, 1, (size_t)(end - s), out);
            break;
        }
        fwrite(s, 1, (size_t)(m - s), out);
        const char *name = m + 2;
        size_t len = (size_t)(e - name);
        const struct hr_asset *a = hr_asset_find(name, len);
        if (a)
            fwrite(a->data, 1, a->len, out);
        else if (len == 4 && memcmp(name, "data", 4) == 0) {
            if (hr_html_data(out, p, opts))
                return -1;
        } else if (len == 5 && memcmp(name, "title", 5) == 0)
            hr_html_title(out, p);
        else
            fwrite(m, 1, (size_t)(e + 2 - m), out); /* not a marker: as it is */
        s = e + 2;
    }
    return 0;
}

/* What the HTML writer's files share (html_out.c, html_data.c) and the page sources compiled
 * into the tool (build/gen/html_assets.c, made by report/html/embed.sh). */
#ifndef HR_HTML_INTERNAL_H
#define HR_HTML_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "hr_output.h"

/* One file of report/html/, by its name ("template.html", "report.js", "report.css"). */
struct hr_asset {
    const char *name;
    const unsigned char *data; /* NUL-terminated; len bytes before the NUL */
    size_t len;
};
extern const struct hr_asset hr_html_assets[];
extern const size_t hr_html_nassets;

/* The page's data: one JSON object (layout in report/html/report.js, "The data"), safe inside
 * a <script> element ('<' is written as \u003c). Returns 0 or -1 when out of memory. */
int hr_html_data(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts);

/* s as a JSON string that may stand inside a <script> element. */
void hr_html_json_string(FILE *out, const char *s, size_t len);

#endif

/* What the text writers share (text_out.c, text_access.c). */
#ifndef HR_TEXT_INTERNAL_H
#define HR_TEXT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "hr_output.h"
#include "hr_symbolize.h"

/* Contexts shown in each of the cold and hottest views (fewer when --top asks for fewer). */
#define HR_ACCESS_VIEW_MAX 10

/* The "access" line of the header, when the profile has access data. */
void hr_text_access_header(FILE *out, const struct hr_profile *p);
/* The accesses line of the totals, when the profile has access data. */
void hr_text_access_totals(FILE *out, const struct hr_profile *p);
/* A context's access lines (accesses, reads/writes, utilisation, density, histogram). */
void hr_text_access_context(FILE *out, const struct hr_profile *p, const struct hr_context *c);
/* The cold and hottest-per-byte views after the top contexts; nothing without access data.
 * Returns -1 when out of memory. */
int hr_text_access_views(FILE *out, const struct hr_profile *p, size_t top,
                         struct hr_symbolizer *sym);

/* One frame line of a stack: "      #I  function (file:line) [module]". */
void hr_text_frame(FILE *out, uint32_t i, const struct hr_frame *f);

/* Merged and diff profiles (text_diff.c): the inputs of a merge (nothing for a profile read
 * from one file), and a diff's sections, from order (hr_contexts_sorted). -1: no memory. */
void hr_text_sources(FILE *out, const struct hr_profile *p);
int hr_text_diff(FILE *out, const struct hr_profile *p, struct hr_context **order,
                 const struct hr_output_opts *opts, struct hr_symbolizer *sym);

#endif

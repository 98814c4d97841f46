/* What the text writers share (text_out.c, text_access.c, text_sections.c). */
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

/* A context's stack: a "stack" line, then a line per frame, "      #I  function (file:line)
 * [module]" (inlined functions get lines of their own), then an empty line. */
void hr_text_stack(FILE *out, const struct hr_context *c, struct hr_symbolizer *sym);

/* Merged and diff profiles (text_diff.c): the inputs of a merge (nothing for a profile read
 * from one file), and a diff's sections, from order (hr_contexts_sorted). -1: no memory. */
void hr_text_sources(FILE *out, const struct hr_profile *p);
int hr_text_diff(FILE *out, const struct hr_profile *p, struct hr_context **order,
                 const struct hr_output_opts *opts, struct hr_symbolizer *sym);

/* A context's allocation site on one line: "f (file:line) < caller < its caller", at most
 * frames frames, inlined functions as frames of their own; addresses where no name. */
void hr_text_site(FILE *out, const struct hr_context *c, struct hr_symbolizer *sym,
                  unsigned frames);

/* Entries of each top-N section (fewer when --top asks for fewer), and frames of their sites. */
#define HR_SECTION_MAX 5
#define HR_SECTION_FRAMES 5

static inline int hr_section_on(const struct hr_output_opts *opts, unsigned bit)
{
    return !(opts->sections_off & bit);
}

/* The sections before the context listing (text_sections.c). Returns -1 when out of memory. */
int hr_text_sections(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts,
                     struct hr_symbolizer *sym);

#endif

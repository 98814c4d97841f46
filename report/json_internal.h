/* What the JSON writers share (json_out.c, json_access.c). */
#ifndef HR_JSON_INTERNAL_H
#define HR_JSON_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "hr_profile.h"

/* "NAME": V on a line of its own after indent, with a comma unless last. */
void hr_json_u64(FILE *out, const char *indent, const char *name, uint64_t v, int last);
/* A C string as an hr_str. */
struct hr_str hr_cstr(const char *s);

/* The profile's "access" member (null without access data), with its trailing comma. */
void hr_json_access(FILE *out, const struct hr_profile *p);
/* A context's access fields after max_percent_utilized: write and read counts, densities and
 * the histogram, each line with its trailing comma. */
void hr_json_access_fields(FILE *out, const char *indent, const struct hr_context *c,
                           uint32_t granule);

#endif

/* What the JSON writers share (json_out.c, json_access.c). */
#ifndef HR_JSON_INTERNAL_H
#define HR_JSON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hr_profile.h"

/* v in decimal at buf (room for 20 digits, no NUL); returns the digits' count. */
size_t hr_json_dec(char *buf, uint64_t v);
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

/* The frame table (json_frames.c): "frame_table": [...], with its trailing comma, holding the
 * frames of the stacks of v[0..n-1]; NULL when out of memory. Then each context's "frames"
 * value, [index, ...], innermost first. */
struct hr_json_ftab;
struct hr_symbolizer;
struct hr_json_ftab *hr_json_ftab_write(FILE *out, struct hr_context *const *v, size_t n,
                                        struct hr_symbolizer *sym);
void hr_json_ftab_refs(FILE *out, const struct hr_json_ftab *t, const struct hr_context *c);
void hr_json_ftab_free(struct hr_json_ftab *t);

/* The diff and merge members (json_diff.c): "merged_from" and "diff_base" of the profile (null
 * when it is neither), and a context's "in_base" and "delta" in a diff (nothing otherwise). */
void hr_json_sources(FILE *out, const struct hr_profile *p);
void hr_json_diff_base(FILE *out, const struct hr_profile *p);
void hr_json_context_delta(FILE *out, const char *indent, const struct hr_profile *p,
                           const struct hr_context *c);
/* "exit", "api", ... for a PROCESS dump_reason. */
const char *hr_json_reason_name(uint32_t r);
/* The summary object, "summary": {...}, at the given indent, with its trailing comma. */
void hr_json_summary(FILE *out, const char *indent, const struct hpf_summary *s);

#endif

/* Writers for the two output formats (json_out.c, text_out.c) and the small formatting helpers
 * they share (json_escape.c, units.c). */
#ifndef HR_OUTPUT_H
#define HR_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hr_profile.h"

struct hr_output_opts {
    enum hr_sort_key sort; /* context order (both formats) */
    size_t top;            /* text: contexts shown per profile; 0 = all */
    size_t json_top;       /* JSON: the same, 0 (all) unless --top was given */
    FILE *warn;            /* symbolisation warnings; NULL to drop them */
    unsigned sections_off; /* text: HR_SECTION_* bits of the sections left out; 0 = all */
};

/* The sections of the text report (--sections), in the order it prints them. */
#define HR_SECTION_BYTES (1u << 0)     /* top contexts by bytes allocated */
#define HR_SECTION_COUNT (1u << 1)     /* top contexts by allocations */
#define HR_SECTION_PEAK (1u << 2)      /* top contexts by bytes live at the peak */
#define HR_SECTION_LEAKED (1u << 3)    /* top contexts by bytes live at the dump */
#define HR_SECTION_TEMPORARY (1u << 4) /* contexts whose blocks lived under 1 ms on average */
#define HR_SECTION_SIZES (1u << 5)     /* block sizes in power-of-two buckets */
#define HR_SECTION_CONTEXTS (1u << 6)  /* the listing of --top contexts in --sort order */
#define HR_SECTION_ACCESS (1u << 7)    /* cold and hottest-per-byte, with access data */

/* Parses a --sections list ("bytes,count,...", "all", "none"): 0 and *off set to the bits left
 * out, or -1 for an unknown name. */
int hr_sections_parse(const char *list, unsigned *off);

/* Write every profile; JSON is one object for one profile, an array for several. Return 0, or
 * -1 when out of memory (output errors are left for the caller's ferror/fclose). */
int hr_write_json(FILE *out, struct hr_profile *const *profiles, size_t n,
                  const struct hr_output_opts *opts);
int hr_write_text(FILE *out, struct hr_profile *const *profiles, size_t n,
                  const struct hr_output_opts *opts);

/* A JSON string literal with quotes. Bytes that are not valid UTF-8 become \ufffd; control
 * characters are escaped. */
void hr_json_string(FILE *out, const char *s, size_t len);

/* Text-safe copy of arbitrary bytes: printable ASCII and valid UTF-8 as is, others as \xNN. */
void hr_text_string(FILE *out, const char *s, size_t len);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there are not one. */
size_t hr_utf8_seq_len(const unsigned char *s, size_t len);

/* "512 B", "1.5 KiB", "3.0 MiB", ...: buf needs HR_BYTES_MAX bytes. Returns buf. */
#define HR_BYTES_MAX 32
char *hr_format_bytes(char *buf, uint64_t bytes);

#endif

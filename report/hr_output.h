/* Writers for the output formats (json_out.c, text_out.c, pprof_out.c, dhat_out.c,
 * memprof_out.c, folded.c, html_out.c) and the small formatting helpers they share
 * (json_escape.c, units.c). */
#ifndef HR_OUTPUT_H
#define HR_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hr_metric.h"
#include "hr_profile.h"

struct hr_output_opts {
    enum hr_sort_key sort; /* context order (both formats) */
    size_t top;            /* text: contexts shown per profile; 0 = all */
    size_t json_top;       /* JSON: the same, 0 (all) unless --top was given */
    FILE *warn;            /* symbolisation warnings; NULL to drop them */
    unsigned sections_off; /* text: HR_SECTION_* bits of the sections left out; 0 = all */
    enum hr_metric metric; /* folded: the figure of each line; html: the flame graph's first */
    /* Every profile loaded from the command line, in argument order, when the writer gets one
     * profile made of them (merged): the HTML page draws the live heap of each dump over
     * time from these. NULL/0: only the written profile itself. */
    struct hr_profile *const *inputs;
    size_t ninputs;
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

/* Export formats: ONE profile each (cli.c merges several first). Return 0, or -1 when out of
 * memory; output errors are left for the caller's ferror/fclose. */
/* pprof (pprof_out.c): a gzipped profile.proto with a sample per context. */
int hr_write_pprof(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts);
/* DHAT (dhat_out.c): the JSON of Valgrind's DHAT, version 2, mode "heap", for dh_view.html.
 * DHAT has no negative figures: a diff profile (p->diff_base) is written with each
 * context's own figures, and heapprof-report refuses --diff with --format dhat. */
int hr_write_dhat(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts);

/* The result of a writer that cannot hold this profile (the reason went to opts->warn). */
#define HR_WRITE_REFUSED (-2)

/* LLVM MemProf raw profile (version 2, for llvm-profdata 16) of ONE profile (memprof_out.c):
 * binary output. Returns 0, -1 when out of memory, or HR_WRITE_REFUSED when
 * hr_memprof_check fails. */
int hr_write_memprof(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts);
/* Whether llvm-profdata 16 can take p as a raw profile: 0, or -1 with a one-line reason (no
 * "heapprof-report: " prefix) in err. Not a diff, a non-PIE executable, some context. */
int hr_memprof_check(const struct hr_profile *p, char err[HR_ERR_MAX]);

/* Folded stacks ("frame;frame;frame value", outermost first) for flamegraph.pl, inferno and
 * speedscope: one line per distinct stack, with opts->metric. In a diff profile each line has
 * two values, base then new, as flamegraph.pl's differential input (docs/REPORT.md). */
int hr_write_folded(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts);
/* One self-contained HTML page (scripts, styles and data inline) of one profile. */
int hr_write_html(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts);

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
/* The profile's arguments as shown (hr_argc_shown) joined by spaces (NUL-terminated,
 * malloc'ed; *len bytes before the NUL), or NULL when out of memory. The arguments' bytes are
 * copied as they are. */
char *hr_command_line(const struct hr_profile *p, size_t *len);
/* The arguments a command line shows: all but trailing empty ones (at least one). A program
 * that wrote its title over its arguments (setproctitle: nginx, redis, postgres) leaves the
 * rest of that memory as empty arguments; the JSON keeps them all. */
uint32_t hr_argc_shown(const struct hr_profile *p);

#endif

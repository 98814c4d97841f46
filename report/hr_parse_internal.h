/* What the record parsers share inside the reader (parse.c, parse_access.c, parse_cut.c): the
 * bounded payload cursor, the error line, the context a record names, the rules for a profile
 * cut short. Not used outside parsing. */
#ifndef HR_PARSE_INTERNAL_H
#define HR_PARSE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hr_profile.h"

/* A bounded view of one payload. Every read goes through hr_cur_take, which refuses to pass
 * the end, so a lying length field can only produce an error. */
struct hr_cur {
    const uint8_t *p;
    size_t left;
};

/* The next n bytes of the payload, or NULL when fewer are left. */
const void *hr_cur_take(struct hr_cur *c, size_t n);

/* The fixed part of a record of kind what, copied out (payloads need not be aligned); -1 with
 * "WHAT record at offset OFF too short" in err when the payload is shorter. */
int hr_cur_fixed(struct hr_cur *c, void *dst, size_t n, const char *what, uint64_t off,
                 char *err);

void hr_err(char err[HR_ERR_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The context a record names, created if new; NULL (and the reason in err) for id 0 or when
 * out of memory. where says which record, for the message. */
struct hr_context *hr_context_for(struct hr_profile *p, uint32_t id, char *err,
                                  const char *where);

/* ACCESS and ACCESS_HIST records (parse_access.c). */
int hr_parse_access(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off);
int hr_parse_access_hist(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off);
/* After the last record: each instrumented module's path, from the MODULE records. */
void hr_access_resolve_modules(struct hr_profile *p);

/* Profiles cut short (parse_cut.c). A record at the end of the file with only have bytes of it
 * there (header and payload): 1 when the file was simply cut there, 0 when its bytes say it is
 * damage instead. */
int hr_cut_or_corrupt(const uint8_t *rec, size_t have, uint32_t version);
/* After the last complete record of a file without END (at: where it ends): marks p cut, and
 * keeps only what the cut left whole. -1 with err set when nothing usable was read. */
int hr_cut_finish(struct hr_profile *p, int have_process, int have_summary, size_t at,
                  char *err);

#endif

/* Parsed HEAPPROF_OPTIONS, read once at init from one X-macro table (options.def). */
#ifndef HP_OPTIONS_H
#define HP_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#define HP_OPT_STR_MAX 256

struct hp_options {
#define HP_OPTION_BOOL(name) int name;
#define HP_OPTION_INT(name) uint64_t name;
#define HP_OPTION_SIG(name) uint64_t name;
#define HP_OPTION_STR(name) char name[HP_OPT_STR_MAX];
#define HP_OPTION(kind, name, def, doc) HP_OPTION_##kind(name)
#include "options.def"
#undef HP_OPTION
#undef HP_OPTION_BOOL
#undef HP_OPTION_INT
#undef HP_OPTION_SIG
#undef HP_OPTION_STR
};

extern struct hp_options hp_opt;

/* Reset to defaults, then apply `spec` ("k=v:k=v", may be NULL). Unknown keys and bad values
 * warn through hp_warn and leave the default. Returns the number of problems found. */
int hp_options_parse(struct hp_options *o, const char *spec);
/* Write the table with current values to fd. */
void hp_options_print(const struct hp_options *o, int fd);

#endif

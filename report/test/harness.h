/* What every report unit test shares (harness.c): its one suite and main's run of it, temporary
 * files, and the command line run in-process with its output captured. */
#ifndef HT_HARNESS_H
#define HT_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <stdio.h>

/* The test binary's suite, named suite, with one test case named name (timeout: seconds a test
 * may take, 0 for Check's default), for main to add its tests to. */
TCase *ht_tcase(const char *suite, const char *name, double timeout);
/* Runs that suite: EXIT_SUCCESS when every test passed, for main to return. */
int ht_run(void);

/* A new temporary file holding the n bytes at p; its malloc'ed path. */
char *ht_tmpfile(const void *p, size_t n);
/* A temporary file holding ht_sample's profile; its malloc'ed path. */
char *ht_sample_file(void);
/* A whole stream read back from its start, as a NUL-terminated malloc'ed string. */
char *ht_slurp(FILE *f);

/* heapprof-report's command line (argv[0] included) run in-process: its exit status, with
 * what it printed to stdout and stderr in *out and *err (malloc'ed; either may be NULL to
 * drop it). */
int ht_cli(int argc, char **argv, char **out, char **err);

#endif

/* The command line of heapprof-report (cli.c): main() is only a call to hr_cli_run, so the
 * unit tests can drive the whole tool in-process. */
#ifndef HR_CLI_H
#define HR_CLI_H

#include <stdio.h>

#define HR_VERSION "0.1.0"

/* Exit statuses: 0 success, 1 bad or unreadable profile / output error, 2 usage error. */
#define HR_EXIT_OK 0
#define HR_EXIT_FAIL 1
#define HR_EXIT_USAGE 2

/* Runs the tool; report output goes to out unless -o is given, messages to err. */
int hr_cli_run(int argc, char **argv, FILE *out, FILE *err);

#endif

/* The shim's constructor runs before libc's initialiser (-z initfirst): the program must still
 * start with its environment, its arguments and its name, whatever allocator comes first and
 * whichever unwinder the shim loads, and its preinit function must run once, with its
 * arguments, before main. Prints "ok" or what is wrong. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int preinit_runs, preinit_argc;

static void preinit(int argc, char **argv, char **envp)
{
    (void)argv, (void)envp;
    preinit_runs++;
    preinit_argc = argc;
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_entry)(int, char **, char **) = preinit;

int main(int argc, char **argv)
{
    const char *v = getenv("STARTUP_ENV_CHECK");
    int ok = 1;
    if (!environ || !v || strcmp(v, "yes") != 0) {
        printf("environment lost (environ %p, STARTUP_ENV_CHECK %s)\n", (void *)environ, v ? v : "unset");
        ok = 0;
    }
    if (argc != 2 || strcmp(argv[1], "arg") != 0) {
        printf("arguments lost (argc %d)\n", argc);
        ok = 0;
    }
    if (!program_invocation_name || strcmp(program_invocation_name, argv[0]) != 0 ||
        strcmp(program_invocation_short_name, "startup_env") != 0) {
        printf("program name lost ('%s')\n", program_invocation_name ? program_invocation_name : "(null)");
        ok = 0;
    }
    if (preinit_runs != 1 || preinit_argc != argc) {
        printf("preinit function ran %d times (argc %d)\n", preinit_runs, preinit_argc);
        ok = 0;
    }
    free(strdup(argv[0])); /* the profile has an allocation */
    if (ok)
        puts("ok");
    return !ok;
}

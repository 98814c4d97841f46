/* The shim opened with dlopen by a program that has cleared its environment: the constructor
 * sees environ NULL, as it does when it runs before libc's initialiser, and must not take
 * itself for that (it would run the program's preinit functions a second time). Prints "ok". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int preinit_runs;

static void preinit(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    preinit_runs++;
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_entry)(int, char **, char **) = preinit;

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    clearenv();
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    free(malloc(10));
    if (preinit_runs != 1) {
        printf("preinit function ran %d times\n", preinit_runs);
        return 1;
    }
    puts("ok");
    return 0;
}

/* A program whose main ends in a call of a function that does not return (its error path,
 * which gcc puts last), built with jemalloc linked in: the linker puts jemalloc's constructor
 * right after main (both in .text.startup), and a look through the code that went on past
 * such a call would take the constructor, and through it jemalloc's internal frees, as reached
 * from main (case linked-noreturn). Allocates 3 blocks of 1000 bytes and frees them. */
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[3];

__attribute__((noreturn, noinline)) static void die(const char *what)
{
    fprintf(stderr, "noreturn_main: %s\n", what);
    exit(2);
}

int main(int argc, char **argv)
{
    (void)argv;
    for (int i = 0; i < 3; i++)
        if (!(keep[i] = malloc(1000)))
            die("out of memory");
    for (int i = 0; i < 3; i++)
        free(keep[i]);
    if (argc > 1)
        die("no arguments expected");
    puts("done");
    return 0;
}

/* A small program for running under another tool with the shim (valgrind-stacked.sh): ten
 * blocks allocated, five freed, a line of output. */
#include <stdio.h>
#include <stdlib.h>

void *volatile keep[10];

int main(void)
{
    for (int i = 0; i < 10; i++)
        keep[i] = malloc(100 + (size_t)i);
    for (int i = 0; i < 5; i++)
        free(keep[i]);
    puts("ok");
    return 0;
}

/* Allocates, then opens /dev/null until no descriptor is left and prints how many it got:
 * under the shim it must get as many as bare (the shim holds none of them), and the profile,
 * which then has no descriptor to be made with, is said to be lost in one line. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile keep;

int main(void)
{
    keep = malloc(100);
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
        n++;
    printf("%d\n", n);
    return 0;
}

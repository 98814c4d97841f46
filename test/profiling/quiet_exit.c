/* Allocates, writes nothing, exits with status 5: whatever the shim says on its way out must
 * not change that. */
#include <stdlib.h>

void *volatile keep[4];

int main(void)
{
    for (int i = 0; i < 4; i++)
        keep[i] = malloc(100 * (size_t)(i + 1));
    free(keep[0]);
    return 5;
}

/* The program side of ctor_lib.c: frees the library constructor's temporary blocks, allocates
 * some of its own, and says whether its own allocator (linked in) served them. */
#include <stdio.h>
#include <stdlib.h>

void ctor_lib_release(void);
extern void *volatile ctor_kept[10];
void *volatile main_blocks[7];

__attribute__((noinline)) void site_main(int i) { main_blocks[i] = malloc(300); }

int main(void)
{
    ctor_lib_release();
    for (int i = 0; i < 7; i++)
        site_main(i);
    for (int i = 0; i < 7; i++)
        free(main_blocks[i]);
    puts(ctor_kept[9] ? "ok" : "no block");
    return 0;
}

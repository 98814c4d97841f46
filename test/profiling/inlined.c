/* Allocation sites the compiler inlines: the report names each inlined function in a frame of
 * its own, at its own line, before the function it was inlined into (at the line of the call).
 * site_inl_outer makes 300 blocks of 48 bytes through inl_mid and site_inl_leaf (both inlined into it)
 * and 200 blocks of 80 bytes with a call of its own. The marked lines are read by
 * check_sites.py (kind "inlined"). */
#include <stdlib.h>

void *volatile keep;

static inline __attribute__((always_inline)) void *site_inl_leaf(size_t n)
{
    return malloc(n); /* @leaf */
}

static inline __attribute__((always_inline)) void *inl_mid(size_t n)
{
    void *p = site_inl_leaf(n); /* @mid */
    keep = p;
    return p;
}

__attribute__((noinline)) void site_inl_outer(void)
{
    for (int i = 0; i < 300; i++)
        free(inl_mid(48)); /* @outer */
    for (int i = 0; i < 200; i++) {
        void *p = malloc(80); /* @own */
        keep = p;
        free(p);
    }
}

int main(void)
{
    site_inl_outer();
    return 0;
}

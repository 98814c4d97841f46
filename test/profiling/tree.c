/* Many contexts whose stacks share most of their frames, as real programs' do: 4096 call
 * paths, each six levels of a four-way choice (tree_f0..tree_f3) under a common chain of ten
 * tree_deep frames. Each path allocates three blocks of its own size (path number + 1) and
 * leaks one, so the report can tell from each context's frames which path it is and check its
 * numbers; the profile, which writes the shared outer frames once (format version 2), must stay
 * small. */
#include <stdlib.h>

void *volatile sink;
void *volatile keep[4096];

void tree_rec(int depth, unsigned path, unsigned whole);

__attribute__((noinline)) void tree_leaf(unsigned whole)
{
    for (int i = 0; i < 3; i++) {
        void *p = malloc(whole + 1);
        sink = p;
        if (i < 2)
            free(p);
        else
            keep[whole] = p;
    }
    __asm__ volatile("" ::: "memory");
}

#define LEVEL(k)                                                                                   \
    __attribute__((noinline)) void tree_f##k(int depth, unsigned path, unsigned whole)             \
    {                                                                                              \
        tree_rec(depth, path, whole);                                                              \
        __asm__ volatile("" ::: "memory");                                                         \
    }
LEVEL(0)
LEVEL(1)
LEVEL(2)
LEVEL(3)

__attribute__((noinline)) void tree_rec(int depth, unsigned path, unsigned whole)
{
    if (depth == 0) {
        tree_leaf(whole);
    } else {
        switch (path & 3) {
        case 0: tree_f0(depth - 1, path >> 2, whole); break;
        case 1: tree_f1(depth - 1, path >> 2, whole); break;
        case 2: tree_f2(depth - 1, path >> 2, whole); break;
        default: tree_f3(depth - 1, path >> 2, whole); break;
        }
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void tree_deep(int n)
{
    if (n)
        tree_deep(n - 1);
    else
        for (unsigned p = 0; p < 4096; p++)
            tree_rec(6, p, p);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    tree_deep(9);
    return 0;
}

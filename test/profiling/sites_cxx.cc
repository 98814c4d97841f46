// Profile-accuracy test program for C++: operator new/delete in their forms, with known counts
// and sizes (checked by check_sites.py).
#include <cstdio>
#include <new>
#include <vector>

#define NOINLINE __attribute__((noinline))

void *volatile sink;

struct alignas(64) Wide {
    char bytes[192];
};

// 300 x new int[25] (100 bytes), delete[].
NOINLINE void site_new_array()
{
    for (int i = 0; i < 300; i++) {
        int *p = new int[25];
        sink = p;
        delete[] p;
    }
}

// 200 x new Wide (192 bytes, 64-aligned: operator new(size_t, align_val_t)), delete.
NOINLINE void site_new_aligned()
{
    for (int i = 0; i < 200; i++) {
        Wide *w = new Wide;
        if (reinterpret_cast<unsigned long>(w) & 63)
            __builtin_trap();
        sink = w;
        delete w;
    }
}

// 50 x nothrow new of 40 bytes, leaked.
static void *keep[50];
NOINLINE void site_new_nothrow_leak()
{
    for (int i = 0; i < 50; i++)
        keep[i] = new (std::nothrow) char[40];
    sink = keep[0];
}

int main()
{
    site_new_array();
    site_new_aligned();
    site_new_nothrow_leak();
    std::printf("cxx done\n");
    return 0;
}

#include "blocks.h"

__attribute__((noinline)) void *site_cxxitems(size_t n)
{
    unsigned char *p = new unsigned char[n];
    write_all(p, n);
    return p;
}

void site_cxxitems_free(void *p) { delete[] static_cast<unsigned char *>(p); }

// The end use of --format memprof (case report-memprof): two allocation sites through
// operator new, which LLVM 16's memprof use annotates (it leaves malloc alone). hot_site's
// blocks are read and written over and over; cold_site's block is never touched. Both sites
// have external linkage: LLVM 16 looks a function's memprof record up by the GUID of its
// PGO name, which for a static function carries the file name while the raw profile's
// symbolised frames do not. The stores to keep stop the calls from becoming tail calls
// (whose frames a stack would lack).
#include <cstdio>

char *volatile keep;
static volatile int rounds = 8;

__attribute__((noinline)) char *hot_site() { char *p = new char[256]; keep = p; return p; }
__attribute__((noinline)) char *cold_site() { char *p = new char[4096]; keep = p; return p; }

int main()
{
    char *cold = cold_site();
    unsigned long sum = 0;
    for (int b = 0; b < rounds; b++) {
        volatile char *h = hot_site();
        for (int r = 0; r < 100; r++)
            for (int i = 0; i < 256; i += 8)
                sum += h[i] = (char)(i + r);
        delete[] (char *)h;
    }
    delete[] cold;
    std::fprintf(stderr, "memprof_use %lu\n", sum);
    return 0;
}

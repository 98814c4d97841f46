// The CMake test's program: each module's site makes ROUNDS blocks of sizes 1..ROUNDS * 3,
// every byte written once; the program prints per site the blocks and accesses the profile
// must show (check_sites.py --printed), the same bare or profiled.
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include "blocks.h"

static void *volatile keep;

int main()
{
    const int rounds = 50;
    void *plugin = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        std::fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    auto site_plugin = reinterpret_cast<void *(*)(size_t)>(dlsym(plugin, "site_plugin"));
    unsigned long bytes = 0;
    for (int i = 1; i <= rounds; i++) {
        size_t n = (size_t)i * 3;
        bytes += n;
        keep = site_cvec(n);
        std::free(keep);
        keep = site_cxxitems(n);
        site_cxxitems_free(keep);
        keep = site_counts(n);
        std::free(keep);
        keep = site_plugin(n);
        std::free(keep);
    }
    dlclose(plugin);
    static const char *const sites[] = {"cvec", "cxxitems", "counts", "plugin"};
    for (const char *s : sites)
        std::printf("site %s blocks=%d accesses=%lu writes=%lu percent=100\n", s, rounds, bytes, bytes);
    return 0;
}

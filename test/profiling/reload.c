/* Reload test: open plugin A, allocate through it, close it; then the same with plugin B, which
 * the loader usually puts at A's address (reload_plugin.S: same code, other frame size). B's
 * allocation must still be unwound with B's call frame rule, not with the rule cached for A at
 * the same address: its stack goes on into call_plugin and main. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[2];

__attribute__((noinline)) static void call_plugin(const char *path, int i)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        printf("%s\n", dlerror());
        exit(1);
    }
    void *(*f)(void) = (void *(*)(void))dlsym(h, "reload_alloc");
    if (!f)
        exit(1);
    keep[i] = f();
    printf("%s at %p\n", path, (void *)f);
    dlclose(h);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    call_plugin(argv[1], 0);
    call_plugin(argv[2], 1);
    return 0;
}

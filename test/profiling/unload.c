/* Unload test: a block allocated by a plugin that is dlclosed before exit must still be
 * attributed to the plugin's function in the profile (the shim notes closed libraries). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        printf("%s\n", dlerror());
        return 1;
    }
    void (*f)(void) = (void (*)(void))dlsym(h, "plugin_alloc");
    if (!f)
        return 1;
    f();
    dlclose(h);
    printf("unload done\n");
    return 0;
}

/* dlopen/dlclose of plugins that allocate and free across the boundary (plugin mallocs, main
 * frees and the reverse), in repeated load/unload cycles, with and without RTLD_DEEPBIND. With
 * RTLD_DEEPBIND the plugin would bind malloc to libc ahead of the preloaded shim; the shim must
 * cope (it strips the flag by default). */
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>
#include "testutil.h"

/* plug_open loads by full path; caller_dependent() below by bare name. */
struct plug {
    void *h;
    const char *(*name)(void);
    void *(*malloc_)(size_t);
    void *(*calloc_)(size_t, size_t);
    void *(*realloc_)(void *, size_t);
    char *(*strdup_)(const char *);
    void (*free_)(void *);
    size_t (*usable)(void *);
    int (*memalign_)(void **, size_t, size_t);
};

static char dir[4096];

static void plug_open(struct plug *pl, const char *file, int flags)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    pl->h = dlopen(path, flags);
    CHECK(pl->h, "dlopen %s: %s", file, dlerror());
#define SYM(field, name) \
    CHECK((*(void **)&pl->field = dlsym(pl->h, name)) != NULL, "dlsym %s", name)
    SYM(name, "plug_name");
    SYM(malloc_, "plug_malloc");
    SYM(calloc_, "plug_calloc");
    SYM(realloc_, "plug_realloc");
    SYM(strdup_, "plug_strdup");
    SYM(free_, "plug_free");
    SYM(usable, "plug_usable");
    SYM(memalign_, "plug_memalign");
#undef SYM
}

/* Blocks made on one side are used, resized and freed on the other. Returns one block made by
 * the plugin that the caller frees after the plugin is unloaded. */
static void *cross(struct plug *pl, unsigned seed)
{
    CHECK(pl->name() && strstr(pl->name(), "loaded"), "plugin constructor did not run");
    for (int i = 0; i < 20; i++) {
        size_t n = 1 + (size_t)i * 997;
        char *a = pl->malloc_(n); /* plugin allocates, main frees */
        CHECK(a, "plug_malloc");
        CHECK(malloc_usable_size(a) >= n, "usable size of plugin block");
        pat_fill(a, n, seed + i);
        a = realloc(a, n * 3); /* main resizes a plugin block */
        CHECK(a && pat_ok(a, n, seed + i), "main realloc of plugin block");
        free(a);

        char *b = malloc(n); /* main allocates, plugin frees */
        CHECK(b, "malloc");
        CHECK(pl->usable(b) >= n, "plugin usable size of main block");
        pat_fill(b, n, seed + i);
        b = pl->realloc_(b, n / 2 + 1); /* plugin resizes a main block */
        CHECK(b && pat_ok(b, n / 2 + 1, seed + i), "plugin realloc of main block");
        pl->free_(b);

        unsigned char *c = pl->calloc_(n, 1);
        CHECK(c, "plug_calloc");
        for (size_t j = 0; j < n; j++)
            CHECK(c[j] == 0, "plugin calloc not zeroed");
        free(c);

        char *s = pl->strdup_("crossing the boundary");
        CHECK(s && strcmp(s, "crossing the boundary") == 0, "plug_strdup");
        free(s);

        void *m = NULL;
        CHECK(pl->memalign_(&m, 256, n) == 0 && ((uintptr_t)m & 255) == 0, "plug_memalign");
        free(m);
        CHECK(posix_memalign(&m, 4096, n) == 0, "posix_memalign");
        pl->free_(m);
    }
    void *keep = pl->malloc_(777);
    CHECK(keep, "plug_malloc");
    pat_fill(keep, 777, seed);
    return keep;
}

static void cycles(const char *file, int flags, int n)
{
    for (int i = 0; i < n; i++) {
        struct plug pl;
        plug_open(&pl, file, flags);
        void *keep = cross(&pl, (unsigned)i);
        CHECK(dlclose(pl.h) == 0, "dlclose: %s", dlerror());
        /* the plugin is gone (unless pinned), its block must still be freeable */
        CHECK(pat_ok(keep, 777, (unsigned)i), "plugin block corrupted after dlclose");
        free(keep);
    }
}

/* Lookups that depend on who called dlopen: a bare name found through the program's
 * DT_RUNPATH ($ORIGIN, set by build.sh), "$ORIGIN/..." in the name, dlopen(NULL), and the
 * error text of a failed dlopen (printed: the runner compares it with the bare run's). */
static void caller_dependent(void)
{
    for (int i = 0; i < 5; i++) {
        struct plug pl;
        pl.h = dlopen("libplug.so", RTLD_NOW);
        CHECK(pl.h, "dlopen of a bare name via the program's RUNPATH failed: %s", dlerror());
        dlclose(pl.h);
        pl.h = dlopen("$ORIGIN/libplug_deep.so", RTLD_NOW | RTLD_DEEPBIND);
        CHECK(pl.h, "dlopen(\"$ORIGIN/libplug_deep.so\") failed: %s", dlerror());
        dlclose(pl.h);
    }
    void *self = dlopen(NULL, RTLD_NOW);
    CHECK(self && dlsym(self, "malloc"), "dlopen(NULL) / dlsym(malloc)");
    CHECK(dlopen("libheapprof-no-such-library.so", RTLD_NOW) == NULL, "missing library opened");
    printf("dlerror: %s\n", dlerror());
    CHECK(dlerror() == NULL, "dlerror not cleared");
}

int main(void)
{
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    CHECK(n > 0, "readlink");
    dir[n] = 0;
    *strrchr(dir, '/') = 0;

    caller_dependent();
    cycles("libplug.so", RTLD_NOW | RTLD_LOCAL, 30);
    cycles("libplug.so", RTLD_LAZY | RTLD_GLOBAL, 10);
    cycles("libplug_deep.so", RTLD_NOW | RTLD_DEEPBIND, 30);
    cycles("libplug_deep.so", RTLD_LAZY | RTLD_GLOBAL | RTLD_DEEPBIND, 10);

    /* both plugins loaded at once, blocks passed from one to the other */
    struct plug a, b;
    plug_open(&a, "libplug.so", RTLD_NOW);
    plug_open(&b, "libplug_deep.so", RTLD_NOW | RTLD_DEEPBIND);
    for (int i = 0; i < 100; i++) {
        void *p = a.malloc_(50 + i);
        CHECK(p, "plug_malloc");
        p = b.realloc_(p, 5000 + i);
        CHECK(p, "plug_realloc");
        b.free_(b.strdup_("x"));
        a.free_(p);
    }
    dlclose(b.h);
    dlclose(a.h);
    return 0;
}

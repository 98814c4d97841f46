/* A small plugin for t_dlopen: it allocates and frees on behalf of the main program, so blocks
 * cross the boundary in both directions; built twice (libplug.so, libplug_deep.so) by build.sh. */
#include <stdlib.h>
#include <string.h>

static char *load_note; /* allocated at load time, freed at unload time */

__attribute__((constructor)) static void plug_load(void)
{
    load_note = malloc(100);
    if (load_note)
        strcpy(load_note, PLUGIN_NAME " loaded");
}

__attribute__((destructor)) static void plug_unload(void)
{
    free(load_note);
    load_note = NULL;
}

const char *plug_name(void) { return load_note; }
void *plug_malloc(size_t n) { return malloc(n); }
void *plug_calloc(size_t a, size_t b) { return calloc(a, b); }
void *plug_realloc(void *p, size_t n) { return realloc(p, n); }
char *plug_strdup(const char *s) { return strdup(s); }
void plug_free(void *p) { free(p); }
size_t plug_usable(void *p)
{
    extern size_t malloc_usable_size(void *);
    return malloc_usable_size(p);
}
int plug_memalign(void **out, size_t align, size_t n) { return posix_memalign(out, align, n); }

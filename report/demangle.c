/* Demangling. Rust's names first (rust_demangle.c); C++ without linking C++: libstdc++'s
 * __cxa_demangle is looked up at run time, so the report tool stays plain C and still prints
 * readable names when libstdc++ is installed. */
#include <dlfcn.h>
#include <stdlib.h>

#include "hr_symbolize.h"

typedef char *hr_cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

static hr_cxa_demangle_fn *hr_demangler(void)
{
    static int tried;
    static hr_cxa_demangle_fn *fn;
    if (!tried) {
        tried = 1;
        /* The handle is kept open for the life of the process: fn points into it. */
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            *(void **)&fn = dlsym(h, "__cxa_demangle");
    }
    return fn;
}

char *hr_demangle(const char *name)
{
    char *rust = hr_rust_demangle(name);
    if (rust)
        return rust;
    /* Itanium ABI mangled names all start with _Z; skip the dlopen for C programs. */
    if (name[0] != '_' || name[1] != 'Z')
        return NULL;
    hr_cxa_demangle_fn *fn = hr_demangler();
    if (!fn)
        return NULL;
    int status = -1;
    char *out = fn(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

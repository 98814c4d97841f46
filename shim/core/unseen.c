/* A word, once at start, for programs whose heap is mostly out of the shim's sight: Go's
 * runtime, CPython's pymalloc and PHP's Zend allocator take their memory with mmap and carve
 * objects out of it themselves, so a profile without that word would look complete and hold a
 * fraction of the heap. The interpreters have a switch to malloc per object; the word names
 * it (and heapprof-run's --no-pools, which sets it). */
#include "core/core.h"
#include "core/core_internal.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <link.h>
#include <sys/auxv.h>

/* Does the program carry Go's build-id note (owner "Go", type 4) in a PT_NOTE segment? Go's
 * runtime keeps its own heap (only C code's malloc, through cgo, comes here) and ends the
 * process with a raw exit_group, which runs no exit handler: without a word, such a program
 * would leave no profile and no sign why. */
static int is_go_program(void)
{
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t n = getauxval(AT_PHNUM);
    uintptr_t bias = 0;
    for (size_t i = 0; ph && i < n; i++)
        if (ph[i].p_type == PT_PHDR)
            bias = (uintptr_t)ph - ph[i].p_vaddr;
    for (size_t i = 0; ph && i < n; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(bias + ph[i].p_vaddr), *end = p + ph[i].p_filesz;
        while (end - p >= 12) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
            if ((size_t)(end - p) - 12 < name || (size_t)(end - p) - 12 - name < desc)
                break;
            /* (Go's linker counts the name's padding: 4, "Go\0\0") */
            if ((nh->n_namesz == 3 || nh->n_namesz == 4) && nh->n_type == 4 &&
                hp_memcmp(p + 12, "Go", 3) == 0)
                return 1;
            p += 12 + name + desc;
        }
    }
    return 0;
}

int hp_pymalloc_off(const char *pythonmalloc)
{
    /* "malloc" and "malloc_debug" put objects in malloc; "pymalloc", "debug" (hooks on the
     * default) and anything Python does not know keep pymalloc. */
    return pythonmalloc &&
           (hp_strcmp(pythonmalloc, "malloc") == 0 || hp_strcmp(pythonmalloc, "malloc_debug") == 0);
}

int hp_zend_alloc_off(const char *use_zend_alloc)
{
    /* PHP's test: the variable set and its value, read as a number, 0. */
    if (!use_zend_alloc)
        return 0;
    const char *p = use_zend_alloc;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '+' || *p == '-')
        p++;
    while (*p == '0')
        p++;
    return *p < '1' || *p > '9';
}

void hp_note_unseen_heaps(void)
{
    if (is_go_program())
        hp_warn("this is a Go program: Go keeps its own heap, so only C code's malloc (cgo) is "
                "profiled, and it ends the process without exit handlers, so no profile is "
                "written at its exit; ask for profiles while it runs (dump_interval_ms, "
                "dump_signal)");
    /* Symbols of the executable and the libraries it was linked with (an interpreter loaded
     * later with dlopen is not looked for), read without dlsym: a failed dlsym allocates its
     * error message, which would show in the profile as allocations without a context. */
    if (hp_defined_function("PyObject_Malloc") && !hp_pymalloc_off(hp_env_value("PYTHONMALLOC")))
        hp_warn("this program runs Python, whose small objects come from pymalloc's own "
                "arenas, which it maps itself: they are not in the profile; set "
                "PYTHONMALLOC=malloc (heapprof-run --no-pools) to profile each object");
    if (hp_defined_function("zend_mm_startup") && !hp_zend_alloc_off(hp_env_value("USE_ZEND_ALLOC")))
        hp_warn("this program runs PHP, whose allocator maps its own memory and carves every "
                "allocation out of it: they are not in the profile; set USE_ZEND_ALLOC=0 "
                "(heapprof-run --no-pools) to profile each allocation");
}

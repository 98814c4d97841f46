/* Turns the return addresses of a profile's stacks into function, source file and line, using
 * the profile's MODULE records and elfutils' libdwfl (symbolize.c), plus C++ demangling
 * (demangle.c). */
#ifndef HR_SYMBOLIZE_H
#define HR_SYMBOLIZE_H

#include <stdint.h>
#include <stdio.h>

#include "hr_profile.h"

/* One symbolised frame. Strings are never NULL ("" when unknown) and live as long as the
 * symbolizer that produced them.
 *
 * Where the compiler inlined functions into the code at pc, DWARF names each of them: the
 * frame is then the innermost inlined function (file and line where pc is), marked inlined,
 * and `next` leads outwards through the functions it was inlined into, each at the line of
 * its call to the one inside, down to the function the code belongs to (next NULL, not
 * inlined). Every frame of such a chain has the same pc and module. */
struct hr_frame {
    uint64_t pc;        /* the return address as recorded */
    const char *module; /* module path, pseudo name such as "[vdso]", or "" */
    const char *function;
    const char *file;
    int line;    /* 0 when unknown */
    int start_line; /* where the function is declared (DWARF's decl_line), 0 when unknown */
    int inlined; /* 1: this function's code was inlined into next's */
    const struct hr_frame *next;
};

struct hr_symbolizer;

/* Prepares symbolisation for p (which must outlive it). Warnings, such as a build id that does
 * not match the file on disk, go to warn (once per module) when it is not NULL. Returns NULL
 * only when out of memory. */
struct hr_symbolizer *hr_symbolizer_new(const struct hr_profile *p, FILE *warn);

/* Symbolises one pc; results are cached, so asking again is cheap. */
void hr_symbolize(struct hr_symbolizer *s, uint64_t pc, struct hr_frame *out);

/* Frees s and its cached frames. The files it read stay for the next symbolizer (of another
 * profile), until hr_symbolizer_release. */
void hr_symbolizer_free(struct hr_symbolizer *s);

/* The files the symbolizers so far have read (each once, however many profiles map it), and
 * their release, once no symbolizer is left. */
size_t hr_symbolizer_files(void);
void hr_symbolizer_release(void);

/* The demangled form of a Rust or C++ symbol as a malloc'ed string, or NULL when name is not
 * mangled, not understood, or (C++) no demangler (libstdc++'s __cxa_demangle) can be loaded. */
char *hr_demangle(const char *name);

/* Rust's two manglings (rust_demangle.c): v0 (`_R...`) and legacy (`_ZN...17h<hash>E`), without
 * crate hashes; NULL for anything else. */
char *hr_rust_demangle(const char *name);

#endif

/* Allocators that come before the shim in symbol lookup (one linked into the program itself, or
 * preloaded ahead of the shim): LD_PRELOAD cannot put the shim in front of them, so their entry
 * points are patched to jump to the shim's, and the shim reaches their original code through
 * trampolines. x86_64 only. Private to backend/: the rest of the shim reaches what it needs of
 * this through backend.h. */
#ifndef HP_PATCH_INTERNAL_H
#define HP_PATCH_INTERNAL_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* Patch the allocator entry points that the object holding `malloc_fn` defines. Returns 0 when
 * they all lead to the shim now, for blocks with headers (a known family, nothing found past
 * its entry points); then hp_patch_original(name) gives a function that runs the original
 * `name` (NULL if the object has none). Returns -1 (and changes nothing) when they cannot be
 * patched, or, without allow_headerless, not for headers; *why then says why. With
 * allow_headerless, any other allocator has its C and C++ entry points patched for the shim
 * to profile without headers: returns 1 when a path past them was found or the look could
 * not finish (*why saying which), 2 when it is only not a known family. */
int hp_patch_allocator(void *malloc_fn, int allow_headerless, const char **why);
void *hp_patch_original(const char *name);
/* Where a call of the function at addr goes: addr, or for a PLT entry that stands for the
 * function (a non-PIE program that takes its address), the function itself. */
void *hp_patch_resolve(void *addr);
/* The allocator's own function `name` that was patched (its address), or NULL. */
void *hp_patch_patched(const char *name);
/* How many entry points hp_patch_allocator patched (distinct addresses). */
int hp_patch_count(void);
/* What a call of `name` reaches, as the loader's lookup order has it: dlsym's answer, past a
 * PLT entry of a non-PIE program that stands for the function, or a hidden (non-default
 * version) definition in an earlier object, which dlsym passes by but a program's versioned
 * reference reaches (glibc's libc_malloc_debug.so defines its malloc@GLIBC_2.2.5 that way;
 * the version itself is not compared). */
void *hp_bound_symbol(const char *name);

/* ---- the way from a patched entry point into the shim (keep_regs.c) ---- */
/* Jumped to by an entry stub with its frame made, r11 saved and the shim's function in r11:
 * call it, keeping every register but the result (value) or every one (void). */
void hp_patch_call_value(void);
void hp_patch_call_void(void);

/* ---- symbols of loaded objects (dynsyms.c) ---- */
/* An object's dynamic symbol table, read from its loaded image. Looked up here rather than
 * with dlopen (RTLD_NOLOAD) and dlsym: dlopen runs the initialisers of the object's
 * dependencies that have not run yet, and the shim's constructor runs before all of them
 * (shim/init.c): libc would be initialised without the program's arguments. dynsyms.c. */
struct hp_dynsyms {
    uintptr_t bias;
    const ElfW(Sym) *sym;
    const char *str;
    const uint32_t *gnu;     /* DT_GNU_HASH */
    const ElfW(Word) *sysv;  /* DT_HASH */
    const ElfW(Half) *ver;   /* DT_VERSYM */
    int hidden_ok;           /* hidden versions count (what a versioned reference reaches) */
};
/* Reads the table of the object info describes; 0, or -1 when it has none usable. */
int hp_dynsyms_of(const struct dl_phdr_info *info, struct hp_dynsyms *d);
/* The address of the function `name` the object defines, or NULL. */
void *hp_dynsym_find(const struct hp_dynsyms *d, const char *name);

/* ---- what an object's headers say about its code (objcode.c) ---- */
struct hp_obj_code {
    const uint8_t *fn_table; /* .eh_frame_hdr's search table: 4-byte starts from fn_base */
    size_t fn_count;
    uintptr_t fn_base;
    uintptr_t arr_lo[3], arr_hi[3]; /* the init, fini and preinit arrays (0: none) */
    uintptr_t init_fn[2];           /* DT_INIT and DT_FINI (0: none) */
};
void hp_obj_code_read(const struct dl_phdr_info *info, struct hp_obj_code *oc);
/* Does a function (an FDE) start at a? 0 also when the object has no table it can read. */
int hp_obj_fn_start(const struct hp_obj_code *oc, uintptr_t a);
/* Is a in the object's init, fini or preinit array? */
int hp_obj_init_data(const struct hp_obj_code *oc, uintptr_t a);
/* Is a the object's DT_INIT or DT_FINI function? */
int hp_obj_init_fn(const struct hp_obj_code *oc, uintptr_t a);

/* ---- is patching enough? (reach.c) ---- */
enum hp_reach_role {
    HP_REACH_ALLOC, /* an entry point the shim patches that hands blocks out */
    HP_REACH_FREE,  /* one that takes a block back (free, delete, realloc, ...) */
    HP_REACH_API,   /* the allocator's other API (mallctl, ...), not patched: it takes no
                     * block of the program's, and what it frees inside is its own */
};
struct hp_reach_entry {
    uintptr_t fn;
    size_t size;    /* its ELF symbol size, 0 if unknown */
    enum hp_reach_role role;
};
/* Can the program reach the allocator's free paths only through the entry points in ent[0..n)?
 * The allocator's internal free functions are what those entry points call (less what its
 * allocation entry points call too); the answer is no (-1, with *why) when a free entry point
 * dispatches through a pointer, when an internal free function's address is stored in the
 * object's data, or, in the main program, when code reachable from its start (not from its
 * initialisers) calls or jumps to one without passing an entry point, and when any of this
 * cannot be read. 0: none of that was found. *bypass is 1 when the answer is no because of a
 * path past the entry points alone (a dispatch table, an internal free function's address in
 * data, a call of one): patching the entry points is still safe then, though not enough for
 * headers; 0 when the code could not be read or keeps a register across an entry point's
 * call (-fipa-ra), where patching itself is not safe. */
int hp_reach_check(const struct hp_reach_entry *ent, int n, int walk, const char **why, int *bypass);

#endif

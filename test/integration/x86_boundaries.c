/* Prints, for each function name read from stdin, the offsets at which backend/x86.c finds
 * the first ten instruction boundaries of that function in the library named by argv[1]
 * (loaded with dlopen), "X" where the decoder refuses an instruction. check_x86.py compares
 * them with objdump's disassembly of the same file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "backend/x86.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 2;
    char name[512];
    while (scanf("%511s", name) == 1) {
        const unsigned char *f = dlsym(h, name);
        Dl_info info;
        /* Only the library's own definitions (dlsym searches its dependencies too). */
        if (!f || !dladdr(f, &info) || !info.dli_fname || strcmp(info.dli_fname, argv[1]) != 0)
            continue;
        printf("%s %lx", name, (unsigned long)(f - (const unsigned char *)info.dli_fbase));
        int off = 0;
        for (int k = 0; k < 10; k++) {
            struct hp_x86_insn in;
            int n = hp_x86_decode(f + off, 15, &in);
            if (!n) {
                printf(" X");
                break;
            }
            off += n;
            printf(" %d", off);
            if (in.kind == HP_X86_END || in.kind == HP_X86_JMP)
                break;
        }
        printf("\n");
    }
    return 0;
}

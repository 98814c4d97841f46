/* heapprof-probe: what heapprof-run must know about the files it is asked to run, found in one
 * process instead of a dozen helpers (od, head, readelf, stat, getcap...): for each FILE, shell
 * assignments heapprof-run evaluates. Reads headers only: a few microseconds a file.
 * Usage: heapprof-probe [-r OLD] [-f FD] [-i FIRST] FILE...
 *   (-r) OLD is removed first (heapprof-run's -o FILE without %p replaces the file)
 *   fd_id=DEV,INO   (-f) the file descriptor FD is open on (empty if it is not open)
 * and for the Ith FILE (from FIRST, 0 by default):
 *   pI_elf          1: starts with the ELF magic
 *   pI_kind         e_ident[4], e_ident[5], e_machine as hex bytes ("02 01 3e 00"; fewer when
 *                   the file is shorter)
 *   pI_static       1: an ELF executable of this machine's kind with no PT_INTERP
 *   pI_setid        1: setuid to another user or setgid to another group than the caller's
 *                   effective ones
 *   pI_caps         1: has file capabilities and the caller is not root
 *   pI_san          the first DT_NEEDED sanitizer runtime (libasan.so.8, ...), or empty
 *   pI_syms         " name name " of _rjem_malloc, _rjem_mallocx, mi_malloc, mi_malloc_aligned,
 *                   malloc defined as functions in .symtab or .dynsym
 *   pI_shebang      the interpreter of a #! script, or empty */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* A value in single quotes, for sh's eval. */
static void put(int i, const char *key, const char *val)
{
    printf("p%d_%s='", i, key);
    for (const char *c = val; *c; c++)
        if (*c == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*c);
    fputs("'\n", stdout);
}

/* The section header table of an ELF64 file of this machine's byte order, or NULL. */
static const Elf64_Shdr *sections(const unsigned char *m, size_t n, unsigned *count)
{
    const Elf64_Ehdr *e = (const Elf64_Ehdr *)m;
    if (e->e_shoff == 0 || e->e_shentsize != sizeof(Elf64_Shdr) || e->e_shoff > n ||
        (n - e->e_shoff) / sizeof(Elf64_Shdr) < e->e_shnum)
        return NULL;
    *count = e->e_shnum;
    return (const Elf64_Shdr *)(m + e->e_shoff);
}

/* The NUL-terminated string at off in section s, or NULL when outside the file. */
static const char *str_at(const unsigned char *m, size_t n, const Elf64_Shdr *s, uint64_t off)
{
    if (s->sh_type != SHT_STRTAB || s->sh_offset > n || off >= s->sh_size || s->sh_size > n - s->sh_offset)
        return NULL;
    const char *p = (const char *)m + s->sh_offset + off;
    return memchr(p, 0, s->sh_size - off) ? p : NULL;
}

/* The allocator names defined as functions in the symbol tables, as " a b ". */
static void scan_syms(const unsigned char *m, size_t n, char *out, size_t cap)
{
    static const char *const want[] = {"_rjem_malloc", "_rjem_mallocx", "mi_malloc",
                                       "mi_malloc_aligned", "malloc"};
    int found[5] = {0};
    unsigned ns;
    const Elf64_Shdr *sh = sections(m, n, &ns);
    for (unsigned k = 0; sh && k < ns; k++) {
        const Elf64_Shdr *s = &sh[k];
        if ((s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM) || s->sh_link >= ns ||
            s->sh_offset > n || s->sh_size > n - s->sh_offset || s->sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(m + s->sh_offset);
        for (size_t j = 0; j < s->sh_size / sizeof *sym; j++) {
            if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || sym[j].st_shndx == SHN_UNDEF)
                continue;
            const char *name = str_at(m, n, &sh[s->sh_link], sym[j].st_name);
            if (!name || (name[0] != '_' && name[0] != 'm'))
                continue;
            for (int w = 0; w < 5; w++)
                found[w] |= !strcmp(name, want[w]);
        }
    }
    snprintf(out, cap, " ");
    for (int w = 0; w < 5; w++)
        if (found[w])
            snprintf(out + strlen(out), cap - strlen(out), "%s ", want[w]);
}

/* The first DT_NEEDED entry naming a sanitizer runtime. */
static void scan_san(const unsigned char *m, size_t n, char *out, size_t cap)
{
    unsigned ns;
    const Elf64_Shdr *sh = sections(m, n, &ns);
    out[0] = 0;
    for (unsigned k = 0; sh && k < ns; k++) {
        const Elf64_Shdr *s = &sh[k];
        if (s->sh_type != SHT_DYNAMIC || s->sh_link >= ns || s->sh_offset > n ||
            s->sh_size > n - s->sh_offset)
            continue;
        const Elf64_Dyn *d = (const Elf64_Dyn *)(m + s->sh_offset);
        for (size_t j = 0; j < s->sh_size / sizeof *d && d[j].d_tag != DT_NULL; j++) {
            if (d[j].d_tag != DT_NEEDED)
                continue;
            const char *name = str_at(m, n, &sh[s->sh_link], d[j].d_un.d_val);
            if (name && (!strncmp(name, "libasan.so", 10) || !strncmp(name, "libtsan.so", 10) ||
                         !strncmp(name, "liblsan.so", 10) || !strncmp(name, "libhwasan.so", 12))) {
                snprintf(out, cap, "%s", name);
                return;
            }
        }
    }
}

/* An ELF64 file of this machine's byte order: has it a PT_INTERP? (-1: cannot tell) */
static int has_interp(const unsigned char *m, size_t n)
{
    const Elf64_Ehdr *e = (const Elf64_Ehdr *)m;
    if (e->e_phentsize != sizeof(Elf64_Phdr) || e->e_phoff > n ||
        (n - e->e_phoff) / sizeof(Elf64_Phdr) < e->e_phnum)
        return -1;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + e->e_phoff);
    for (unsigned k = 0; k < e->e_phnum; k++)
        if (ph[k].p_type == PT_INTERP)
            return 1;
    return 0;
}

static void probe(int i, const char *path)
{
    char kind[16] = "", san[256] = "", syms[128] = " ", bang[4096] = "";
    int elf = 0, stat_ = 0, setid = 0, caps = 0;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        setid = ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
                ((st.st_mode & S_ISGID) && st.st_gid != getegid());
        caps = geteuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) > 0;
        size_t n = (size_t)st.st_size;
        unsigned char *m = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (m != MAP_FAILED) {
            elf = n >= 4 && !memcmp(m, ELFMAG, 4);
            /* e_ident[4..5] and e_machine's two bytes, those the file has. */
            static const size_t at[4] = {4, 5, 18, 19};
            for (int k = 0; k < 4 && at[k] < n; k++)
                snprintf(kind + strlen(kind), sizeof kind - strlen(kind), "%s%02x", k ? " " : "", m[at[k]]);
            int native = elf && n >= sizeof(Elf64_Ehdr) && m[EI_CLASS] == ELFCLASS64 &&
                         m[EI_DATA] == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
            if (native) {
                stat_ = has_interp(m, n) == 0;
                scan_san(m, n, san, sizeof san);
                scan_syms(m, n, syms, sizeof syms);
            }
            if (n > 2 && m[0] == '#' && m[1] == '!') {
                /* The interpreter: the first word after #! and blanks. */
                size_t a = 2, b;
                while (a < n && (m[a] == ' ' || m[a] == '\t'))
                    a++;
                for (b = a; b < n && b - a < sizeof bang - 1 && m[b] != ' ' && m[b] != '\t' && m[b] != '\n'; b++)
                    ;
                memcpy(bang, m + a, b - a);
                bang[b - a] = 0;
            }
            munmap(m, n);
        }
    }
    if (fd >= 0)
        close(fd);
    printf("p%d_elf=%d\np%d_static=%d\np%d_setid=%d\np%d_caps=%d\n", i, elf, i, stat_, i, setid, i, caps);
    put(i, "kind", kind);
    put(i, "san", san);
    put(i, "syms", syms);
    put(i, "shebang", bang);
}

int main(int argc, char **argv)
{
    int a = 1;
    if (a + 1 < argc && !strcmp(argv[a], "-r")) {
        unlink(argv[a + 1]);
        a += 2;
    }
    if (a + 1 < argc && !strcmp(argv[a], "-f")) {
        struct stat st;
        char p[64];
        snprintf(p, sizeof p, "/proc/self/fd/%d", atoi(argv[a + 1]));
        if (stat(p, &st) == 0)
            printf("fd_id=%llu,%llu\n", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
        else
            printf("fd_id=\n");
        a += 2;
    }
    int i = 0;
    if (a + 1 < argc && !strcmp(argv[a], "-i")) {
        i = atoi(argv[a + 1]);
        a += 2;
    }
    for (; a < argc; a++, i++)
        probe(i, argv[a]);
    return 0;
}

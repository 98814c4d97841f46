/* libc functions that allocate internally, with blocks crossing between libc and the program in
 * both directions: strdup, getline (growing a block the program allocated), asprintf,
 * open_memstream, qsort (large arrays use a malloc'd buffer), setlocale, getaddrinfo, iconv,
 * regcomp, fopen/stdio buffers, scandir, realpath, glob, tsearch, getpwuid, setenv. And the
 * two the shim interposes without allocating: syscall (all six arguments, errno) and prctl. */
#define _GNU_SOURCE
#include <dirent.h>
#include <glob.h>
#include <iconv.h>
#include <locale.h>
#include <netdb.h>
#include <pwd.h>
#include <regex.h>
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "testutil.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void t_strings(void)
{
    for (int i = 0; i < 1000; i++) {
        char *s = strdup("hello, heap");
        char *t = strndup(s, 5);
        CHECK(s && t && strcmp(t, "hello") == 0, "strdup/strndup");
        char *a = NULL;
        CHECK(asprintf(&a, "%s-%d-%s", s, i, t) > 0, "asprintf");
        free(s);
        free(t);
        free(a);
    }
}

static void t_files(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/lines.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f, "fopen %s", path);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "%0*d\n", 1 + i % 300, i); /* lines of 1..300 chars */
    fclose(f);

    f = fopen(path, "r");
    CHECK(f, "fopen");
    size_t cap = 4;
    char *line = malloc(cap); /* program allocates, getline reallocs, program frees */
    int n = 0;
    while (getline(&line, &cap, f) > 0)
        n++;
    CHECK(n == 2000, "getline read %d lines", n);
    free(line);
    rewind(f);
    line = NULL;
    cap = 0;
    CHECK(getdelim(&line, &cap, '7', f) > 0, "getdelim");
    free(line);
    fclose(f);

    char *buf = NULL;
    size_t len = 0;
    FILE *ms = open_memstream(&buf, &len);
    CHECK(ms, "open_memstream");
    for (int i = 0; i < 10000; i++)
        fprintf(ms, "%d,", i);
    fclose(ms);
    CHECK(buf && len > 40000 && strncmp(buf, "0,1,2,", 6) == 0, "open_memstream contents");
    free(buf);

    char *rp = realpath(path, NULL);
    CHECK(rp, "realpath");
    free(rp);

    struct dirent **ents;
    int ne = scandir(dir, &ents, NULL, alphasort);
    CHECK(ne >= 3, "scandir returned %d", ne);
    for (int i = 0; i < ne; i++)
        free(ents[i]);
    free(ents);

    glob_t g;
    char pat[4300];
    snprintf(pat, sizeof pat, "%s/*.txt", dir);
    CHECK(glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1, "glob");
    globfree(&g);
    unlink(path);
}

static void t_qsort(void)
{
    /* over the size where glibc switches from a stack buffer to malloc */
    size_t n = 200000;
    int *v = malloc(n * sizeof *v);
    CHECK(v, "malloc");
    for (size_t i = 0; i < n; i++)
        v[i] = (int)((i * 2654435761u) % 1000003);
    qsort(v, n, sizeof *v, cmp_int);
    for (size_t i = 1; i < n; i++)
        CHECK(v[i - 1] <= v[i], "qsort order");
    free(v);
    char (*s)[16] = malloc(50000 * sizeof *s);
    CHECK(s, "malloc");
    for (int i = 0; i < 50000; i++)
        snprintf(s[i], 16, "%x", (unsigned)(i * 7919));
    qsort(s, 50000, sizeof *s, cmp_str);
    for (int i = 1; i < 50000; i++)
        CHECK(strcmp(s[i - 1], s[i]) <= 0, "qsort strings");
    free(s);
}

static void t_locale_iconv_regex(void)
{
    for (int i = 0; i < 20; i++) {
        /* C.UTF-8 is built into glibc 2.35+, so this doesn't depend on installed locales */
        CHECK(setlocale(LC_ALL, "C.UTF-8"), "setlocale C.UTF-8");
        CHECK(setlocale(LC_ALL, "C"), "setlocale C");
    }
    for (int i = 0; i < 50; i++) {
        iconv_t cd = iconv_open("UTF-16LE", "UTF-8");
        CHECK(cd != (iconv_t)-1, "iconv_open");
        char in[] = "h\xc3\xa9llo w\xc3\xb6rld", out[64];
        char *ip = in, *op = out;
        size_t il = strlen(in), ol = sizeof out;
        CHECK(iconv(cd, &ip, &il, &op, &ol) != (size_t)-1, "iconv");
        CHECK(sizeof out - ol == 22 && out[2] == (char)0xe9, "iconv output");
        iconv_close(cd);
    }
    for (int i = 0; i < 200; i++) {
        regex_t re;
        CHECK(regcomp(&re, "^([a-z]+)-([0-9]{2,})(x*)$", REG_EXTENDED) == 0, "regcomp");
        regmatch_t m[4];
        CHECK(regexec(&re, "abc-12345xx", 4, m, 0) == 0 && m[2].rm_so == 4 && m[2].rm_eo == 9,
              "regexec");
        CHECK(regexec(&re, "abc-1", 4, m, 0) == REG_NOMATCH, "regexec nomatch");
        regfree(&re);
    }
}

static void t_nss_env_tree(void)
{
    for (int i = 0; i < 10; i++) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        /* the outcome depends on the machine's /etc/hosts, not on the allocator: only the
         * allocations matter here */
        if (getaddrinfo("localhost", "80", &hints, &res) == 0)
            freeaddrinfo(res);
        struct passwd *pw = getpwuid(0);
        (void)pw;
    }
    char name[32], val[64];
    for (int i = 0; i < 500; i++) {
        snprintf(name, sizeof name, "HP_TEST_VAR_%d", i % 50);
        snprintf(val, sizeof val, "value-%d", i);
        CHECK(setenv(name, val, 1) == 0, "setenv");
    }
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "HP_TEST_VAR_%d", i);
        unsetenv(name);
    }
    void *root = NULL;
    char *keys[300];
    for (int i = 0; i < 300; i++) {
        keys[i] = malloc(16);
        snprintf(keys[i], 16, "key%d", i * 37 % 300);
        CHECK(tsearch(keys[i], &root, cmp_str), "tsearch");
    }
    for (int i = 0; i < 300; i++) {
        tdelete(keys[i], &root, cmp_str); /* tdelete frees libc's node, we free the key */
        free(keys[i]);
    }
    CHECK(root == NULL, "tree not empty");
}

static void t_syscall_prctl(void)
{
    CHECK(syscall(SYS_getpid) == getpid(), "syscall(SYS_getpid)");
    errno = 0;
    CHECK(syscall(SYS_close, -1) == -1 && errno == EBADF, "syscall(SYS_close, -1): errno %d", errno);
    /* Six arguments: the last comes from the stack. A page at a fixed hint, offset 0. */
    long p = syscall(SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != -1 && (p & 4095) == 0, "syscall(SYS_mmap): %ld", p);
    ((volatile char *)p)[8191] = 1;
    CHECK(syscall(SYS_munmap, p, 8192) == 0, "syscall(SYS_munmap)");
    errno = 0;
    CHECK(syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, -1, 0) == -1 && errno == EBADF,
          "syscall(SYS_mmap) of fd -1 without MAP_ANONYMOUS: errno %d", errno);
    char name[32] = {0};
    CHECK(prctl(PR_SET_NAME, "hp-t_libc", 0, 0, 0) == 0, "prctl(PR_SET_NAME)");
    CHECK(prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && strcmp(name, "hp-t_libc") == 0, "prctl(PR_GET_NAME): %s", name);
    CHECK(syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) == 0 && strcmp(name, "hp-t_libc") == 0,
          "syscall(SYS_prctl, PR_GET_NAME)");
    errno = 0;
    CHECK(prctl(-1, 0, 0, 0, 0) == -1 && errno == EINVAL, "prctl(-1): errno %d", errno);
    /* libseccomp's probe: an invalid strict-mode request, which installs nothing. */
    errno = 0;
    CHECK(syscall(SYS_seccomp, 0 /* SECCOMP_SET_MODE_STRICT */, 1, NULL) == -1 && errno == EINVAL,
          "seccomp probe: errno %d", errno);
    printf("syscall and prctl: ok\n");
}

int main(void)
{
    char dir[] = "/tmp/hp-t_libc-XXXXXX";
    t_syscall_prctl();
    CHECK(mkdtemp(dir), "mkdtemp");
    t_strings();
    t_files(dir);
    t_qsort();
    t_locale_iconv_regex();
    t_nss_env_tree();
    rmdir(dir);
    return 0;
}

/* Unit tests for the /proc/self/maps reader (shim/maps.c): line parsing and the iterator run on
 * this test's own address space. */
#include "unit_support.h"

#include "rt/rt.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

static struct hp_mapping m;

static int parse(const char *line)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    memset(&m, 0x5a, sizeof m);
    return hp_maps_parse_line(buf, &m);
}

START_TEST(test_file_mapping)
{
    ck_assert_int_eq(parse("55d4c8a00000-55d4c8a21000 r-xp 00002000 08:01 1234567                    /usr/bin/cat"), 0);
    ck_assert_uint_eq(m.start, 0x55d4c8a00000ull);
    ck_assert_uint_eq(m.end, 0x55d4c8a21000ull);
    ck_assert_uint_eq(m.offset, 0x2000);
    ck_assert_uint_eq(m.prot, 1 | 4);
    ck_assert_str_eq(m.path, "/usr/bin/cat");
}
END_TEST

START_TEST(test_anonymous)
{
    ck_assert_int_eq(parse("7f12a0000000-7f12a0021000 rw-p 00000000 00:00 0 "), 0);
    ck_assert_uint_eq(m.start, 0x7f12a0000000ull);
    ck_assert_uint_eq(m.end, 0x7f12a0021000ull);
    ck_assert_uint_eq(m.offset, 0);
    ck_assert_uint_eq(m.prot, 1 | 2);
    ck_assert_str_eq(m.path, "");
    ck_assert_int_eq(parse("7f12a0000000-7f12a0021000 ---p 00000000 00:00 0"), 0);
    ck_assert_uint_eq(m.prot, 0);
    ck_assert_str_eq(m.path, "");
}
END_TEST

START_TEST(test_pseudo_paths)
{
    ck_assert_int_eq(parse("7ffc1a7d2000-7ffc1a7d4000 r-xp 00000000 00:00 0                          [vdso]"), 0);
    ck_assert_uint_eq(m.prot, 5);
    ck_assert_str_eq(m.path, "[vdso]");
    ck_assert_int_eq(parse("7ffc1a6b0000-7ffc1a6d1000 rw-p 00000000 00:00 0                          [stack]"), 0);
    ck_assert_str_eq(m.path, "[stack]");
    ck_assert_uint_eq(m.prot, 3);
    ck_assert_int_eq(parse("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]"), 0);
    ck_assert_uint_eq(m.start, 0xffffffffff600000ull);
    ck_assert_uint_eq(m.end, 0xffffffffff601000ull);
    ck_assert_uint_eq(m.prot, 4);
    ck_assert_str_eq(m.path, "[vsyscall]");
}
END_TEST

START_TEST(test_deleted_and_spaces)
{
    /* The parser keeps the rest of the line as the path: " (deleted)" stays in it. */
    ck_assert_int_eq(parse("7f0000001000-7f0000002000 r-xp 00001000 fd:00 42 /tmp/libgone.so (deleted)"), 0);
    ck_assert_str_eq(m.path, "/tmp/libgone.so (deleted)");
    ck_assert_uint_eq(m.offset, 0x1000);
    ck_assert_int_eq(parse("7f0000001000-7f0000002000 r--s 00000000 fd:00 42   /home/u/My Lib/lib x.so"), 0);
    ck_assert_str_eq(m.path, "/home/u/My Lib/lib x.so");
    ck_assert_uint_eq(m.prot, 1);
    /* Shared/exec and the other letters. */
    ck_assert_int_eq(parse("1000-2000 rwxs 0 00:00 0 /dev/zero"), 0);
    ck_assert_uint_eq(m.prot, 7);
    ck_assert_int_eq(parse("1000-2000 -w-p 0 00:00 0"), 0);
    ck_assert_uint_eq(m.prot, 2);
    /* Upper-case hex digits are accepted. */
    ck_assert_int_eq(parse("ABCDEF000-ABCDEF800 r--p 00ABC000 08:01 7 /x"), 0);
    ck_assert_uint_eq(m.start, 0xabcdef000ull);
    ck_assert_uint_eq(m.end, 0xabcdef800ull);
    ck_assert_uint_eq(m.offset, 0xabc000);
    ck_assert_str_eq(m.path, "/x");
}
END_TEST

START_TEST(test_malformed)
{
    static const char *bad[] = {
        "",
        "garbage",
        "1000",
        "1000-",
        "1000-2000",
        "1000 2000 r-xp 0 00:00 0",
        "-2000 r-xp 0 00:00 0",
        "1000-zz r-xp 0 00:00 0",
        "1000-2000r-xp 0 00:00 0",
        "1000-2000 r-xp",
        "1000-2000 r-xp zz 00:00 0",
        "g000-2000 r-xp 0 00:00 0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(parse(bad[i]) != 0, "accepted '%s'", bad[i]);
}
END_TEST

/* ---------- hp_maps_foreach on our own maps ---------- */

static __attribute__((noinline)) int marker_function(int x) { return x * 3 + 1; }

struct find {
    uintptr_t addr;
    int found, lines, exec_lines, bad_order;
    uint64_t prev_start;
    char path[4096];
    uint32_t prot;
};

static int find_cb(const struct hp_mapping *mp, void *arg)
{
    struct find *f = arg;
    f->lines++;
    if (mp->prot & 4)
        f->exec_lines++;
    if (mp->start < f->prev_start || mp->end <= mp->start)
        f->bad_order++;
    f->prev_start = mp->start;
    if (f->addr >= mp->start && f->addr < mp->end) {
        f->found++;
        f->prot = mp->prot;
        snprintf(f->path, sizeof f->path, "%s", mp->path);
    }
    return 0;
}

static int count_lines_libc(void)
{
    int fd = open("/proc/self/maps", O_RDONLY);
    ck_assert_int_ge(fd, 0);
    static char buf[1 << 20];
    size_t n = hp_unit_drain(fd, buf, sizeof buf);
    close(fd);
    int lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += buf[i] == '\n';
    return lines;
}

START_TEST(test_foreach_finds_own_code)
{
    ck_assert_int_eq(marker_function(1), 4);
    struct find f;
    memset(&f, 0, sizeof f);
    f.addr = (uintptr_t)&marker_function;
    int expect_lines = count_lines_libc();
    ck_assert_int_eq(hp_maps_foreach(find_cb, &f), 0);
    ck_assert_int_eq(f.found, 1);
    ck_assert_uint_eq(f.prot & 5, 5); /* readable and executable */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = 0;
    ck_assert_str_eq(f.path, exe);
    ck_assert_int_eq(f.lines, expect_lines);
    ck_assert_int_ge(f.exec_lines, 2); /* at least this binary and libc */
    ck_assert_int_eq(f.bad_order, 0);
}
END_TEST

START_TEST(test_foreach_finds_anonymous_mapping)
{
    size_t len = 3 * 4096;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    struct find f;
    memset(&f, 0, sizeof f);
    f.addr = (uintptr_t)p + 4096;
    ck_assert_int_eq(hp_maps_foreach(find_cb, &f), 0);
    ck_assert_int_eq(f.found, 1);
    ck_assert_uint_eq(f.prot, 7);
    ck_assert_str_eq(f.path, "");
    munmap(p, len);
}
END_TEST

static int stop_cb(const struct hp_mapping *mp, void *arg)
{
    (void)mp;
    int *calls = arg;
    return ++*calls == 2;
}

START_TEST(test_foreach_stops)
{
    int calls = 0;
    ck_assert_int_eq(hp_maps_foreach(stop_cb, &calls), 0);
    ck_assert_int_eq(calls, 2);
}
END_TEST

/* A file mapped under a path longer than the line buffer (8 KiB): its line is skipped whole and
 * the lines around it still parse. */
START_TEST(test_foreach_skips_overlong_line)
{
    char tmpl[] = "/tmp/hp_maps_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    int dfd = open(tmpl, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(dfd, 0);
    char name[201];
    memset(name, 'd', 200);
    name[200] = 0;
    int depth = 45; /* 45 * 201 bytes > 8192 */
    for (int i = 0; i < depth; i++) {
        ck_assert_int_eq(mkdirat(dfd, name, 0700), 0);
        int nd = openat(dfd, name, O_RDONLY | O_DIRECTORY);
        ck_assert_int_ge(nd, 0);
        close(dfd);
        dfd = nd;
    }
    int fd = openat(dfd, "f", O_RDWR | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    /* Our own code must still be found, the long mapping must not be reported with a
     * truncated path. */
    struct find f;
    memset(&f, 0, sizeof f);
    f.addr = (uintptr_t)p;
    ck_assert_int_eq(hp_maps_foreach(find_cb, &f), 0);
    ck_assert_int_eq(f.found, 0);
    ck_assert_int_eq(f.bad_order, 0);
    int all = f.lines;
    memset(&f, 0, sizeof f);
    f.addr = (uintptr_t)&marker_function;
    ck_assert_int_eq(hp_maps_foreach(find_cb, &f), 0);
    ck_assert_int_eq(f.found, 1);
    ck_assert_int_eq(f.lines, all);
    ck_assert_int_eq(all, count_lines_libc() - 1);
    munmap(p, 4096);
    close(fd);
    /* Cleanup is best effort: the directory lives under /tmp. */
    close(dfd);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("maps");
    TCase *tc = tcase_create("maps");
    tcase_add_test(tc, test_file_mapping);
    tcase_add_test(tc, test_anonymous);
    tcase_add_test(tc, test_pseudo_paths);
    tcase_add_test(tc, test_deleted_and_spaces);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_foreach_finds_own_code);
    tcase_add_test(tc, test_foreach_finds_anonymous_mapping);
    tcase_add_test(tc, test_foreach_stops);
    tcase_add_test(tc, test_foreach_skips_overlong_line);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}

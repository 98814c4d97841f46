/* Robustness tests of the reader (run under ASan/UBSan): every prefix of a valid profile,
 * every single-byte flip, large values in every 64-bit field and random damage must give
 * either a clean one-line error or a profile the writers can print, never a bad access. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "hr_symbolize.h"

static struct ht_buf good;
static FILE *devnull;

/* The sample plus what it lacks: modules (a real ELF file, a pseudo one), an extra HIB for a
 * context, an unknown record, and version 2's frame tree and PACKED records for more contexts. */
static void build_good(void)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    b.len -= 24; /* drop END, add more, then END again */
    b.records--;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        abort(); /* runs before any test, where ck_assert cannot report */
    self[n] = 0;
    struct hpf_segment seg = {.start = 0x401000 - 0x1000, .end = 0x403000, .prot = 5};
    uint8_t id[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    ht_module(&b, 0x400000, &seg, 1, id, sizeof id, self);
    struct hpf_segment vdso = {.start = 0x7fff0000, .end = 0x7fff2000, .prot = 5};
    ht_module(&b, 0x7fff0000, &vdso, 1, NULL, 0, "[vdso]");
    struct hpf_hib h = {.context_id = 1, .alloc_count = 2, .total_size = 24, .min_size = 12,
                        .max_size = 12, .dealloc_timestamp_ms = 9};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    uint8_t future[5] = {9, 9, 9, 9, 9};
    ht_record(&b, 77, future, sizeof future);
    static const struct hpf_stack_ref refs[] = {{3, 3}, {4, 2}, {5, 0}};
    ht_stack_refs(&b, refs, 3);
    static const uint32_t par[] = {0, 1, 2};
    static const uint64_t pcs[] = {0x402000, 0x401800, 0x7fff0100};
    ht_frames(&b, 1, 3, par, pcs);
    struct hpf_hib hibs[2] = {{.context_id = 3, .alloc_count = 1, .total_size = 300,
                               .min_size = 300, .max_size = 300, .alloc_cpu_id = 1},
                              {.context_id = 4, .alloc_count = 70000, .total_size = 1ull << 33,
                               .min_size = 1, .max_size = 1ull << 32}};
    ht_packed(&b, HPF_REC_HIB, hibs, 2, HPF_HIB_NFIELDS);
    struct hpf_live lives[3] = {{.context_id = 3, .allocs = 1, .bytes = 300},
                                {.context_id = 4, .allocs = 70000, .bytes = 1ull << 33},
                                {.context_id = 5, .allocs = 2, .bytes = 2, .live_count = 2}};
    ht_packed(&b, HPF_REC_LIVE, lives, 3, HPF_LIVE_NFIELDS);
    ht_end(&b);
    good = b;
}

/* Parses data (consumed); on success prints both formats. Returns the parse status. */
static int try_parse(uint8_t *data, size_t size, char *err)
{
    struct hr_profile p;
    err[0] = 0;
    int r = hr_profile_parse(&p, "fuzz.hpf", data, size, err);
    if (r == 0) {
        struct hr_profile *v = &p;
        struct hr_output_opts opts = {.sort = HR_SORT_LIVE_SIZE, .top = 0};
        ck_assert_int_eq(hr_write_json(devnull, &v, 1, &opts), 0);
        ck_assert_int_eq(hr_write_text(devnull, &v, 1, &opts), 0);
    } else {
        ck_assert_msg(err[0] != 0, "error without a message");
        ck_assert_msg(strchr(err, '\n') == NULL, "multi-line error: %s", err);
    }
    hr_profile_free(&p);
    return r;
}

START_TEST(good_profile_parses)
{
    char err[HR_ERR_MAX];
    ck_assert_msg(try_parse(ht_copy(good.data, good.len), good.len, err) == 0, "%s", err);
}
END_TEST

/* A prefix is a profile cut short: refused before its PROCESS record is whole, read (and
 * printed) after it (test_cut.c checks what is read). */
START_TEST(every_prefix_reads_or_fails)
{
    char err[HR_ERR_MAX];
    struct hpf_record_header rh;
    memcpy(&rh, good.data + 32, sizeof rh);
    ck_assert_uint_eq(rh.type, HPF_REC_PROCESS);
    size_t process_end = 32 + sizeof rh + rh.size;
    /* The unknown record (type 77): cut once its type is there, it may be damage. */
    size_t unknown = 0, unknown_end = 0;
    for (size_t off = 32; off + sizeof rh <= good.len && !unknown; ) {
        memcpy(&rh, good.data + off, sizeof rh);
        size_t next = off + sizeof rh + ((rh.size + 7) & ~(size_t)7);
        if (rh.type == 77) {
            unknown = off;
            unknown_end = off + sizeof rh + rh.size;
        }
        off = next;
    }
    ck_assert(unknown > 0);
    for (size_t n = 0; n < good.len; n++) {
        /* An exact-size allocation, so ASan catches a read one byte past the prefix. */
        int r = try_parse(ht_copy(good.data, n), n, err);
        int bad = n < process_end || (n >= unknown + 4 && n < unknown_end);
        ck_assert_msg(r == (bad ? -1 : 0), "prefix %zu: %d (%s)", n, r, err);
    }
}
END_TEST

/* The first bytes say what is wrong: nothing at all, not a profile, a header cut short. */
START_TEST(short_files_say_why)
{
    char err[HR_ERR_MAX];
    ck_assert_int_eq(try_parse(ht_copy(good.data, 0), 0, err), -1);
    ck_assert_msg(strstr(err, "empty file") != NULL, "%s", err);
    ck_assert_int_eq(try_parse(ht_copy("HEAPPRIF", 8), 8, err), -1);
    ck_assert_msg(strstr(err, "not a heapprof profile") != NULL, "%s", err);
    ck_assert_int_eq(try_parse(ht_copy(good.data, 12), 12, err), -1);
    ck_assert_msg(strstr(err, "truncated file header") != NULL, "%s", err);
}
END_TEST

START_TEST(every_byte_flip)
{
    char err[HR_ERR_MAX];
    static const uint8_t masks[] = {0xff, 0x01, 0x80, 0x10};
    for (size_t m = 0; m < sizeof masks; m++) {
        for (size_t i = 0; i < good.len; i++) {
            uint8_t *d = ht_copy(good.data, good.len);
            d[i] ^= masks[m];
            try_parse(d, good.len, err);
        }
    }
}
END_TEST

START_TEST(large_values_everywhere)
{
    char err[HR_ERR_MAX];
    static const uint64_t values[] = {UINT64_MAX, 0x7fffffffffffffffull, 0xffffffffull,
                                      0x80000000ull, 0x100000000ull, 0};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        for (size_t i = 0; i + 8 <= good.len; i += 4) {
            uint8_t *d = ht_copy(good.data, good.len);
            memcpy(d + i, &values[v], 8);
            try_parse(d, good.len, err);
        }
    }
}
END_TEST

START_TEST(random_damage)
{
    char err[HR_ERR_MAX];
    unsigned seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = good.len;
        if (rand_r(&seed) % 4 == 0)
            len = (size_t)rand_r(&seed) % (good.len + 1);
        uint8_t *d = ht_copy(good.data, len);
        int hits = 1 + rand_r(&seed) % 8;
        for (int k = 0; k < hits && len > 32; k++)
            d[32 + (size_t)rand_r(&seed) % (len - 32)] = (uint8_t)rand_r(&seed);
        try_parse(d, len, err);
    }
}
END_TEST


/* Loads path; returns the status and leaves the message in err. */
static int try_load(const char *path, char *err)
{
    struct hr_profile p;
    err[0] = 0;
    int r = hr_profile_load(&p, path, err);
    if (r)
        ck_assert_msg(err[0] && !strchr(err, '\n'), "bad error line: '%s'", err);
    hr_profile_free(&p);
    return r;
}

START_TEST(devices_and_directories_refused)
{
    char err[HR_ERR_MAX];
    ck_assert_int_eq(try_load("/dev/zero", err), -1);
    ck_assert_msg(strstr(err, "character device") != NULL, "%s", err);
    ck_assert_int_eq(try_load("/dev/null", err), -1);
    ck_assert_msg(strstr(err, "character device") != NULL, "%s", err);
    ck_assert_int_eq(try_load("/", err), -1);
    ck_assert_msg(strstr(err, "directory") != NULL, "%s", err);
    /* A /proc file says it has 0 bytes: it is read as a stream, and is no profile. */
    ck_assert_int_eq(try_load("/proc/self/status", err), -1);
    ck_assert_msg(strstr(err, "bad magic") != NULL, "%s", err);
    char *empty = ht_tmpfile("", 0);
    ck_assert_int_eq(try_load(empty, err), -1);
    ck_assert_msg(strstr(err, "empty file") != NULL, "%s", err);
    unlink(empty);
    free(empty);
}
END_TEST

/* A pipe whose other end a child feeds with n bytes of data, then keeps open for linger
 * seconds (so a reader that waits for EOF would hang) or closes. Returns the read end. */
static int pipe_from_child(const uint8_t *data, size_t n, unsigned linger, pid_t *child)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    *child = fork();
    ck_assert_int_ge(*child, 0);
    if (*child == 0) {
        close(fds[0]);
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(fds[1], data + off, n - off);
            if (w <= 0)
                _exit(0); /* the reader stopped early: that is allowed */
            off += (size_t)w;
        }
        sleep(linger);
        _exit(0);
    }
    close(fds[1]);
    return fds[0];
}

/* Loads /dev/fd/N of a pipe fed with data, the child ended afterwards. */
static int load_pipe(const uint8_t *data, size_t n, unsigned linger, char *err)
{
    pid_t child;
    int fd = pipe_from_child(data, n, linger, &child);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    time_t t0 = time(NULL);
    int r = try_load(path, err);
    /* A reader that waited for the writer to go would take linger seconds. */
    ck_assert_msg(linger < 30 || time(NULL) - t0 < 20, "the read waited for the writer");
    close(fd);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return r;
}

START_TEST(pipe_reads_whole_profile)
{
    char err[HR_ERR_MAX];
    ck_assert_msg(load_pipe(good.data, good.len, 0, err) == 0, "%s", err);
    /* Bytes after END are an error from a pipe as from a file. */
    struct ht_buf b = {0};
    ht_put(&b, good.data, good.len);
    ht_zeros(&b, 8);
    ck_assert_int_eq(load_pipe(b.data, b.len, 0, err), -1);
    ck_assert_msg(strstr(err, "after the END record") != NULL, "%s", err);
    free(b.data);
}
END_TEST

/* A writer that keeps the pipe open after bytes that cannot be a profile: the reader stops at
 * what it has (the test's timeout catches a wait for EOF). */
START_TEST(pipe_stops_at_bad_bytes)
{
    char err[HR_ERR_MAX];
    static const uint8_t zeros[4096];
    ck_assert_int_eq(load_pipe(zeros, sizeof zeros, 60, err), -1);
    ck_assert_msg(strstr(err, "bad magic") != NULL, "%s", err);
    /* A complete profile and one byte more, the writer still there. */
    struct ht_buf b = {0};
    ht_put(&b, good.data, good.len);
    ht_zeros(&b, 1);
    ck_assert_int_eq(load_pipe(b.data, b.len, 60, err), -1);
    ck_assert_msg(strstr(err, "after the END record") != NULL, "%s", err);
    free(b.data);
}
END_TEST

/* The bound: a record declaring more than it, and a stream of small records going past it. */
START_TEST(pipe_bounded)
{
    char err[HR_ERR_MAX];
    size_t saved = hr_profile_max;
    hr_profile_max = 1 << 16;
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_record_header big = {.type = HPF_REC_PAD, .size = 1 << 17};
    ht_put(&b, &big, sizeof big);
    ck_assert_int_eq(load_pipe(b.data, b.len, 60, err), -1);
    ck_assert_msg(strstr(err, "declares 131072 bytes") != NULL, "%s", err);
    b.len = 0;
    ht_file_header(&b);
    while (b.len <= (1 << 17))
        ht_record(&b, HPF_REC_PAD, NULL, 0);
    ck_assert_int_eq(load_pipe(b.data, b.len, 60, err), -1);
    ck_assert_msg(strstr(err, "more than 65536 bytes from a pipe") != NULL, "%s", err);
    /* A regular file beyond the bound is refused before it is read. */
    char *path = ht_tmpfile(b.data, b.len);
    ck_assert_int_eq(try_load(path, err), -1);
    ck_assert_msg(strstr(err, "beyond the maximum profile size") != NULL, "%s", err);
    unlink(path);
    free(path);
    hr_profile_max = saved;
    free(b.data);
}
END_TEST

/* A profile naming a FIFO and a device as modules: the symboliser does not open them (a FIFO's
 * open would wait for a writer forever, the test's timeout catching it), one warning each. */
START_TEST(modules_that_are_no_files)
{
    char fifo[] = "/tmp/hr_fifo_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(fifo));
    char path[64];
    snprintf(path, sizeof path, "%s/f", fifo);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    struct ht_buf b = {0};
    ht_sample(&b);
    b.len -= 24; /* drop END, add the modules, END again */
    b.records--;
    struct hpf_segment s1 = {.start = 0x401000, .end = 0x401800, .prot = 5};
    struct hpf_segment s2 = {.start = 0x402000, .end = 0x403000, .prot = 5};
    ht_module(&b, 0x400000, &s1, 1, NULL, 0, path);
    ht_module(&b, 0x400000, &s2, 1, NULL, 0, "/dev/zero");
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(&p, "m.hpf", ht_copy(b.data, b.len), b.len, err) == 0, "%s",
                  err);
    FILE *warn = tmpfile();
    struct hr_symbolizer *sym = hr_symbolizer_new(&p, warn);
    ck_assert_ptr_nonnull(sym);
    struct hr_frame f;
    hr_symbolize(sym, 0x401100, &f);
    ck_assert_str_eq(f.module, path);
    hr_symbolize(sym, 0x402100, &f);
    ck_assert_str_eq(f.module, "/dev/zero");
    hr_symbolizer_free(sym);
    char *w = ht_slurp(warn), want[512];
    snprintf(want, sizeof want,
             "heapprof-report: warning: m.hpf: %s: cannot read it (not a regular file); its "
             "frames keep their addresses\n"
             "heapprof-report: warning: m.hpf: /dev/zero: cannot read it (not a regular file); "
             "its frames keep their addresses\n", path);
    ck_assert_msg(strcmp(w, want) == 0, "%s", w);
    free(w);
    fclose(warn);
    hr_profile_free(&p);
    unlink(path);
    rmdir(fifo);
    free(b.data);
}
END_TEST

int main(void)
{
    devnull = fopen("/dev/null", "w");
    build_good();
    TCase *tc = ht_tcase("report_corrupt", "corrupt", 300);
    tcase_add_test(tc, good_profile_parses);
    tcase_add_test(tc, every_prefix_reads_or_fails);
    tcase_add_test(tc, short_files_say_why);
    tcase_add_test(tc, every_byte_flip);
    tcase_add_test(tc, large_values_everywhere);
    tcase_add_test(tc, random_damage);
    tcase_add_test(tc, devices_and_directories_refused);
    tcase_add_test(tc, pipe_reads_whole_profile);
    tcase_add_test(tc, pipe_stops_at_bad_bytes);
    tcase_add_test(tc, pipe_bounded);
    tcase_add_test(tc, modules_that_are_no_files);
    int status = ht_run();
    free(good.data);
    fclose(devnull);
    return status;
}

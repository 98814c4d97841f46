/* Unit tests of the command line: options, exit statuses, error lines, -o, text sections and
 * JSON arrays for several profiles, all driven in-process through hr_cli_run. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"
#include "json_check.h"

static char *out_text, *err_text;

/* Runs the tool with a NULL-terminated argument list; output and errors land in the globals. */
static int run(const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"heapprof-report";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    free(out_text);
    free(err_text);
    return ht_cli(argc, argv, &out_text, &err_text);
}

static void one_line_error(const char *start)
{
    ck_assert_msg(strncmp(err_text, start, strlen(start)) == 0, "stderr: %s", err_text);
    char *nl = strchr(err_text, '\n');
    ck_assert_msg(nl && nl[1] == 0, "not one line: %s", err_text);
}

START_TEST(help_and_version)
{
    ck_assert_int_eq(run("--help", NULL), 0);
    ck_assert(strstr(out_text, "usage: heapprof-report"));
    ck_assert(strstr(out_text, "--sort"));
    ck_assert_int_eq(run("-V", NULL), 0);
    ck_assert(strstr(out_text, "heapprof-report " HR_VERSION));
}
END_TEST

START_TEST(usage_errors)
{
    ck_assert_int_eq(run("--bogus", "x.hpf", NULL), 2);
    one_line_error("heapprof-report: unknown option '--bogus'");
    ck_assert_int_eq(run("-q", "x.hpf", NULL), 2);
    one_line_error("heapprof-report: unknown option '-q'");
    ck_assert_int_eq(run("--format", "xml", "x.hpf", NULL), 2);
    one_line_error("heapprof-report: unknown format 'xml'");
    ck_assert_int_eq(run("--top", "ten", "x.hpf", NULL), 2);
    one_line_error("heapprof-report: bad --top count 'ten'");
    ck_assert_int_eq(run("--top", "-1", "x.hpf", NULL), 2);
    ck_assert_int_eq(run("--sort=size", "x.hpf", NULL), 2);
    one_line_error("heapprof-report: unknown sort key 'size'");
    ck_assert_int_eq(run("x.hpf", "--format", NULL), 2);
    one_line_error("heapprof-report: missing argument for '--format'");
    ck_assert_int_eq(run(NULL), 2);
    one_line_error("heapprof-report: no profile given");
}
END_TEST

/* A title written over the arguments (nginx's "worker process"), the rest of their memory
 * empty arguments: the text's command line leaves those out; one empty argument in the middle
 * stays (a space more). */
START_TEST(text_title_over_arguments)
{
    static const char *const argv[] = {"nginx: worker process", "", "x", "", "", ""};
    struct hpf_process pr = {.pid = 7, .ppid = 1, .dump_reason = HPF_DUMP_EXIT, .argc = 6};
    struct ht_buf b = {0};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/usr/sbin/nginx", argv);
    struct hpf_summary s = {0};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    ht_end(&b);
    char *path = ht_tmpfile(b.data, b.len);
    free(b.data);
    ck_assert_int_eq(run(path, NULL), 0);
    ck_assert_msg(strstr(out_text, "command      nginx: worker process  x\n"), "%s", out_text);
    unlink(path);
    free(path);
}
END_TEST

/* Counts of one read "1 block", "1 allocation" (the sample has none). */
START_TEST(text_singular)
{
    static const char *const argv[] = {"./one"};
    struct hpf_process pr = {.pid = 7, .ppid = 1, .dump_ms = 10, .dump_reason = HPF_DUMP_EXIT,
                             .unwinder = HPF_UNWIND_FP, .stack_depth = 64, .argc = 1};
    struct ht_buf b = {0};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/usr/bin/one", argv);
    struct hpf_summary s = {.total_allocs = 1, .total_bytes = 64, .live_count = 1, .live_size = 64,
                            .peak_live_size = 64, .peak_live_count = 1, .peak_ms = 5,
                            .contexts = 1, .unprofiled_allocs = 1, .truncated_stacks = 1,
                            .evicted_hibs = 1};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    uint64_t pcs[] = {0x401000};
    ht_stack(&b, 1, pcs, 1);
    struct hpf_hib h = {.context_id = 1, .alloc_count = 1, .total_size = 64, .min_size = 64,
                        .max_size = 64, .num_lifetime_overlaps = 1};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    struct hpf_live l = {.context_id = 1, .allocs = 1, .bytes = 64, .live_count = 1,
                         .live_size = 64, .max_live_count = 1, .max_live_size = 64,
                         .peak_live_count = 1, .peak_live_size = 64};
    ht_record(&b, HPF_REC_LIVE, &l, sizeof l);
    ht_end(&b);
    char *path = ht_tmpfile(b.data, b.len);
    free(b.data);
    ck_assert_int_eq(run(path, NULL), 0);
    ck_assert(strstr(out_text, "backend      glibc, unwinder fp")); /* no allocator: older file */
    ck_assert(strstr(out_text, "peak heap    64 B in 1 block at 5 ms\n"));
    ck_assert(strstr(out_text, "leaked       64 B in 1 block still live"));
    ck_assert(strstr(out_text, "(1 allocation without context, 1 stack truncated, 1 evicted record)"));
    ck_assert(strstr(out_text, "context 1: 1 allocation, 64 B"));
    ck_assert(strstr(out_text, "leaked     1 block, 64 B (own max 1 block, 64 B)"));
    ck_assert(strstr(out_text, "at peak    1 block, 64 B"));
    ck_assert(strstr(out_text, "same free cpu, 1 lifetime overlap\n"));
    unlink(path);
    free(path);
}
END_TEST

START_TEST(text_report)
{
    char *path = ht_sample_file();
    ck_assert_int_eq(run(path, NULL), 0);
    ck_assert_str_eq(err_text, "");
    ck_assert(strstr(out_text, "pid 1234, parent 1"));
    ck_assert(strstr(out_text, "command      ./prog --flag x y\n"));
    ck_assert(strstr(out_text, "duration     2000 ms, dump #0 written at exit"));
    ck_assert(strstr(out_text, "backend      glibc (/lib/x86_64-linux-gnu/libc.so.6), unwinder fp"));
    ck_assert(strstr(out_text, "allocations  30 (4.0 KiB requested)"));
    ck_assert(strstr(out_text, "peak heap    2.0 KiB in 9 blocks at 1500 ms\n"));
    ck_assert(strstr(out_text, "leaked       500 B in 5 blocks"));
    ck_assert(strstr(out_text, "metadata     64.0 KiB of 1.0 MiB budget (32.0 KiB in memory)"));
    ck_assert(strstr(out_text, "top 2 of 2 contexts by total_size"));
    char *c2 = strstr(out_text, "#1  context 2: 20 allocations, 3.0 KiB (75.6% of all bytes)");
    char *c1 = strstr(out_text, "#2  context 1: 10 allocations, 1000 B (24.4% of all bytes)");
    ck_assert(c2 && c1 && c2 < c1);
    ck_assert(strstr(c1, "size       min 100 B, avg 100.0 B, max 100 B"));
    ck_assert(strstr(c1, "lifetime   min 1 ms, avg 5.0 ms, max 20 ms"));
    ck_assert(strstr(c1, "leaked     5 blocks, 500 B (own max 6 blocks, 600 B)"));
    ck_assert(strstr(c1, "#0  0x401000\n"));

    ck_assert_int_eq(run("--top", "1", "--sort", "live_size", path, NULL), 0);
    ck_assert(strstr(out_text, "top 1 of 2 contexts by live_size"));
    ck_assert(strstr(out_text, "context 1:"));
    ck_assert_ptr_null(strstr(out_text, "context 2:"));

    /* several profiles: one section each */
    ck_assert_int_eq(run(path, path, NULL), 0);
    char *first = strstr(out_text, "heapprof report: ");
    ck_assert(first && strstr(first + 1, "heapprof report: "));
    unlink(path);
    free(path);
}
END_TEST

START_TEST(json_and_output_file)
{
    char *path = ht_sample_file();
    char *outpath = ht_tmpfile("", 0);
    ck_assert_int_eq(run("--format=json", "-o", outpath, path, NULL), 0);
    ck_assert_str_eq(out_text, "");
    FILE *f = fopen(outpath, "r");
    fseek(f, 0, SEEK_END);
    char *json = ht_slurp(f);
    fclose(f);
    ck_assert(ht_json_valid(json));
    ck_assert(json[0] == '{');
    free(json);

    ck_assert_int_eq(run("-f", "json", path, path, NULL), 0);
    ck_assert(ht_json_valid(out_text));
    ck_assert(out_text[0] == '[');

    /* JSON lists every context by default (not text's 20), the first N by --sort with --top N,
     * given before or after --format; summary.contexts still counts them all */
    ck_assert_int_eq(run("-f", "json", path, NULL), 0);
    ck_assert(strstr(out_text, "\"context_id\": 1") && strstr(out_text, "\"context_id\": 2"));
    ck_assert_int_eq(run("--top", "1", "-f", "json", path, NULL), 0);
    ck_assert(ht_json_valid(out_text));
    ck_assert(strstr(out_text, "\"context_id\": 2") && !strstr(out_text, "\"context_id\": 1"));
    ck_assert(strstr(out_text, "\"contexts\": 2"));
    ck_assert_int_eq(run("-f", "json", "-n", "1", "--sort", "live_size", path, NULL), 0);
    ck_assert(strstr(out_text, "\"context_id\": 1") && !strstr(out_text, "\"context_id\": 2"));
    ck_assert_int_eq(run("-f", "json", "-n", "0", path, NULL), 0);
    ck_assert(strstr(out_text, "\"context_id\": 1") && strstr(out_text, "\"context_id\": 2"));
    unlink(outpath);
    unlink(path);
    free(outpath);
    free(path);
}
END_TEST

START_TEST(bad_profiles)
{
    char *path = ht_sample_file();
    struct ht_buf b = {0};
    ht_sample(&b);
    char *cut = ht_tmpfile(b.data, b.len - 24); /* the process died before writing END */
    char *early = ht_tmpfile(b.data, 52);       /* ... or inside its PROCESS record */
    char *junk = ht_tmpfile("hello world, not a profile", 26);
    char *outpath = ht_tmpfile("", 0);
    unlink(outpath);

    /* Cut short after its records: read, with one warning line (docs/REPORT.md). */
    ck_assert_int_eq(run("-f", "json", cut, NULL), 0);
    char want[1200];
    snprintf(want, sizeof want, "heapprof-report: warning: %s: cut short at byte %zu (no END "
             "record): read 8 complete records, 2 contexts; the process was probably killed "
             "while writing it", cut, b.len - 24);
    one_line_error(want);
    ck_assert(strstr(out_text, "\"truncated\": true") && strstr(out_text, "\"context_id\": 2"));

    /* Cut before anything usable: an error, and the output file is not made. */
    ck_assert_int_eq(run("-o", outpath, path, early, NULL), 1);
    snprintf(want, sizeof want, "heapprof-report: %s: cut short at byte 52 before its PROCESS "
             "record", early);
    one_line_error(want);
    ck_assert_str_eq(out_text, "");
    struct stat st;
    ck_assert_int_ne(stat(outpath, &st), 0); /* output file untouched on bad input */

    ck_assert_int_eq(run(junk, NULL), 1);
    snprintf(want, sizeof want, "heapprof-report: %s: not a heapprof profile (bad magic)", junk);
    one_line_error(want);

    /* A dump the shim never finished (left as NAME.tmp): said so. */
    char tmpname[512];
    snprintf(tmpname, sizeof tmpname, "%s.3.tmp", early);
    ck_assert_int_eq(rename(early, tmpname), 0);
    ck_assert_int_eq(run(tmpname, NULL), 1);
    snprintf(want, sizeof want,
             "heapprof-report: %s: an unfinished dump (its process exec'd or was killed while "
             "writing it): cut short", tmpname);
    one_line_error(want);
    ck_assert_int_eq(rename(tmpname, early), 0);
    snprintf(tmpname, sizeof tmpname, "%s.3.tmp", cut);
    ck_assert_int_eq(rename(cut, tmpname), 0);
    ck_assert_int_eq(run(tmpname, NULL), 0);
    snprintf(want, sizeof want, "heapprof-report: warning: %s: cut short at byte %zu (no END "
             "record): read 8 complete records, 2 contexts; an unfinished dump: its process "
             "exec'd or was killed while writing it", tmpname, b.len - 24);
    one_line_error(want);
    ck_assert_int_eq(rename(tmpname, cut), 0);

    ck_assert_int_eq(run("/nonexistent/x.hpf", NULL), 1);
    one_line_error("heapprof-report: /nonexistent/x.hpf: No such file or directory");

    ck_assert_int_eq(run("-o", "/nonexistent/dir/out.json", path, NULL), 1);
    one_line_error("heapprof-report: /nonexistent/dir/out.json: No such file");

    unlink(path);
    unlink(cut);
    unlink(early);
    unlink(junk);
    free(path);
    free(cut);
    free(early);
    free(junk);
    free(outpath);
    free(b.data);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_cli", "cli", 0);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, usage_errors);
    tcase_add_test(tc, text_report);
    tcase_add_test(tc, text_singular);
    tcase_add_test(tc, text_title_over_arguments);
    tcase_add_test(tc, json_and_output_file);
    tcase_add_test(tc, bad_profiles);
    int status = ht_run();
    free(out_text);
    free(err_text);
    return status;
}

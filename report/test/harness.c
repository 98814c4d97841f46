/* The report unit tests' shared harness (harness.h): the suite main runs, temporary files, the
 * command line with its output captured. Linked into every test binary of report/test/. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"

static Suite *suite;

TCase *ht_tcase(const char *name_of_suite, const char *name, double timeout)
{
    suite = suite_create(name_of_suite);
    TCase *tc = tcase_create(name);
    if (timeout > 0)
        tcase_set_timeout(tc, timeout);
    suite_add_tcase(suite, tc);
    return tc;
}

int ht_run(void)
{
    SRunner *sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

char *ht_tmpfile(const void *p, size_t n)
{
    char tmpl[] = "/tmp/hr_test_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        abort();
    if (write(fd, p, n) != (ssize_t)n)
        abort();
    close(fd);
    return strdup(tmpl);
}

char *ht_sample_file(void)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    char *path = ht_tmpfile(b.data, b.len);
    free(b.data);
    return path;
}

char *ht_slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
        abort();
    s[n] = 0;
    return s;
}

int ht_cli(int argc, char **argv, char **out, char **err)
{
    FILE *o = tmpfile(), *e = tmpfile();
    if (!o || !e)
        abort();
    int r = hr_cli_run(argc, argv, o, e);
    if (out)
        *out = ht_slurp(o);
    if (err)
        *err = ht_slurp(e);
    fclose(o);
    fclose(e);
    return r;
}

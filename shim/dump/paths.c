/* Output paths and files: the output template expanded for this process, the directory checked
 * at start, profile files created exclusively and named when whole (place_file), and the words
 * for why a file could not be made or written. */
#include "dump/dump_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* RENAME_NOREPLACE */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char exe_name[256]; /* the executable's file name, for %e */

void hp_expand_path(void)
{
    char *out = hp_ds.out_path;
    const size_t cap = sizeof hp_ds.out_path;
    char pid[16];
    hp_fmt(pid, sizeof pid, "%d", (int)getpid());
    size_t o = 0;
    for (const char *p = hp_ds.out_template; *p && o + 1 < cap; p++) {
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 'p')
            ins = pid;
        else if (p[0] == '%' && p[1] == 'e')
            ins = exe_name;
        else if (p[0] == '%' && p[1] == '%')
            ins = "%";
        if (ins) {
            p++;
            while (*ins && o + 1 < cap)
                out[o++] = *ins++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

/* The directory check_output_dir found unusable at start, and the errno creating a file there
 * gives: that failure has been said, and is not said again for every file. */
static char bad_dir[1100];
static int bad_dir_errno;

/* Is path a file right in bad_dir? */
static int in_bad_dir(const char *path)
{
    const char *slash = NULL;
    for (const char *p = path; *p; p++)
        if (*p == '/')
            slash = p;
    if (!slash || !bad_dir[0])
        return 0;
    size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" is in "/" */
    return hp_strlen(bad_dir) == n && hp_strncmp(path, bad_dir, n) == 0;
}

/* Words for why a profile file could not be made or written: the causes a user can do
 * something about by name, others as "<what> (errno N)". */
void hp_file_error(int e, const char *what, char *why, size_t cap)
{
    if (e == ENOSPC)
        hp_strlcpy(why, "no space left on the device", cap);
    else if (e == EDQUOT)
        hp_strlcpy(why, "disk quota exceeded", cap);
    else if (e == EFBIG)
        hp_strlcpy(why, "file too large for the file system or RLIMIT_FSIZE", cap);
    else if (e == EMFILE)
        hp_strlcpy(why, "no free file descriptor (RLIMIT_NOFILE)", cap);
    else if (e == EROFS)
        hp_strlcpy(why, "read-only file system", cap);
    else
        hp_fmt(why, cap, "%s (errno %d)", what, e);
}

/* Name k of those a file meant to be path may take: path itself, then path-1, path-2, ... */
#define NAME_TRIES 100
static void name_try(char *used, size_t cap, const char *path, int k)
{
    if (k == 0)
        hp_strlcpy(used, path, cap);
    else
        hp_fmt(used, cap, "%s-%d", path, k);
}

/* A profile named k > 0 (path-k) because path existed: said once, on stderr, at the default
 * verbosity too, or the user looks for it at path and finds the old file. At verbosity 2 the
 * "profile written to" note that follows names it already; heapprof-run turns it off
 * (say_renamed=0): there FILE-1, ... are the documented names of a run's other processes, and
 * a line on their stderr would change their output. */
static void say_renamed(const char *path, const char *used, int k)
{
    if (k > 0 && hp_opt.verbosity == 1 && hp_opt.say_renamed)
        hp_warn("%s exists: this profile is written to %s", path, used);
}

/* Create path (or path-1, path-2, ... if it exists) exclusively, without following links.
 * A failure is reported with note after it, or not at all when note is NULL; the report names
 * shown (the name the file was to have in the end: a numbered dump's, not its .tmp). */
int hp_create_file_shown(const char *path, const char *shown, char *used, size_t cap,
                         const char *note)
{
    for (int k = 0; k < NAME_TRIES; k++) {
        name_try(used, cap, path, k);
        /* Readable too: dumps and forked children copy the spool's records (pread). */
        int fd = (int)hp_sys_open(used, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            say_renamed(shown, used, k);
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    if (note && !(errno == bad_dir_errno && in_bad_dir(path))) {
        int e = errno;
        char why[64];
        if (e == EACCES)
            hp_strlcpy(why, "permission denied", sizeof why);
        else if (e == ENOENT)
            hp_strlcpy(why, "no such directory", sizeof why);
        else if (e == ELOOP)
            hp_strlcpy(why, "it is a symbolic link", sizeof why);
        else if (e == ENOSYS || e == EPERM) /* what seccomp filters (man-db's) answer */
            hp_fmt(why, sizeof why, "open refused (errno %d; a seccomp sandbox?)", e);
        else
            hp_file_error(e, "open failed", why, sizeof why);
        hp_error("cannot create profile %s: %s%s", shown, why, note);
    }
    return -1;
}

int hp_create_file(const char *path, char *used, size_t cap, const char *note)
{
    return hp_create_file_shown(path, path, used, cap, note);
}

/* Give the whole dump written at tmp its name: path, or path-1, path-2, ... if that exists
 * (as hp_create_file would have chosen), never over another file. renameat2 with
 * RENAME_NOREPLACE; where that fails (a kernel or file system without it, a filter refusing
 * it), a hard link and the unlink of tmp; where that fails too (no hard links: vfat), a plain
 * rename once path is seen not to exist. 0 with the name in used; -1 with errno (tmp is left
 * as it is). */
static int place_file_as(const char *tmp, const char *path, char *used, size_t cap, int plain)
{
    /* plain: 0 to begin with renameat2; 1: no RENAME_NOREPLACE here; 2: no hard links either */
    for (int k = 0; k < NAME_TRIES; k++) {
        name_try(used, cap, path, k);
        if (plain == 0) {
            if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, used, RENAME_NOREPLACE) == 0) {
                say_renamed(path, used, k);
                return 0;
            }
            if (errno == EEXIST)
                continue;
            plain = 1; /* EINVAL, ENOSYS; or a filter's EPERM: the next way may be allowed */
        }
        if (plain == 1) {
            if (syscall(SYS_link, tmp, used) == 0) {
                syscall(SYS_unlink, tmp);
                say_renamed(path, used, k);
                return 0;
            }
            if (errno == EEXIST)
                continue;
            plain = 2;
        }
        struct stat st;
        if (syscall(SYS_lstat, used, &st) == 0)
            continue;
        if (errno != ENOENT)
            return -1;
        int r = (int)syscall(SYS_rename, tmp, used);
        if (r == 0)
            say_renamed(path, used, k);
        return r;
    }
    errno = EEXIST;
    return -1;
}

int hp_place_file(const char *tmp, const char *path, char *used, size_t cap)
{
    return place_file_as(tmp, path, used, cap, 0);
}

/* fd is open on the file dev and ino name. */
int hp_same_file(int fd, uint64_t dev, uint64_t ino)
{
    struct stat st;
    return syscall(SYS_fstat, fd, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

/* A profile that could not be written whole (a full disk): the reader would reject what is
 * there, so it goes, if path still names the file fd is open on. */
void hp_remove_failed(int fd, const char *path)
{
    struct stat st;
    if (syscall(SYS_stat, path, &st) == 0 && hp_same_file(fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
        syscall(SYS_unlink, path);
}

/* Say at startup, not at exit hours later, when the profile cannot be made where asked. */
static void check_output_dir(void)
{
    static char dir[1100];
    hp_strlcpy(dir, hp_ds.out_path, sizeof dir);
    char *slash = NULL;
    for (char *p = dir; *p; p++)
        if (*p == '/')
            slash = p;
    if (!slash)
        return;
    slash[slash == dir] = 0; /* "/x" keeps "/" */
    struct stat st;
    int found = syscall(SYS_stat, dir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode)) {
        bad_dir_errno = found ? ENOTDIR : errno;
        hp_error("profiles cannot be written: %s %s (output=%s)", dir,
                 bad_dir_errno == ENOENT ? "does not exist" : "is not a directory", hp_opt.output);
    } else if (syscall(SYS_access, dir, W_OK | X_OK) != 0) {
        hp_error("profiles cannot be written: no permission to create files in %s (output=%s)", dir,
                 hp_opt.output);
        bad_dir_errno = EACCES;
    } else {
        return;
    }
    hp_strlcpy(bad_dir, dir, sizeof bad_dir);
}

void hp_paths_init(void)
{
    char *exe = hp_ds.exe_path, *tpl = hp_ds.out_template;
    long n = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof hp_ds.exe_path - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *base = exe;
    for (const char *p = exe; *p; p++)
        if (*p == '/')
            base = p + 1;
    hp_strlcpy(exe_name, *base ? base : "unknown", sizeof exe_name);
    const char *o = hp_opt.output;
    if (!o[0]) {
        tpl[0] = 0;
        return;
    }
    if (o[0] == '/') {
        hp_strlcpy(tpl, o, sizeof hp_ds.out_template);
    } else {
        char cwd[800];
        long r = syscall(SYS_getcwd, cwd, sizeof cwd);
        if (r <= 0)
            hp_strlcpy(cwd, ".", sizeof cwd);
        hp_fmt(tpl, sizeof hp_ds.out_template, "%s/%s", cwd, o);
    }
    hp_expand_path();
    check_output_dir();
}

#ifdef HP_UNIT_TEST
/* For test_dump: hp_place_file, beginning with the way `plain` names. */
int hp_test_place_file(const char *tmp, const char *path, char *used, size_t cap, int plain);
int hp_test_place_file(const char *tmp, const char *path, char *used, size_t cap, int plain)
{
    return place_file_as(tmp, path, used, cap, plain);
}
#endif

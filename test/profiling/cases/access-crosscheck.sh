# timeout: 300
# Access profiling against LLVM's own MemProf runtime (issue 41): test/access/crosscheck.c built
# with clang -fmemory-profile and run with libclang_rt.memprof, and built by heapprof-cc (the
# same clang, inline) and run under heapprof-run, give per site the same allocation count, size
# and total accesses (docs/USAGE.md, "Compared with LLVM's runtime"). clang 14, and clang-16
# when it is installed.
. "$ROOT/test/access/e2e_lib.sh"
access_crosscheck clang
if command -v clang-16 >/dev/null 2>&1; then
    access_crosscheck clang-16
else
    skip crosscheck-clang-16 "clang-16 is not installed"
fi

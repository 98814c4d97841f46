# No cancellation point of libc on any path of the shim (objdump of the built library), but in
# the dump_interval_ms thread, which is the shim's own: nothing cancels it.

# A thread cancelled (pthread_cancel) inside one would leave the shim with its locks held, and
# the process would hang at its next dump, fork or exit (test/profiling/cancel.c). The shim's
# waits and file work use raw system calls (hp_sleep_ns, hp_sys_open, syscall(SYS_write, ...)).
calls_test cancel-points \
    '(call|jmp).*<(nanosleep|clock_nanosleep|usleep|sleep|read|write|pread|pread64|pwrite|pwrite64|open|open64|openat|openat64|close|fcntl|fcntl64|fsync|fdatasync|msync|wait|waitpid|waitid|wait4|poll|ppoll|select|pselect|pause|sigsuspend|sigwait|sigwaitinfo|sigtimedwait|accept|accept4|connect|recv|recvfrom|recvmsg|send|sendto|sendmsg|readv|writev|preadv|pwritev|lockf|system|tcdrain|creat|epoll_wait|epoll_pwait|sem_wait|sem_timedwait|pthread_join|pthread_cond_wait|pthread_cond_timedwait|pthread_testcancel|fopen|fclose|fwrite|fread|fflush|fprintf|printf|puts)(@plt)?>' \
    hp_dump_interval_main

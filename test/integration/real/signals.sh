# requires: /usr/bin/python3 perl timeout
# Programs that use signals while the shim holds the ones left at SIG_DFL (to write a profile when
# they end a process): their handlers, KeyboardInterrupt, traps, and deaths by signal must all
# look as they do without the shim.
perl -e '$SIG{TERM} = sub { print "perl caught TERM\n"; exit 0 }; kill TERM => $$; sleep 1; print "not reached\n"'
perl -e 'print "perl sees TERM as ", (defined $SIG{TERM} ? "[$SIG{TERM}]" : "default"), "\n"'
bash -c 'trap "echo bash trapped TERM; exit 3" TERM; kill -TERM $$; sleep 1'
echo "trap status $?"
bash -c 'kill -TERM $$; echo not reached' 2>/dev/null
echo "bash killed: status $?"
/usr/bin/python3 - <<'PY'
import os, signal, subprocess, sys, time
print("python SIGINT:", signal.getsignal(signal.SIGINT).__name__)
print("python defaults:", [signal.getsignal(s) == signal.SIG_DFL for s in
      (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGSEGV, signal.SIGABRT)])
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)
except KeyboardInterrupt:
    print("KeyboardInterrupt raised")
p = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
print("child killed by TERM:", p.returncode)
p = subprocess.run([sys.executable, "-c", "import os; os.abort()"])
print("child aborted:", p.returncode)
p = subprocess.run(["sh", "-c", "kill -USR1 $$"])
print("sh killed by USR1:", p.returncode)
signal.signal(signal.SIGTERM, lambda s, f: print("python handler got", s))
os.kill(os.getpid(), signal.SIGTERM)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
print("back to default:", signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
PY
yes | head -c 100000 | wc -c
timeout 0.2 sleep 5
echo "timeout status $?"
(ulimit -c 0; sh -c 'kill -QUIT $$'); echo "QUIT status $?"

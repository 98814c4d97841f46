# Interval dumps of python3 building and parsing a large JSON text (a single-threaded program
# making new contexts all the time): every dump holds only contexts with allocations in it
# (python3's early dumps had up to a dozen rows of zeros: contexts made after the dump's flush).
name=interval-python
if [ -x /usr/bin/python3 ] &&
    run "$name" "dump_interval_ms=20" env PYTHONMALLOC=malloc /usr/bin/python3 -c \
        "import json; x = [{'a': i, 'b': str(i) * 5} for i in range(200000)]; print(len(json.loads(json.dumps(x))))"; then
    check_dumps "$name" interval 3 "$TMP/$name"/p.*.hpf.*
fi

# A Go program (cgo, so dynamically linked and the shim loaded): the shim says once that Go's
# heap is its own and that no profile comes at its exit (Go ends the process with a raw
# exit_group); an interval dump, as the message advises, has the C code's three malloc(4000)
# blocks live. A C program says nothing of the kind.
# timeout: 300
name=go-program
bin=$PBIN/go/cgo_prog
if ! command -v go >/dev/null 2>&1; then
    bad "$name" "go not installed (golang-go)"
else
    mkdir -p "$PBIN/go" "$TMP/gocache"
    if [ ! -x "$bin" ] || [ test/profiling/go/cgo_prog.go -nt "$bin" ]; then
        GOCACHE=$TMP/gocache GOPATH=$TMP/gopath GO111MODULE=off GOFLAGS= CGO_ENABLED=1 \
            go build -o "$bin" test/profiling/go/cgo_prog.go 2>"$TMP/$name.build" ||
            bad "$name" "go build failed: $(head -c 300 "$TMP/$name.build")"
    fi
    if [ -x "$bin" ] && run "$name" "dump_interval_ms=50" "$bin"; then
        dump=$(ls "$TMP/$name"/p.*.hpf.1 2>/dev/null | head -1)
        if [ "$(cat "$TMP/$name.out")" != done ]; then
            bad "$name" "output: $(head -c 200 "$TMP/$name.out")"
        elif [ "$(grep -c '^heapprof: this is a Go program: Go keeps its own heap' "$TMP/$name.err")" != 1 ] ||
            [ "$(grep -c '^heapprof:' "$TMP/$name.err")" != 1 ]; then
            bad "$name" "expected the one Go line: $(head -c 300 "$TMP/$name.err")"
        elif [ -z "$dump" ] || ! "$REPORT" --format json -o "$TMP/$name.json" "$dump" 2>"$TMP/$name.rep"; then
            bad "$name" "no interval dump read: $(ls "$TMP/$name") $(head -c 200 "$TMP/$name.rep")"
        elif ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["contexts"] if c["min_size"] == 4000 and c["max_size"] == 4000]
sys.exit(0 if len(c) == 1 and c[0]["alloc_count"] == 3 and c[0]["live_count"] == 3 else 1)' "$TMP/$name.json"; then
            bad "$name" "the dump lacks the 3 live blocks of 4000 bytes"
        else
            ok "$name"
        fi
    fi
    run "$name-c" "" "$PBIN/gcc/sites" && if grep -q 'Go program' "$TMP/$name-c.err"; then
        bad "$name-c" "a C program was taken for a Go one"
    else
        ok "$name-c"
    fi
fi

# A program that uses every descriptor its soft limit allows gets as many under the shim as
# bare (the shim keeps none open), and its exit profile is still made, whole; with soft = hard
# the profile is said lost in one line that names the limit.

# Each of the shim's opens gets a descriptor above the soft limit, raised towards the hard one
# for that open only; the memory map is read too (the profile's frames have names).
# timeout: 300
build "$PBIN/gcc/fd_exhaust" gcc -O1 -g test/profiling/fd_exhaust.c
for lim in soft hard; do
    name=descriptors-exhausted-$lim
    fresh "$name"
    if [ $lim = soft ]; then set_lim="ulimit -S -n 20"; else set_lim="ulimit -n 20"; fi
    bare_n=$(eval "$set_lim" && "$PBIN/gcc/fd_exhaust")
    shim_n=$(eval "$set_lim" && HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/fd_exhaust" 2>"$TMP/$name.err")
    said=$(grep '^heapprof:' "$TMP/$name.err")
    if [ -z "$bare_n" ] || [ "$bare_n" != "$shim_n" ]; then
        bad "$name" "bare opened $bare_n, under the shim $shim_n"
    elif [ $lim = soft ]; then
        f=$(first_profile "$TMP/$name")
        if [ -n "$said" ] || [ -z "$f" ]; then bad "$name" "no profile: $said"
        elif "$REPORT" -f json -o "$TMP/$name.json" "$f" 2>"$TMP/$name.rerr" && grep -q '"function": "main"' "$TMP/$name.json"; then ok "$name"
        else bad "$name" "profile: $(head -c 200 "$TMP/$name.rerr")"; fi
    else
        case $said in
        "heapprof: cannot create profile $TMP/$name/p."*".hpf: no free file descriptor (RLIMIT_NOFILE)") ok "$name" ;;
        *) bad "$name" "expected one line from heapprof: $(head -c 300 "$TMP/$name.err")" ;;
        esac
    fi
done

# The shim's folders depend on each other in one direction only (docs/DESIGN.md, module map):
# each folder may include the API headers of the folders listed for it below, and no others.
# folder: the folders whose headers its files may include (its own always).
allowed() {
    case $1 in
    shim/rt | shim/format | bootstrap) echo "" ;;
    backend) echo "rt" ;;
    shim/shadow) echo "rt" ;;
    shim/unwind) echo "rt backend" ;;
    shim/profile) echo "unwind format rt" ;;
    shim/dump) echo "profile unwind shadow format rt backend bootstrap" ;;
    shim/core) echo "dump profile unwind shadow format rt backend bootstrap" ;;
    shim/interpose) echo "core rt backend include" ;;
    *) echo "?" ;;
    esac
}

for dir in shim/rt shim/format shim/shadow shim/unwind shim/profile shim/dump shim/core \
    shim/interpose backend bootstrap; do
    [ -d "$ROOT/$dir" ] || continue
    own=${dir#shim/}
    ok_list="$own $(allowed "$dir")"
    bad=
    for f in "$ROOT/$dir"/*.c "$ROOT/$dir"/*.h; do
        [ -f "$f" ] || continue
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
            case $inc in
            */*) folder=${inc%%/*} ;;
            heapprof.h) folder=include ;;
            *) continue ;; # a header of the file's own folder, by its relative name
            esac
            case " $ok_list " in
            *" $folder "*) ;;
            *) bad="$bad ${f#$ROOT/} includes $inc;" ;;
            esac
        done
    done
    if [ -z "$bad" ]; then
        ok "layers/$own"
    else
        bad "layers/$own" "$bad"
    fi
done

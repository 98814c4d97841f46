#!/bin/sh
# The shim's folders depend on each other in one direction only (docs/DESIGN.md, module map):
# each folder may include the API headers of the folders listed for it below, and no others.
# Prints "ok layers/FOLDER" or "FAIL layers/FOLDER: FILE includes HEADER" per folder.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

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

fail=0
for dir in shim/rt shim/format shim/shadow shim/unwind shim/profile shim/dump shim/core \
    shim/interpose backend bootstrap; do
    [ -d "$dir" ] || continue
    own=${dir#shim/}
    ok_list="$own $(allowed "$dir")"
    bad=
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
            case $inc in
            */*) folder=${inc%%/*} ;;
            heapprof.h) folder=include ;;
            *) continue ;; # a header of the file's own folder, by its relative name
            esac
            case " $ok_list " in
            *" $folder "*) ;;
            *) bad="$bad $f includes $inc;" ;;
            esac
        done
    done
    if [ -z "$bad" ]; then
        echo "ok layers/$own"
    else
        echo "FAIL layers/$own:$bad"
        fail=1
    fi
done
exit $fail

# requires: grep
# grep -r over a generated tree: regex, counts, fixed strings.
for i in $(seq 1 100); do
    mkdir -p "tree/d$((i % 7))"
    seq 1 $((i * 20)) | sed "s/^/row-$i-/" >"tree/d$((i % 7))/f$i"
done
grep -rn 'row-1[0-9]-1[05]$' tree | sort | md5sum
grep -rcE '^row-(3|4)[0-9]-' tree | sort | md5sum
grep -rlF -e 'row-99-' -e 'row-7-3' tree | sort
grep -rhoE '[0-9]+$' tree | sort -n | tail -2

# requires: find
# find: walking a generated tree with tests and -exec.
for i in $(seq 1 200); do
    mkdir -p "tree/l$((i % 5))/m$((i % 11))"
    seq 1 $i >"tree/l$((i % 5))/m$((i % 11))/f$i"
done
find tree -type f | sort | md5sum
find tree -type f -size +1k | wc -l
find tree -name 'f1*' -newer tree -o -name 'f2?' -print | sort | head -5
find tree -type d -empty | wc -l
find tree -type f -name 'f19*' -exec wc -l {} + | sort

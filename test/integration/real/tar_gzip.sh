# requires: tar gzip
# tar and gzip over a generated tree: archive, list, extract, compare.
set -e
for d in a b c d; do
    for i in $(seq 1 40); do
        mkdir -p "tree/$d/sub$((i % 5))"
        seq 1 $((i * 40)) | sed "s/^/$d-$i-/" >"tree/$d/sub$((i % 5))/f$i.txt"
    done
done
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -czf t.tgz tree
tar tzf t.tgz | sort | md5sum
tar tzf t.tgz | wc -l
gzip -dc t.tgz | md5sum
mkdir out
tar xzf t.tgz -C out
diff -r tree out/tree && echo same
gzip -9 -n -c tree/a/sub1/f1.txt | md5sum
cat tree/*/*/*.txt | gzip -6 -n | gzip -dc | md5sum

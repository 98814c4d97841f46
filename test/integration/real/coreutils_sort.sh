# requires: sort
# sort: keyed, unique, and a parallel external sort (small buffer forces temporary files).
seq 1 200000 | awk '{ printf "%s %d %x\n", "k" ($1 * 7919 % 10007), $1 % 1000, $1 }' >data
sort -k2,2n -k1,1 data | md5sum
sort -u -k1,1 data | wc -l
sort --parallel=2 -S 1M -T . data | md5sum
sort -r -t' ' -k3,3 data | head -3

# requires: xz
# xz: single-threaded (deterministic bytes) and two-threaded round trips.
seq 1 100000 | awk '{ print $1, $1 * 31 % 1000, "text" $1 % 77 }' >data
md5sum <data
xz -T1 -6 -c data | md5sum
xz -T2 -3 -c data | xz -dc | md5sum
xz -T1 -1 -c data | xz -T1 -dc | wc -c

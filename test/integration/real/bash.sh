# requires: bash
# bash: arrays, associative arrays, string operations, command substitution, subshells.
declare -A h
a=()
for ((i = 0; i < 20000; i++)); do
    k="k$((i * 7919 % 1009))"
    h[$k]+="${i: -1}"
    ((i % 10 == 0)) && a+=("item-$i")
done
echo "${#h[@]} ${#a[@]} ${a[5]} ${#h[k7]}"
s=$(printf '%s,' "${a[@]:0:50}")
echo "${s//item-/#}" | cut -c1-60
r=$( (for x in "${!h[@]}"; do echo "$x ${#h[$x]}"; done) | sort -k2,2n -k1,1 | tail -1)
echo "$r"
f() { local v=$1; [ "$v" -le 1 ] && echo 1 || echo $((v * $(f $((v - 1))))); }
f 15

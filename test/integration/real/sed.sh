# requires: sed
# sed: substitutions with groups, hold space, line ranges.
seq 1 100000 | sed -E 's/([0-9])([0-9]*)/\2-\1/; /^-/d; 50,60{s/$/ range/}' | md5sum
seq 1 2000 | sed -n 'H; ${x; s/\n/,/g; p}' | md5sum
printf 'alpha beta\ngamma delta\n' | sed -E 's/(\w+) (\w+)/\2 \1/'

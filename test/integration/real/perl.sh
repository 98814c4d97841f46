# requires: perl
# Perl: hashes, regexes, sort, string building.
perl -e '
my %h;
for my $i (1 .. 100000) { my $k = "k" . ($i * 7919 % 10007); $h{$k} .= chr(97 + $i % 26); }
my @keys = sort { length($h{$b}) <=> length($h{$a}) or $a cmp $b } keys %h;
print scalar(@keys), " $keys[0] $keys[-1]\n";
my $s = join ",", map { "$_=" . length($h{$_}) } @keys[0 .. 20];
(my $t = $s) =~ s/k(\d+)=(\d+)/$2:$1/g;
print "$t\n";
my @m = ("abc123def456 " x 5000) =~ /(\d+)/g;
print scalar(@m), "\n";
my @arr = map { [$_, $_ * 2] } 1 .. 50000; my $sum = 0; $sum += $_->[1] for @arr; print "$sum\n";
'

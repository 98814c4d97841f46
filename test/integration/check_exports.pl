#!/usr/bin/perl
# Compares the dynamic symbols a shared library defines (nm -D --defined-only) with the global:
# patterns of its version script, and, given object files, checks that each name of the script
# is defined by one of them (the shim's: every exported symbol is defined in shim/interpose/).
# Usage: check_exports.pl MAP LIB [OBJECT...]. Exits 1 listing differences.
use strict;
use warnings;

my ($map, $lib, @objs) = @ARGV;
die "usage: $0 MAP LIB [OBJECT...]\n" unless defined $lib;

open my $fh, '<', $map or die "$map: $!\n";
my $text = do { local $/; <$fh> };
close $fh;
$text =~ s{/\*.*?\*/}{}gs;    # C comments
$text =~ s{#[^\n]*}{}g;       # shell-style comments

# Version nodes: NAME { global: ...; local: ...; } [PARENT];  An anonymous node has no NAME.
# Patterns inside extern "C++" { } match demangled names, the rest match raw names.
my (@c_pats, @cxx_pats, %nodes);
while ($text =~ /(\w[\w.]*)?\s*\{((?:[^{}]|\{[^{}]*\})*)\}/gs) {
    my ($node, $body) = ($1, $2);
    $nodes{$node} = 1 if defined $node;
    my ($global) = $body =~ /global\s*:(.*?)(?:\blocal\s*:|$)/s;
    next unless defined $global;
    while ($global =~ s/extern\s+"C\+\+"\s*\{(.*?)\}\s*;?//s) {
        push @cxx_pats, grep { length } map { s/^\s+|\s+$//gr } split /;/, $1;
    }
    push @c_pats, grep { length } map { s/^\s+|\s+$//gr } split /;/, $global;
}
die "no global: symbols found in $map\n" unless @c_pats || @cxx_pats;

sub glob_re {
    my $g = shift;
    my $re = quotemeta $g;
    $re =~ s/\\\*/.*/g;
    $re =~ s/\\\?/./g;
    return qr/^$re$/;
}

my @syms;
for (`nm -D --defined-only '$lib'`) {
    my ($type, $name) = (split)[1, 2];
    next unless defined $name;
    $name =~ s/@.*//;
    next if $type eq 'A' && $nodes{$name};    # version node definitions
    push @syms, $name;
}
die "nm -D found no symbols in $lib\n" unless @syms;
my %demangled;
sub demangle {
    return unless @cxx_pats && @_;
    my @d = `printf '%s\\n' @_ | c++filt`;
    chomp @d;
    @demangled{@_} = @d;
}
demangle(@syms);

my @errors;
my (%hit_c, %hit_cxx);
for my $s (@syms) {
    my $matched = 0;
    for my $p (@c_pats) {
        if ($s =~ glob_re($p)) { $hit_c{$p} = 1; $matched = 1; }
    }
    for my $p (@cxx_pats) {
        if (($demangled{$s} // '') =~ glob_re($p)) { $hit_cxx{$p} = 1; $matched = 1; }
    }
    push @errors, "exported but not in the map: $s" unless $matched;
}
for my $p (@c_pats) {
    push @errors, "in the map but not exported: $p" unless $hit_c{$p} || $p =~ /[*?]/;
}
for my $p (@cxx_pats) {
    push @errors, "in the map but not exported: extern \"C++\" $p" unless $hit_cxx{$p} || $p =~ /[*?]/;
}
# The global symbols the objects define (without LTO: an LTO object's symbol table leaves out
# what top-level assembly defines).
if (@objs) {
    my %defined;
    for (`nm --defined-only @objs`) {
        my ($type, $name) = (split)[1, 2];
        $defined{$name} = 1 if defined $name && $type =~ /^[A-Z]$/;
    }
    demangle(keys %defined);
    for my $p (grep { !/[*?]/ } @c_pats) {
        push @errors, "in the map but defined by none of the objects: $p" unless $defined{$p};
    }
    for my $p (grep { !/[*?]/ } @cxx_pats) {
        push @errors, "in the map but defined by none of the objects: extern \"C++\" $p"
            unless grep { ($demangled{$_} // '') =~ glob_re($p) } keys %defined;
    }
}
if (@errors) {
    print "$_\n" for @errors;
    exit 1;
}

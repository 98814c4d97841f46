#!/bin/sh
# Fetches a Debian source package's upstream tarball (apt-get source --download-only) into
# DESTDIR, once: the real program of the access tests is built from its own sources. The
# system's apt setup is left alone: the deb-src lines are made from its deb sources (the same
# mirrors and suites) in a private list, with private lists and cache under DESTDIR.
# Usage: debian_source.sh PACKAGE DESTDIR. Prints the tarball's path; exit status 1 (and why
# on stderr) when it cannot be had: no apt, no mirror reached.
set -u
pkg=${1:?usage: debian_source.sh PACKAGE DESTDIR}
dest=${2:?usage: debian_source.sh PACKAGE DESTDIR}

found() { ls "$dest/$pkg"_*.orig.tar.* 2>/dev/null | head -1; }
[ -n "$(found)" ] && { found; exit 0; }
command -v apt-get >/dev/null 2>&1 || { echo "no apt-get" >&2; exit 1; }

apt=$dest/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" || exit 1
# deb-src lines from the one-line list and from deb822 .sources files (first suite of each).
{
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
                           print "deb-src", $i, $(i + 1), "main" }'
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; FS = "\n" }
             { t = u = s = ""
               for (i = 1; i <= NF; i++) {
                   if ($i ~ /^Types:/) t = $i
                   if ($i ~ /^URIs:/) { u = $i; sub(/^URIs: */, "", u); sub(/ .*/, "", u) }
                   if ($i ~ /^Suites:/) { s = $i; sub(/^Suites: */, "", s); sub(/ .*/, "", s) }
               }
               if (t ~ /deb( |$)/ && u != "" && s != "") print "deb-src", u, s, "main" }' "$f"
    done
} | sort -u >"$apt/sources.list"
[ -s "$apt/sources.list" ] || { echo "no deb source in the apt configuration" >&2; exit 1; }

set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root
apt-get -qq "$@" update >"$apt/update.log" 2>&1 || { echo "apt-get update failed: $(tail -1 "$apt/update.log")" >&2; exit 1; }
(cd "$dest" && apt-get -qq "$@" source --download-only "$pkg") >"$apt/source.log" 2>&1 ||
    { echo "apt-get source $pkg failed: $(tail -1 "$apt/source.log")" >&2; exit 1; }
[ -n "$(found)" ] || { echo "apt-get source $pkg brought no upstream tarball" >&2; exit 1; }
found

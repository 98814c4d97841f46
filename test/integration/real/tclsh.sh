# requires: tclsh
# Tcl: strings, lists, dicts.
tclsh <<'TCL'
set d [dict create]
for {set i 0} {$i < 50000} {incr i} {
    dict lappend d [expr {($i * 7919) % 1009}] [string repeat x [expr {$i % 20}]]
}
puts [dict size $d]
set l {}
dict for {k v} $d { lappend l [list $k [string length [join $v ""]]] }
set l [lsort -integer -index 1 -decreasing [lsort -integer -index 0 $l]]
puts [lrange $l 0 4]
set s [string map {x y} [string repeat "abcx" 10000]]
puts [string length $s] 
puts [regsub -all {c(y)} [string range $s 0 40] {<\1>}]
TCL

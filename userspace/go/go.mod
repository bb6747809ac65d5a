// The Go binding of /dev/twheel and its examples.
//
// Builds offline on Debian 12: golang.org/x/sys comes from the
// golang-golang-x-sys-dev package, not from the network (see Makefile).
module twheel

go 1.19

require golang.org/x/sys v0.3.0

replace golang.org/x/sys => /usr/share/gocode/src/golang.org/x/sys

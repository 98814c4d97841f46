// A Go program that allocates through cgo: three blocks of 4000 bytes from C.malloc, kept
// 300 ms (for an interval dump to see them live), then freed (case go-program).
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

func main() {
	var ps [3]unsafe.Pointer
	for i := range ps {
		ps[i] = C.malloc(4000)
	}
	time.Sleep(300 * time.Millisecond)
	for _, p := range ps {
		C.free(p)
	}
	fmt.Println("done")
}

// Command statusgen writes status_gen.go from include/tensorblob.h and docs/errors.md; it
// exits non-zero (writing nothing) when the status list is incomplete.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tensorblob/tensorblob/bindings/go/internal/statusgen"
)

func main() {
	header := flag.String("header", "../../include/tensorblob.h", "the C header")
	catalogue := flag.String("errors", "../../docs/errors.md", "the status catalogue")
	out := flag.String("out", "status_gen.go", "output file")
	pkg := flag.String("pkg", "tensorblob", "package name")
	flag.Parse()
	h, err := os.ReadFile(*header)
	if err == nil {
		var e []byte
		e, err = os.ReadFile(*catalogue)
		if err == nil {
			var src []byte
			src, err = statusgen.Generate(*pkg, h, e)
			if err == nil {
				err = os.WriteFile(*out, src, 0o644)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "statusgen:", err)
		os.Exit(1)
	}
}

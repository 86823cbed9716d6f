// Command testcount reads `go test -json` streams on stdin and prints the output of every
// failed test, then `N passed, N failed` counting top-level tests and examples (a test's subtests,
// such as one per fuzz seed or per file, are its own business). A package
// that fails without a failed test (build error, TestMain check) counts as one failure.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	passed, failed := 0, 0
	output := map[string]*strings.Builder{}    // package/test -> output
	failedIn := map[string]int{}               // package -> failed tests
	pkgOutput := map[string]*strings.Builder{} // package -> output outside tests
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Println(string(line)) // not JSON: build output, pass it through
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			m := output
			if e.Test == "" {
				m, key = pkgOutput, e.Package
			}
			if m[key] == nil {
				m[key] = &strings.Builder{}
			}
			m[key].WriteString(e.Output)
		case "pass":
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				passed++
			}
		case "fail":
			if e.Test != "" {
				if !strings.Contains(e.Test, "/") { // a failed subtest fails its parent too
					failed++
				}
				failedIn[e.Package]++
				if b := output[key]; b != nil {
					fmt.Print(b.String())
				}
			} else if failedIn[e.Package] == 0 {
				failed++
				fmt.Printf("FAIL package %s\n", e.Package)
				if b := pkgOutput[e.Package]; b != nil {
					fmt.Print(b.String())
				}
			}
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
}

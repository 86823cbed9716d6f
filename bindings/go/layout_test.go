//go:build cgo

package tensorblob

import (
	"slices"
	"testing"
)

// Every C struct the package uses has the size and field offsets Go sees through cgo equal
// to what the C compiler reports (sizeof/offsetof compiled in C, layout.go).
func TestStructLayout(t *testing.T) {
	c, g := cLayouts(), goLayouts()
	if len(c) < 100 {
		t.Fatalf("only %d C layout entries", len(c))
	}
	for name, v := range c {
		gv, ok := g[name]
		if !ok {
			t.Errorf("%s: reported by C, not checked from Go", name)
		} else if gv != v {
			t.Errorf("%s: Go %d, C %d", name, gv, v)
		}
	}
	for name := range g {
		if _, ok := c[name]; !ok {
			t.Errorf("%s: checked from Go, not reported by C", name)
		}
	}
}

// The generated status list is the library's: every number the library names is a Go
// constant with that name, and every Go constant is a status the library knows.
func TestStatusesMatchLibrary(t *testing.T) {
	known := 0
	for n := Status(0); n >= -300; n-- {
		cName := cStatusName(n)
		goName, ok := statusNames[n]
		switch {
		case cName == "TBLOB_E_UNKNOWN_STATUS" && ok:
			t.Errorf("%d: Go has %s, the library does not know it", n, goName)
		case cName != "TBLOB_E_UNKNOWN_STATUS" && !ok:
			t.Errorf("%d: the library names it %s, Go has no constant", n, cName)
		case ok && cName != goName:
			t.Errorf("%d: Go %s, library %s", n, goName, cName)
		}
		if ok {
			known++
		}
	}
	if known != len(allStatuses) || known < 100 {
		t.Errorf("%d statuses matched, %d generated", known, len(allStatuses))
	}
	if !slices.Contains(allStatuses, ErrDigestMismatch) || ErrDigestMismatch.String() != "TBLOB_E_DIGEST_MISMATCH" {
		t.Error("ErrDigestMismatch")
	}
}

func TestDTypeNamesMatchLibrary(t *testing.T) {
	for d := DType(1); d < dtypeCount; d++ {
		if d.String() != cDTypeName(d) {
			t.Errorf("%d: Go %s, library %s", d, d, cDTypeName(d))
		}
	}
	if cDTypeName(dtypeCount) != "" {
		t.Errorf("the library has a dtype %d this package does not know", dtypeCount)
	}
}

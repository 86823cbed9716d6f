//go:build cgo

package tensorblob

import (
	"slices"
	"strings"
	"testing"
)

// The families the header documents for these statuses (tblob_family's comments), as the
// library reports them.
func TestStatusFamily(t *testing.T) {
	cases := []struct {
		s    Status
		f    Family
		name string
	}{
		{StatusOK, FamilyOK, "ok"},
		{ErrInvalidArgument, FamilyArgument, "argument"},
		{ErrOutOfMemory, FamilyMemory, "memory"},
		{ErrIO, FamilyIO, "io"},
		{ErrOllamaBlobMissing, FamilyIO, "io"},
		{ErrNotFound, FamilyNotFound, "not-found"},
		{ErrTrailingBytes, FamilyFormat, "format"},
		{ErrLimitTensors, FamilyLimit, "limit"},
		{ErrDigestMismatch, FamilyDigest, "digest"},
		{ErrQuantScaleSize, FamilyDequant, "dequant"},
		{ErrNotMapped, FamilyUnsupported, "unsupported"},
		{ErrCancelled, FamilyCancelled, "cancelled"},
		{Status(-9999), FamilyUnknown, "unknown"},
	}
	for _, c := range cases {
		if got := c.s.Family(); got != c.f || got.String() != c.name {
			t.Errorf("%v.Family() = %v (%d), want %s (%d)", c.s, got, got, c.name, c.f)
		}
	}
	for _, s := range allStatuses {
		if s.Family() == FamilyUnknown {
			t.Errorf("%v has no family", s)
		}
	}
}

func TestFeatures(t *testing.T) {
	f := Features()
	if !slices.Contains(f, "format:safetensors") || len(f) == 0 || f[len(f)-1] != "kernel:scalar" {
		t.Fatalf("Features() = %q", f)
	}
	for _, e := range f {
		if !strings.HasPrefix(e, "format:") && !strings.HasPrefix(e, "kernel:") {
			t.Errorf("feature %q", e)
		}
	}
}

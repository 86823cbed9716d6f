package tensorblob

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tensorblob/tensorblob/bindings/go/internal/statusgen"
)

// status_gen.go is what the generator makes of the header and catalogue in this tree.
func TestStatusGenUpToDate(t *testing.T) {
	h, err := os.ReadFile("../../include/tensorblob.h")
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := statusgen.Generate("tensorblob", h, e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("status_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("status_gen.go is stale: run go generate")
	}
}

func TestErrorMatching(t *testing.T) {
	var err error = &Error{Status: ErrDigestMismatch, Message: "blob x", Offset: -1, Tensor: -1}
	if !errors.Is(err, ErrDigestMismatch) || errors.Is(err, ErrTrailingBytes) {
		t.Error("errors.Is on the status")
	}
	var s Status
	if !errors.As(err, &s) || s != ErrDigestMismatch {
		t.Errorf("errors.As Status: %v", s)
	}
	if got := err.Error(); got != "tensorblob: TBLOB_E_DIGEST_MISMATCH: blob x" {
		t.Errorf("Error() = %q", got)
	}
	cancelled := &Error{Status: ErrCancelled, Offset: -1, Tensor: -1, cause: context.Canceled}
	if !errors.Is(cancelled, ErrCancelled) || !errors.Is(cancelled, context.Canceled) {
		t.Error("a cancelled call matches both")
	}
	if !strings.Contains(Status(-199).String(), "UNKNOWN") || ErrJSON.String() != "TBLOB_E_JSON" {
		t.Error("Status.String")
	}
	if !strings.Contains(ErrTrailingBytes.Error(), "bytes after the last tensor") {
		t.Errorf("Status.Error() = %q", ErrTrailingBytes.Error())
	}
	if !errors.Is(ErrNoCgo, ErrFeatureDisabled) {
		t.Error("ErrNoCgo is a FEATURE_DISABLED error")
	}
}

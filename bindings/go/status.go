package tensorblob

import (
	"fmt"
	"strconv"
)

// Status is a status code of the C library: StatusOK (0) or a negative error. The numbers
// are pinned by the library; the Err* constants name them. A Status is itself an error, the
// sentinel that errors.Is compares an *Error against.
type Status int32

// String returns the C name, "TBLOB_E_DIGEST_MISMATCH"; a number this package does not know
// (a newer library) reads "TBLOB_E_UNKNOWN_STATUS(-N)".
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "TBLOB_E_UNKNOWN_STATUS(" + strconv.Itoa(int(s)) + ")"
}

// Error returns the C name and the header's description.
func (s Status) Error() string {
	if c, ok := statusComments[s]; ok {
		return "tensorblob: " + s.String() + ": " + c
	}
	return "tensorblob: " + s.String()
}

// Error is what every failing call returns.
type Error struct {
	Status  Status // the library's status; also what errors.Is matches
	Message string // the diagnostic message: names the tensor, field, blob or file
	Offset  int64  // byte offset in the file or buffer, -1 when none applies
	Tensor  int64  // index of the tensor concerned, -1 when none
	cause   error  // e.g. context.Canceled for a cancelled call
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		if c, ok := statusComments[e.Status]; ok {
			msg = c
		}
	}
	s := "tensorblob: " + e.Status.String()
	if msg != "" {
		s += ": " + msg
	}
	if e.Offset >= 0 && msg == "" {
		s += fmt.Sprintf(" (byte %d)", e.Offset)
	}
	return s
}

// Unwrap gives errors.Is/As the Status (and the context error of a cancelled call).
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Status, e.cause}
	}
	return []error{e.Status}
}

// ErrNoCgo is returned by every entry point of a build without cgo.
var ErrNoCgo = &Error{
	Status:  ErrFeatureDisabled,
	Message: "built without cgo (CGO_ENABLED=0): tensorblob needs cgo and the C library",
	Offset:  -1,
	Tensor:  -1,
}

// ErrClosed is returned by calls on a closed Model or Store.
var ErrClosed = &Error{Status: ErrInvalidArgument, Message: "use of a closed handle", Offset: -1, Tensor: -1}

// Family is what kind of failure a Status is (the C tblob_family; numbers pinned). The library
// says which through tblob_status_family: this package spells no number ranges.
type Family uint32

// The families (scripts/lists.py checks them against the header).
const (
	FamilyUnknown     Family = 0 // not a status of the linked library (or a build without cgo)
	FamilyOK          Family = 1
	FamilyArgument    Family = 2 // the call was wrong: argument, index, buffer size, kernel set
	FamilyMemory      Family = 3
	FamilyIO          Family = 4 // reading failed, or a file, blob or shard is missing
	FamilyNotFound    Family = 5
	FamilyFormat      Family = 6 // the bytes break their container's rules
	FamilyLimit       Family = 7
	FamilyDigest      Family = 8
	FamilyDequant     Family = 9
	FamilyUnsupported Family = 10
	FamilyCancelled   Family = 11
)

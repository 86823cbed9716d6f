package tensorblob

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// The C library reports a file it cannot open as ErrNotFound or ErrIO with the OS's text in
// the message, not the errno. Go callers test file errors with errors.Is(err,
// fs.ErrNotExist) and fs.ErrPermission (as os.Open's do), so a failed call on paths asks the
// OS again for the path the message names (then each path argument) and keeps the
// *fs.PathError it gets as the error's cause: errors.Is and errors.As(&*fs.PathError) then
// work, and errors.Is(err, ErrNotFound) still does.

// messagePathPrefixes are the library's messages that name a path it could not open or read
// ("cannot open %s: %s", lib/io/source.cpp and lib/formats/ollama).
var messagePathPrefixes = []string{
	"cannot open store root ",
	"cannot read source directory ",
	"cannot open ",
	"cannot stat ",
	"cannot read ",
}

// pathInMessage is the path of "cannot open PATH: REASON", or "".
func pathInMessage(msg string) string {
	for _, p := range messagePathPrefixes {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			if i := strings.LastIndex(rest, ": "); i > 0 {
				return rest[:i]
			}
			return ""
		}
	}
	return ""
}

// withFileCause gives a failed call on paths the file-system error behind it (see above).
// Errors of other statuses, or whose paths open fine now, are returned unchanged, except that
// ErrNotFound for a path the message names always matches fs.ErrNotExist.
func withFileCause(err error, paths ...string) error {
	var e *Error
	if !errors.As(err, &e) || e.cause != nil || (e.Status != ErrNotFound && e.Status != ErrIO) {
		return err
	}
	named := pathInMessage(e.Message)
	candidates := paths
	if named != "" {
		candidates = append([]string{named}, paths...)
	}
	for _, p := range candidates {
		if p == "" {
			continue
		}
		f, oerr := os.Open(p)
		if oerr == nil {
			f.Close()
			continue
		}
		if errors.Is(oerr, fs.ErrNotExist) || errors.Is(oerr, fs.ErrPermission) {
			e.cause = oerr
			return e
		}
	}
	if e.Status == ErrNotFound && named != "" {
		e.cause = fs.ErrNotExist
	}
	return e
}

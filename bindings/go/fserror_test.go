//go:build cgo

package tensorblob

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A missing file is os.ErrNotExist, as os.Open's error is, and still ErrNotFound; errors.As
// finds the *fs.PathError naming the file.
func TestMissingFileIsErrNotExist(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "absent.safetensors")
	check := func(what string, err error, path string) {
		t.Helper()
		if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v is not os.ErrNotExist", what, err)
		}
		if errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s: %v matches fs.ErrPermission", what, err)
		}
		var pe *fs.PathError
		if path != "" && (!errors.As(err, &pe) || pe.Path != path) {
			t.Errorf("%s: no *fs.PathError for %s in %v (%#v)", what, path, err, pe)
		}
		var e *Error
		if !errors.As(err, &e) || e.Message == "" {
			t.Errorf("%s: %v is not an *Error with the library's message", what, err)
		}
	}

	_, err := Open(missing)
	check("Open", err, missing)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Open: %v is no longer ErrNotFound", err)
	}
	_, err = OpenUQFF([]string{missing})
	check("OpenUQFF", err, missing)

	// A sharded index whose shard is gone: the shard is the missing file.
	index := filepath.Join(dir, "model.safetensors.index.json")
	if err := os.WriteFile(index, []byte(`{"metadata":{},"weight_map":{"w":"model-00001-of-00001.safetensors"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(index)
	check("Open(index with a missing shard)", err, filepath.Join(dir, "model-00001-of-00001.safetensors"))

	_, err = OpenStore(filepath.Join(dir, "no-store"))
	check("OpenStore", err, filepath.Join(dir, "no-store"))

	s, err := OpenStore(filepath.Join(dir, "store"), StoreCreate())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Import(context.Background(), "x:1", filepath.Join(dir, "no-source"))
	check("Store.Import", err, filepath.Join(dir, "no-source"))
}

// A file that exists but cannot be read is fs.ErrPermission (and ErrIO), never ErrNotExist.
func TestUnreadableFileIsErrPermission(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.safetensors")
	data, err := os.ReadFile(repoPath("examples", "tiny-llama", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o000); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(path); err == nil {
		// root reads a mode-000 file; a write-only sysctl is refused to root too.
		f.Close()
		path = "/proc/sys/vm/drop_caches"
		if f, err := os.Open(path); err == nil || !errors.Is(err, fs.ErrPermission) {
			if err == nil {
				f.Close()
			}
			t.Skipf("no file here that os.Open refuses with a permission error (running as root, %s: %v)", path, err)
		}
	}
	_, err = Open(path)
	if !errors.Is(err, fs.ErrPermission) || !errors.Is(err, os.ErrPermission) {
		t.Errorf("Open(%s): %v is not fs.ErrPermission", path, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(%s): %v matches fs.ErrNotExist", path, err)
	}
	if !errors.Is(err, ErrIO) {
		t.Errorf("Open(%s): %v is no longer ErrIO", path, err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("Open(%s): no *fs.PathError naming it in %v", path, err)
	}
}

// Errors that are not about a file match neither.
func TestFormatErrorIsNoFileError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.safetensors")
	if err := os.WriteFile(path, []byte("not a model at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		t.Errorf("Open(junk): %v", err)
	}
	if got := pathInMessage("cannot open /a: b/c: No such file or directory"); got != "/a: b/c" {
		t.Errorf("pathInMessage: %q", got)
	}
}

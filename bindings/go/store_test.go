//go:build cgo

package tensorblob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type manifestJSON struct {
	Config struct {
		Digest string `json:"digest"`
		Size   uint64 `json:"size"`
	} `json:"config"`
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      uint64 `json:"size"`
		Name      string `json:"name"`
	} `json:"layers"`
}

// exampleStore copies examples/ollama-store/store into a temporary directory.
func exampleStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	copyTree(t, repoPath("examples", "ollama-store", "store"), dir)
	return dir
}

// manifests reads the store's manifests with encoding/json: name -> (manifest, its bytes).
func manifests(t *testing.T, root string) map[string]manifestJSON {
	t.Helper()
	out := map[string]manifestJSON{}
	base := filepath.Join(root, "manifests")
	err := filepath.Walk(base, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		parts := strings.Split(rel, string(filepath.Separator))
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var m manifestJSON
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		out[strings.Join(parts[:3], "/")+":"+parts[3]] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openStore(t *testing.T, root string, opts ...StoreOption) *Store {
	t.Helper()
	s, err := OpenStore(root, opts...)
	if err != nil {
		t.Fatalf("OpenStore(%s): %v", root, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestStoreModels(t *testing.T) {
	root := exampleStore(t)
	s := openStore(t, root)
	got, err := s.Models()
	if err != nil {
		t.Fatal(err)
	}
	want := manifests(t, root)
	if len(got) != len(want) || len(got) != 2 {
		t.Fatalf("%d models, want %d", len(got), len(want))
	}
	for _, e := range got {
		m, ok := want[e.Name]
		if !ok || e.Err != nil {
			t.Errorf("unexpected %q (err %v)", e.Name, e.Err)
			continue
		}
		path := filepath.Join(append([]string{root, "manifests"}, strings.Split(strings.Replace(e.Name, ":", "/", 1), "/")...)...)
		if e.ManifestID != fileSHA256(t, path) {
			t.Errorf("%s: manifest id %s, sha256 of the file %s", e.Name, e.ManifestID, fileSHA256(t, path))
		}
		total := m.Config.Size
		for _, l := range m.Layers {
			total += l.Size
		}
		if e.TotalBytes != total || e.Layers != uint64(len(m.Layers)) || e.TensorLayers != uint64(len(m.Layers)) {
			t.Errorf("%s: total %d layers %d tensor layers %d, manifest says %d and %d", e.Name, e.TotalBytes, e.Layers, e.TensorLayers, total, len(m.Layers))
		}
		if !strings.HasPrefix(e.Name, "registry.ollama.ai/library/") || e.ShortName != strings.TrimPrefix(e.Name, "registry.ollama.ai/library/") {
			t.Errorf("name %q short %q", e.Name, e.ShortName)
		}
	}
	if s.Root() != root {
		t.Errorf("Root() = %q, want %q", s.Root(), root)
	}
}

func TestStoreVerify(t *testing.T) {
	root := exampleStore(t)
	s := openStore(t, root)
	digests := map[string]bool{}
	for _, m := range manifests(t, root) {
		digests[m.Config.Digest] = true
		for _, l := range m.Layers {
			digests[l.Digest] = true
		}
	}
	var last Progress
	calls := 0
	var blobs []BlobResult
	sum, err := s.Verify(context.Background(), func(p Progress) { last = p; calls++ },
		VerifyOnBlob(func(b BlobResult) { blobs = append(blobs, b) }))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Blobs != uint64(len(digests)) || sum.BlobsBad != 0 || sum.Manifests != 2 {
		t.Errorf("summary %+v, want %d blobs", sum, len(digests))
	}
	if calls == 0 || last.Done != last.Total || last.Total != uint64(len(digests)) {
		t.Errorf("%d progress calls, last %+v", calls, last)
	}
	if len(blobs) != len(digests) {
		t.Errorf("%d blob results, want %d", len(blobs), len(digests))
	}
	for _, b := range blobs {
		if b.Err != nil || b.ActualDigest != b.Digest || !digests[b.Digest] {
			t.Errorf("blob %+v", b)
		}
	}
}

// A damaged blob: ErrDigestMismatch naming the blob, with the digest its bytes really have.
func TestStoreVerifyDamagedBlob(t *testing.T) {
	root := exampleStore(t)
	m := manifests(t, root)["registry.ollama.ai/library/tiny-llama:latest"]
	bad := m.Layers[3].Digest
	path := filepath.Join(root, "blobs", strings.Replace(bad, ":", "-", 1))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0x40 // same size, different content
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	actual := "sha256:" + fileSHA256(t, path)

	s := openStore(t, root)
	var blobs []BlobResult
	sum, err := s.Verify(context.Background(), nil, VerifyOnBlob(func(b BlobResult) { blobs = append(blobs, b) }))
	if !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("Verify: %v, want ErrDigestMismatch", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrDigestMismatch || !strings.Contains(e.Message, bad[len("sha256:"):][:12]) ||
		!strings.Contains(e.Message, actual[len("sha256:"):][:12]) {
		t.Errorf("error %#v does not name %s and %s", err, bad, actual)
	}
	if sum.BlobsBad != 1 {
		t.Errorf("summary %+v, want one bad blob", sum)
	}
	found := false
	for _, r := range blobs {
		if r.Digest == bad {
			found = true
			if !errors.Is(r.Err, ErrDigestMismatch) || r.ActualDigest != actual || r.Path != path {
				t.Errorf("damaged blob result %+v, want actual %s at %s", r, actual, path)
			}
		} else if r.Err != nil {
			t.Errorf("intact blob %s reported %v", r.Digest, r.Err)
		}
	}
	if !found {
		t.Errorf("no result for %s", bad)
	}
	// One model: the damaged blob belongs to both tags.
	if _, err := s.Verify(context.Background(), nil, VerifyModel("tiny-llama:v1")); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("Verify(v1): %v", err)
	}
}

func TestStoreVerifyCancel(t *testing.T) {
	s := openStore(t, exampleStore(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := s.Verify(ctx, func(Progress) { cancel() }, VerifyThreads(1))
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify after cancel: %v, want ErrCancelled and context.Canceled", err)
	}
	// Already cancelled: nothing runs.
	_, err = s.Verify(ctx, func(Progress) { t.Error("progress called") })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Verify with a done context: %v", err)
	}
}

// A panic in a callback stops the C call and is raised again on the caller's goroutine.
func TestStoreCallbackPanic(t *testing.T) {
	s := openStore(t, exampleStore(t))
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
		if _, err := s.Models(); err != nil { // the store still works
			t.Error(err)
		}
	}()
	s.Verify(context.Background(), func(Progress) { panic("boom") })
	t.Error("Verify returned")
}

func TestStoreImportOpenModelGC(t *testing.T) {
	root := filepath.Join(t.TempDir(), "new-store")
	if _, err := OpenStore(root); err == nil {
		t.Fatal("OpenStore of a missing directory succeeded")
	}
	s := openStore(t, root, StoreCreate())
	var progress []Progress
	res, err := s.Import(context.Background(), "tiny:1", repoPath("examples", "tiny-llama"),
		ImportProgress(func(p Progress) { progress = append(progress, p) }))
	if err != nil {
		t.Fatal(err)
	}
	if !res.ManifestWritten || res.Tensors != 21 || res.BlobsWritten == 0 {
		t.Errorf("import %+v", res)
	}
	if len(progress) == 0 || progress[len(progress)-1].Done != 21 || progress[len(progress)-1].Total != 21 {
		t.Errorf("progress %+v", progress)
	}
	again, err := s.Import(context.Background(), "tiny:1", repoPath("examples", "tiny-llama"))
	if err != nil || again.ManifestWritten || again.BlobsWritten != 0 {
		t.Errorf("second import %+v, %v: want nothing written", again, err)
	}

	// The imported model holds the source's tensors, bytes as the Python package reads them.
	var want oracleFile
	for _, f := range loadOracle(t) {
		if f.Path == "examples/tiny-llama/model.safetensors" {
			want = f
		}
	}
	m, err := s.OpenModel("tiny:1")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Format() != FormatOllama || m.Len() != len(want.Tensors) {
		t.Fatalf("format %v, %d tensors", m.Format(), m.Len())
	}
	for _, w := range want.Tensors {
		tt, ok := m.Lookup(w.Name)
		if !ok {
			t.Errorf("missing %s", w.Name)
			continue
		}
		sum := sha256.Sum256(tt.Bytes())
		if tt.DType().String() != w.DType || !slices.Equal(tt.Shape(), w.Shape) || hex.EncodeToString(sum[:]) != w.SHA256 {
			t.Errorf("%s: %s %v %x", w.Name, tt.DType(), tt.Shape(), sum)
		}
	}
	md, err := m.Metadata()
	if err != nil || md["ollama.name"] != "registry.ollama.ai/library/tiny:1" {
		t.Errorf("metadata %v, %v", md, err)
	}
	if _, err := s.Verify(context.Background(), nil); err != nil {
		t.Errorf("verify after import: %v", err)
	}
	if _, err := s.OpenModel("absent:latest"); !errors.Is(err, ErrOllamaModelNotFound) {
		t.Errorf("OpenModel(absent): %v", err)
	}

	// GC: nothing to collect, then a stray blob listed by the dry run and removed by GCRemove.
	r, err := s.GC()
	if err != nil || len(r.Entries) != 0 || r.Manifests != 1 {
		t.Fatalf("gc on a clean store: %+v, %v", r, err)
	}
	stray := []byte("not referenced by any manifest")
	sum := sha256.Sum256(stray)
	strayName := fmt.Sprintf("sha256-%x", sum)
	strayPath := filepath.Join(root, "blobs", strayName)
	if err := os.WriteFile(strayPath, stray, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = s.GC()
	if err != nil || len(r.Entries) != 1 || r.Entries[0].FileName != strayName || r.Entries[0].Kind != GCUnreferenced ||
		r.Entries[0].Size != uint64(len(stray)) || r.Entries[0].Removed || r.ListedBytes != uint64(len(stray)) {
		t.Fatalf("dry run: %+v, %v", r, err)
	}
	if _, err := os.Stat(strayPath); err != nil {
		t.Fatalf("dry run removed the file: %v", err)
	}
	r, err = s.GC(GCRemove())
	if err != nil || r.RemovedFiles != 1 || len(r.Entries) != 1 || !r.Entries[0].Removed {
		t.Fatalf("remove: %+v, %v", r, err)
	}
	if _, err := os.Stat(strayPath); !os.IsNotExist(err) {
		t.Errorf("stray blob still there: %v", err)
	}
	m2, err := s.OpenModel("tiny:1") // the model's blobs were kept
	if err != nil {
		t.Fatalf("OpenModel after gc: %v", err)
	}
	m2.Close()
}

func TestStoreClosed(t *testing.T) {
	s, err := OpenStore(exampleStore(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.OpenModel("tiny-llama")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := s.Models(); err != ErrClosed {
		t.Errorf("Models after Close: %v", err)
	}
	if _, err := s.Verify(context.Background(), nil); err != ErrClosed {
		t.Errorf("Verify after Close: %v", err)
	}
	// The model outlives its store.
	if tt, ok := m.Lookup("lm_head.weight"); !ok || len(tt.Bytes()) != 512 {
		t.Errorf("model after store close: %v", ok)
	}
	m.Close()
}

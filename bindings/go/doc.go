// Package tensorblob reads model-weight containers (safetensors files and sharded
// checkpoints, Ollama stores, UQFF shard sets, SLM1 and GGUF files) through the tensorblob C library.
//
// Open detects the container by content; a Model lists its tensors (Tensors, Len, At,
// Lookup), hands out zero-copy views of their bytes (Tensor.Bytes) and dequantizes them
// into caller slices (Tensor.Dequantize, DequantizeF16, DequantizeBF16). OpenStore opens an
// Ollama model store for listing, verification, import and garbage collection.
//
// Every failure is an *Error carrying the library's Status, the diagnostic message and the
// byte offset; the Err* constants are the statuses, so errors.Is(err, ErrDigestMismatch)
// works. A Model and a Store are safe for concurrent use; Close is idempotent and waits for
// calls in progress.
//
// The package needs cgo and finds the library with pkg-config (package "tensorblob"). Built
// with CGO_ENABLED=0 it still compiles, and every entry point returns ErrNoCgo.
package tensorblob

//go:generate go run ./internal/statusgen/cmd -header ../../include/tensorblob.h -errors ../../docs/errors.md -out status_gen.go

//go:build cgo && tensorblob_static

package tensorblob

// -tags tensorblob_static: link libtensorblob.a. pkg-config --static adds the library's
// private dependencies (simdjson, libcrypto, libstdc++); point PKG_CONFIG_PATH at an
// installation that has only the static library (README.md, "Static linking").

// #cgo pkg-config: --static tensorblob
import "C"

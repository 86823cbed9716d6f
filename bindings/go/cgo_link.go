//go:build cgo && !tensorblob_static

package tensorblob

// The library is found through pkg-config: the installed tensorblob.pc, or for a build tree
// PKG_CONFIG_PATH=<builddir>/meson-uninstalled (see README.md; -tags tensorblob_static
// links libtensorblob.a instead, cgo_link_static.go).

// #cgo pkg-config: tensorblob
import "C"

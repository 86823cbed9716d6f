// Ollama as a table of operations (table/format_ops.h): store paths ("<root>/<model>[:tag]",
// a store root, <root>/manifests/<h>/<n>/<m>/<t>) claimed before any file is read, and a
// manifest outside a store layout told by its content (said so instead of being read as
// safetensors). A store model's rows carry the operations of their blobs' format.
#include "formats/ollama/ollama.h"
#include "table/format_ops.h"

namespace tblob {
namespace ollama {
namespace {

bool claims_path(const char *path, const Limits &limits, tblob_model **out, Status *st, const Diag &diag) {
  bool handled = false;
  *st = try_open_path(path, limits, out, &handled, diag);
  return handled;
}

ProbeResult probe(const uint8_t *head, size_t len, uint64_t, bool) {
  return looks_like_manifest(head, len) ? kProbeYes : kProbeNo;
}

Status open(const OpenRequest &r, tblob_model **out) {
  model_free(r.m);  // the manifest is read again by path, with its store around it
  return open_manifest_path(r.path, r.limits, out, r.diag);
}

constexpr FormatOps make() {
  FormatOps o;
  o.name = "ollama";
  o.format = TBLOB_FORMAT_OLLAMA;
  o.inputs = kInputPath;  // a store is a directory tree
  o.claims_path = &claims_path;
  o.probe = &probe;
  o.open = &open;
  return o;
}

}  // namespace

const FormatOps kFormat = make();

}  // namespace ollama
}  // namespace tblob

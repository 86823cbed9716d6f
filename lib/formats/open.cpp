#include "formats/open.h"

#include "formats/registry.h"
#include "formats/safetensors/safetensors.h"
#include "io/source.h"

namespace tblob {

namespace {

// The bytes of a path or buffer the probes see (the prefix detection always read of a file).
constexpr size_t kProbeWindow = 4096;
// A byte source's first read, enough for every magic.
constexpr uint64_t kSniffBytes = 8;

Status finish(tblob_model *m, Status s, tblob_model **out) {
  if (s != TBLOB_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

size_t window(const Source &src) { return src.len < kProbeWindow ? static_cast<size_t>(src.len) : kProbeWindow; }

// The one detection loop, whatever the input: m's file 0 is it (a mapped or read file, a
// borrowed buffer, a byte source with its first bytes read). The registry's probes in order,
// then a magic of a format left out, then the base container: a safetensors scan, whose
// table a format built on safetensors may still claim (a UQFF shard), and whose checks
// otherwise say precisely what is wrong.
Status detect(OpenInput input, const char *path, tblob_model *m, const Limits &limits, tblob_model **out,
              const Diag &diag) {
  Source &src = m->files[0].source;
  const bool from_source = input == kInputSource;
  Status s = TBLOB_OK;
  if (from_source && (s = source_grow_prefix(&src, kSniffBytes, m->alloc, "the first bytes", diag, true)) != TBLOB_OK)
    return finish(m, s, out);
  const OpenRequest req{input, path, m, limits, diag, false};
  size_t count;
  const FormatOps *const *registry = format_registry(&count);
  for (size_t k = 0; k < count; ++k) {
    const FormatOps &f = *registry[k];
    if (!(f.inputs & input) || !f.probe) continue;
    ProbeResult p = f.probe(src.data, window(src), source_total(src), from_source);
    if (p == kProbeMore && from_source) {
      if ((s = source_grow_prefix(&src, f.probe_bytes, m->alloc, "the first bytes", diag, true)) != TBLOB_OK)
        return finish(m, s, out);
      p = f.probe(src.data, window(src), source_total(src), false);
    }
    if (p == kProbeYes) return f.open(req, out);
  }
  if ((s = left_out_format(src.data, window(src), input, diag)) != TBLOB_OK) return finish(m, s, out);
  if (from_source) s = st_fetch_header(&src, limits, m->alloc, diag);
  if (s == TBLOB_OK) s = st_scan_single(m, limits, diag);
  if (s == TBLOB_OK) {
    const char *name = path ? path : m->files[0].path;
    for (size_t k = 0; k < count; ++k) {
      const FormatOps &f = *registry[k];
      if ((f.inputs & input) && f.claims_table && f.claims_table(m, name))
        return f.open(OpenRequest{input, path, m, limits, diag, true}, out);
    }
  }
  if (s == TBLOB_OK) s = st_finish_single(m, limits, diag);
  return finish(m, s, out);
}

}  // namespace

Status open_path(const char *path, const Limits &limits, tblob_model **out, const Diag &diag) {
  // Paths a format recognises before a file is read (a store path, a directory).
  size_t count;
  const FormatOps *const *registry = format_registry(&count);
  Status st;
  for (size_t k = 0; k < count; ++k)
    if ((registry[k]->inputs & kInputPath) && registry[k]->claims_path &&
        registry[k]->claims_path(path, limits, out, &st, diag))
      return st;
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  st = model_add_file(m, path, limits.mode, diag);
  if (st != TBLOB_OK) return finish(m, st, out);
  return detect(kInputPath, path, m, limits, out, diag);
}

Status open_memory(const void *buf, size_t len, const Limits &limits, tblob_model **out, const Diag &diag) {
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  const Status st = model_add_buffer(m, buf, len, diag);
  if (st != TBLOB_OK) return finish(m, st, out);
  return detect(kInputMemory, nullptr, m, limits, out, diag);
}

Status open_source(const tblob_byte_source *bs, const Limits &limits, tblob_model **out, const Diag &diag) {
  tblob_model *m = model_new(limits.allocator);
  if (!m) {
    if (bs->close) bs->close(bs->user);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  FileDesc f{};
  Status s = source_open_callback(bs, m->alloc, &f.source, diag);  // closes on failure
  if (s != TBLOB_OK) return finish(m, s, out);
  f.path = f.source.reader->name;
  f.path_len = f.source.reader->name_len;
  if (!m->files.push(f)) {
    source_close(&f.source, m->alloc);
    return finish(m, diag.fail_plain(TBLOB_E_OUT_OF_MEMORY), out);
  }
  return detect(kInputSource, nullptr, m, limits, out, diag);
}

}  // namespace tblob

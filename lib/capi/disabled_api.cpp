// Every function of include/tensorblob.h exists in every build: a part compiled out (meson
// options ollama/uqff/slm1) keeps its entry points, which return TBLOB_E_FEATURE_DISABLED
// (functions without a status return their "nothing" value), so bindings and programs link
// against any configuration and find out at run time. tests/capi/check_abi.py compares the
// exported symbols with the header's declarations in every CI configuration.
#include "capi/capi_common.h"
#include "tblob_config.h"

namespace {

[[maybe_unused]] tblob_status disabled(tblob_diag *diag, const char *what) {
  TBLOB_CAPI_BEGIN(d, diag);
  return d.fail(TBLOB_E_FEATURE_DISABLED, TBLOB_NO_OFFSET, -1, "this build of tensorblob has no %s",
                what);
}

}  // namespace

extern "C" {

#if !TBLOB_HAVE_OLLAMA
TBLOB_API tblob_status tblob_store_open(const char *root, const tblob_store_options *options,
                                        tblob_store **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)root; (void)options;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API void tblob_store_close(tblob_store *store) noexcept {
  (void)store;
}

TBLOB_API tblob_status tblob_store_root(const tblob_store *store, const char **path,
                                        size_t *path_len, tblob_diag *diag) noexcept {
  (void)store; (void)path; (void)path_len;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_ollama_name_canonical(const char *name, size_t name_len, char *buf,
                                                   size_t buf_capacity, size_t *out_len,
                                                   tblob_diag *diag) noexcept {
  (void)name; (void)name_len; (void)buf; (void)buf_capacity; (void)out_len;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_ollama_digest_check(const char *digest, size_t digest_len,
                                                 uint32_t form, tblob_diag *diag) noexcept {
  (void)digest; (void)digest_len; (void)form;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_store_list(const tblob_store *store, tblob_store_entry_fn fn,
                                        void *user, tblob_diag *diag) noexcept {
  (void)store; (void)fn; (void)user;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_store_manifest_open(const tblob_store *store, const char *name,
                                                 size_t name_len, tblob_manifest **out,
                                                 tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)store; (void)name; (void)name_len;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_manifest_parse(const void *buf, size_t len,
                                            const tblob_store_options *options,
                                            tblob_manifest **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)buf; (void)len; (void)options;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API void tblob_manifest_close(tblob_manifest *manifest) noexcept {
  (void)manifest;
}

TBLOB_API uint64_t tblob_manifest_layer_count(const tblob_manifest *manifest) noexcept {
  (void)manifest;
  return 0;
}

TBLOB_API tblob_status tblob_manifest_layer_at(const tblob_manifest *manifest, uint64_t index,
                                               tblob_layer_info *info, tblob_diag *diag) noexcept {
  (void)manifest; (void)index; (void)info;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_store_read_layer(const tblob_store *store,
                                              const tblob_manifest *manifest, uint64_t index,
                                              void *buf, size_t buf_capacity, size_t *out_len,
                                              tblob_diag *diag) noexcept {
  (void)store; (void)manifest; (void)index; (void)buf; (void)buf_capacity; (void)out_len;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_store_open_model(const tblob_store *store, const char *name,
                                              size_t name_len,
                                              const tblob_store_open_options *options,
                                              tblob_model **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)store; (void)name; (void)name_len; (void)options;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_store_verify(const tblob_store *store, const char *name,
                                          size_t name_len, const tblob_verify_options *options,
                                          tblob_verify_summary *summary,
                                          tblob_diag *diag) noexcept {
  (void)store; (void)name; (void)name_len; (void)options; (void)summary;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_verifier_open(const char *digest, size_t digest_len,
                                           uint64_t expected_size, tblob_verifier **out,
                                           tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)digest; (void)digest_len; (void)expected_size;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_verifier_update(tblob_verifier *verifier, const void *data, size_t len,
                                             tblob_diag *diag) noexcept {
  (void)verifier; (void)data; (void)len;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_verifier_final(tblob_verifier *verifier, char *actual_digest,
                                            size_t actual_digest_capacity,
                                            tblob_diag *diag) noexcept {
  (void)verifier; (void)actual_digest; (void)actual_digest_capacity;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API void tblob_verifier_close(tblob_verifier *verifier) noexcept {
  (void)verifier;
}

TBLOB_API tblob_status tblob_store_import(const tblob_store *store, const char *name,
                                          size_t name_len, const char *source_dir,
                                          const tblob_import_options *options,
                                          tblob_import_result *result, tblob_diag *diag) noexcept {
  (void)store; (void)name; (void)name_len; (void)source_dir; (void)options; (void)result;
  return disabled(diag, "Ollama stores (-Dollama)");
}

TBLOB_API tblob_status tblob_store_gc(const tblob_store *store, const tblob_gc_options *options,
                                      tblob_gc_result *result, tblob_diag *diag) noexcept {
  (void)store; (void)options; (void)result;
  return disabled(diag, "Ollama stores (-Dollama)");
}

#endif  // !TBLOB_HAVE_OLLAMA

#if !TBLOB_HAVE_UQFF
TBLOB_API tblob_status tblob_uqff_open(const char *const *paths, size_t path_count,
                                       const tblob_open_options *options, tblob_model **out,
                                       tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)paths; (void)path_count; (void)options;
  return disabled(diag, "UQFF (-Duqff)");
}

TBLOB_API tblob_status tblob_uqff_open_memory(const void *const *bufs, const size_t *lens,
                                              size_t count, const tblob_open_options *options,
                                              tblob_model **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)bufs; (void)lens; (void)count; (void)options;
  return disabled(diag, "UQFF (-Duqff)");
}

TBLOB_API tblob_status tblob_uqff_layer_info_at(const tblob_model *model, uint64_t index,
                                                tblob_uqff_layer_info *info,
                                                tblob_diag *diag) noexcept {
  (void)model; (void)index; (void)info;
  return disabled(diag, "UQFF (-Duqff)");
}

TBLOB_API tblob_status tblob_uqff_verify(const char *const *paths, size_t path_count,
                                         const tblob_open_options *options, tblob_uqff_report_fn fn,
                                         void *user, tblob_uqff_verify_result *result,
                                         tblob_diag *diag) noexcept {
  (void)paths; (void)path_count; (void)options; (void)fn; (void)user; (void)result;
  return disabled(diag, "UQFF (-Duqff)");
}

TBLOB_API tblob_status tblob_uqff_verify_memory(const void *const *bufs, const size_t *lens,
                                                size_t count, const tblob_open_options *options,
                                                tblob_uqff_report_fn fn, void *user,
                                                tblob_uqff_verify_result *result,
                                                tblob_diag *diag) noexcept {
  (void)bufs; (void)lens; (void)count; (void)options; (void)fn; (void)user; (void)result;
  return disabled(diag, "UQFF (-Duqff)");
}

TBLOB_API tblob_status tblob_uqff_detect(const char *path, int *is_uqff, tblob_diag *diag) noexcept {
  (void)path;
  if (is_uqff) *is_uqff = 0;
  return disabled(diag, "UQFF (-Duqff)");
}

#endif  // !TBLOB_HAVE_UQFF

#if !TBLOB_HAVE_SLM1
TBLOB_API tblob_status tblob_slm1_open_path(const char *path, const tblob_open_options *options,
                                            const tblob_slm1_open_options *slm1_options,
                                            tblob_model **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)path; (void)options; (void)slm1_options;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_open_memory(const void *buf, size_t len,
                                              const tblob_open_options *options,
                                              const tblob_slm1_open_options *slm1_options,
                                              tblob_model **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)buf; (void)len; (void)options; (void)slm1_options;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_header(const tblob_model *model, tblob_slm1_header_info *info,
                                         tblob_diag *diag) noexcept {
  (void)model; (void)info;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_tensor_at(const tblob_model *model, uint64_t index,
                                            tblob_slm1_tensor_info *info,
                                            tblob_diag *diag) noexcept {
  (void)model; (void)index; (void)info;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_find_hash(const tblob_model *model, uint64_t name_hash,
                                            uint64_t *index, tblob_diag *diag) noexcept {
  (void)model; (void)name_hash; (void)index;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_writer_options_from_config(tblob_slm1_writer_options *options,
                                                             const char *json, size_t json_len,
                                                             tblob_diag *diag) noexcept {
  (void)options; (void)json; (void)json_len;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_writer_new(const tblob_slm1_writer_options *options,
                                                tblob_slm1_writer **out,
                                                tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)options;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API void tblob_slm1_writer_free(tblob_slm1_writer *writer) noexcept {
  (void)writer;
}

TBLOB_API tblob_status tblob_slm1_writer_add_f32(tblob_slm1_writer *writer, const char *name,
                                                 size_t name_len, const uint64_t *shape,
                                                 uint32_t rank, const float *values,
                                                 uint64_t value_count, uint32_t dtype,
                                                 uint32_t block_size, tblob_diag *diag) noexcept {
  (void)writer; (void)name; (void)name_len; (void)shape; (void)rank; (void)values;
  (void)value_count; (void)dtype; (void)block_size;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_writer_add_encoded( tblob_slm1_writer *writer, const char *name,
                                                     size_t name_len, const uint64_t *shape,
                                                     uint32_t rank, uint32_t dtype,
                                                     uint32_t block_size, const void *payload,
                                                     size_t payload_length, const void *scales,
                                                     size_t scale_length,
                                                     tblob_diag *diag) noexcept {
  (void)writer; (void)name; (void)name_len; (void)shape; (void)rank; (void)dtype; (void)block_size;
  (void)payload; (void)payload_length; (void)scales; (void)scale_length;
  return disabled(diag, "SLM1 (-Dslm1)");
}

TBLOB_API tblob_status tblob_slm1_writer_finish(tblob_slm1_writer *writer, const char *path,
                                                tblob_diag *diag) noexcept {
  (void)writer; (void)path;
  return disabled(diag, "SLM1 (-Dslm1)");
}

#endif  // !TBLOB_HAVE_SLM1

#if !TBLOB_HAVE_GGUF
TBLOB_API tblob_status tblob_gguf_writer_open(const char *path, const tblob_gguf_writer_options *options,
                                              tblob_gguf_writer **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)path; (void)options;
  return disabled(diag, "GGUF (-Dgguf)");
}

TBLOB_API tblob_status tblob_gguf_writer_open_callback(tblob_gguf_write_fn fn, void *user,
                                                       const tblob_gguf_writer_options *options,
                                                       tblob_gguf_writer **out, tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  (void)fn; (void)user; (void)options;
  return disabled(diag, "GGUF (-Dgguf)");
}

TBLOB_API tblob_status tblob_gguf_writer_add_value(tblob_gguf_writer *writer, const char *key, size_t key_len,
                                                   const tblob_gguf_value *value, tblob_diag *diag) noexcept {
  (void)writer; (void)key; (void)key_len; (void)value;
  return disabled(diag, "GGUF (-Dgguf)");
}

TBLOB_API tblob_status tblob_gguf_writer_add_tensor(tblob_gguf_writer *writer, const char *name, size_t name_len,
                                                    const uint64_t *shape, uint32_t rank, uint32_t ggml_type,
                                                    uint64_t *data_bytes, tblob_diag *diag) noexcept {
  (void)writer; (void)name; (void)name_len; (void)shape; (void)rank; (void)ggml_type; (void)data_bytes;
  return disabled(diag, "GGUF (-Dgguf)");
}

TBLOB_API tblob_status tblob_gguf_writer_write(tblob_gguf_writer *writer, uint64_t tensor, const void *data,
                                               size_t length, tblob_diag *diag) noexcept {
  (void)writer; (void)tensor; (void)data; (void)length;
  return disabled(diag, "GGUF (-Dgguf)");
}

TBLOB_API tblob_status tblob_gguf_writer_finish(tblob_gguf_writer *writer, uint64_t *bytes_written,
                                                tblob_diag *diag) noexcept {
  (void)writer; (void)bytes_written;
  return disabled(diag, "GGUF (-Dgguf)");
}

TBLOB_API void tblob_gguf_writer_close(tblob_gguf_writer *writer) noexcept {
  (void)writer;
}
#endif  // !TBLOB_HAVE_GGUF
}  // extern "C"

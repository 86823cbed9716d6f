// One function per CLI command, each given its parsed command line (cli.h). Each returns the
// process exit code: 0 success, 1 invalid input found (diff: different), 2 usage error
// (diff: trouble).
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensorblob.h"

namespace tbcli {

constexpr int kExitOk = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;

struct Args;
class JsonWriter;

int cmd_inspect(const Args &a);         // files (cmd_inspect.cpp)
int cmd_verify_model(const Args &a, const char *path);  // `verify PATH` of a non-UQFF model
// inspect --json objects (cmd_inspect.cpp), shared with inspect --store: a model's tensors
// (with their file when `every_file` or the model has several) and metadata, or the error.
void json_model(JsonWriter &w, const char *path, const tblob_model *m, bool every_file);
void json_error(JsonWriter &w, const char *path, const tblob_diag &d);
// The last component of the path p[0..n) (its length in *len).
const char *base_name(const char *p, size_t n, size_t *len);
int cmd_dequant(const Args &a);         // any model, or --store DIR MODEL (cmd_dequant.cpp)
int cmd_diff(const Args &a);            // cmd_diff.cpp
// Ollama stores (cmd_ollama.cpp, when ollama is built).
int cmd_ls(const Args &a);
int cmd_verify(const Args &a);          // verify --store
int cmd_import(const Args &a);
int cmd_gc(const Args &a);
int cmd_store_inspect(const Args &a);   // inspect --store
// --layer SPEC (model, projector[:N], adapter[:N] or a manifest layer index) into store open
// options; false when SPEC is none of these.
bool parse_layer_spec(const char *spec, tblob_store_open_options *o);
// UQFF (cmd_uqff.cpp, when uqff is built): main.cpp routes `verify PATH` and `dequant PATH`
// here when tblob_uqff_detect says PATH is UQFF.
int cmd_uqff_verify(const Args &a, const char *path);
int cmd_uqff_dequant(const Args &a);
int cmd_convert(const Args &a);
int cmd_export(const Args &a);          // cmd_export.cpp
// Shared value parsers (cmd_dequant.cpp): "f32"/"f16"/"bf16" -> TBLOB_DTYPE_*; "A:B", "A:",
// ":B" -> [A, B) with B = TBLOB_ALL_ROWS when omitted.
uint32_t dtype_from_name(const char *name);
bool parse_rows(const char *s, uint64_t *begin, uint64_t *end);         // SLM1 writer (cmd_convert.cpp, when slm1 is built)
// "--threads N": 0 (one per CPU) to 4096.
bool parse_threads(const char *s, uint32_t *out);

}  // namespace tbcli

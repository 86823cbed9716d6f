// tensorblob: inspect, verify, diff, dequant, convert model-weight containers; ls, import, gc
// Ollama stores. The command table below is the single source of every command's options,
// --help, usage errors, completion scripts and (through gen_man.py) the man page.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "commands.h"
#include "http_source.h"
#include "json_writer.h"
#include "tblob_config.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

constexpr size_t kMany = SIZE_MAX;

int uqff_or(const char *path) {
#if TBLOB_HAVE_UQFF
  if (is_url(path)) return 0;  // a UQFF shard set is a directory: never a URL
  int yes = 0;
  return tblob_uqff_detect(path, &yes, nullptr) == TBLOB_OK && yes;
#else
  (void)path;
  return 0;
#endif
}

int run_inspect(const Args &a) {
  if (const int rc = prepare_remote(a, a.has("--store") ? 0 : kMany); rc >= 0) return rc;
#if TBLOB_HAVE_OLLAMA
  if (a.has("--store")) {
    if (a.has("--no-checksum")) return usage_error(*a.cmd, "--no-checksum applies to files, not --store");
    return cmd_store_inspect(a);
  }
  if (a.has("--layer")) return usage_error(*a.cmd, "--layer needs --store");
#endif
  return cmd_inspect(a);
}

int run_dequant(const Args &a) {
  if (!a.get("--out")) return usage_error(*a.cmd, "--out FILE is required (- for stdout)");
  if (a.json && std::strcmp(a.get("--out"), "-") == 0)
    return usage_error(*a.cmd, "--json writes the summary to stdout: give --out a file");
  if (const int rc = prepare_remote(a, a.has("--store") ? 0 : 1); rc >= 0) return rc;
  // Formats with their own dequant options (UQFF: --expert) go by what the path holds.
  if (!a.has("--store") && uqff_or(a.positional[0])) {
#if TBLOB_HAVE_UQFF
    return cmd_uqff_dequant(a);
#endif
  }
  if (a.has("--expert")) return usage_error(*a.cmd, "--expert applies to UQFF expert stacks only");
#if TBLOB_HAVE_OLLAMA
  if (a.has("--layer") && !a.has("--store")) return usage_error(*a.cmd, "--layer needs --store");
#endif
  return cmd_dequant(a);
}

int run_verify(const Args &a) {
#if TBLOB_HAVE_OLLAMA
  if (a.has("--store")) {
    if (a.positional.size() > 1) return usage_error(*a.cmd, "--store takes at most one MODEL[:TAG]");
    return cmd_verify(a);
  }
  if (a.has("--threads") || a.has("--map")) return usage_error(*a.cmd, "--threads and --map need --store");
#endif
  if (a.positional.empty()) return usage_error(*a.cmd, "missing arguments");
  if (const int r = prepare_remote(a, kMany); r >= 0) return r;
  int rc = kExitOk;
  for (const char *p : a.positional) {
    int r;
#if TBLOB_HAVE_UQFF
    if (uqff_or(p))
      r = cmd_uqff_verify(a, p);
    else
#endif
      r = cmd_verify_model(a, p);
    if (r > rc) rc = r;
  }
  return rc;
}

int run_diff(const Args &a) {
  if (const int rc = prepare_remote(a, 2); rc >= 0) return rc;
  return cmd_diff(a);
}

// Commands that write whole models read every byte: a URL is refused rather than fetched.
int no_urls(const Args &a) {
  for (const char *p : a.positional)
    if (is_url(p)) return usage_error(*a.cmd, "'%s': URLs are taken by inspect, verify, dequant and diff only", p);
  return -1;
}

int run_export(const Args &a) {
  if (const int rc = no_urls(a); rc >= 0) return rc;
  return cmd_export(a);
}

#if TBLOB_HAVE_SLM1
int run_convert(const Args &a) {
  if (const int rc = no_urls(a); rc >= 0) return rc;
  return cmd_convert(a);
}
#endif

// Whether tblob_features lists "<kind>:<name>".
bool has_feature(const char *kind, const char *name) {
  const size_t kl = std::strlen(kind);
  for (const char *const *f = tblob_features(nullptr); *f; ++f)
    if (std::strncmp(*f, kind, kl) == 0 && (*f)[kl] == ':' && std::strcmp(*f + kl + 1, name) == 0) return true;
  return false;
}

// version --json: every format the library knows (tblob_format_name) with whether this build
// has it, http (the CLI's own libcurl), the kernel sets compiled in and the one in use. All
// from the library's lists, so a new format appears here without a change to this file.
int run_version(const Args &a) {
  if (a.json) {
    JsonWriter w;
    w.lit("{\"version\":");
    w.str(tblob_version_string());
    w.lit(",\"features\":{");
    for (uint32_t f = 1; tblob_format_name(f) != nullptr; ++f) {
      w.str(tblob_format_name(f));
      w.raw(':');
      w.raw(has_feature("format", tblob_format_name(f)) ? "true," : "false,");
    }
    w.lit("\"http\":");
    w.raw(http_available() ? "true" : "false");
    w.lit("},\"kernels\":[");
    bool first = true;
    for (const char *const *f = tblob_features(nullptr); *f; ++f) {
      if (std::strncmp(*f, "kernel:", 7) != 0) continue;
      if (!first) w.raw(',');
      first = false;
      w.str(*f + 7);
    }
    w.lit("],\"kernel\":");
    w.str(tblob_kernel_active());
    w.raw('}');
    w.flush_line(stdout);
  } else {
    std::printf("tensorblob %s\n", tblob_version_string());
  }
  return kExitOk;
}

int run_completion(const Args &a) {
  std::string s;
  if (!completion_script(a.positional[0], &s)) return usage_error(*a.cmd, "unknown shell '%s'", a.positional[0]);
  if (a.json) {
    JsonWriter w;
    w.lit("{\"shell\":");
    w.str(a.positional[0]);
    w.lit(",\"script\":");
    w.str(s.data(), s.size());
    w.raw('}');
    w.flush_line(stdout);
  } else {
    std::fwrite(s.data(), 1, s.size(), stdout);
  }
  return kExitOk;
}

// The command table itself, for tools that drive the CLI.
void json_commands(const Command *only) {
  size_t n;
  const Command *t = commands(&n);
  JsonWriter w;
  w.lit("{\"version\":");
  w.str(tblob_version_string());
  w.lit(",\"commands\":[");
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    const Command &c = t[i];
    if (only && only != &c) continue;
    if (!first) w.raw(',');
    first = false;
    w.lit("{\"name\":");
    w.str(c.name);
    w.field("summary", c.summary);
    w.field("synopsis", c.synopsis);
    w.field_u64("min_arguments", c.min_positional);
    if (c.max_positional != kMany) w.field_u64("max_arguments", c.max_positional);
    w.lit(",\"options\":[");
    for (size_t k = 0; k < c.option_count; ++k) {
      const Option &o = c.options[k];
      if (k) w.raw(',');
      w.lit("{\"name\":");
      w.str(o.name);
      if (o.short_name) w.field("short", o.short_name);
      if (o.metavar) w.field("value", o.metavar);
      if (o.choices) w.field("choices", o.choices);
      w.field("help", o.help);
      w.raw('}');
    }
    w.lit("]}");
  }
  w.lit("]}");
  w.flush_line(stdout);
}

int run_help(const Args &a) {
  const Command *c = a.positional.empty() ? nullptr : find_command(a.positional[0]);
  if (!a.positional.empty() && !c) return usage_error(*a.cmd, "unknown command '%s'", a.positional[0]);
  if (a.json) {
    json_commands(c);
    return kExitOk;
  }
  if (a.positional.empty()) {
    print_main_help(stdout);
    return kExitOk;
  }
  print_command_help(*c, stdout);
  return kExitOk;
}

#define OPTS(x) x, sizeof(x) / sizeof(x[0])
#if TBLOB_HAVE_OLLAMA
#define STORE_OPTION(help) {"--store", nullptr, "DIR", help, Complete::kDir, nullptr},
#define LAYER_OPTION                                                                                      \
  {"--layer", nullptr, "SPEC", "--store: open this part of the model: model (default), projector[:N], " \
   "adapter[:N] or a manifest layer index", Complete::kNone, nullptr},
#else
#define STORE_OPTION(help)
#define LAYER_OPTION
#endif
// Commands that read files also read http(s) URLs (http_source.cpp).
#define HEADER_OPTION                                                                                       \
  {"--header", "-H", "HEADER", "URLs: send this request header, e.g. 'Authorization: Bearer TOKEN' (repeatable)", \
   Complete::kNone, nullptr},                                                                              \
  {"--cacert", nullptr, "FILE", "https URLs: trust the CAs in this PEM file instead of the system's "      \
   "(default: $CURL_CA_BUNDLE when set)", Complete::kFile, nullptr},

const Option kInspectOptions[] = {
    {"--no-checksum", nullptr, nullptr, "SLM1: skip only the checksum (every structural check stays)",
     Complete::kNone, nullptr},
    HEADER_OPTION
    STORE_OPTION("the arguments are models MODEL[:TAG] of this Ollama store")
    LAYER_OPTION};

const Option kExportOptions[] = {
    STORE_OPTION("MODEL is a model MODEL[:TAG] of this Ollama store")
    {"--dtype", nullptr, "keep|bf16|f16|f32", "values written: dequantized to this type (default bf16), or keep: "
     "stored bytes, MLX affine tensors in the mlx-community layout", Complete::kChoices, "keep bf16 f16 f32"},
    {"--max-shard-size", nullptr, "SIZE", "largest shard, e.g. 5GB (default), 500MB, 64KiB", Complete::kNone, nullptr},
};

const Option kDequantOptions[] = {
    {"--out", "-o", "FILE", "output file (raw little-endian values, row-major); - for stdout", Complete::kFile,
     nullptr},
    {"--to", nullptr, "f32|f16|bf16", "output type (default f32)", Complete::kChoices, "f32 f16 bf16"},
    {"--rows", nullptr, "A:B", "rows [A, B) of the logical tensor; A: and :B allowed (default all)",
     Complete::kNone, nullptr},
    {"--kernel", nullptr, "NAME", "kernel set (default: TBLOB_KERNEL or the best the host runs)",
     Complete::kChoices, "auto scalar avx2 avx512 neon"},
    {"--expert", nullptr, "N", "UQFF expert stacks: expert N (rows are then relative to it)", Complete::kNone,
     nullptr},
    {"--threads", nullptr, "N", "decoding threads (default 0: one per CPU; 1: this thread only)", Complete::kNone,
     nullptr},
    HEADER_OPTION
    STORE_OPTION("PATH is a model MODEL[:TAG] of this Ollama store")
    LAYER_OPTION};

#if TBLOB_HAVE_OLLAMA
const Option kVerifyOptions[] = {
    STORE_OPTION("verify the blobs of this Ollama store (all models, or MODEL[:TAG])")
    {"--threads", nullptr, "N", "--store: hashing threads (default one per CPU)", Complete::kNone, nullptr},
    {"--map", nullptr, nullptr, "--store: hash mapped files instead of read()", Complete::kNone, nullptr},
    HEADER_OPTION
};
#else
const Option kVerifyOptions[] = {HEADER_OPTION};
#endif
#define VERIFY_OPTIONS OPTS(kVerifyOptions)

const Option kDiffOptions[] = {
    {"--dequant", nullptr, nullptr, "also dequantize tensors of both models to f32 and report the max absolute "
     "and relative difference", Complete::kNone, nullptr},
    HEADER_OPTION
};

#if TBLOB_HAVE_OLLAMA
const Option kLsOptions[] = {STORE_OPTION("the Ollama store (required)")};
const Option kImportOptions[] = {
    STORE_OPTION("the Ollama store (required; created when missing)")
    {"--name", nullptr, "MODEL[:TAG]", "the model name (required)", Complete::kNone, nullptr},
};
const Option kGcOptions[] = {
    STORE_OPTION("the Ollama store (required)")
    {"--remove", nullptr, nullptr, "delete them (without it: a dry run that only lists)", Complete::kNone, nullptr},
};
#endif

#if TBLOB_HAVE_SLM1
const Option kConvertOptions[] = {
    {"--to", nullptr, "slm1|mlx", "output format (required)", Complete::kChoices, "slm1 mlx"},
    {"--dtype", nullptr, "f32|q8_0|q4_0|bf16|f16",
     "slm1: type of rank 2-4 tensors (default f32; rank 1 stays f32); mlx: the float type "
     "(default config.json's torch_dtype)",
     Complete::kChoices, "f32 q8_0 q4_0 bf16 f16"},
    {"--q-mode", nullptr, "affine|mxfp4|mxfp8|nvfp4", "mlx: quantization mode (default affine)", Complete::kChoices,
     "affine mxfp4 mxfp8 nvfp4"},
    {"--q-bits", nullptr, "B", "mlx: bits (default: the mode's, affine 4)", Complete::kNone, nullptr},
    {"--q-group-size", nullptr, "G", "mlx: group size (default: the mode's, affine 64)", Complete::kNone, nullptr},
    {"--block-size", nullptr, "N", "q4_0 block size (default 32)", Complete::kNone, nullptr},
    {"--config", nullptr, "FILE", "config.json to take the header from (default: beside SRC)", Complete::kFile,
     nullptr},
    {"--tokenizer", nullptr, "FILE", "a whole BTOK/BPE1 tokenizer section (default: byte tokenizer)",
     Complete::kFile, nullptr},
    {"--skip-integer", nullptr, nullptr, "leave integer and bool tensors out, naming each (SLM1 cannot hold them)",
     Complete::kNone, nullptr},
};
#endif

constexpr const Option *kNoOptions = nullptr;

const Command kCommands[] = {
    {"inspect",
     "[--json] [--no-checksum] [-H HEADER]... PATH|URL...\n[--json] --store DIR MODEL[:TAG]...",
     "format, tensors and metadata of each container",
     "Any container, detected by content: a safetensors file, a sharded checkpoint (directory\n"
     "or model.safetensors.index.json), an Ollama store model (STORE/MODEL[:TAG] or --store),\n"
     "a UQFF shard set or an SLM1 file. With --json: one JSON object per PATH, one per line.\n"
     "A PATH may be an http:// or https:// URL (a file, or a sharded checkpoint's index whose\n"
     "shards sit beside it): only the header bytes are fetched, with Range requests, and\n"
     "--json adds \"fetched\": {\"bytes\", \"requests\"}.\n",
     OPTS(kInspectOptions), 1, kMany, Complete::kFile, nullptr, run_inspect},
    {"dequant",
     "[--to f32|f16|bf16] [--rows A:B] [--threads N] [--kernel NAME] [--expert N] [-H HEADER]... --out FILE PATH|URL\n"
     "    TENSOR\n"
     "[--to f32|f16|bf16] [--rows A:B] [--threads N] --out FILE --store DIR MODEL[:TAG] TENSOR",
     "dequantize one tensor to raw little-endian values",
     "Writes the values of TENSOR (a quantized tensor with its companions, or a plain float\n"
     "tensor) as f32, f16 or bf16, streaming in chunks. A progress bar is drawn on a terminal\n"
     "for outputs larger than 16 MiB. --json prints a summary object. PATH may be an http:// or\n"
     "https:// URL: the header and then only this tensor's bytes (and its companions') are\n"
     "fetched.\n",
     OPTS(kDequantOptions), 2, 2, Complete::kFile, nullptr, run_dequant},
    {"export",
     "[--dtype keep|bf16|f16|f32] [--max-shard-size SIZE] [--json] PATH OUT_DIR\n"
     "[--dtype keep|bf16|f16|f32] [--max-shard-size SIZE] [--json] --store DIR MODEL[:TAG] OUT_DIR",
     "write a model as a Hugging Face safetensors directory",
     "Writes model-0000N-of-0000M.safetensors shards, model.safetensors.index.json and the\n"
     "config/tokenizer JSON files the source carries. Quantized tensors are dequantized (default\n"
     "bf16; their scale/bias companions are folded in); --dtype keep copies tensors as stored.\n"
     "Blobs of a store model are SHA-256 checked first. The output is built in OUT_DIR.tmp-PID\n"
     "and renamed to OUT_DIR when complete; an existing non-empty OUT_DIR is refused.\n",
     OPTS(kExportOptions), 2, 2, Complete::kFile, nullptr, run_export},
    {"verify",
#if TBLOB_HAVE_OLLAMA
     "--store DIR [MODEL[:TAG]] [--json] [--threads N] [--map]\n"
#endif
     "[--json] [-H HEADER]... PATH|URL...",
     "check every byte that can be checked",
     "With --store: the SHA-256 and size of every blob of the store (or of one model), naming\n"
     "each bad blob; a progress bar on a terminal. A PATH holding UQFF shards gets the\n"
     "per-layer UQFF report (family, bits, shard, problems). Any other PATH is opened with\n"
     "every check (SLM1 checksum included) and each quantized tensor's companions checked\n"
     "(a PATH may be an http:// or https:// URL: the header is fetched).\n",
     VERIFY_OPTIONS, 0, kMany, Complete::kFile, nullptr, run_verify},
    {"diff", "[--json] [--dequant] [-H HEADER]... A B",
     "tensor-level comparison of two models of any formats",
     "Reports tensors added (only in B), removed (only in A), with a changed dtype or shape,\n"
     "and with different bytes. With --dequant, tensors of both models are dequantized to\n"
     "f32 and compared by value: max_abs = max |a - b| and max_rel = max_abs / max |a| (the\n"
     "largest magnitude in A). Tensors are paired by name (SLM1, which stores only name hashes,\n"
     "is looked up by A's names). A or B may be an http:// or https:// URL: the bytes of the\n"
     "tensors compared are fetched. Exit status as diff(1): 0 equal, 1 different, 2 trouble.\n",
     OPTS(kDiffOptions), 2, 2, Complete::kFile, nullptr, run_diff},
#if TBLOB_HAVE_OLLAMA
    {"ls", "--store DIR [--json]", "models of an Ollama store", "", OPTS(kLsOptions), 0, 0, Complete::kNone,
     nullptr, cmd_ls},
    {"import", "--store DIR --name MODEL[:TAG] [--json] SRC_DIR",
     "add a safetensors directory to an Ollama store (as `ollama create`)",
     "Writes each tensor as a blob (de-duplicated by digest) and the manifest; a re-run is a\n"
     "no-op. A progress bar is drawn on a terminal.\n",
     OPTS(kImportOptions), 1, 1, Complete::kDir, nullptr, cmd_import},
    {"gc", "--store DIR [--remove] [--json]", "blobs no manifest references (dry run unless --remove)", "",
     OPTS(kGcOptions), 0, 0, Complete::kNone, nullptr, cmd_gc},
#endif
#if TBLOB_HAVE_SLM1
    {"convert",
     "--to slm1 [--dtype f32|q8_0|q4_0] [--block-size N] [--config FILE] [--tokenizer FILE] [--skip-integer] SRC OUT\n"
     "       --to mlx [--q-mode affine|mxfp4|mxfp8|nvfp4] [--q-bits B] [--q-group-size G] [--dtype bf16|f16|f32] SRC OUT_DIR",
     "safetensors (f32/f16/bf16) to SLM1, or to a quantized MLX directory",
     "slm1: header fields come from config.json beside SRC (or --config). The output is written\n"
     "atomically, then reopened and fully validated. A progress bar is drawn on a terminal.\n"
     "SLM1 holds f32, q8_0 and q4_0 only: a source with an integer or bool tensor (BERT's\n"
     "embeddings.position_ids) is refused unless --skip-integer leaves such tensors out.\n"
     "mlx: what mlx_lm.convert -q writes (docs/quantize.md, \"Converting to MLX\"): model.safetensors,\n"
     "config.json with the quantization blocks, the other files copied; OUT_DIR must not exist.\n",
     OPTS(kConvertOptions), 2, 2, Complete::kFile, nullptr, run_convert},
#endif
    {"completion", "bash|zsh|fish", "print a shell completion script",
     "bash: source it, or install it as /usr/share/bash-completion/completions/tensorblob.\n"
     "zsh: install it as _tensorblob in a directory of $fpath. fish: install it as\n"
     "~/.config/fish/completions/tensorblob.fish.\n",
     kNoOptions, 0, 1, 1, Complete::kChoices, "bash zsh fish", run_completion},
    {"version", "[--json]", "the library version (also tensorblob --version)", "", kNoOptions, 0, 0, 0,
     Complete::kNone, nullptr, run_version},
    {"help", "[COMMAND]", "this list, or a command's usage and options",
     "With --json: the command table (names, synopses, options, values, choices).\n", kNoOptions, 0, 0, 1,
     Complete::kNone, nullptr, run_help},
};

}  // namespace

const Command *commands(size_t *count) {
  *count = sizeof(kCommands) / sizeof(kCommands[0]);
  return kCommands;
}

}  // namespace tbcli

int main(int argc, char **argv) {
  using namespace tbcli;
  if (argc < 2) {
    print_main_help(stderr);
    return kExitUsage;
  }
  const char *name = argv[1];
  if (std::strcmp(name, "--version") == 0 || std::strcmp(name, "-V") == 0) name = "version";
  if (std::strcmp(name, "-h") == 0 || std::strcmp(name, "--help") == 0) {
    print_main_help(stdout);
    return kExitOk;
  }
  const Command *cmd = find_command(name);
  if (!cmd) {
    std::fprintf(stderr, "tensorblob: unknown command '%s'\n\n", name);
    print_main_help(stderr);
    return kExitUsage;
  }
  Args args;
  const int rc = parse_args(*cmd, argc - 2, argv + 2, &args);
  if (rc >= 0) return rc;
  return cmd->run(args);
}

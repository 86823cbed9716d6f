// tensorblob: inspect, verify, ls, dequant, import, convert model-weight containers.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "tblob_config.h"
#include "tensorblob.h"

namespace {

void usage(FILE *f) {
  std::fprintf(f,
               "usage: tensorblob <command> [options] ...\n"
               "\n"
               "commands:\n"
               "  inspect [--json] PATH...   format, tensors and metadata of each container\n"
               "  dequant [--to f32|f16|bf16] [--rows A:B] [--kernel NAME] --out FILE PATH TENSOR\n"
               "                             dequantize one tensor to raw little-endian values\n"
               "  ls --store DIR [--json]    models of an Ollama store\n"
               "  inspect [--json] --store DIR MODEL[:TAG]...\n"
               "                             every tensor of every blob of a store model\n"
               "  verify --store DIR [MODEL[:TAG]] [--json] [--threads N] [--map]\n"
               "                             SHA-256 and size of every blob; exit 1 naming bad ones\n"
               "  import --store DIR --name MODEL[:TAG] [--json] SRC_DIR\n"
               "                             add a safetensors directory to a store (ollama create)\n"
               "  gc --store DIR [--remove] [--json]\n"
               "                             blobs no manifest references (dry run unless --remove)\n"
               "  verify [--json] UQFF_DIR|SHARD...\n"
               "                             per-layer UQFF report (family, bits, shard); exit 1 on\n"
               "                             any structural or version problem\n"
               "  convert --to slm1 [--dtype f32|q8_0|q4_0] [--block-size N] SRC OUT\n"
               "                             safetensors (f32/f16/bf16) to SLM1; config.json beside SRC\n"
               "  version                    library version\n"
               "\n"
               "Formats are detected from content, never from file names.\n"
               "Exit status: 0 all valid, 1 some input invalid, 2 usage error.\n");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return tbcli::kExitUsage;
  }
  const char *cmd = argv[1];
  const auto is = [cmd](const char *name) { return std::strcmp(cmd, name) == 0; };
  int sub_argc = argc - 2;
  char **sub_argv = argv + 2;
  // Commands shared by several formats go to the format of their input first.
#if TBLOB_HAVE_UQFF
  if ((is("verify") || is("dequant")) && tbcli::uqff_cli_applies(sub_argc, sub_argv))
    return is("verify") ? tbcli::cmd_uqff_verify(sub_argc, sub_argv)
                        : tbcli::cmd_uqff_dequant(sub_argc, sub_argv);
#endif
#if TBLOB_HAVE_OLLAMA
  if (is("inspect") && tbcli::store_option_present(sub_argc, sub_argv))
    return tbcli::cmd_store_inspect(sub_argc, sub_argv);
#endif
  if (is("inspect")) return tbcli::cmd_inspect(sub_argc, sub_argv);
  if (is("dequant")) return tbcli::cmd_dequant(sub_argc, sub_argv);
#if TBLOB_HAVE_OLLAMA
  if (is("ls")) return tbcli::cmd_ls(sub_argc, sub_argv);
  if (is("verify")) return tbcli::cmd_verify(sub_argc, sub_argv);
  if (is("import")) return tbcli::cmd_import(sub_argc, sub_argv);
  if (is("gc")) return tbcli::cmd_gc(sub_argc, sub_argv);
#elif TBLOB_HAVE_UQFF
  if (is("verify")) return tbcli::cmd_uqff_verify(sub_argc, sub_argv);
#endif
#if TBLOB_HAVE_SLM1
  if (is("convert")) return tbcli::cmd_convert(sub_argc, sub_argv);
#endif
  if (std::strcmp(cmd, "version") == 0) {
    std::printf("tensorblob %s\n", tblob_version_string());
    return tbcli::kExitOk;
  }
  if (std::strcmp(cmd, "-h") == 0 || std::strcmp(cmd, "--help") == 0 || std::strcmp(cmd, "help") == 0) {
    usage(stdout);
    return tbcli::kExitOk;
  }
  std::fprintf(stderr, "tensorblob: unknown command '%s'\n", cmd);
  usage(stderr);
  return tbcli::kExitUsage;
}

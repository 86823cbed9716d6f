// tensorblob: inspect, verify, ls, dequant, import, convert model-weight containers.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "tensorblob.h"

namespace {

void usage(FILE *f) {
  std::fprintf(f,
               "usage: tensorblob <command> [options] ...\n"
               "\n"
               "commands:\n"
               "  inspect [--json] PATH...   format, tensors and metadata of each container\n"
               // @@cli-usage
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
  if (std::strcmp(cmd, "inspect") == 0) return tbcli::cmd_inspect(argc - 2, argv + 2);
  // @@cli-dispatch
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

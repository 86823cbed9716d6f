// One function per CLI command. Each returns the process exit code:
// 0 success, 1 invalid input found, 2 usage error.
#pragma once

namespace tbcli {

constexpr int kExitOk = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;

int cmd_inspect(int argc, char **argv);
// @@cli-commands

}  // namespace tbcli

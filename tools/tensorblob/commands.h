// One function per CLI command. Each returns the process exit code:
// 0 success, 1 invalid input found, 2 usage error.
#pragma once

namespace tbcli {

constexpr int kExitOk = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;

int cmd_inspect(int argc, char **argv);
int cmd_dequant(int argc, char **argv);
// Ollama stores (cmd_ollama.cpp, when ollama is built). `inspect --store` goes to
// cmd_store_inspect when store_option_present(argc, argv).
int cmd_ls(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_store_inspect(int argc, char **argv);
bool store_option_present(int argc, char **argv);
// UQFF (cmd_uqff.cpp, when uqff is built): `verify` and `dequant` for UQFF inputs.
// uqff_cli_applies(argc, argv): the first path argument is a UQFF directory or shard.
int cmd_uqff_verify(int argc, char **argv);
int cmd_uqff_dequant(int argc, char **argv);
bool uqff_cli_applies(int argc, char **argv);
int cmd_convert(int argc, char **argv);  // SLM1 writer (cmd_convert.cpp, when slm1 is built)

}  // namespace tbcli

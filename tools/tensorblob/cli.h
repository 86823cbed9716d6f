// The command table and the one argument parser every command goes through. `--help` of each
// command, the messages for bad options and the bash/zsh/fish completion scripts are all
// generated from the table (main.cpp), so they cannot drift apart.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tbcli {

// How a shell completes a value or a positional argument.
enum class Complete { kNone, kFile, kDir, kChoices };

struct Option {
  const char *name;        // "--to"
  const char *short_name;  // "-o" or nullptr
  const char *metavar;     // "FILE"; nullptr for a flag
  const char *help;
  Complete complete;
  const char *choices;     // space-separated allowed values (kChoices), checked by the parser
};

struct Args;
using RunFn = int (*)(const Args &);

struct Command {
  const char *name;
  const char *synopsis;    // usage lines after "tensorblob NAME ", '\n' between forms
  const char *summary;     // one line for the command list
  const char *details;     // paragraphs for `NAME --help` and the man page (may be "")
  const Option *options;
  size_t option_count;
  size_t min_positional, max_positional;
  Complete positional;     // how positional arguments complete
  const char *positional_choices;  // kChoices: space-separated values
  RunFn run;
};

// The parsed command line of one command.
struct Args {
  const Command *cmd = nullptr;
  std::vector<const char *> positional;
  std::vector<const char *> values;  // per option of cmd, nullptr when absent (the last given)
  std::vector<std::vector<const char *>> all_values;  // per option: every value given, in order
  std::vector<bool> present;
  bool json = false;                 // --json (every command has it)

  bool has(const char *name) const;
  const char *get(const char *name) const;  // the value, or nullptr when absent
  std::vector<const char *> get_all(const char *name) const;  // a repeatable option's values
};

// The command table (main.cpp) and its size.
const Command *commands(size_t *count);
const Command *find_command(const char *name);

// Parses argv (after the command name). Returns -1 when args holds a command line to run,
// else the exit code: 0 after printing --help, 2 after a usage error on stderr.
int parse_args(const Command &cmd, int argc, char **argv, Args *args);
// "tensorblob CMD: MESSAGE" and the command's usage on stderr; returns kExitUsage.
int usage_error(const Command &cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void print_command_help(const Command &cmd, FILE *f);
void print_usage_lines(const Command &cmd, FILE *f);
void print_main_help(FILE *f);
// Completion script for "bash", "zsh" or "fish"; false for another shell.
bool completion_script(const char *shell, std::string *out);

extern const char kExitCodesText[];

}  // namespace tbcli

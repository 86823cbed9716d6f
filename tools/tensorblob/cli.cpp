// The table-driven parser, help text and completion scripts (see cli.h).
#include "cli.h"

#include <cstdarg>
#include <cstring>

#include "commands.h"

namespace tbcli {

const char kExitCodesText[] =
    "exit status:\n"
    "  0  success: every input valid (diff: the models are equal)\n"
    "  1  some input is invalid or a check failed (diff: the models differ)\n"
    "  2  usage error: unknown command or option, missing or bad argument (diff: trouble,\n"
    "     e.g. a model that cannot be opened)\n";

namespace {

const Option kJsonOption = {"--json", nullptr, nullptr, "machine-readable output (JSON on stdout)",
                            Complete::kNone, nullptr};
const Option kHelpOption = {"--help", "-h", nullptr, "this help", Complete::kNone, nullptr};

bool in_choices(const char *choices, const char *v) {
  const size_t n = std::strlen(v);
  for (const char *p = choices; *p;) {
    const char *e = std::strchr(p, ' ');
    const size_t len = e ? static_cast<size_t>(e - p) : std::strlen(p);
    if (len == n && std::strncmp(p, v, n) == 0) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}

std::string choices_text(const char *choices) {
  std::string s(choices);
  for (char &c : s)
    if (c == ' ') c = '|';
  return s;
}

// "  -o, --out FILE" column of the option list.
std::string option_label(const Option &o) {
  std::string s = "  ";
  if (o.short_name) s += std::string(o.short_name) + ", ";
  s += o.name;
  if (o.metavar) s += std::string(" ") + o.metavar;
  return s;
}

void print_option(const Option &o, FILE *f) {
  const std::string label = option_label(o);
  if (label.size() < 24)
    std::fprintf(f, "%-24s%s\n", label.c_str(), o.help);
  else
    std::fprintf(f, "%s\n%-24s%s\n", label.c_str(), "", o.help);
}

}  // namespace

bool Args::has(const char *name) const {
  for (size_t i = 0; i < cmd->option_count; ++i)
    if (std::strcmp(cmd->options[i].name, name) == 0) return present[i];
  return std::strcmp(name, "--json") == 0 && json;
}

const char *Args::get(const char *name) const {
  for (size_t i = 0; i < cmd->option_count; ++i)
    if (std::strcmp(cmd->options[i].name, name) == 0) return values[i];
  return nullptr;
}

std::vector<const char *> Args::get_all(const char *name) const {
  for (size_t i = 0; i < cmd->option_count; ++i)
    if (std::strcmp(cmd->options[i].name, name) == 0) return all_values[i];
  return {};
}

const Command *find_command(const char *name) {
  size_t n;
  const Command *t = commands(&n);
  for (size_t i = 0; i < n; ++i)
    if (std::strcmp(t[i].name, name) == 0) return &t[i];
  return nullptr;
}

void print_usage_lines(const Command &cmd, FILE *f) {
  const char *p = cmd.synopsis;
  bool first = true;
  while (*p) {
    const char *e = std::strchr(p, '\n');
    const size_t len = e ? static_cast<size_t>(e - p) : std::strlen(p);
    std::fprintf(f, "%s tensorblob %s %.*s\n", first ? "usage:" : "      ", cmd.name, static_cast<int>(len), p);
    first = false;
    p += len;
    if (*p) ++p;
  }
  if (first) std::fprintf(f, "usage: tensorblob %s\n", cmd.name);
}

int usage_error(const Command &cmd, const char *fmt, ...) {
  std::fprintf(stderr, "tensorblob %s: ", cmd.name);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  print_usage_lines(cmd, stderr);
  std::fprintf(stderr, "Try 'tensorblob %s --help'.\n", cmd.name);
  return kExitUsage;
}

int parse_args(const Command &cmd, int argc, char **argv, Args *a) {
  a->cmd = &cmd;
  a->values.assign(cmd.option_count, nullptr);
  a->present.assign(cmd.option_count, false);
  a->all_values.assign(cmd.option_count, {});
  bool options_done = false;
  for (int i = 0; i < argc; ++i) {
    const char *s = argv[i];
    if (options_done || s[0] != '-' || s[1] == '\0') {
      a->positional.push_back(s);
      continue;
    }
    if (std::strcmp(s, "--") == 0) {
      options_done = true;
      continue;
    }
    if (std::strcmp(s, "-h") == 0 || std::strcmp(s, "--help") == 0) {
      print_command_help(cmd, stdout);
      return kExitOk;
    }
    if (std::strcmp(s, "--json") == 0) {
      a->json = true;
      continue;
    }
    // --name=value or --name [value]
    const char *eq = s[1] == '-' ? std::strchr(s, '=') : nullptr;
    const size_t name_len = eq ? static_cast<size_t>(eq - s) : std::strlen(s);
    size_t k = 0;
    for (; k < cmd.option_count; ++k) {
      const Option &o = cmd.options[k];
      if ((std::strlen(o.name) == name_len && std::strncmp(o.name, s, name_len) == 0) ||
          (o.short_name && !eq && std::strcmp(o.short_name, s) == 0))
        break;
    }
    if (k == cmd.option_count) return usage_error(cmd, "unknown option '%.*s'", static_cast<int>(name_len), s);
    const Option &o = cmd.options[k];
    a->present[k] = true;
    if (!o.metavar) {
      if (eq) return usage_error(cmd, "option %s takes no value", o.name);
      continue;
    }
    const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : nullptr);
    if (!v) return usage_error(cmd, "option %s needs a value (%s)", o.name, o.metavar);
    if (o.complete == Complete::kChoices && o.choices && !in_choices(o.choices, v))
      return usage_error(cmd, "%s must be one of %s, not '%s'", o.name, choices_text(o.choices).c_str(), v);
    a->values[k] = v;
    a->all_values[k].push_back(v);
  }
  if (a->positional.size() < cmd.min_positional) return usage_error(cmd, "missing arguments");
  if (a->positional.size() > cmd.max_positional)
    return usage_error(cmd, "unexpected argument '%s'", a->positional[cmd.max_positional]);
  if (cmd.positional == Complete::kChoices && cmd.positional_choices)
    for (const char *p : a->positional)
      if (!in_choices(cmd.positional_choices, p))
        return usage_error(cmd, "'%s' is not one of %s", p, choices_text(cmd.positional_choices).c_str());
  return -1;
}

void print_command_help(const Command &cmd, FILE *f) {
  print_usage_lines(cmd, f);
  std::fprintf(f, "\n%s\n", cmd.summary);
  if (cmd.details && cmd.details[0]) std::fprintf(f, "\n%s", cmd.details);
  std::fprintf(f, "\noptions:\n");
  for (size_t i = 0; i < cmd.option_count; ++i) print_option(cmd.options[i], f);
  print_option(kJsonOption, f);
  print_option(kHelpOption, f);
  std::fprintf(f, "\n%s", kExitCodesText);
}

void print_main_help(FILE *f) {
  std::fprintf(f,
               "usage: tensorblob <command> [options] [arguments]\n"
               "       tensorblob --version | --help\n"
               "\n"
               "Open, validate, compare and dequantize model-weight containers. Formats are detected\n"
               "from content, never from file names.\n"
               "formats in this build:");
  // The library's own list (tblob_features), so a format added there shows here.
  const char *sep = " ";
  for (const char *const *feat = tblob_features(nullptr); *feat; ++feat) {
    if (std::strncmp(*feat, "format:", 7) != 0) continue;
    std::fprintf(f, "%s%s", sep, *feat + 7);
    sep = ", ";
  }
  std::fprintf(f, ".\n\ncommands:\n");
  size_t n;
  const Command *t = commands(&n);
  for (size_t i = 0; i < n; ++i) std::fprintf(f, "  %-12s%s\n", t[i].name, t[i].summary);
  std::fprintf(f,
               "\n"
               "'tensorblob COMMAND --help' shows a command's usage and options. Every command takes\n"
               "--json. Progress bars are drawn on stderr only when it is a terminal; colour only on a\n"
               "terminal and never when NO_COLOR is set. Sizes are decimal (1 MB = 1,000,000 bytes).\n"
               "\n%s",
               kExitCodesText);
}

// ---- completion scripts ----------------------------------------------------------------

namespace {

// Every option of a command as the shell sees it (the table's, then --json and --help).
std::vector<const Option *> all_options(const Command &c) {
  std::vector<const Option *> v;
  for (size_t i = 0; i < c.option_count; ++i) v.push_back(&c.options[i]);
  v.push_back(&kJsonOption);
  v.push_back(&kHelpOption);
  return v;
}

std::string replace_all(std::string s, const char *from, const char *to) {
  const size_t fl = std::strlen(from), tl = std::strlen(to);
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += tl) s.replace(p, fl, to);
  return s;
}

// Inside single quotes in sh/zsh: ' becomes '\''.
std::string sq(const std::string &s) { return replace_all(s, "'", "'\\''"); }

std::string bash_script() {
  size_t n;
  const Command *t = commands(&n);
  std::string s =
      "# bash completion for tensorblob (generated by `tensorblob completion bash`)\n"
      "_tensorblob() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      "  COMPREPLY=()\n"
      "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
      "    COMPREPLY=($(compgen -W '";
  for (size_t i = 0; i < n; ++i) s += std::string(t[i].name) + " ";
  s += "--help --version' -- \"$cur\"))\n"
       "    return\n"
       "  fi\n"
       "  case \"${COMP_WORDS[1]}\" in\n";
  for (size_t i = 0; i < n; ++i) {
    const Command &c = t[i];
    s += std::string("    ") + c.name + ")\n      case \"$prev\" in\n";
    std::string words;
    for (const Option *o : all_options(c)) {
      words += std::string(o->name) + " ";
      if (o->short_name) words += std::string(o->short_name) + " ";
      if (!o->metavar) continue;
      std::string pat = o->name;
      if (o->short_name) pat += std::string("|") + o->short_name;
      std::string action;
      switch (o->complete) {
        case Complete::kFile: action = "COMPREPLY=($(compgen -f -- \"$cur\"))"; break;
        case Complete::kDir: action = "COMPREPLY=($(compgen -d -- \"$cur\"))"; break;
        case Complete::kChoices: action = "COMPREPLY=($(compgen -W '" + sq(o->choices) + "' -- \"$cur\"))"; break;
        case Complete::kNone: action = ":"; break;
      }
      s += "        " + pat + ") " + action + "; return ;;\n";
    }
    s += "      esac\n";
    s += "      if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W '" + words + "' -- \"$cur\")); return; fi\n";
    switch (c.positional) {
      case Complete::kFile: s += "      COMPREPLY=($(compgen -f -- \"$cur\"))\n"; break;
      case Complete::kDir: s += "      COMPREPLY=($(compgen -d -- \"$cur\"))\n"; break;
      case Complete::kChoices:
        s += "      COMPREPLY=($(compgen -W '" + sq(c.positional_choices) + "' -- \"$cur\"))\n";
        break;
      case Complete::kNone: break;
    }
    s += "      ;;\n";
  }
  s += "  esac\n"
       "}\n"
       "complete -o filenames -F _tensorblob tensorblob\n";
  return s;
}

// A zsh _arguments description: [ ] : and \ are special inside the brackets.
std::string zsh_desc(const char *help) {
  std::string s;
  for (const char *p = help; *p; ++p) {
    if (*p == '[' || *p == ']' || *p == ':' || *p == '\\') s += '\\';
    s += *p;
  }
  return sq(s);
}

std::string zsh_action(Complete c, const char *choices, const char *metavar) {
  std::string m = metavar ? metavar : "value";
  m = replace_all(m, ":", "\\:");
  switch (c) {
    case Complete::kFile: return ":" + sq(m) + ":_files";
    case Complete::kDir: return ":" + sq(m) + ":_files -/";
    case Complete::kChoices: return ":" + sq(m) + ":(" + sq(choices) + ")";
    case Complete::kNone: return ":" + sq(m) + ": ";
  }
  return "";
}

std::string zsh_script() {
  size_t n;
  const Command *t = commands(&n);
  std::string s =
      "#compdef tensorblob\n"
      "# zsh completion for tensorblob (generated by `tensorblob completion zsh`)\n"
      "_tensorblob() {\n"
      "  local -a cmds\n"
      "  cmds=(\n";
  for (size_t i = 0; i < n; ++i)
    s += std::string("    '") + t[i].name + ":" + sq(replace_all(t[i].summary, ":", "\\:")) + "'\n";
  s += "  )\n"
       "  if (( CURRENT == 2 )); then\n"
       "    _describe -t commands 'tensorblob command' cmds\n"
       "    return\n"
       "  fi\n"
       "  local cmd=$words[2]\n"
       "  shift words\n"
       "  (( CURRENT-- ))\n"
       "  case $cmd in\n";
  for (size_t i = 0; i < n; ++i) {
    const Command &c = t[i];
    s += std::string("    ") + c.name + ")\n      _arguments -s";
    for (const Option *o : all_options(c)) {
      const std::string act = o->metavar ? zsh_action(o->complete, o->choices, o->metavar) : "";
      if (o->short_name)
        s += std::string(" '(") + o->short_name + " " + o->name + ")'{" + o->short_name + "," + o->name + "}'[" +
             zsh_desc(o->help) + "]" + act + "'";
      else
        s += std::string(" '") + o->name + "[" + zsh_desc(o->help) + "]" + act + "'";
    }
    switch (c.positional) {
      case Complete::kFile: s += " '*:path:_files'"; break;
      case Complete::kDir: s += " '*:directory:_files -/'"; break;
      case Complete::kChoices: s += std::string(" '1:argument:(") + sq(c.positional_choices) + ")'"; break;
      case Complete::kNone: break;
    }
    s += "\n      ;;\n";
  }
  s += "  esac\n"
       "}\n"
       "_tensorblob \"$@\"\n";
  return s;
}

// Inside single quotes in fish: \ and ' are escaped with a backslash.
std::string fq(const char *v) {
  std::string s;
  for (const char *p = v; *p; ++p) {
    if (*p == '\\' || *p == '\'') s += '\\';
    s += *p;
  }
  return s;
}

std::string fish_script() {
  size_t n;
  const Command *t = commands(&n);
  std::string s =
      "# fish completion for tensorblob (generated by `tensorblob completion fish`)\n"
      "complete -c tensorblob -f\n"
      "complete -c tensorblob -n '__fish_use_subcommand' -l version -d 'library version'\n"
      "complete -c tensorblob -n '__fish_use_subcommand' -s h -l help -d 'help'\n";
  for (size_t i = 0; i < n; ++i)
    s += std::string("complete -c tensorblob -n '__fish_use_subcommand' -a ") + t[i].name + " -d '" +
         fq(t[i].summary) + "'\n";
  for (size_t i = 0; i < n; ++i) {
    const Command &c = t[i];
    const std::string cond = std::string("-n '__fish_seen_subcommand_from ") + c.name + "'";
    for (const Option *o : all_options(c)) {
      s += "complete -c tensorblob " + cond + " -l " + (o->name + 2);
      if (o->short_name) s += std::string(" -s ") + (o->short_name + 1);
      if (o->metavar) {
        switch (o->complete) {
          case Complete::kFile: s += " -r -F"; break;
          case Complete::kDir: s += " -r -x -a '(__fish_complete_directories)'"; break;
          case Complete::kChoices: s += std::string(" -x -a '") + fq(o->choices) + "'"; break;
          case Complete::kNone: s += " -x"; break;
        }
      }
      s += std::string(" -d '") + fq(o->help) + "'\n";
    }
    switch (c.positional) {
      case Complete::kFile: s += "complete -c tensorblob " + cond + " -F\n"; break;
      case Complete::kDir: s += "complete -c tensorblob " + cond + " -x -a '(__fish_complete_directories)'\n"; break;
      case Complete::kChoices:
        s += "complete -c tensorblob " + cond + " -x -a '" + fq(c.positional_choices) + "'\n";
        break;
      case Complete::kNone: break;
    }
  }
  return s;
}

}  // namespace

bool completion_script(const char *shell, std::string *out) {
  if (std::strcmp(shell, "bash") == 0) *out = bash_script();
  else if (std::strcmp(shell, "zsh") == 0) *out = zsh_script();
  else if (std::strcmp(shell, "fish") == 0) *out = fish_script();
  else return false;
  return true;
}

}  // namespace tbcli

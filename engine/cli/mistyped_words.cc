// What a mistyped command line gets (mistyped_words.h).
#include "engine/cli/mistyped_words.h"

#include <algorithm>
#include <cstdio>

#include "engine/base/strings.h"

namespace provisioner::cli {
namespace {

// The first word that is not an option: the command ("" when none).
std::string FirstWord(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--log-level") {
      ++i;
      continue;
    }
    if (!args[i].empty() && args[i][0] == '-') continue;
    return args[i];
  }
  return "";
}

// The nearest of `names` to `word` within a third of its length (at least
// 2 edits); "" when none is that near.
std::string Nearest(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& n : names) {
    const size_t d = EditDistance(word, n);
    if (d < best_d) {
      best = n;
      best_d = d;
    }
  }
  return best;
}

// "dryrun" of "--dryrun" or "--dryrun=1"; "" for what is no long option.
std::string OptionWord(const std::string& arg) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) return "";
  return arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
}

}  // namespace

// `provisioner dicover` (and `help dicover`, `dicover --help`): an unknown
// command, with the nearest one (kubectl), exit 1; CLI11 would say "A
// subcommand is required" or print the main help and exit 0.
bool KnownCommand(const CLI::App& app, const std::vector<std::string>& args) {
  const std::string word = FirstWord(args);
  if (word.empty()) return true;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == word) return true;
    names.push_back(sub->get_name());
  }
  std::string near = Nearest(word, names);
  std::fprintf(stderr,
               "provisioner: unknown command \"%s\"%s\nRun 'provisioner --help' for usage.\n",
               word.c_str(), near.empty() ? "" : ("; did you mean \"" + near + "\"?").c_str());
  return false;
}

// The option of `sub` (or a global one) nearest to `arg` ("--dryrun" ->
// "--dry-run"); "" when none is near or `arg` is no option.
std::string NearestOption(const CLI::App& app, const CLI::App* sub, const std::string& arg) {
  const std::string word = OptionWord(arg);
  if (word.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::App* a : {&app, sub}) {
    if (a == nullptr) continue;
    for (const CLI::Option* o : a->get_options()) {
      if (o->get_group().empty()) continue;  // hidden
      for (const std::string& n : o->get_lnames()) names.push_back(n);
    }
  }
  const std::string near = Nearest(word, names);
  return near.empty() ? "" : "--" + near;
}

// `plan --dryrun`, `plan --rollback`: an option (or the one nearest to
// `arg`) that only another subcommand has: "--dry-run is an option of
// `provisioner apply`"; "" when none has it.
std::string OptionOfAnother(const CLI::App& app, const CLI::App* sub, const std::string& arg) {
  const std::string word = OptionWord(arg);
  if (sub == nullptr || word.empty()) return "";
  for (const CLI::App* other : app.get_subcommands({})) {
    if (other == sub) continue;
    std::vector<std::string> names;
    for (const CLI::Option* o : other->get_options()) {
      if (o->get_group().empty()) continue;  // hidden
      for (const std::string& n : o->get_lnames()) names.push_back(n);
    }
    const bool exact = std::find(names.begin(), names.end(), word) != names.end();
    const std::string near = exact ? word : Nearest(word, names);
    if (!near.empty())
      return "--" + near + " is an option of `provisioner " + other->get_name() + "`";
  }
  return "";
}

}  // namespace provisioner::cli

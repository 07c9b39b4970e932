// yaml-cpp's parser errors in plain words, pointing at the line to fix.
#ifndef PROVISIONER_ENGINE_CONFIG_YAML_SYNTAX_MESSAGE_H_
#define PROVISIONER_ENGINE_CONFIG_YAML_SYNTAX_MESSAGE_H_

#include <optional>
#include <string>
#include <string_view>

#include "yaml-cpp/mark.h"

namespace provisioner::config {

// " (tabs are not allowed ...)" when the error's line is indented with a
// tab; "" otherwise.
std::string TabHint(std::string_view text, const YAML::Mark& mark);

// yaml-cpp's parser message `msg` in plain words. For the block-structure
// ones, which mean "this line is not where its indentation puts it", the
// line is compared with the lines above it.
std::string PlainSyntaxMessage(std::string_view text, const YAML::Mark& mark,
                               const std::string& msg);

// A key typed without its colon ("- name pf0", then a deeper line): the
// error belongs to that line, 1-based, with the fix. nullopt when the
// error at `mark` is something else.
struct LocatedMessage {
  int line = 0;
  int column = 0;
  std::string message;
};
std::optional<LocatedMessage> MissingColon(std::string_view text, const YAML::Mark& mark,
                                           const std::string& msg);

// A key followed by a flow mapping or sequence without its colon
// ("nicSelector { vendor: 15b3 }", "rootDevices [...]"): yaml-cpp reads it
// as a key "nicSelector { vendor" or fails lines later (an indentation
// error). The first such line, its column just after the key, with the fix;
// lines of block scalars ("|", ">") are text and never match.
std::optional<LocatedMessage> MissingColonBeforeFlow(std::string_view text);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_YAML_SYNTAX_MESSAGE_H_

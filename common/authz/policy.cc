#include "common/authz/policy.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fencegate::authz {
namespace {

// Splits a line into words: runs of non-blanks, or "..." (which may hold
// blanks, and no quote). A word starting with # ends the line.
absl::StatusOr<std::vector<std::string>> Words(absl::string_view line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (true) {
    while (i < line.size() && absl::ascii_isspace(static_cast<unsigned char>(line[i])))
      ++i;
    if (i == line.size() || line[i] == '#') return words;
    if (line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      if (close == absl::string_view::npos) {
        return absl::InvalidArgumentError("a quote (\") is not closed");
      }
      words.emplace_back(line.substr(i + 1, close - i - 1));
      i = close + 1;
      if (i < line.size() && !absl::ascii_isspace(static_cast<unsigned char>(line[i]))) {
        return absl::InvalidArgumentError("a closing quote (\") must end its word");
      }
      continue;
    }
    const size_t start = i;
    while (i < line.size() && !absl::ascii_isspace(static_cast<unsigned char>(line[i]))) {
      if (line[i] == '"') {
        return absl::InvalidArgumentError("a quote (\") may only start a word");
      }
      ++i;
    }
    words.emplace_back(line.substr(start, i - start));
  }
}

absl::StatusOr<PolicyRule> ParseRule(const std::vector<std::string>& words) {
  if (words[0] != "allow") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown rule '", absl::CHexEscape(words[0]),
        "': a rule is 'allow <identity> <permission>[,...] <resource prefix>'"));
  }
  if (words.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'allow' takes 3 words (<identity> <permission>[,...] <resource prefix>), "
        "this line has ",
        words.size() - 1, " (quote an identity that holds spaces)"));
  }
  PolicyRule rule;
  rule.identity = words[1];
  if (rule.identity.empty()) {
    return absl::InvalidArgumentError("the identity is empty (write * for everyone)");
  }
  for (absl::string_view name : absl::StrSplit(words[2], ',')) {
    if (name == "all") {
      rule.permissions.set();
      continue;
    }
    std::optional<Permission> permission = PermissionNamed(name);
    if (!permission.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown permission '", absl::CHexEscape(name),
                       "' (known: ", PermissionNames(), ", all)"));
    }
    rule.permissions.set(static_cast<size_t>(*permission));
  }
  absl::string_view prefix = words[3];
  if (prefix == "*") prefix = "";
  if (absl::EndsWith(prefix, "*")) prefix.remove_suffix(1);
  if (prefix.find('*') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resource prefix '", absl::CHexEscape(words[3]),
        "': `*` may only end it (a prefix covers every name that starts with it)"));
  }
  rule.prefix = std::string(prefix);
  if (!rule.prefix.empty()) {
    for (const PermissionInfo& info : AllPermissions()) {
      if (!info.per_resource &&
          rule.permissions.test(static_cast<size_t>(info.permission))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "permission '", info.name,
            "' concerns no resource: grant it on every resource (*), not on '",
            absl::CHexEscape(words[3]), "'"));
      }
    }
  }
  return rule;
}

}  // namespace

bool GlobMatches(absl::string_view pattern, absl::string_view text) {
  // Iterative, with one backtrack point: linear enough for subjects.
  size_t p = 0, t = 0;
  size_t star = absl::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::StatusOr<Policy> Policy::Parse(absl::string_view text, absl::string_view origin) {
  Policy policy;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    absl::StatusOr<std::vector<std::string>> words = Words(line);
    if (words.ok() && words->empty()) continue;
    absl::StatusOr<PolicyRule> rule = words.ok() ? ParseRule(*words) : words.status();
    if (!rule.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", number, ": ", rule.status().message()));
    }
    rule->line = number;
    policy.rules_.push_back(*std::move(rule));
  }
  return policy;
}

absl::StatusOr<Policy> Policy::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the policy file ", path, " (--policy)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the policy file ", path, " (--policy)"));
  }
  return Parse(text.str(), path);
}

bool Policy::Allows(absl::string_view identity, Permission permission,
                    absl::string_view resource) const {
  for (const PolicyRule& rule : rules_) {
    if (rule.permissions.test(static_cast<size_t>(permission)) &&
        absl::StartsWith(resource, rule.prefix) && GlobMatches(rule.identity, identity)) {
      return true;
    }
  }
  return false;
}

}  // namespace fencegate::authz

#include "report.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>

namespace vkc::conformance {
namespace {

struct Tally {
  int pass = 0, fail = 0, unsupported = 0;
  void add(Status s) { (s == Status::Pass ? pass : s == Status::Fail ? fail : unsupported)++; }
  int total() const { return pass + fail + unsupported; }
};

// The first `n` bytes of s, shortened to end on a whole UTF-8 character, then an ellipsis.
std::string clip(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a character
  return s.substr(0, n) + "…";
}

// The reason without case-specific names, so that equal causes group together.
std::string reason_key(const std::string& detail) {
  static const std::regex quoted("'[^']*'");
  static const std::regex count("^[0-9]+ node");
  std::string s = std::regex_replace(detail, quoted, "'…'");
  s = std::regex_replace(s, count, "N node");
  if (auto colon = s.find("error: "); colon != std::string::npos) s = s.substr(colon + 7);
  return clip(s, 140);
}

std::string cell(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return clip(s, 160);
}

}  // namespace

nlohmann::ordered_json to_json(const CaseResult& r) {
  return {{"folder", r.folder},   {"name", r.name},       {"status", status_name(r.status)},
          {"detail", r.detail},   {"ops", r.ops},         {"folded", r.folded},
          {"compiled", r.compiled}, {"max_abs", r.max_abs}, {"max_rel", r.max_rel},
          {"seconds", r.seconds}};
}

CaseResult from_json(const nlohmann::json& j) {
  CaseResult r;
  r.folder = j.at("folder");
  r.name = j.at("name");
  const std::string s = j.at("status");
  r.status = s == "pass" ? Status::Pass : s == "fail" ? Status::Fail : Status::Unsupported;
  r.detail = j.at("detail");
  r.ops = j.at("ops").get<std::vector<std::string>>();
  r.folded = j.at("folded").get<std::vector<std::string>>();
  r.compiled = j.at("compiled");
  r.max_abs = j.at("max_abs").is_number() ? j.at("max_abs").get<double>() : INFINITY;
  r.max_rel = j.at("max_rel").is_number() ? j.at("max_rel").get<double>() : INFINITY;
  r.seconds = j.at("seconds");
  return r;
}

nlohmann::ordered_json report_json(const std::vector<CaseResult>& results, const CaseOptions& o) {
  std::map<std::string, Tally> folders;
  for (const auto& r : results) folders[r.folder].add(r.status);
  nlohmann::ordered_json j = {{"backend", o.backend}, {"rtol", o.rtol}, {"atol", o.atol}};
  for (const auto& [f, t] : folders)
    j["totals"][f] = {{"cases", t.total()}, {"pass", t.pass}, {"fail", t.fail}, {"unsupported", t.unsupported}};
  j["cases"] = nlohmann::json::array();
  for (const auto& r : results) j["cases"].push_back(to_json(r));
  return j;
}

std::string report_markdown(const std::vector<CaseResult>& results, const CaseOptions& o) {
  std::map<std::string, Tally> folders, ops;
  Tally all;
  std::map<std::string, int> reasons;
  for (const auto& r : results) {
    folders[r.folder].add(r.status);
    all.add(r.status);
    for (const auto& op : r.ops) ops[op].add(r.status);
    if (r.status == Status::Unsupported) ++reasons[reason_key(r.detail)];
  }
  std::string md = fmt::format("Backend `{}`, rtol {}, atol {}.\n\n", o.backend, o.rtol, o.atol);
  md += "| folder | cases | pass | fail | unsupported |\n|---|---:|---:|---:|---:|\n";
  for (const auto& [f, t] : folders) md += fmt::format("| {} | {} | {} | {} | {} |\n", f, t.total(), t.pass, t.fail, t.unsupported);
  md += fmt::format("| **all** | {} | {} | {} | {} |\n", all.total(), all.pass, all.fail, all.unsupported);
  Tally folded;
  for (const auto& r : results)
    if (!r.folded.empty()) folded.add(r.status);
  md += fmt::format("\n{} cases had weight inputs folded into constants; {} of them pass.\n", folded.total(), folded.pass);

  md += "\n### Failing cases\n\n";
  int failing = 0;
  for (const auto& r : results)
    if (r.status == Status::Fail) {
      md += fmt::format("- `{}/{}`: {}\n", r.folder, r.name, cell(r.detail));
      ++failing;
    }
  if (!failing) md += "None.\n";

  md += "\n### Most common reasons a case is unsupported\n\n| cases | reason (names elided) |\n|---:|---|\n";
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [k, n] : reasons) sorted.emplace_back(-n, k);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size() && i < 25; ++i) md += fmt::format("| {} | {} |\n", -sorted[i].first, cell(sorted[i].second));

  md += "\n### Per ONNX operator\n\nA case counts once for every operator its model holds.\n\n";
  md += "| operator | cases | pass | fail | unsupported |\n|---|---:|---:|---:|---:|\n";
  for (const auto& [op, t] : ops) md += fmt::format("| {} | {} | {} | {} | {} |\n", op, t.total(), t.pass, t.fail, t.unsupported);
  return md;
}

void update_doc_section(const std::filesystem::path& doc, const std::string& name, const std::string& content) {
  const std::string begin = fmt::format("<!-- {}:begin -->", name), end = fmt::format("<!-- {}:end -->", name);
  std::string text;
  if (std::ifstream f(doc); f) text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  const std::string block = begin + "\n" + content + end;
  const size_t b = text.find(begin), e = text.find(end);
  if (b != std::string::npos && e != std::string::npos && e > b) text.replace(b, e + end.size() - b, block);
  else text += (text.empty() || text.back() == '\n' ? "" : "\n") + block + "\n";
  std::ofstream out(doc, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text)) throw std::runtime_error(fmt::format("cannot write {}", doc.string()));
}

}  // namespace vkc::conformance

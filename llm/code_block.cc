// Fenced code blocks in an LLM reply (code_block.h).

#include "llm/code_block.h"

#include <cctype>
#include <optional>
#include <vector>

namespace kestrel {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsBlank(std::string_view text) {
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return text;
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// A fence opens or closes a block: three or more of ` or ~ at the line's start
// (after indentation). Returns the fence character and its length.
struct Fence {
  char mark = 0;
  std::size_t length = 0;
  std::string_view info;  // the rest of the line (language tag)
};

std::optional<Fence> ParseFence(std::string_view line) {
  line = TrimLeft(line);
  if (line.empty() || (line.front() != '`' && line.front() != '~')) return std::nullopt;
  Fence fence;
  fence.mark = line.front();
  while (fence.length < line.size() && line[fence.length] == fence.mark) ++fence.length;
  if (fence.length < 3) return std::nullopt;
  fence.info = TrimRight(TrimLeft(line.substr(fence.length)));
  return fence;
}

struct Block {
  std::string code;
  bool closed = false;
};

std::vector<Block> SplitBlocks(const std::string& text) {
  std::vector<Block> blocks;
  std::optional<Fence> open;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    const std::optional<Fence> fence = ParseFence(line);
    if (!open) {
      if (fence) {
        open = fence;
        blocks.push_back({});
      }
    } else if (fence && fence->mark == open->mark && fence->length >= open->length &&
               fence->info.empty()) {
      blocks.back().closed = true;
      open.reset();
    } else {
      blocks.back().code.append(line);
      blocks.back().code.push_back('\n');
    }
    if (end == text.size()) break;
    at = end + 1;
  }
  return blocks;
}

}  // namespace

bool DefinesFunction(std::string_view code, std::string_view entry) {
  if (entry.empty()) return false;
  for (std::size_t at = code.find(entry); at != std::string_view::npos;
       at = code.find(entry, at + 1)) {
    const std::size_t after = at + entry.size();
    if (at > 0 && IsIdentChar(code[at - 1])) continue;
    if (after < code.size() && IsIdentChar(code[after])) continue;
    std::size_t i = after;
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    if (i >= code.size() || code[i] != '(') continue;
    int depth = 0;  // skip the balanced parameter list
    for (; i < code.size(); ++i) {
      if (code[i] == '(') ++depth;
      if (code[i] == ')' && --depth == 0) break;
    }
    if (i >= code.size()) continue;
    ++i;
    // Qualifiers (const, noexcept, override, attributes) may stand before `{`.
    while (i < code.size()) {
      if (std::isspace(static_cast<unsigned char>(code[i])) || IsIdentChar(code[i])) {
        ++i;
      } else if (code[i] == '{') {
        return true;
      } else {
        break;
      }
    }
  }
  return false;
}

namespace {

std::vector<Block> BlocksOf(std::string_view reply) {
  std::string text;
  text.reserve(reply.size());
  for (char c : reply) {
    if (c != '\r') text.push_back(c);
  }
  return SplitBlocks(text);
}

}  // namespace

Result<std::vector<std::string>> ExtractVariants(std::string_view reply, std::string_view entry, std::size_t limit) {
  const std::vector<Block> blocks = BlocksOf(reply);
  std::vector<std::string> variants;
  for (const Block& block : blocks) {
    if (variants.size() == limit) break;
    if (block.closed && !IsBlank(block.code) && DefinesFunction(block.code, entry)) variants.push_back(block.code);
  }
  if (!variants.empty()) return variants;
  auto only = ExtractCode(reply, entry);
  if (!only) return Fail(only.error());
  return std::vector<std::string>{std::move(*only)};
}

Result<std::string> ExtractCode(std::string_view reply, std::string_view entry) {
  const std::vector<Block> blocks = BlocksOf(reply);
  if (blocks.empty()) return Fail(Error::NotFound("the reply has no fenced code block"));
  if (!blocks.back().closed) {
    return Fail(Error::InvalidArgument(
        "the reply ends inside an unterminated code block (truncated reply?)"));
  }
  const Block* only = nullptr;
  int non_empty = 0;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (IsBlank(it->code)) continue;
    if (DefinesFunction(it->code, entry)) return it->code;
    if (non_empty++ == 0) only = &*it;
  }
  if (non_empty == 0) return Fail(Error::InvalidArgument("the reply's code block is empty"));
  if (non_empty == 1 || entry.empty()) return only->code;
  return Fail(Error::NotFound("the reply has " + std::to_string(non_empty) +
                              " code blocks and none defines `" + std::string(entry) + "`"));
}

}  // namespace kestrel

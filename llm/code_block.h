#pragma once
// Taking the kernel source out of an LLM's reply (LLM.md "Parsing a response").

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kestrel {

// The code of the last fenced block (``` or ~~~, any or no language tag) that
// defines the function `entry` (its name, a parameter list, then a body), or
// of the only non-empty block when none does. CRLF line ends become LF; prose
// around the blocks is ignored. An empty `entry` takes the last non-empty block.
//
// Fails with kNotFound when the reply has no fenced block, or several blocks
// and none defines `entry`; with kInvalidArgument when the reply ends inside an
// unterminated block (a truncated reply) or every block is empty. The message
// says which, for the LLM call's record.
Result<std::string> ExtractCode(std::string_view reply, std::string_view entry);

// Every variant of a reply asked for several (LLM.md, "variants"): the code
// of each non-empty block that defines `entry`, in the reply's order, at most
// `limit`; when none does, ExtractCode's one block. Fails as ExtractCode does.
Result<std::vector<std::string>> ExtractVariants(std::string_view reply, std::string_view entry, std::size_t limit);

// Whether `code` contains a definition of the function `entry`:
// `entry (...)` followed, after qualifiers such as const or noexcept, by `{`.
bool DefinesFunction(std::string_view code, std::string_view entry);

}  // namespace kestrel

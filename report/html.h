#pragma once
// Small pieces every part of the report's HTML uses. Everything that comes
// from the database (sources, logs, LLM replies, mutations, notes) is hostile
// text: it enters the page only through Escape, which leaves no tag, entity
// or attribute quote alive, so it shows as text.

#include <cstdint>
#include <string>
#include <string_view>

namespace kestrel::report {

// &, <, >, " and ' as entities; invalid UTF-8 as U+FFFD.
std::string Escape(std::string_view text);

std::string Speedup(double speedup);        // "2.31x"
std::string Percent(double fraction);       // "23.4%"; "-" for 0
std::string Number(double value, int digits = 2);
std::string Timestamp(std::int64_t millis);  // "2026-12-02 14:37:40 UTC"; "-" for 0
std::string Duration(double seconds);        // "1h 02m", "3m 05s", "12.3 s"
// The in-page anchor of a node's page: "node-12".
std::string NodeAnchor(std::int64_t node_id);
// <a href="#node-12">#12</a>
std::string NodeLink(std::int64_t node_id);

}  // namespace kestrel::report

#pragma once
// The messages of one session of a run (search/session_events.h) on stderr:
// what `kestrel run`, `resume` and `eval` say while they prepare.

#include <iosfwd>

#include "search/session_events.h"

namespace kestrel::cli {

// Handlers that print each event on `out` (which must outlive them); after
// `unconfined`, every line they print starts with "[NO SANDBOX] ".
SessionEvents PrintSessionEvents(std::ostream& out);

}  // namespace kestrel::cli

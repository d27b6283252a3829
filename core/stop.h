#pragma once
// The process-wide stop request, set by SIGINT/SIGTERM (CONTRACT.md: the
// first stops proposing and lets in-flight work finish; a second exits at
// once). Async-signal-safe.

namespace kestrel {

// Installs handlers for SIGINT and SIGTERM: the first signal requests a stop,
// the second calls _exit(130).
void InstallStopHandlers();
void RequestStop();
bool StopRequested();
// For tests: forget earlier requests.
void ResetStop();

}  // namespace kestrel

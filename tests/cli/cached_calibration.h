#pragma once
// This host's calibration for a database the CLI tests are about to create.
// Every fresh database makes its first run measure the host (about five seconds
// on a quiet machine, more on a busy one); the tests whose subject is not
// the calibration take the figures from the user's cache instead (measured
// once per machine, as `kestrel eval` without a database does), recorded in
// the database as a run would record them.

#include <doctest.h>

#include <filesystem>

#include "core/host.h"
#include "evaluators/calibration.h"
#include "store/store.h"
#include "tests/testing.h"

namespace kestrel::testing {

// Creates `db` with this host and its single-thread calibration (the cpu
// evaluator's default compiler and thread count).
inline void RecordCachedCalibration(const std::filesystem::path& db) {
  static const HostInfo host = DetectHost();
  static const Result<Calibration> calibration = CachedCalibration("c++", 1, host);
  REQUIRE_MESSAGE(calibration.has_value(), "the cached calibration: " << testing::ErrorOf(calibration));
  auto store = Store::Open(db);
  REQUIRE_MESSAGE(store.has_value(), db.string() << ": " << testing::ErrorOf(store));
  const auto host_id = (*store)->UpsertHost(host);
  REQUIRE_MESSAGE(host_id.has_value(), testing::ErrorOf(host_id));
  const auto recorded = (*store)->AddCalibration(*host_id, *calibration);
  REQUIRE_MESSAGE(recorded.has_value(), testing::ErrorOf(recorded));
}

}  // namespace kestrel::testing

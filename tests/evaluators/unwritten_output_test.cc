// UnwrittenOutput (evaluators/runner/call_layout.h): the look, while the
// candidate is frozen after a timed sample, for outputs of its last call
// still holding their poison, at the edges and at places it cannot know.

#include <cstring>
#include <vector>

#include <doctest.h>

#include "evaluators/runner/call_layout.h"

namespace kestrel::runner {
namespace {

JobShape Shape(ScalarType type, std::int64_t count) {
  JobShape shape;
  shape.label = "n=" + std::to_string(count);
  JobArg x;
  x.name = "x";
  x.role = ArgRole::kInput;
  x.type = type;
  x.count = count;
  JobArg y = x;
  y.name = "y";
  y.role = ArgRole::kOutput;
  shape.args = {x, y};
  return shape;
}

struct Call {
  JobShape shape;
  Placement placement;
  std::vector<std::byte> memory;
  Call(ScalarType type, std::int64_t count) : shape(Shape(type, count)) {
    placement = Place(shape, [](ArgRole role) { return role != ArgRole::kInput; });
    memory.resize(placement.bytes);
    PoisonOutputs(shape, memory.data(), placement, 0);
  }
  float* y() { return reinterpret_cast<float*>(memory.data() + placement.offsets[1]); }
  std::string Unwritten(std::uint64_t places) const {
    return UnwrittenOutput(shape, memory.data(), placement, 0, places);
  }
};

TEST_SUITE("unwritten_output") {
  TEST_CASE("a float output with its edges written and its middle not is found at places drawn afresh") {
    Call call(ScalarType::kF32, 100000);
    CHECK(call.Unwritten(7) == "y");  // nothing written
    for (int i = 0; i < 100000; i += 99999) call.y()[i] = 1.0f;
    CHECK(call.Unwritten(0) == "");    // the edges alone: what the look was
    for (std::uint64_t places = 1; places <= 20; ++places) CHECK(call.Unwritten(places) == "y");
    // Half the middle left: found by most looks (16 places: all of them
    // written by chance 1 time in 65536).
    for (int i = 0; i < 100000; ++i) call.y()[i] = i < 25000 || i >= 75000 ? 1.0f : call.y()[i];
    int found = 0;
    for (std::uint64_t places = 1; places <= 100; ++places) found += call.Unwritten(places) == "y";
    CHECK(found == 100);
    // A tenth of it left: each look of 16 places finds it four times in five.
    for (int i = 0; i < 100000; ++i) call.y()[i] = i < 45000 || i >= 55000 ? 1.0f : call.y()[i];
    found = 0;
    for (std::uint64_t places = 1; places <= 200; ++places) found += call.Unwritten(places) == "y";
    CHECK(found > 120);
    CHECK(found < 195);
    for (int i = 0; i < 100000; ++i) call.y()[i] = 2.0f;
    for (std::uint64_t places = 1; places <= 50; ++places) CHECK(call.Unwritten(places) == "");
  }

  TEST_CASE("integers: only both edges poisoned count, as a value of an integer output may equal the pattern") {
    Call call(ScalarType::kI32, 1000);
    CHECK(call.Unwritten(3) == "y");
    auto* y = reinterpret_cast<std::int32_t*>(call.memory.data() + call.placement.offsets[1]);
    y[0] = 5;
    CHECK(call.Unwritten(3) == "");
  }
}

}  // namespace
}  // namespace kestrel::runner

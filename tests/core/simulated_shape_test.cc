// SimulatedShape: the cut-down shape cachegrind simulates, on built-in tasks.

#include "core/simulated_shape.h"

#include <doctest.h>

#include "core/hidden_shapes.h"
#include "core/task.h"
#include "testing.h"

namespace kestrel {
namespace {

Task Load(const std::string& name) {
  auto task = LoadTask(testing::TasksDir() / name);
  REQUIRE_MESSAGE(task.has_value(), name);
  return *task;
}

Shape Smallest(const Task& task) {
  Shape smallest = task.shapes.front();
  for (const Shape& shape : task.shapes) {
    if (BufferBytes(task, shape) < BufferBytes(task, smallest)) smallest = shape;
  }
  return smallest;
}

TEST_CASE("a row-wise kernel keeps its rows' length and loses rows until its work fits") {
  const Task softmax = Load("softmax");
  const Shape from{{"rows", 64}, {"cols", 16384}};
  CHECK(Smallest(softmax) == from);
  // 5 flops an element: 32 rows are 2.6M, 16 rows 1.3M.
  CHECK(SimulatedShape(softmax, from) == Shape{{"rows", 16}, {"cols", 16384}});
  // The first dim of the first buffer is the one cut; one that fits already stays.
  CHECK(SimulatedShape(softmax, from, 1e9) == from);
}

TEST_CASE("a streaming kernel is cut to its work, not below the floor") {
  const Task triad = Load("triad");
  const Shape simulated = SimulatedShape(triad, Smallest(triad));
  CHECK(simulated.at("n") == 2999999 / 8);  // 3 buffers: 1.1M elements
  CHECK(BufferBytes(triad, simulated) >= kSimulatedBytesFloor);
  // A tiny budget stops at the floor, not at one element.
  const Shape floored = SimulatedShape(triad, Smallest(triad), 1);
  CHECK(BufferBytes(triad, floored) >= kSimulatedBytesFloor);
  Shape half = floored;
  half["n"] /= 2;
  CHECK(BufferBytes(triad, half) < kSimulatedBytesFloor);
}

TEST_CASE("a small working set with much reuse keeps half its bytes and its reused operand") {
  const Task matmul = Load("matmul");
  const Shape from{{"m", 256}, {"n", 256}, {"k", 256}};
  CHECK(Smallest(matmul) == from);
  const Shape simulated = SimulatedShape(matmul, from);
  // m 64: A and C a quarter, B (256 x 256, the operand every row reuses) whole.
  CHECK(simulated == Shape{{"m", 64}, {"n", 256}, {"k", 256}});
  CHECK(BufferBytes(matmul, simulated) * 2 >= BufferBytes(matmul, from));
}

TEST_CASE("a range's lower end and a task without ranges are kept") {
  Task softmax = Load("softmax");
  const Shape from{{"rows", 64}, {"cols", 16384}};
  softmax.shape_ranges["rows"] = {40, 2048};
  CHECK(SimulatedShape(softmax, from) == from);  // 32 rows would leave the range
  softmax.shape_ranges["rows"] = {32, 2048};
  CHECK(SimulatedShape(softmax, from).at("rows") == 32);
  softmax.shape_ranges.clear();
  CHECK(SimulatedShape(softmax, from) == from);
}

TEST_CASE("every built-in task: one dim cut, within its range, work or floor reached") {
  const auto folders = FindTaskFolders({testing::TasksDir()});
  REQUIRE(folders.has_value());
  for (const TaskFolder& folder : *folders) {
    const Task task = Load(folder.name);
    if (task.shape_ranges.empty()) continue;
    CAPTURE(task.name);
    const Shape from = Smallest(task);
    const Shape simulated = SimulatedShape(task, from);
    int cut = 0;
    for (const auto& [dim, size] : from) {
      if (simulated.at(dim) == size) continue;
      ++cut;
      CHECK(simulated.at(dim) < size);
      CHECK(simulated.at(dim) >= task.shape_ranges.at(dim).first);
    }
    CHECK(cut <= 1);
    CHECK(BufferBytes(task, simulated) * 2 >= std::min<std::uint64_t>(2 * kSimulatedBytesFloor, BufferBytes(task, from)));
  }
}

}  // namespace
}  // namespace kestrel

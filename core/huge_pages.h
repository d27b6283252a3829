#pragma once
// Large arrays that a loaded graph fills at once (a million nodes: hundreds
// of MiB), backed by transparent huge pages where the kernel offers them on
// request (madvise): filling them then takes a page fault per 2 MiB instead
// of per 4 KiB. In a VM, those faults were most of the time it took to open
// a million-node graph (docs/BENCHMARKS.md, "Opening a graph").

#include <cstddef>
#include <string>
#include <vector>

namespace kestrel {

// Asks for huge pages for the whole 2 MiB extents within [data, data + bytes);
// a no-op where that is not offered, or for less than a few MiB.
void AdviseHugePages(const void* data, std::size_t bytes);

// reserve(), then the advice for the reserved memory (before it is touched).
template <class T>
void ReserveHuge(std::vector<T>& items, std::size_t count) {
  items.reserve(count);
  AdviseHugePages(items.data(), items.capacity() * sizeof(T));
}
inline void ReserveHuge(std::string& text, std::size_t size) {
  text.reserve(size);
  AdviseHugePages(text.data(), text.capacity());
}

}  // namespace kestrel

#include "store/records.h"

#include <chrono>

namespace kestrel {

std::int64_t NowMillis() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace kestrel

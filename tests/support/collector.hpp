// Collects the items a streaming call delivers (dendrite::call_stream's on_item runs on a
// dendrite I/O thread; the test reads them from its own).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace bt::test {

struct collector {
  std::mutex mu;
  std::vector<std::string> items;
  void operator()(std::string_view item) {
    std::lock_guard lk(mu);
    items.emplace_back(item);
  }
  std::vector<std::string> get() {
    std::lock_guard lk(mu);
    return items;
  }
};

}  // namespace bt::test

// bt-axon's access policy, the subnet template miner's: a deny list of hotkeys, and with a
// metagraph the registration and validator-permit rules; priority = stake.
//
// A policy is an immutable snapshot. Requests read the current one through `policy_holder`; a
// refresh (the chain, a reload of the files) builds a whole new snapshot and swaps it in, so a
// request never sees half of an update and a failed refresh leaves the last good one in place.
//
// The file loaders are strict: an entry that is not what it should be is refused with the file,
// the line or entry number and the entry itself, so a typo is found at start-up rather than as a
// key that is silently never matched.
#pragma once

#include <bt/axon.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace bt::miner {

/// What the policy knows of one registered hotkey.
struct neuron {
  double stake = 0;  ///< priority; any unit, only the order matters (files: TAO, chain: rao)
  bool validator_permit = false;
};

using neuron_map = std::unordered_map<std::string, neuron>;

struct access_policy {
  std::unordered_set<std::string> denied;
  std::optional<neuron_map> metagraph;  ///< absent: the registration rules are off
  bool allow_non_registered = false;
  bool force_validator_permit = false;

  verdict blacklist(std::string_view hotkey) const;
  double priority(std::string_view hotkey) const;
  /// One line for the log: "3 denied hotkeys, metagraph of 1024 neurons".
  std::string describe() const;
};

/// The current policy, shared by every I/O thread. Readers take a reference-counted snapshot;
/// `replace` publishes a new one. Thread-safe.
class policy_holder {
 public:
  explicit policy_holder(access_policy initial)
      : current_(std::make_shared<const access_policy>(std::move(initial))) {}

  std::shared_ptr<const access_policy> current() const {
    const std::lock_guard lock(mutex_);
    return current_;
  }

  void replace(access_policy next) {
    const std::lock_guard w(writer_mutex_);
    publish(std::move(next));
  }

  /// Publishes `edit` applied to a copy of the current snapshot. Writers (replace, update) are
  /// serialised, so a chain refresh that swaps the metagraph and a reload that swaps the deny
  /// list never lose each other's change; readers are not held up while the copy is edited.
  template <class Edit>
  void update(Edit&& edit) {
    const std::lock_guard w(writer_mutex_);
    access_policy next = *current();
    edit(next);
    publish(std::move(next));
  }

 private:
  void publish(access_policy next) {
    auto p = std::make_shared<const access_policy>(std::move(next));
    const std::lock_guard lock(mutex_);
    current_.swap(p);  // the old snapshot is released outside the lock, by `p`'s destructor
  }

  std::mutex writer_mutex_;  // serialises replace and update
  mutable std::mutex mutex_;
  std::shared_ptr<const access_policy> current_;
};

/// A deny list or metagraph file that cannot be used; what() names the file and the place.
struct policy_file_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Deny list text: one SS58 hotkey per line; blank lines and lines starting with '#' are
/// skipped, surrounding blanks ignored. Any other line that is not an SS58 address is refused:
/// "ORIGIN:LINE: 'entry' is not an SS58 address (reason)".
std::unordered_set<std::string> parse_deny_list(std::string_view text, const std::string& origin);

/// Metagraph text: a JSON list of {"hotkey": SS58, "stake": number >= 0 (optional),
/// "validator_permit": bool (optional)}. Refused: text that is not JSON (with the parser's line
/// and column), a non-list, an entry that is not an object, a hotkey that is not SS58, a negative
/// or non-numeric stake, a non-boolean permit, a hotkey listed twice. Messages read
/// "ORIGIN: entry N (hotkey ...): what is wrong".
neuron_map parse_metagraph(std::string_view text, const std::string& origin);

/// The same over a file; an unreadable file is refused with the system's reason.
std::unordered_set<std::string> load_deny_list(const std::string& path);
neuron_map load_metagraph(const std::string& path);

}  // namespace bt::miner

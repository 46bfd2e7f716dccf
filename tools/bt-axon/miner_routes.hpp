// bt-axon's routes: the ping (the built-in Synapse), the subnet template's Dummy, the streaming
// example WordStream and POST /echo (Epistula), all under the miner's access policy; with
// --test-routes also Throw, Hang and Big, which misbehave on purpose (see bt_axon.cpp's header).
#pragma once

#include "miner_config.hpp"
#include "miner_policy.hpp"

#include <bt/axon.hpp>

#include <spdlog/logger.h>

namespace bt::miner {

/// Attaches the routes to `ax` before start(); `policy` must outlive the axon's stop().
void attach_miner_routes(bt::axon& ax, policy_holder& policy, const miner_config& cfg,
                         spdlog::logger& log);

/// Releases the Hang test route's handlers (they ignore cancellation): call before stop(), so
/// that the drain can finish.
void release_test_routes();

}  // namespace bt::miner

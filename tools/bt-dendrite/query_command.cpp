// `bt-dendrite query` (see query_command.hpp).
#include "query_command.hpp"

#include "axon_flag.hpp"

#include <bt/axon_info.hpp>
#include <bt/chain/subtensor.hpp>
#include <bt/dendrite.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/json_body.hpp>
#include <bt/keypair.hpp>

#include <bt_cli.hpp>
#include <option_flags.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace bt::cli {
namespace {

/// Bad usage: reported on stderr, exit status 2.
struct usage_error {
  std::string message;
};

/// The shared flag parsers throw std::invalid_argument naming the argument: bad usage here.
template <class F>
auto as_usage(F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw usage_error{e.what()};
  }
}

/// What --axons expects, appended to every complaint about the file's kind or shape.
const char* const axons_file_hint =
    "; --axons expects a JSON list of AxonInfo objects, e.g. "
    "[{\"ip\": \"127.0.0.1\", \"port\": 8091, \"hotkey\": "
    "\"5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty\"}] (optional: ip_type, version, "
    "coldkey, protocol), such as the axons of an exported metagraph";

/// Names the kind of JSON file that was given instead, when its shape tells: a wallet keyfile or
/// bt-axon's --metagraph stake list (the JSON files a new user has at hand). Empty otherwise.
std::string wrong_kind(const json& j) {
  if (j.is_object() && (j.contains("ss58Address") || j.contains("publicKey")))
    return " (this looks like a wallet keyfile)";
  if (j.is_array() && !j.empty() && j[0].is_object() && j[0].contains("hotkey") &&
      !j[0].contains("ip") && (j[0].contains("stake") || j[0].size() == 1))
    return " (this looks like a bt-axon --metagraph stake list: it has hotkeys but no ip or port)";
  return {};
}

std::vector<axon_info> load_axons_file(const std::string& path) {
  std::string text, why;
  if (!read_file(path, text, why)) throw usage_error{"--axons: " + why};
  json j;
  if (error e = parse_json(text, j, {}); e)
    throw usage_error{"--axons " + path + ": not valid JSON (" + e.message() + ")" +
                      axons_file_hint};
  if (!j.is_array())
    throw usage_error{"--axons " + path + ": got a JSON " + std::string(j.type_name()) +
                      wrong_kind(j) + axons_file_hint};
  if (j.empty()) throw usage_error{"--axons " + path + ": the list is empty" + axons_file_hint};
  const std::string kind = wrong_kind(j);
  std::vector<axon_info> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    axon_info a;
    if (error e = axon_info_from_json(j[i], a); e)
      throw usage_error{"--axons " + path + " [" + std::to_string(i) + "]: " + e.message() + kind +
                        axons_file_hint};
    as_usage([&] { check_axon_hotkey(a, "--axons " + path + " [" + std::to_string(i) + "]"); });
    out.push_back(std::move(a));
  }
  return out;
}

/// A failure that is not bad usage (the chain cannot be read): reported on stderr, exit status 1.
struct run_error {
  std::string message;
};

/// --netuid: the subnet's serving axons (metagraph::serving_axons) from the metagraph at the head,
/// in uid order; with --uids only those, in the order given.
std::vector<axon_info> chain_targets(const query_config& cfg) {
  const std::uint16_t netuid = *cfg.netuid;
  error eerr;
  const auto ep = resolve(cfg.chain, eerr);
  if (!ep) throw usage_error{eerr.message()};
  metagraph m;
  try {
    subtensor st(*ep, client_options(cfg.chain));
    m = st.get_metagraph(netuid);
  } catch (const subtensor_error& e) {
    throw run_error{"--netuid " + std::to_string(netuid) + ": cannot read the metagraph from " +
                    ep->url() + ": " + e.what()};
  }
  const std::string where = "subnet " + std::to_string(netuid) + " at block " +
                            std::to_string(m.block) + " (" + std::to_string(m.neurons.size()) +
                            " neurons)";
  std::vector<axon_info> out;
  if (cfg.uids.empty()) {
    out = m.serving_axons();
    if (out.empty()) throw usage_error{"--netuid: no neuron of " + where + " serves an axon"};
  } else {
    std::set<std::uint16_t> seen;
    for (const std::uint16_t uid : cfg.uids) {
      const std::string u = "--uids: uid " + std::to_string(uid);
      if (!seen.insert(uid).second) throw usage_error{u + " is listed twice"};
      const auto it = std::find_if(m.neurons.begin(), m.neurons.end(),
                                   [uid](const metagraph_neuron& n) { return n.uid == uid; });
      if (it == m.neurons.end()) throw usage_error{u + " is not in " + where};
      if (!it->serving) throw usage_error{u + " does not serve an axon on " + where};
      out.push_back(it->axon);
    }
  }
  std::fprintf(stderr, "%s: %zu target(s)\n", where.c_str(), out.size());
  return out;
}

keypair load_signer(const query_config& cfg) {
  try {
    return signing_hotkey(cfg.keys);
  } catch (const std::invalid_argument& e) {
    throw usage_error{e.what()};
  }
}

json parse_fields(const query_config& cfg) {
  if (cfg.fields.empty()) return json::object();
  json j;
  if (error e = parse_json(cfg.fields, j, {}); e) throw usage_error{"--fields: " + e.message()};
  if (!j.is_object()) throw usage_error{"--fields: expected a JSON object"};
  return j;
}

/// Sets each field value of `s` from --fields through the type's own field operations, then
/// refuses a required field left unset (Python cannot build such a synapse; sending its default
/// would hide the omission).
void assign_fields(const synapse_descriptor& d, synapse& s, const json& fields) {
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    const field_descriptor* f = d.find(it.key());
    if (!f) throw usage_error{"--fields: " + d.name() + " has no field '" + it.key() + "'"};
    std::string why;
    if (!f->ops->from_json(s, *f, it.value(), why))
      throw usage_error{"--fields: " + it.key() + ": " + why};
  }
  for (const field_descriptor& f : d.fields())
    if (f.required() && !fields.contains(f.name))
      throw usage_error{"--fields: " + d.name() + " requires '" + f.name + "' (e.g. --fields '{\"" +
                        f.name + "\": ...}')"};
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = static_cast<std::size_t>(std::ceil(rank));
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

/// Prints the results (unless already printed) and the summary; returns 0 when every status is
/// 200.
template <class T>
int report(const std::vector<T>& results, double wall_seconds, bool print_lines = true) {
  std::map<std::string, std::size_t> by_status;
  std::vector<double> latencies;
  bool all_ok = true;
  for (const T& r : results) {
    if (print_lines)
      std::cout << to_json_value(descriptor_for(r), r)
                       .dump(-1, ' ', false, bt::json::error_handler_t::replace)
                << '\n';
    const std::string key =
        r.dendrite.status_code ? std::to_string(*r.dendrite.status_code) : std::string("None");
    ++by_status[key];
    all_ok = all_ok && r.is_success();
    if (r.dendrite.process_time) latencies.push_back(*r.dendrite.process_time * 1000.0);
  }
  std::cout.flush();
  std::fprintf(stderr, "queried %zu axon(s) in %.3f s; status:", results.size(), wall_seconds);
  for (const auto& [k, n] : by_status) std::fprintf(stderr, " %s x%zu", k.c_str(), n);
  std::fprintf(stderr, "\n");
  if (!latencies.empty()) {
    std::fprintf(stderr,
                 "latency over %zu completed exchange(s): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms\n",
                 latencies.size(), percentile(latencies, 50), percentile(latencies, 90),
                 percentile(latencies, 99));
  }
  return all_ok ? 0 : 1;
}

template <class T>
int query_all(const query_config& cfg, keypair key, const std::vector<axon_info>& axons,
              const T& proto) {
  dendrite d(std::move(key), cfg.dendrite);
  const auto t0 = std::chrono::steady_clock::now();
  auto results = d.forward(axons, proto, cfg.timeout);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report(results, wall);
}

/// --stream: one call_stream per axon, in order. Items go to stdout as they arrive (on the
/// dendrite's thread while this one waits), flushed; then the final synapse's JSON line.
template <class T>
int stream_all(const query_config& cfg, keypair key, const std::vector<axon_info>& axons,
               const T& proto) {
  dendrite d(std::move(key), cfg.dendrite);    // one call at a time: max_concurrency unused
  constexpr bool raw = !streaming_synapse<T>;  // dynamic: the body bytes verbatim
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<T> results;
  for (const axon_info& a : axons) {
    bool at_line_start = true;
    T r = d.call_stream(a, proto, cfg.timeout, [&at_line_start](std::string_view item) {
      std::fwrite(item.data(), 1, item.size(), stdout);
      if (!raw) std::fputc('\n', stdout);
      if (raw && !item.empty()) at_line_start = item.back() == '\n';
      std::fflush(stdout);
    });
    if (!at_line_start) std::fputc('\n', stdout);
    std::fputs(to_json_value(descriptor_for(r), r)
                   .dump(-1, ' ', false, bt::json::error_handler_t::replace)
                   .c_str(),
               stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    results.push_back(std::move(r));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report(results, wall, false);
}

}  // namespace

CLI::App* add_query_command(CLI::App& app, query_config& cfg) {
  CLI::App* q =
      app.add_subcommand("query", "Query axons like a validator; one JSON line per axon on stdout");
  q->add_option("--axon", cfg.axon, "Target IP:PORT:HOTKEY (repeatable; IPv6 as [ip]:port:hotkey)");
  q->add_option("--axons", cfg.axons_file,
                "JSON file: a list of AxonInfo objects (e.g. an exported metagraph)");
  q->add_option_function<std::uint16_t>(
      "--netuid", [&cfg](const std::uint16_t& v) { cfg.netuid = v; },
      "Query the serving axons of this subnet, read from the chain (--subtensor.*)");
  q->add_option("--uids", cfg.uids, "With --netuid: only these uids (e.g. 1,2,3)")->delimiter(',');
  add_endpoint_flags(q, cfg.chain, "--subtensor.timeout");
  q->add_option(
      "--synapse", cfg.synapse,
      "Synapse name: Synapse (ping), Dummy and WordStream (streaming) are known; any other "
      "name is dynamic, described by --fields/--required/--hash-fields (default Synapse)");
  q->add_option("--fields", cfg.fields, "JSON object of field values, in declaration order");
  q->add_option("--required", cfg.required,
                "Required fields of a dynamic synapse (no default in Python)");
  q->add_option("--hash-fields", cfg.hash_fields,
                "required_hash_fields of a dynamic synapse, in order");
  q->add_option("--timeout", cfg.timeout, "Total deadline per call in seconds (default 12)");
  add_key_flags(*q, cfg.keys);
  // --external-ip, --concurrency and --session: from dendrite_options' table.
  add_flags_of(*q, cfg.dendrite, [](const auto&, CLI::Option*) {});
  q->add_flag("--dynamic", cfg.dynamic,
              "Treat --synapse as a dynamic type even when the name is a known one");
  q->add_flag("--stream", cfg.stream,
              "Streaming synapse (WordStream or dynamic): print each item as it arrives, then the "
              "final synapse; axons are queried one after another");
  return q;
}

int run_query(const query_config& cfg) {
  try {
    std::vector<axon_info> axons;
    if (cfg.netuid && (!cfg.axon.empty() || !cfg.axons_file.empty()))
      throw usage_error{"--netuid takes the targets from the chain; it excludes --axon/--axons"};
    if (!cfg.netuid && !cfg.uids.empty()) throw usage_error{"--uids needs --netuid"};
    for (const auto& a : cfg.axon) axons.push_back(as_usage([&] { return parse_axon_flag(a); }));
    if (!cfg.axons_file.empty()) {
      auto more = load_axons_file(cfg.axons_file);
      axons.insert(axons.end(), more.begin(), more.end());
    }
    if (axons.empty() && !cfg.netuid)
      throw usage_error{"no target: give --axon IP:PORT:HOTKEY, --axons FILE or --netuid N"};
    if (!(cfg.timeout > 0) || !std::isfinite(cfg.timeout))
      throw usage_error{"--timeout must be a positive number"};
    const json fields = parse_fields(cfg);
    keypair key = load_signer(cfg);
    if (cfg.netuid) axons = chain_targets(cfg);  // after the local checks: no read for a typo

    const bool known = !cfg.dynamic && (cfg.synapse == "Synapse" || cfg.synapse == "Dummy" ||
                                        cfg.synapse == "WordStream");
    if (known) {
      if (!cfg.required.empty() || !cfg.hash_fields.empty())
        throw usage_error{"--required/--hash-fields describe dynamic synapses; " + cfg.synapse +
                          " is a known type"};
    }
    if (known && cfg.stream && cfg.synapse != "WordStream")
      throw usage_error{"--stream: " + cfg.synapse + " is not a streaming synapse (WordStream is)"};
    if (known && cfg.synapse == "WordStream") {
      examples::word_stream s;
      assign_fields(descriptor_of<examples::word_stream>(), s, fields);
      if (cfg.stream) return stream_all(cfg, std::move(key), axons, s);
      return query_all(cfg, std::move(key), axons, s);
    }
    if (known && cfg.synapse == "Synapse") {
      synapse s;
      assign_fields(descriptor_of<synapse>(), s, fields);
      return query_all(cfg, std::move(key), axons, s);
    }
    if (known && cfg.synapse == "Dummy") {
      examples::dummy s;
      assign_fields(descriptor_of<examples::dummy>(), s, fields);
      return query_all(cfg, std::move(key), axons, s);
    }
    // A dynamic type: the fields of --fields in their order, plus any --required/--hash-fields
    // name not given a value (they start as None).
    std::vector<dynamic_field_spec> specs;
    auto add_spec = [&](const std::string& name) {
      for (const auto& s : specs)
        if (s.name == name) return;
      const bool req =
          std::find(cfg.required.begin(), cfg.required.end(), name) != cfg.required.end();
      specs.push_back({name, req ? field_kind::required : field_kind::optional});
    };
    for (auto it = fields.begin(); it != fields.end(); ++it) add_spec(it.key());
    for (const auto& n : cfg.required) add_spec(n);
    for (const auto& n : cfg.hash_fields) add_spec(n);
    error err;
    auto type = make_dynamic_descriptor(cfg.synapse, specs, cfg.hash_fields, err);
    if (!type || err) throw usage_error{"--synapse " + cfg.synapse + ": " + err.message()};
    dynamic_synapse s(type);
    assign_fields(*type, s, fields);
    if (cfg.stream) return stream_all(cfg, std::move(key), axons, s);
    return query_all(cfg, std::move(key), axons, s);
  } catch (const usage_error& e) {
    report_error(std::cerr, "bt-dendrite query", error_style::json, e.message);
    return 2;
  } catch (const run_error& e) {
    report_error(std::cerr, "bt-dendrite query", error_style::json, e.message);
    return 1;
  }
}

}  // namespace bt::cli

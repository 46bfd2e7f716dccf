// bittensor_cpp.Dendrite and AxonInfo over bt::dendrite.
//
// query() blocks with the GIL released while the C++ calls run: a single axon's call (and a
// blocking Epistula or btauth/1 call) on the calling thread's own lane (caller_lanes.hpp: no
// hand-off to and from the dendrite's I/O thread); a list of axons and query_mixed's targets on
// the shared dendrite. The arguments are converted before any call
// starts (call_args.hpp). forward() (and forward_mixed, every async_* call) returns an asyncio
// future of the caller's running loop (called with no loop running, a coroutine that makes it
// when awaited: awaitable_in_running_loop): the C++ completion (on a dendrite I/O thread) takes
// the GIL only to build the results and hand them to loop.call_soon_threadsafe; no thread is
// started per call. Cancelling the awaited future emits the operation's cancellation signal on
// the call's own strand, which ends the calls still running (503 "Request cancelled"). The
// completion handler is bound to that strand, and the dendrite clears the signal's slot on the
// handler's executor, so emission and completion never run at once, with any number of dendrite
// threads.
#include "call_args.hpp"
#include "caller_lanes.hpp"
#include "common.hpp"
#include "dendrite_calls.hpp"
#include "keyword_options.hpp"

#include <bt/dendrite.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

namespace btpy {
namespace {

namespace net = boost::asio;

py::object results_to_py(const std::shared_ptr<const synapse_type>& type,
                         std::vector<bt::dynamic_synapse>&& rs, bool single) {
  if (single) return py::cast(wrap_synapse(type, std::move(rs.at(0))));
  py::list l;
  for (auto& r : rs) l.append(py::cast(wrap_synapse(type, std::move(r))));
  return l;
}

bt::response_verification verification_from(const std::string& v) {
  if (v == "off") return bt::response_verification::off;
  if (v == "if_present") return bt::response_verification::if_present;
  if (v == "required") return bt::response_verification::required;
  throw py::value_error("verify_responses must be 'off', 'if_present' or 'required', not '" + v +
                        "'");
}

class py_dendrite {
 public:
  py_dendrite(const bt::keypair& kp, bt::dendrite_options opt) {
    if (!kp.has_secret()) throw bt_py_error("Dendrite: the keypair has no secret key");
    lanes_ = std::make_shared<caller_lanes>(kp, opt);
    d_ = std::make_unique<bt::dendrite>(kp, std::move(opt));
  }
  ~py_dendrite() { close(); }

  /// GIL held. Later calls raise "Dendrite is closed" (d_ is taken under the GIL); then, without
  /// the GIL, the blocking calls running on other threads are cancelled (503 "Request
  /// cancelled") and waited for, and the dendrite is destroyed: that cancels the asyncio calls
  /// and joins its I/O threads, where a completion may be waiting for the GIL. A second close()
  /// while one runs returns at once.
  void close() {
    if (!d_) return;
    std::unique_ptr<bt::dendrite> d = std::move(d_);
    py::gil_scoped_release r;
    gate_->close();
    lanes_->close();
    d.reset();
  }

  /// GIL held, for calls that hold no ticket (their whole use of the dendrite holds the GIL).
  bt::dendrite& get() {
    if (!d_) throw py::value_error("Dendrite is closed");
    return *d_;
  }

  /// GIL held: the dendrite for a use that releases the GIL, alive until the ticket is returned.
  bt::dendrite& enter(call_gate::ticket& t) {
    if (!d_ || !t.enter(gate_)) throw py::value_error("Dendrite is closed");
    return *d_;
  }

  py::object query(py::handle axons, const py_synapse& syn, double timeout) {
    auto parsed = axons_from_py(axons);
    std::vector<bt::axon_info>& targets = parsed.first;
    const bool single = parsed.second;
    check_timeout(timeout);
    bt::dynamic_synapse copy = syn.s;
    call_gate::ticket t;
    auto& d = enter(t);
    if (single) {
      // One axon: the call itself on this thread's lane, without the fan-out's result vector
      // and concurrency limiter (the per-call path of a sequential loop).
      const bt::axon_info& target = targets.front();
      bt::dynamic_synapse r;
      {
        py::gil_scoped_release unlocked;
        run_on_lane(
            [&](bt::dendrite& ld, auto handler) {
              ld.async_call(target, std::move(copy), timeout, std::move(handler));
            },
            r);
      }
      return py::cast(wrap_synapse(syn.type, std::move(r)));
    }
    std::vector<bt::dynamic_synapse> rs;
    {
      py::gil_scoped_release unlocked;
      rs = run_on_shared<std::vector<bt::dynamic_synapse>>(d, [&](auto token) {
        d.async_forward(std::move(targets), std::move(copy), timeout, std::move(token));
      });
    }
    return results_to_py(syn.type, std::move(rs), false);
  }

  py::object forward(py::handle axons, const py_synapse& syn, double timeout) {
    auto parsed = axons_from_py(axons);
    check_timeout(timeout);
    auto start = [this, self = py::cast(this), targets = std::move(parsed.first),
                  single = parsed.second, copy = syn.s, type = syn.type, timeout]() mutable {
      call_gate::ticket t;
      auto& d = enter(t);
      return loop_future<std::vector<bt::dynamic_synapse>>(
          d, gate_,
          [type, single](std::vector<bt::dynamic_synapse>&& rs) {
            return results_to_py(type, std::move(rs), single);
          },
          [&](auto token) {
            d.async_forward(std::move(targets), std::move(copy), timeout, std::move(token));
          });
    };
    return awaitable_in_running_loop(py::cpp_function(std::move(start)));
  }

  /// A blocking Epistula v2 or btauth/1 call (epistula_call, btauth_call) on this thread's lane.
  /// A btauth/1 receiver records (hotkey, nonce) alone; the lanes' dendrites cannot send one
  /// nonce twice because every request of the process takes its nonce from one counter
  /// (bt/request_nonce.hpp).
  template <bt::wire_dialect Dialect>
  py::object plain_call(py::handle axon, std::string method, std::string path, py::handle json_body,
                        double timeout) {
    auto args =
        plain_call_from_py(Dialect, axon, std::move(method), std::move(path), json_body, timeout);
    call_gate::ticket t;
    auto& d = enter(t);  // "Dendrite is closed"; close() waits for the call
    bt::http_call_response r;
    {
      py::gil_scoped_release unlocked;
      run_on_lane([&](bt::dendrite& ld, auto handler) { args.start(ld, std::move(handler)); }, r);
    }
    return py::cast(std::move(r));
  }

  /// The awaitable plain_call (async_epistula_call, async_btauth_call), on the shared dendrite.
  template <bt::wire_dialect Dialect>
  py::object async_plain_call(py::handle axon, std::string method, std::string path,
                              py::handle json_body, double timeout) {
    auto start = [this, self = py::cast(this),
                  args = plain_call_from_py(Dialect, axon, std::move(method), std::move(path),
                                            json_body, timeout)]() mutable {
      call_gate::ticket t;
      auto& d = enter(t);
      return loop_future<bt::http_call_response>(
          d, gate_, [](bt::http_call_response&& r) { return py::cast(std::move(r)); },
          [&](auto token) { args.start(d, std::move(token)); });
    };
    return awaitable_in_running_loop(py::cpp_function(std::move(start)));
  }

  /// Blocking: one query to targets each in its own dialect, on the shared dendrite's fan-out.
  py::list query_mixed(py::handle requests, py::handle synapse, double timeout) {
    auto args = mixed_call_from_py(requests, synapse, timeout);
    call_gate::ticket t;
    auto& d = enter(t);
    std::vector<bt::mixed_answer<bt::dynamic_synapse>> answers;
    {
      py::gil_scoped_release unlocked;
      answers = run_on_shared<std::vector<bt::mixed_answer<bt::dynamic_synapse>>>(
          d, [&](auto token) { args.start(d, std::move(token)); });
    }
    return mixed_answers_to_py(args.type, std::move(answers));
  }

  /// The awaitable query_mixed.
  py::object forward_mixed(py::handle requests, py::handle synapse, double timeout) {
    auto start = [this, self = py::cast(this),
                  args = mixed_call_from_py(requests, synapse, timeout)]() mutable {
      call_gate::ticket t;
      auto& d = enter(t);
      using answers = std::vector<bt::mixed_answer<bt::dynamic_synapse>>;
      return loop_future<answers>(
          d, gate_,
          [type = args.type](answers&& rs) { return mixed_answers_to_py(type, std::move(rs)); },
          [&](auto token) { args.start(d, std::move(token)); });
    };
    return awaitable_in_running_loop(py::cpp_function(std::move(start)));
  }

  /// The streaming call: an async generator yielding the body's bytes as they arrive (split
  /// anywhere), then the final synapse (bittensor's call_stream shape). Each chunk is handed to
  /// the loop with call_soon_threadsafe from the dendrite's I/O thread (GIL taken for that only);
  /// closing the generator before the end (break, cancellation) cancels the C++ call.
  py::object call_stream(py::handle axon, const py_synapse& syn, double timeout) {
    bt::axon_info target = axon_from_py(axon);
    check_timeout(timeout);
    call_gate::ticket t;
    auto& d = enter(t);
    py::module_ asyncio = py::module_::import("asyncio");
    py::object loop = asyncio.attr("get_running_loop")();
    py::object queue = asyncio.attr("Queue")();
    py::module_ self = py::module_::import("bittensor_cpp");

    struct stream_state {
      net::cancellation_signal cancel;
      gil_object loop, queue, end;
      std::shared_ptr<const synapse_type> type;
      net::any_io_executor strand;  // here, not in `cancel`: as in loop_future
      /// Hands `item` to the queue on the loop's thread; false when the loop is closed.
      void put(py::object item) {
        if (!loop.obj || loop.obj.attr("is_closed")().cast<bool>()) return;
        try {
          loop.obj.attr("call_soon_threadsafe")(queue.obj.attr("put_nowait"), item);
        } catch (py::error_already_set& e) {
          e.discard_as_unraisable("bittensor_cpp.Dendrite.call_stream");
        }
      }
    };
    auto st = std::make_shared<stream_state>();
    st->loop.obj = loop;
    st->queue.obj = queue;
    st->end.obj = self.attr("_stream_end");
    st->type = syn.type;

    auto on_item = [st](std::string_view bytes) {
      py::gil_scoped_acquire g;
      st->put(py::bytes(bytes.data(), bytes.size()));
    };
    auto handler = [st](bt::dynamic_synapse r) {
      py::gil_scoped_acquire g;
      st->put(py::make_tuple(st->end.obj, py::cast(wrap_synapse(st->type, std::move(r)))));
      st->loop.obj = py::object();
      st->queue.obj = py::object();
      st->end.obj = py::object();
    };
    st->strand = net::make_strand(d.get_executor());  // as in forward()
    const net::any_io_executor strand = st->strand;
    std::weak_ptr<stream_state> weak = st;
    py::cpp_function cancel([weak, gate = gate_] {
      call_gate::ticket t;         // first, as in loop_future
      if (!t.enter(gate)) return;  // closing: the dendrite's destruction ends the call
      auto s = weak.lock();
      if (!s) return;
      net::post(s->strand, [s] { s->cancel.emit(net::cancellation_type::terminal); });
    });
    bt::dynamic_synapse copy = syn.s;
    // The end marker is taken before the call starts: once the GIL is released, the call may
    // finish, and its handler clear st->end, before this thread has the GIL back.
    py::object end = st->end.obj;
    {
      py::gil_scoped_release r;
      d.async_call_stream(std::move(target), std::move(copy), timeout, std::move(on_item),
                          net::bind_cancellation_slot(
                              st->cancel.slot(), net::bind_executor(strand, std::move(handler))));
    }
    return self.attr("_stream_iter")(queue, cancel, end);
  }

  /// The shared dendrite's counters plus every lane's.
  bt::dendrite_stats stats() {
    bt::dendrite_stats s = lanes_->stats();
    add_stats(s, get().stats(), true);
    return s;
  }

 private:
  /// Runs one call, `start(lane_dendrite, handler)`, on this thread's lane until `handler` has
  /// stored its result in `out`. Without the GIL, holding a ticket. close() cancels the call by
  /// posting the emission of its cancellation signal to the lane, which this thread runs.
  template <class Result, class Start>
  void run_on_lane(Start&& start, Result& out) {
    bool finished = false;
    const auto cancel = std::make_shared<net::cancellation_signal>();
    std::uint64_t registered = 0;
    lanes_->run(
        [&](bt::dendrite& ld) {
          start(ld, net::bind_cancellation_slot(cancel->slot(), [&out, &finished](Result r) {
                  out = std::move(r);
                  finished = true;
                }));
          registered = gate_->on_close([ex = ld.get_executor(), cancel] {
            net::post(ex, [cancel] { cancel->emit(net::cancellation_type::terminal); });
          });
        },
        [&] { return finished; });
    gate_->forget(registered);
  }

  /// A blocking fan-out (forward, forward_mixed) on the shared dendrite: `start(token)` starts
  /// it, cancellable by close(): its completion and the emission of its cancellation signal run
  /// on one strand, as in loop_future. Without the GIL, holding a ticket.
  template <class Result, class Start>
  Result run_on_shared(bt::dendrite& d, Start&& start) {
    const auto cancel = std::make_shared<net::cancellation_signal>();
    const net::any_io_executor strand = net::make_strand(d.get_executor());
    std::promise<Result> p;
    auto f = p.get_future();
    start(net::bind_cancellation_slot(
        cancel->slot(), net::bind_executor(strand, [p = std::move(p)](Result r) mutable {
          p.set_value(std::move(r));
        })));
    const std::uint64_t registered = gate_->on_close([strand, cancel] {
      net::post(strand, [cancel] { cancel->emit(net::cancellation_type::terminal); });
    });
    auto rs = f.get();
    gate_->forget(registered);
    return rs;
  }

  std::shared_ptr<caller_lanes> lanes_;  // blocking single calls (closed before d_)
  std::unique_ptr<bt::dendrite> d_;
  std::shared_ptr<call_gate> gate_ = std::make_shared<call_gate>();
};

/// The async generator behind Dendrite.call_stream (Python: it is one).
constexpr const char* stream_iter_source = R"(
class _StreamEnd:
    """Marks the last queue item: (_stream_end, final synapse)."""

_stream_end = _StreamEnd()

async def _start_when_awaited(start):
    """Dendrite.forward's awaitable made outside a running loop: starts the call in the loop
    that awaits it."""
    return await start()

async def _stream_iter(queue, cancel, end):
    done = False
    try:
        while True:
            item = await queue.get()
            if type(item) is tuple and len(item) == 2 and item[0] is end:
                done = True
                yield item[1]
                return
            yield item
    finally:
        if not done:
            cancel()
)";

}  // namespace

void init_dendrite(py::module_& m) {
  py::exec(stream_iter_source, m.attr("__dict__"));
  py::class_<bt::axon_info>(m, "AxonInfo", "How a miner's axon is addressed (ip, port, hotkey).")
      .def(py::init([](std::string ip, std::int64_t port, std::string hotkey, std::string coldkey,
                       std::int64_t version, int ip_type) {
             if (port < 0 || port > 65535)
               throw py::value_error("port out of range: " + std::to_string(port));
             bt::axon_info a;
             a.ip = std::move(ip);
             a.port = static_cast<std::uint16_t>(port);
             a.hotkey = std::move(hotkey);
             a.coldkey = std::move(coldkey);
             a.version = version;
             a.ip_type = ip_type;
             return a;
           }),
           py::kw_only(), py::arg("ip"), py::arg("port"), py::arg("hotkey"),
           py::arg("coldkey") = "", py::arg("version") = bt::version_as_int, py::arg("ip_type") = 4)
      .def_readwrite("ip", &bt::axon_info::ip)
      .def_readwrite("port", &bt::axon_info::port)
      .def_readwrite("hotkey", &bt::axon_info::hotkey)
      .def_readwrite("coldkey", &bt::axon_info::coldkey)
      .def_readwrite("version", &bt::axon_info::version)
      .def_readwrite("ip_type", &bt::axon_info::ip_type)
      .def_readwrite("protocol", &bt::axon_info::protocol)
      .def("to_dict", [](const bt::axon_info& a) { return from_json(bt::to_json_value(a)); })
      .def("__eq__", [](const bt::axon_info& a, const bt::axon_info& b) { return a == b; })
      .def("__repr__", [](const bt::axon_info& a) {
        return "AxonInfo(ip='" + a.ip + "', port=" + std::to_string(a.port) + ", hotkey='" +
               a.hotkey + "')";
      });

  init_http_call_response(m);
  init_mixed_request(m);

  py::class_<py_dendrite>(m, "Dendrite",
                          "The validator's client: the C++ dendrite (keep-alive pool, one total "
                          "deadline per call, results in the order of the axons).")
      .def(py::init([](const bt::keypair& kp, const py::kwargs& kw) {
             // Every value field of bt::dendrite_options' table by its name (durations in
             // seconds); verify_responses as its name ("off", "if_present", "required").
             bt::dendrite_options o;
             apply_keywords(o, bt::dendrite_options::option_table(), kw, "Dendrite()", {},
                            [](auto& opts, const auto& m, py::handle v) {
                              using V = typename std::decay_t<decltype(m)>::value_type;
                              if constexpr (std::is_same_v<V, bt::response_verification>) {
                                opts.*m.ptr = verification_from(v.cast<std::string>());
                                return true;
                              } else {
                                return set_option(opts, m, v);
                              }
                            });
             return std::make_unique<py_dendrite>(kp, std::move(o));
           }),
           py::arg("keypair"))
      .def("query", &py_dendrite::query, py::arg("axons"), py::arg("synapse"),
           py::arg("timeout") = 12.0,
           "Blocking: one synapse per axon, in order (one synapse for a single axon). The GIL "
           "is released while the calls run; a single axon's call runs on the calling thread.")
      .def("forward", &py_dendrite::forward, py::arg("axons"), py::arg("synapse"),
           py::arg("timeout") = 12.0,
           "Awaitable with query()'s result: an asyncio future of the running loop (the calls "
           "start at once), or, called with no loop running (asyncio.run(d.forward(...))), a "
           "coroutine that starts them when awaited. Cancelling it cancels the C++ calls.")
      .def("call_stream", &py_dendrite::call_stream, py::arg("axon"), py::arg("synapse"),
           py::arg("timeout") = 12.0,
           "Async generator: the streamed body's bytes as they arrive, then the final synapse "
           "(status 200, 408 if the deadline cut the stream, ...). Closing it early cancels the "
           "call.")
      .def("epistula_call", &py_dendrite::plain_call<bt::wire_dialect::epistula>, py::arg("axon"),
           py::arg("method"), py::arg("path"), py::arg("json_body") = py::bytes(),
           py::arg("timeout") = 12.0,
           "Blocking Epistula v2 request (method, path) signed for axon.hotkey; json_body is "
           "sent verbatim if bytes, else serialised as JSON. Returns an HttpCallResponse; never "
           "raises for a failed call (its error and status say why). The GIL is released.")
      .def("async_epistula_call", &py_dendrite::async_plain_call<bt::wire_dialect::epistula>,
           py::arg("axon"), py::arg("method"), py::arg("path"), py::arg("json_body") = py::bytes(),
           py::arg("timeout") = 12.0,
           "Awaitable epistula_call (an asyncio future of the running loop, or a coroutine when "
           "called with no loop running, as forward); cancelling it cancels the C++ call.")
      .def("btauth_call", &py_dendrite::plain_call<bt::wire_dialect::btauth>, py::arg("axon"),
           py::arg("method"), py::arg("path"), py::arg("json_body") = py::bytes(),
           py::arg("timeout") = 12.0,
           "Blocking btauth/1 request (Bittensor SDK v11's signed HTTP requests): method and path "
           "(the request target as sent, ?query included) signed for axon.hotkey under a fresh "
           "nonce; json_body as in epistula_call. Returns an HttpCallResponse (its nonce: the "
           "X-Bittensor-Nonce sent); never raises for a failed call. The GIL is released.")
      .def("async_btauth_call", &py_dendrite::async_plain_call<bt::wire_dialect::btauth>,
           py::arg("axon"), py::arg("method"), py::arg("path"), py::arg("json_body") = py::bytes(),
           py::arg("timeout") = 12.0,
           "Awaitable btauth_call, as async_epistula_call; cancelling it cancels the C++ call.")
      .def("query_mixed", &py_dendrite::query_mixed, py::arg("requests"),
           py::arg("synapse") = py::none(), py::arg("timeout") = 12.0,
           "Blocking: one query to targets each in its own dialect. requests: MixedRequest "
           "entries, or axons (synapse targets). Returns one answer per request, in order: a "
           "Synapse (a copy of synapse, answered) for a synapse target, an HttpCallResponse "
           "for an Epistula or btauth target. The GIL is released.")
      .def("forward_mixed", &py_dendrite::forward_mixed, py::arg("requests"),
           py::arg("synapse") = py::none(), py::arg("timeout") = 12.0,
           "Awaitable query_mixed, as forward; cancelling it cancels the C++ calls.")
      .def_property_readonly("uuid", [](py_dendrite& d) { return d.get().uuid(); })
      .def_property_readonly("hotkey",
                             [](py_dendrite& d) { return d.get().hotkey().ss58_address(); })
      .def("stats",
           [](py_dendrite& d) {
             const auto s = d.stats();
             py::dict r;
             r["calls"] = s.calls;
             r["connections_opened"] = s.connections_opened;
             r["connections_reused"] = s.connections_reused;
             r["retries"] = s.retries;
             r["idle_connections"] = s.idle_connections;
             r["in_flight"] = s.in_flight;
             r["sessions_offered"] = s.sessions_offered;
             r["sessions_established"] = s.sessions_established;
             r["sessions_rejected"] = s.sessions_rejected;
             r["session_requests"] = s.session_requests;
             return r;
           })
      .def("close", &py_dendrite::close, "Cancels running calls and joins the I/O threads.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](py_dendrite& d, py::args) { d.close(); });
}

}  // namespace btpy

// bittensor_cpp.Axon over bt::axon: Python forward/blacklist/priority functions on routes of
// SynapseTypes.
//
// The GIL is taken only to run a Python callable and to build its argument; header parsing,
// signature checks, body reading and the field type checks (synapse_type::check_values: a
// request whose values do not fit the declared types is answered 400 before any Python runs)
// never hold it. A plain `def` forward runs on the axon's worker pool; an `async def` forward
// runs on an asyncio loop (the axon's own, a thread running loop.run_forever(), or the one
// given), awaited by a C++ coroutine that holds no thread meanwhile. A Python exception, or a
// return value that is neither None nor a synapse of the route's type, is answered
// 500 "Internal Server Error #<id>" and logged with its traceback on the logger "bittensor_cpp";
// the axon keeps serving. The request's deadline answers 408 whether or not Python returned
// (an async forward is then cancelled; a plain one runs on, its result discarded). stop() does
// not wait for a plain forward past drain_timeout: it is abandoned and named in a warning.
//
// Plain JSON routes (Axon.route, over bt::axon::route: Epistula v2) follow the same rules; their
// handler gets the body bytes, the parsed JSON and the verified caller (RequestContext) and
// returns (status, body). bt::json_handler is synchronous, so an `async def` handler runs on the
// loop while its worker waits with the GIL released (until the deadline, then it is cancelled).
#include "axon_routes.hpp"
#include "keyword_options.hpp"

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <cmath>

namespace btpy {
namespace {

/// The keyword options of Axon(): every value field of bt::axon_options' table by its name
/// (durations in seconds), except ip and port, which are arguments of their own.
bt::axon_options options_from(const std::string& ip, std::int64_t port, const py::kwargs& kw) {
  bt::axon_options o;
  o.ip = ip;
  if (port < 0 || port > 65535) throw py::value_error("port out of range: " + std::to_string(port));
  o.port = static_cast<std::uint16_t>(port);
  o.io_threads = 2;
  apply_keywords(o, bt::axon_options::option_table(), kw, "Axon()", {"ip", "port"},
                 [](auto& opts, const auto& m, py::handle v) { return set_option(opts, m, v); });
  return o;
}

class py_axon {
 public:
  py_axon(const bt::keypair& kp, bt::axon_options o, py::object loop) {
    if (!kp.has_secret()) throw bt_py_error("Axon: the keypair has no secret key");
    ax_ = std::make_unique<bt::axon>(kp, std::move(o));
    if (!loop.is_none()) loop_.obj = std::move(loop);
  }
  ~py_axon() { stop(); }

  void attach(std::shared_ptr<synapse_type> type, py::object forward, py::object blacklist,
              py::object priority, bool streaming) {
    if (!ax_) throw py::value_error("Axon is stopped");
    if (!PyCallable_Check(forward.ptr())) throw py::type_error("forward must be callable");
    auto r = std::make_shared<synapse_route>();
    const py::object iscoro = take_policy_callables(*r, blacklist, priority);
    r->type = type;
    r->forward.obj = forward;
    const bool is_async = iscoro(forward).cast<bool>();
    if (streaming && is_async)
      throw py::type_error(
          "a streaming forward is a plain function forward(s, send) (it runs "
          "on the worker pool; send() blocks until the chunk is written)");
    if (is_async) {
      r->loop.obj = ensure_loop();
      r->liveness = liveness_;
    }

    bt::route_options policy = make_policy(r);
    if (streaming) {
      ax_->attach(
          type->descriptor,
          [r](bt::dynamic_synapse& s, bt::stream_writer& w, const bt::request_context&) {
            stream_forward(r, s, w);
          },
          std::move(policy));
    } else if (is_async) {
      ax_->attach(
          type->descriptor,
          [r](bt::dynamic_synapse& s, const bt::request_context&) { return async_forward(r, s); },
          std::move(policy));
    } else {
      ax_->attach(
          type->descriptor,
          [r](bt::dynamic_synapse& s, const bt::request_context&) { sync_forward(r, s); },
          std::move(policy));
    }
    routes_.push_back(std::move(r));
  }

  void route(const std::string& method, const std::string& path, py::object handler,
             py::object blacklist, py::object priority, double timeout) {
    if (!ax_) throw py::value_error("Axon is stopped");
    if (!PyCallable_Check(handler.ptr())) throw py::type_error("handler must be callable");
    auto r = std::make_shared<json_route>();
    const py::object iscoro = take_policy_callables(*r, blacklist, priority);
    r->path = path;
    r->handler.obj = handler;
    if (iscoro(handler).cast<bool>()) r->loop.obj = ensure_loop();
    ax_->route(
        method, path,
        [r](std::string_view body, const bt::json& parsed, const bt::request_context& c) {
          return json_call(r, body, parsed, c);
        },
        make_json_policy(r, timeout));
    json_routes_.push_back(std::move(r));
  }

  /// Replaces the blacklist and priority of an attached route, e.g. the built-in "Synapse" ping
  /// (its forward stays the axon's own).
  void set_policy(const std::string& name, py::object blacklist, py::object priority) {
    if (!ax_) throw py::value_error("Axon is stopped");
    for (auto* f : {&blacklist, &priority})
      if (!f->is_none() && !PyCallable_Check(f->ptr()))
        throw py::type_error("blacklist and priority must be callable or None");
    auto r = std::make_shared<synapse_route>();
    for (const auto& x : routes_)
      if (x->type->name() == name) r->type = x->type;
    if (!r->type) {
      if (name != "Synapse") throw py::value_error("no route '" + name + "' is attached");
      r->type = py::module_::import("bittensor_cpp")
                    .attr("SynapseType")("Synapse", py::dict())
                    .cast<std::shared_ptr<synapse_type>>();
    }
    r->blacklist.obj = blacklist.is_none() ? py::object() : blacklist;
    r->priority.obj = priority.is_none() ? py::object() : priority;
    ax_->set_route_options(name, make_policy(r));
    routes_.push_back(std::move(r));
  }

  void start() {
    if (!ax_) throw py::value_error("Axon is stopped (an axon cannot be restarted)");
    if (own_loop_ && !loop_thread_.obj) {
      loop_thread_.obj =
          py::module_::import("threading")
              .attr("Thread")(py::arg("target") = loop_.obj.attr("run_forever"),
                              py::arg("name") = "bt-axon-asyncio", py::arg("daemon") = true);
      loop_thread_.obj.attr("start")();
    }
    py::gil_scoped_release r;
    ax_->start();
  }

  /// Bounded by drain_timeout (plus grace periods of about a second): a plain handler that has
  /// not returned by then is abandoned by bt::axon::stop() and named in a warning on the logger
  /// "bittensor_cpp". Its worker thread keeps the route (and so the Python callables) alive
  /// until it returns: bt::axon's destructor hands its state to that thread.
  void stop() {
    if (ax_) {
      std::vector<std::string> abandoned;
      {
        py::gil_scoped_release r;
        ax_->stop();
        abandoned = ax_->abandoned_handlers();
        {
          std::lock_guard l(liveness_->m);
          liveness_->alive = false;  // async forwards' done-callbacks post nothing from now on
        }
        ax_.reset();  // drops the routes' std::functions (unless a stuck handler holds them);
                      // their Python objects take the GIL
      }
      routes_.clear();
      json_routes_.clear();
      if (!abandoned.empty()) {
        py::list names;
        for (const auto& n : abandoned) names.append(n);
        py::module_::import("logging")
            .attr("getLogger")("bittensor_cpp")
            .attr("warning")(
                "Axon.stop(): %d handler(s) had not returned by the drain deadline and were "
                "abandoned (their results are dropped; each keeps its worker thread until it "
                "returns): %s",
                names.size(), py::str(", ").attr("join")(names));
      }
    }
    if (own_loop_ && loop_.obj) {
      if (loop_thread_.obj) {
        loop_.obj.attr("call_soon_threadsafe")(loop_.obj.attr("stop"));
        loop_thread_.obj.attr("join")();
        loop_thread_.obj = py::object();
      }
      loop_.obj.attr("close")();
      loop_.obj = py::object();
    }
  }

  bool running() const { return ax_ && ax_->running(); }

  bt::axon& get() {
    if (!ax_) throw py::value_error("Axon is stopped");
    return *ax_;
  }

 private:
  py::object ensure_loop() {
    if (!loop_.obj) {
      loop_.obj = py::module_::import("asyncio").attr("new_event_loop")();
      own_loop_ = true;
    }
    return loop_.obj;
  }

  std::unique_ptr<bt::axon> ax_;
  std::vector<std::shared_ptr<synapse_route>> routes_;
  std::vector<std::shared_ptr<json_route>> json_routes_;
  gil_object loop_, loop_thread_;
  bool own_loop_ = false;
  std::shared_ptr<axon_liveness> liveness_ = std::make_shared<axon_liveness>();
};

}  // namespace

void init_axon(py::module_& m) {
  py::exec(R"(
class ForwardError(Exception):
    """Raised by a forward function to answer with its own status (400 to 599) and message,
    as bittensor's SynapseException; any other exception is a 500 with a logged error id."""

    def __init__(self, status, message):
        if type(status) is not int or not 400 <= status <= 599:
            raise ValueError("ForwardError: status must be an int from 400 to 599")
        super().__init__(status, message)
        self.status = status
        self.message = str(message)
)",
           m.attr("__dict__"));
  py::class_<py_stream_writer, std::shared_ptr<py_stream_writer>>(
      m, "StreamWriter", "The send of a streaming forward(s, send), valid during the call.")
      .def("__call__", &py_stream_writer::send, py::arg("data"),
           "Sends data (bytes, or str as UTF-8) as one chunk once written to the socket; False "
           "once the stream is over (client gone, deadline, shutdown): then return. Raises "
           "RuntimeError once the forward has returned (its end waits for sends running).")
      .def_property_readonly("open", &py_stream_writer::open);
  py::class_<py_request_context>(
      m, "RequestContext",
      "The verified caller of a plain JSON route (Axon.route): hotkey is the Epistula-Signed-By "
      "address whose signature was checked.")
      .def_readonly("hotkey", &py_request_context::hotkey)
      .def_readonly("uuid", &py_request_context::uuid)
      .def_readonly("nonce", &py_request_context::nonce)
      .def_readonly("ip", &py_request_context::ip)
      .def_readonly("port", &py_request_context::port)
      .def_readonly("path", &py_request_context::path)
      .def_readonly("verified", &py_request_context::verified)
      .def("__repr__", [](const py_request_context& c) {
        return "RequestContext(path='" + c.path + "', hotkey='" + c.hotkey + "', uuid='" + c.uuid +
               "')";
      });
  py::class_<py_axon>(m, "Axon",
                      "The miner's server: the C++ axon with Python handlers. Options are "
                      "bt::axon_options' names as keywords, durations in seconds.")
      .def(py::init([](const bt::keypair& kp, const std::string& ip, std::int64_t port,
                       py::object loop, const py::kwargs& kw) {
             return std::make_unique<py_axon>(kp, options_from(ip, port, kw), std::move(loop));
           }),
           py::arg("keypair"), py::kw_only(), py::arg("ip") = "127.0.0.1", py::arg("port") = 0,
           py::arg("loop") = py::none())
      .def("attach", &py_axon::attach, py::arg("synapse_type"), py::arg("forward"),
           py::arg("blacklist") = py::none(), py::arg("priority") = py::none(),
           py::arg("streaming") = false,
           "Serves synapse_type at /<name>. forward(s) fills s's outputs (plain def: worker "
           "pool; async def: the asyncio loop). blacklist(s) -> bool or (bool, reason); "
           "priority(s) -> float; both see the header fields and the verified s.dendrite.hotkey. "
           "streaming=True: forward(s, send) sends the answer chunk by chunk with send(bytes).")
      .def("route", &py_axon::route, py::arg("method"), py::arg("path"), py::arg("handler"),
           py::kw_only(), py::arg("blacklist") = py::none(), py::arg("priority") = py::none(),
           py::arg("timeout") = 12.0,
           "Serves a plain JSON route (method 'POST' or 'GET', an exact path) authenticated "
           "with Epistula v2. handler(body: bytes, json, ctx: RequestContext) returns (status, "
           "json body); plain def: worker pool; async def: the asyncio loop, its worker waiting. "
           "blacklist(ctx) -> bool or (bool, reason); priority(ctx) -> float. timeout: the "
           "request's deadline in seconds (408 past it). Before start().")
      .def("set_policy", &py_axon::set_policy, py::arg("name"), py::arg("blacklist") = py::none(),
           py::arg("priority") = py::none(),
           "Replaces the blacklist and priority of an attached route, e.g. the built-in "
           "'Synapse' ping. Before start().")
      .def("start", &py_axon::start)
      .def("stop", &py_axon::stop,
           "Drains in-flight requests for up to drain_timeout, then stops; a plain handler "
           "still running is abandoned (named in a warning on the 'bittensor_cpp' logger), not "
           "waited for. Idempotent.")
      .def("info", [](py_axon& a) { return a.get().info(); })
      .def_property_readonly("port", [](py_axon& a) { return a.get().port(); })
      .def_property_readonly("running", &py_axon::running)
      .def_property_readonly("hotkey", [](py_axon& a) { return a.get().hotkey().ss58_address(); })
      .def("__enter__",
           [](py::object self) {
             self.cast<py_axon&>().start();
             return self;
           })
      .def("__exit__", [](py_axon& a, py::args) { a.stop(); });
}

}  // namespace btpy

// The hiredis <-> Asio adapter: see redis_asio.hpp.
//
// hiredis says what it wants (read and/or write readiness) through the hooks; the adapter keeps
// one wait of each kind outstanding while it is wanted and re-arms after each completion. The
// socket belongs to hiredis: the descriptor is released, never closed, on cleanup. Pending waits
// and posted flushes hold the adapter (shared_ptr) and find it detached (ac == nullptr) once
// hiredis let go.
#include "redis_asio.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <utility>

namespace bt::detail {

namespace {

namespace net = boost::asio;

struct adapter : std::enable_shared_from_this<adapter> {
  adapter(redisAsyncContext* c, const redis_strand& ex, std::function<void()> gone,
          std::size_t max_reply)
      : max_reply_bytes(max_reply), ac(c), sd(ex), on_gone(std::move(gone)) {}

  // ---- the reply bound (redis_asio.hpp) ----
  std::size_t max_reply_bytes;
  std::size_t reply_bytes = 0;  // built so far for the reply in progress
  bool too_large = false;       // set once; the context is being dropped for it
  redisReplyObjectFunctions bounded_fns{};
  redisReplyObjectFunctions* hiredis_fns = nullptr;  // the reader's own

  // Charges `bytes` to the reply that `task` belongs to (a task without a parent starts a new
  // reply); false when the reply would pass the bound.
  static bool charge(const redisReadTask* task, std::size_t bytes) {
    adapter& a = *static_cast<adapter*>(task->privdata);
    if (task->parent == nullptr) a.reply_bytes = 0;
    if (a.too_large || bytes > a.max_reply_bytes - std::min(a.reply_bytes, a.max_reply_bytes)) {
      a.too_large = true;
      return false;  // hiredis fails the reader (out of memory) and drops the connection
    }
    a.reply_bytes += bytes;
    return true;
  }
  static void* create_string(const redisReadTask* task, char* str, std::size_t len) {
    if (!charge(task, len)) return nullptr;
    return static_cast<adapter*>(task->privdata)->hiredis_fns->createString(task, str, len);
  }
  // An array's slots, and a reply object per element, are allocated when its length is read.
  template <class N>
  static void* create_array(const redisReadTask* task, N elements) {
    std::size_t n = 0;  // hiredis 0.14 passes an int (-1: a nil array), 1.x a size_t
    if constexpr (std::is_signed_v<N>)
      n = elements < 0 ? 0 : static_cast<std::size_t>(elements);
    else
      n = static_cast<std::size_t>(elements);
    constexpr std::size_t per_element = sizeof(void*) + sizeof(redisReply);
    if (n > SIZE_MAX / per_element || !charge(task, n * per_element)) return nullptr;
    return static_cast<adapter*>(task->privdata)->hiredis_fns->createArray(task, elements);
  }
  template <class N>
  static auto array_hook(void* (*)(const redisReadTask*, N)) {
    return &create_array<N>;
  }

  // The unparsed input: after hiredis consumed every complete reply, what is left belongs to
  // one reply in progress (a bulk string is kept whole until its last byte arrived).
  bool input_too_large() const {
    const redisReader* r = ac->c.reader;
    return r != nullptr && r->len - std::min(r->pos, r->len) > max_reply_bytes;
  }
  // Drops the context for an oversized reply (never from inside a hiredis call).
  void drop_too_large() {
    too_large = true;
    redisAsyncFree(ac);  // runs the pending callbacks with a null reply, then cleanup()
  }

  redisAsyncContext* ac;  // null once hiredis freed the context
  net::posix::stream_descriptor sd;
  std::function<void()> on_gone;
  std::shared_ptr<adapter> self;  // alive while attached
  bool want_read = false, want_write = false;
  bool reading = false, writing = false;  // a wait is outstanding
  bool flush_posted = false;              // a write handler is queued on the strand
  bool flushing = false;                  // inside redisAsyncHandleWrite, from flush()
  bool held = false;                      // redis_asio_write_now's scope: add_write only notes

  void arm_read() {
    if (reading || !want_read || ac == nullptr) return;
    reading = true;
    sd.async_wait(net::posix::descriptor_base::wait_read,
                  [a = shared_from_this()](const boost::system::error_code& ec) {
                    a->reading = false;
                    if (ec || a->ac == nullptr) return;
                    redisAsyncHandleRead(a->ac);  // may free the context (cleanup below)
                    if (a->ac != nullptr && a->input_too_large()) return a->drop_too_large();
                    a->arm_read();
                  });
  }
  void arm_write() {
    if (writing || !want_write || ac == nullptr) return;
    writing = true;
    sd.async_wait(net::posix::descriptor_base::wait_write,
                  [a = shared_from_this()](const boost::system::error_code& ec) {
                    a->writing = false;
                    if (ec || a->ac == nullptr) return;
                    redisAsyncHandleWrite(a->ac);
                    a->arm_write();
                  });
  }
  // Writes what hiredis has buffered, from a fresh handler (never from inside a hiredis call).
  // hiredis asks for write readiness again (add_write during `flushing`) only when the socket
  // took less than everything: then the adapter waits for writability.
  void post_flush() {
    if (flush_posted || ac == nullptr) return;
    flush_posted = true;
    net::post(sd.get_executor(), [a = shared_from_this()] {
      a->flush_posted = false;
      a->flush();
    });
  }
  // Writes what hiredis has buffered; never from inside a hiredis call.
  void flush() {
    if (ac == nullptr || !want_write || writing) return;
    flushing = true;
    redisAsyncHandleWrite(ac);  // may free the context (cleanup below)
    flushing = false;
    arm_write();
  }

  static adapter& of(void* p) { return *static_cast<adapter*>(p); }
  static void add_read(void* p) {
    adapter& a = of(p);
    a.want_read = true;
    a.arm_read();
  }
  static void del_read(void* p) { of(p).want_read = false; }  // a pending wait ends unused
  static void add_write(void* p) {
    adapter& a = of(p);
    a.want_write = true;
    // hiredis 0.14 marks a context connected on its first write event whatever the socket's
    // state, so until then (and after a partial write) only real writability may drive it.
    if (a.flushing || (a.ac->c.flags & REDIS_CONNECTED) == 0)
      a.arm_write();
    else if (!a.writing && !a.held)
      a.post_flush();
  }
  static void del_write(void* p) { of(p).want_write = false; }
  static void cleanup(void* p) {
    adapter& a = of(p);
    const std::shared_ptr<adapter> keep = std::move(a.self);
    if (a.too_large) {  // the reason on_gone reads, instead of hiredis's "Out of memory"
      redisContext& c = a.ac->c;
      c.err = REDIS_ERR_OTHER;
      std::snprintf(c.errstr, sizeof c.errstr, "reply exceeds %zu bytes", a.max_reply_bytes);
      a.ac->err = c.err;
      a.ac->errstr = c.errstr;
    }
    if (a.ac->c.reader != nullptr && a.ac->c.reader->fn == &a.bounded_fns)
      a.ac->c.reader->fn = a.hiredis_fns;  // the adapter (and its table) goes now
    a.ac->ev.data = nullptr;
    a.ac = nullptr;
    a.want_read = a.want_write = false;
    boost::system::error_code ignored;
    a.sd.cancel(ignored);
    a.sd.release();  // hiredis closes the socket itself
    if (a.on_gone) {
      auto fn = std::move(a.on_gone);
      fn();
    }
  }
};

}  // namespace

void redis_asio_write_now(redisAsyncContext* ac, void (*issue)(void*), void* arg) {
  if (ac == nullptr || ac->ev.data == nullptr || (ac->c.flags & REDIS_IN_CALLBACK) != 0) {
    issue(arg);  // not attached, or inside a reply's callback: the ordinary posted write
    return;
  }
  const std::shared_ptr<adapter> a = adapter::of(ac->ev.data).shared_from_this();
  a->held = true;
  issue(arg);
  a->held = false;
  a->flush();  // may free the context; a connect in progress waits for writability instead
}

bool redis_asio_attach(redisAsyncContext* ac, const redis_strand& ex, std::function<void()> on_gone,
                       std::size_t max_reply_bytes) {
  if (ac == nullptr || ac->ev.data != nullptr || ac->c.fd < 0) return false;
  redisReader* reader = ac->c.reader;
  if (reader == nullptr || reader->fn == nullptr) return false;
  auto a = std::make_shared<adapter>(ac, ex, std::move(on_gone), max_reply_bytes);
  boost::system::error_code ec;
  a->sd.assign(ac->c.fd, ec);
  if (ec) {
    a->sd.release();
    return false;
  }
  a->self = a;
  // Every reader task carries the reader's privdata (unused by hiredis itself): the adapter.
  a->hiredis_fns = reader->fn;
  a->bounded_fns = *reader->fn;
  a->bounded_fns.createString = &adapter::create_string;
  a->bounded_fns.createArray = adapter::array_hook(reader->fn->createArray);
  reader->fn = &a->bounded_fns;
  reader->privdata = a.get();
  ac->ev.data = a.get();
  ac->ev.addRead = &adapter::add_read;
  ac->ev.delRead = &adapter::del_read;
  ac->ev.addWrite = &adapter::add_write;
  ac->ev.delWrite = &adapter::del_write;
  ac->ev.cleanup = &adapter::cleanup;
  return true;
}

}  // namespace bt::detail

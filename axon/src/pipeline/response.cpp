#include "pipeline/response.hpp"

#include "state/axon_impl.hpp"
#include "transport/stream.hpp"

#include <bt/detail/text.hpp>
#include <bt/header_codec.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/json_body.hpp>
#include <bt/response_signature.hpp>
#include <bt/version.hpp>

#include <boost/beast/http/status.hpp>

#include <charconv>
#include <chrono>

namespace bt::detail {

namespace {

/// What a response head reserves up front: more than a synapse answer's head needs (about 1.2 KB
/// with the 20-odd bt_header_* fields).
constexpr std::size_t typical_head_bytes = 2048;

/// Writes each header as "name: value\r\n". The codec already emits lower-case names and values
/// without CR/LF; control characters are replaced once more because a header line that breaks
/// would let a client-supplied value inject headers.
class head_writer final : public header_sink {
 public:
  explicit head_writer(std::string& out) : out_(out) {}
  void add(std::string_view name, std::string_view value) override {
    out_.append(name);
    out_.append(": ", 2);
    // Branch-free scan first (vectorises); replacing is the rare path.
    bool control = false;
    for (const char ch : value) {
      const auto u = static_cast<unsigned char>(ch);
      control |= (u < 0x20) | (u == 0x7f);
    }
    const std::size_t start = out_.size();
    out_.append(value);
    if (control) {
      for (std::size_t i = start; i < out_.size(); ++i) {
        const auto u = static_cast<unsigned char>(out_[i]);
        if (u < 0x20 || u == 0x7f) out_[i] = ' ';
      }
    }
    out_.append("\r\n", 2);
  }

 private:
  std::string& out_;
};

void start_head(std::string& out, int status, std::size_t body_bytes, bool close,
                int retry_after_s) {
  out.clear();
  // One allocation for the whole head: built by appends from empty, it would reallocate at each
  // doubling.
  out.reserve(typical_head_bytes);
  out.append("HTTP/1.1 ");
  append_int(status, out);
  out.push_back(' ');
  const auto reason =
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  out.append(reason.data(), reason.size());
  out.append("\r\ncontent-type: application/json\r\ncontent-length: ");
  append_int(body_bytes, out);
  out.append("\r\n");
  if (close) out.append("connection: close\r\n");
  if (retry_after_s > 0) {
    out.append("retry-after: ");
    append_int(retry_after_s, out);
    out.append("\r\n");
  }
}

}  // namespace

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void add_head_field(response_buffers& out, std::string_view name, std::string_view value) {
  // The head ends with the empty line: take it off, append the field and put it back, in the
  // head's own buffer (no temporary line; the buffer, kept across requests, rarely grows).
  out.head.resize(out.head.size() - 2);
  out.head.append(name).append(": ").append(value).append("\r\n\r\n");
}

int build_synapse_response(response_buffers& out, const route& r, synapse& s, double process_time,
                           bool close, body_hash_memo& request_hash) {
  if (!s.axon.status_code) s.axon.status_code = 200;
  if (*s.axon.status_code == 200 && (!s.axon.status_message || s.axon.status_message->empty()))
    s.axon.status_message = "Success";
  s.axon.process_time = process_time;
  // The HTTP status is the synapse's (Python: JSONResponse(status_code=synapse.axon.status_code)).
  int status = static_cast<int>(*s.axon.status_code);
  if (*s.axon.status_code < 100 || *s.axon.status_code > 599) {
    status = 500;
    s.axon.status_code = 500;
  }
  const synapse_descriptor& d = *r.spec.type;
  out.body.clear();
  write_json_body(d, s, out.body, json_style::compact);
  start_head(out.head, status, out.body.size(), close, 0);
  head_writer w(out.head);
  to_headers(d, s, w,
             {.body_bytes = out.body.size(), .computed_body_hash = request_hash.current(d, s)});
  out.head.append("\r\n");
  return status;
}

void build_stream_head(std::string& out, const route& r, synapse& s, double process_time,
                       bool close, bool signed_trailer) {
  if (!s.axon.status_code) s.axon.status_code = 200;
  if (*s.axon.status_code == 200 && (!s.axon.status_message || s.axon.status_message->empty()))
    s.axon.status_message = "Success";
  s.axon.process_time = process_time;
  out.assign("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
  head_writer w(out);
  to_headers(*r.spec.type, s, w, {});
  out.append("transfer-encoding: chunked\r\n");
  if (signed_trailer) out.append("trailer: bt-response-signature\r\n");
  if (close) out.append("connection: close\r\n");
  out.append("\r\n");
}

void write_message_body(std::string& out, std::string_view message) {
  // Written in place, in one allocation for a message without escapes.
  out.clear();
  out.reserve(message.size() + 16);
  out.append("{\"message\":");
  append_json_string(out, message, json_style::compact);
  out.push_back('}');
}

void build_json_response(response_buffers& out, int status, bool close, int retry_after_s) {
  start_head(out.head, status, out.body.size(), close, retry_after_s);
  out.head.append("\r\n");
}

void build_error_response(const axon::impl& core, response_buffers& out, int status,
                          std::string_view message, const route* r, const synapse* headers,
                          bool verified, double process_time, bool close, int retry_after_s) {
  // Body: {"message": ...} compact, raw UTF-8 (Starlette's JSONResponse); invalid UTF-8 (a
  // client-supplied path, say) is replaced rather than failing the answer.
  write_message_body(out.body, message);
  start_head(out.head, status, out.body.size(), close, retry_after_s);
  head_writer w(out.head);
  const to_headers_options hopt{.body_bytes = out.body.size()};

  if (r == nullptr || headers == nullptr) {
    // Python answers unknown routes and unparsable headers with a fresh Synapse(): only the
    // status fields are set.
    synapse s;
    s.axon.status_code = status;
    s.axon.status_message = std::string(message);
    s.axon.process_time = process_time;
    to_headers(descriptor_of<synapse>(), s, w, hopt);
  } else {
    // The header synapse with the axon's stamps (PROTOCOL 5.3 step 5, 5.12): an object of the
    // route's type, so that name and placeholders are the type's, as Python's.
    auto obj = r->spec.make();
    static_cast<synapse&>(*obj) = *headers;
    terminal_info& ax = obj->axon;
    ax.version = version_as_int;
    ax.uuid = core.uuid;
    ax.nonce = wall_ns();
    ax.status_code = status;
    ax.status_message = std::string(message);
    ax.process_time = process_time;
    ax.signature.reset();
    // D29: only a request that passed verification gets a signed answer, and the message names
    // the verified caller and this axon's own hotkey, never what unverified headers claim:
    // otherwise anyone could have this axon sign a dot-joined message of their choosing.
    if (core.opts.sign_error_responses && core.hotkey.has_secret() && verified &&
        obj->dendrite.hotkey) {
      // "{axon.nonce}.{dendrite.hotkey}.{axon.hotkey}.{axon.uuid}"
      const std::string& mine = core.verifier.my_hotkey();
      ax.hotkey = mine;
      std::string& m = out.scratch;
      m.clear();
      append_int(*ax.nonce, m);
      m.push_back('.');
      m.append(*obj->dendrite.hotkey);
      m.push_back('.');
      m.append(mine);
      m.push_back('.');
      m.append(*ax.uuid);
      const auto sig = core.hotkey.sign(std::string_view(m));
      std::string text(2 + 2 * sig.size(), '\0');
      text[0] = '0';
      text[1] = 'x';
      write_hex(sig, text.data() + 2);
      ax.signature = std::move(text);
    }
    to_headers(*r->spec.type, *obj, w, hopt);
  }
  out.head.append("\r\n");
}

bool verified_identity::set(std::string_view caller_hotkey, std::string_view request_id) noexcept {
  hotkey_len_ = 0;
  request_id_len_ = 0;
  if (caller_hotkey.empty() || caller_hotkey.size() > max_part || request_id.size() > max_part)
    return false;
  caller_hotkey.copy(hotkey_.data(), caller_hotkey.size());
  request_id.copy(request_id_.data(), request_id.size());
  hotkey_len_ = static_cast<std::uint8_t>(caller_hotkey.size());
  request_id_len_ = static_cast<std::uint8_t>(request_id.size());
  return true;
}

bool verified_identity::set_synapse(const terminal_info& d) noexcept {
  if (!d.hotkey || !d.nonce || !d.uuid) {
    set({}, {});
    return false;
  }
  // "{nonce}.{uuid}", built in place (no temporary string).
  char id[max_part];
  char nonce_buf[number_buffer_size];
  const std::string_view nonce = format_int(*d.nonce, nonce_buf);
  if (nonce.size() + 1 + d.uuid->size() > max_part) {
    set({}, {});
    return false;
  }
  nonce.copy(id, nonce.size());
  id[nonce.size()] = '.';
  d.uuid->copy(id + nonce.size() + 1, d.uuid->size());
  return set(*d.hotkey, std::string_view(id, nonce.size() + 1 + d.uuid->size()));
}

bool answers_signed(const axon::impl& core) noexcept {
  return core.opts.sign_responses && !core.opts.insecure_skip_verification;
}

void sign_response(const axon::impl& core, response_buffers& out, int status,
                   const response_identity& id) {
  if (!answers_signed(core)) return;
  char nonce_buf[number_buffer_size];
  const std::string_view nonce = format_int(wall_ns(), nonce_buf);
  const std::string value = response_signature::sign(core.hotkey, nonce, id.caller_hotkey,
                                                     id.request_id, status, out.body);
  add_head_field(out, response_signature::header, value);
}

std::string build_stream_end(const axon::impl& core, const response_identity& id,
                             const sha256_digest& body_hash) {
  if (!answers_signed(core)) return std::string(last_chunk);
  std::string nonce;
  append_int(wall_ns(), nonce);
  std::string out = "0\r\n";
  out.append(response_signature::header).append(": ");
  out.append(response_signature::sign(core.hotkey, nonce, id.caller_hotkey, id.request_id, 200,
                                      body_hash));
  out.append("\r\n\r\n");
  return out;
}

}  // namespace bt::detail

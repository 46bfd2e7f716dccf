// The per-call codec of bt::dendrite: request encoding and response merging, without sockets
// (detail/dendrite_ops.hpp). The hot path: one body hash (constant for types without hash
// fields), one sr25519 signature, one JSON body and one header block per call, written into
// buffers that keep their capacity between calls.
#include <bt/detail/dendrite_ops.hpp>
#include <bt/detail/dendrite_stream.hpp>

#include <bt/body_hash.hpp>
#include <bt/btauth.hpp>
#include <bt/detail/text.hpp>
#include <bt/detail/uuid.hpp>
#include <bt/epistula.hpp>
#include <bt/header_codec.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>
#include <bt/python_str.hpp>

#include <sodium.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <optional>

namespace bt::detail {
namespace {

/// Appends "name: value\r\n" lines straight into the request head.
struct head_sink final : header_sink {
  std::string& out;
  explicit head_sink(std::string& o) : out(o) {}
  void add(std::string_view name, std::string_view value) override {
    out.append(name).append(": ").append(value).append("\r\n");
  }
};

bool is_hash_field(const synapse_descriptor& d, std::size_t index) noexcept {
  for (std::size_t h : d.hash_fields())
    if (h == index) return true;
  return false;
}

template <class V>
void take_if_set(std::optional<V>& to, const std::optional<V>& from) {
  if (from) to = *from;
}

/// The response head's axon block (PROTOCOL 6.4) over what the body said, then the dendrite's
/// status mirrors the axon's: the last step of call() and of call_stream() alike.
void merge_axon_headers(synapse& s, const synapse& h) {
  take_if_set(s.axon.status_code, h.axon.status_code);
  take_if_set(s.axon.status_message, h.axon.status_message);
  take_if_set(s.axon.process_time, h.axon.process_time);
  take_if_set(s.axon.version, h.axon.version);
  take_if_set(s.axon.nonce, h.axon.nonce);
  take_if_set(s.axon.uuid, h.axon.uuid);
  take_if_set(s.axon.signature, h.axon.signature);
  s.dendrite.status_code = s.axon.status_code;
  s.dendrite.status_message = s.axon.status_message;
}

}  // namespace

bool is_json_content_type(std::string_view value) noexcept {
  // media type only, parameters (charset=...) ignored, as aiohttp's content_type property.
  const auto semi = value.find(';');
  std::string_view mt = trim_ows(value.substr(0, semi));
  constexpr std::string_view app = "application/";
  if (mt.size() < app.size() || !iequals(mt.substr(0, app.size()), app)) return false;
  std::string_view sub = mt.substr(app.size());
  if (iequals(sub, "json")) return true;
  // application/<x>+json (aiohttp: ^application/(?:[\w.+-]+?\+)?json)
  if (sub.size() > 5 && iequals(sub.substr(sub.size() - 5), "+json")) {
    for (char c : sub.substr(0, sub.size() - 5)) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '+' || c == '-';
      if (!ok) return false;
    }
    return true;
  }
  return false;
}

std::string host_header(std::string_view ip, std::uint16_t port) {
  std::string h;
  // Room for "[ip]:65535" and no more: a short one ("127.0.0.1:8091") then stays in the
  // string itself, without a heap allocation.
  const bool v6 = ip.find(':') != std::string_view::npos;
  h.reserve(ip.size() + (v6 ? 2 : 0) + 6);
  if (v6) {
    h.push_back('[');
    h.append(ip);
    h.push_back(']');
  } else {
    h.append(ip);
  }
  h.push_back(':');
  append_int(port, h);
  return h;
}

void preset_request(synapse& s, const axon_info& target, double timeout, const request_identity& id,
                    std::string_view dendrite_ip) {
  s.timeout = timeout;
  // New blocks, as Python builds new TerminalInfo objects (PROTOCOL 4.2 steps 2-3).
  s.dendrite = terminal_info{};
  if (!dendrite_ip.empty()) s.dendrite.ip = std::string(dendrite_ip);
  s.dendrite.version = id.version;
  s.dendrite.uuid = std::string(id.uuid);
  s.dendrite.hotkey = std::string(id.hotkey);
  s.axon = terminal_info{};
  s.axon.ip = target.ip;
  s.axon.port = target.port;
  s.axon.hotkey = target.hotkey;
}

std::size_t begin_request(const synapse_descriptor& d, synapse& s, std::string_view dendrite_ip,
                          std::int64_t nonce, const request_identity& id, std::string& scratch) {
  if (!dendrite_ip.empty()) s.dendrite.ip = std::string(dendrite_ip);
  s.dendrite.nonce = nonce;
  s.dendrite.signature.reset();

  // "{nonce}.{dendrite_hotkey}.{axon_hotkey}.{uuid}.{body_hash}" (PROTOCOL 4.4)
  scratch.clear();
  append_int(nonce, scratch);
  scratch.push_back('.');
  scratch.append(id.hotkey);
  scratch.push_back('.');
  scratch.append(s.axon.hotkey ? std::string_view(*s.axon.hotkey) : std::string_view());
  scratch.push_back('.');
  scratch.append(id.uuid);
  scratch.push_back('.');
  const std::size_t hash_at = scratch.size();
  if (d.hash_fields().empty())
    scratch.append(d.constant_body_hash());
  else
    scratch.append(body_hash(d, s));
  return hash_at;
}

void finish_request(const synapse_descriptor& d, synapse& s, const signature_bytes* sig,
                    std::string_view host, std::string_view signed_message, std::size_t hash_at,
                    std::string& head, std::string& body) {
  if (sig) {  // null: dendrite_options::insecure_skip_signing (benchmarks), no signature sent
    std::string signature;
    signature.reserve(2 + 2 * sig->size());
    signature.append("0x");
    signature.append(to_hex(*sig));
    s.dendrite.signature = std::move(signature);
  }

  body.clear();
  write_json_body(d, s, body, json_style::python_dumps);

  head.clear();
  head.append("POST ").append(d.route()).append(" HTTP/1.1\r\nHost: ").append(host);
  head.append("\r\nContent-Type: application/json\r\nContent-Length: ");
  append_int(body.size(), head);
  head.append("\r\n");
  head_sink sink(head);
  to_headers(d, s, sink,
             to_headers_options{.body_bytes = body.size(),
                                .computed_body_hash = signed_message.substr(hash_at)});
  head.append("\r\n");
}

void encode_request(const synapse_descriptor& d, synapse& s, std::string_view dendrite_ip,
                    std::int64_t nonce, const request_identity& id, std::string_view host,
                    std::string& scratch, std::string& head, std::string& body) {
  const std::size_t hash_at = begin_request(d, s, dendrite_ip, nonce, id, scratch);
  std::optional<signature_bytes> sig;
  if (id.key) sig = id.key->sign(std::string_view(scratch));
  finish_request(d, s, sig ? &*sig : nullptr, host, scratch, hash_at, head, body);
}

std::error_code apply_response(const synapse_ref& ref, unsigned status,
                               const boost::beast::http::fields& headers, std::string_view body,
                               std::string& detail) {
  namespace http = boost::beast::http;
  const auto malformed = make_error_code(dendrite_errc::malformed_response);
  synapse& s = *ref.object;
  const synapse_descriptor& d = *ref.descriptor;

  // aiohttp's response.json() checks the content type before anything else.
  const auto ct = headers[http::field::content_type];
  if (!is_json_content_type(std::string_view(ct.data(), ct.size()))) {
    detail = "HTTP " + std::to_string(status) + " with content type '" +
             valid_utf8(std::string_view(ct.data(), ct.size())) + "', expected application/json";
    return malformed;
  }

  // Headers: every one checked (a malformed bt header value fails the call, as in Python), the
  // axon block's kept in a scratch base synapse.
  synapse h;
  if (error e = from_headers(headers, h, header_scope::axon_block); e) {
    detail = e.message();
    return malformed;
  }

  // A 200 body is read whole into a fresh object (so that a field it lacks merges as its
  // default, as Python's does), every value checked; only what the merge takes is built. A base
  // synapse's fresh object is a local one (no allocation).
  owned_synapse blank{nullptr, [](synapse*) {}};
  synapse base_blank;
  synapse* server = nullptr;
  std::optional<std::string> message;
  if (status == 200) {
    if (ref.make_blank == &make_blank_of<synapse>) {
      server = &base_blank;
    } else {
      blank = ref.make_blank(s);
      server = blank.get();
    }
    if (error e = read_json_body(d, body, *server, {.answer_status_only = true}); e) {
      detail = e.message();
      return malformed;
    }
  } else {
    json j;
    if (error e = parse_json(body, j); e) {
      detail = e.message();
      return malformed;
    }
    if (!j.is_object()) {
      detail = "HTTP " + std::to_string(status) + " body is not a JSON object";
      return malformed;
    }
    if (auto it = j.find("message"); it != j.end() && !it->is_null()) {
      if (!it->is_string()) {
        detail = "HTTP " + std::to_string(status) + " body: message is not a string";
        return malformed;
      }
      message = it->get<std::string>();
    }
  }

  // Everything checked: merge.
  if (server) {
    for (const field_descriptor& f : d.fields())
      if (!f.required() && !is_hash_field(d, f.index)) f.ops->assign(*server, s, f);
    s.axon.status_code = server->axon.status_code;
    s.axon.status_message = server->axon.status_message;
    s.axon.process_time = server->axon.process_time;
  } else {
    s.axon.status_code = static_cast<std::int64_t>(status);
    s.axon.status_message = std::move(message);
  }
  merge_axon_headers(s, h);
  return {};
}

std::error_code apply_stream_headers(synapse& s, const boost::beast::http::fields& headers,
                                     std::string& detail) {
  synapse h;
  if (error e = from_headers(headers, h, header_scope::axon_block); e) {
    detail = e.message();
    return make_error_code(dendrite_errc::malformed_response);
  }
  merge_axon_headers(s, h);
  return {};
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  append_python_text(text, out);  // a verbatim copy when the text is valid
  return out;
}

std::string plain_target_problem(std::string_view method, std::string_view path) {
  // RFC 9110 tchar; a method or path that could break the request line is never sent.
  auto tchar = [](unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  };
  if (method.empty() || !std::all_of(method.begin(), method.end(), tchar))
    return "invalid method '" + std::string(method) + "' (an HTTP token is required)";
  const bool path_ok =
      path.starts_with('/') && std::none_of(path.begin(), path.end(),
                                            [](unsigned char c) { return c <= 0x20 || c == 0x7f; });
  if (!path_ok)
    return "invalid path '" + std::string(path) +
           "' (it starts with '/' and has no spaces or control characters)";
  return {};
}

namespace {

/// One header of a plain request's dialect; an empty value is not sent (an optional header).
struct head_field {
  std::string_view name;
  std::string_view value;
};

/// A plain request's head: request line, Host, Content-Type application/json, Content-Length,
/// then the dialect's own fields; `head` is cleared first.
void encode_json_head(std::string_view method, std::string_view target, std::string_view host,
                      std::size_t body_bytes, std::initializer_list<head_field> fields,
                      std::string& head) {
  head.clear();
  head.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ").append(host);
  head.append("\r\nContent-Type: application/json\r\nContent-Length: ");
  append_int(body_bytes, head);
  for (const head_field& f : fields)
    if (!f.value.empty()) head.append("\r\n").append(f.name).append(": ").append(f.value);
  head.append("\r\n\r\n");
}

}  // namespace

void encode_epistula_head(std::string_view method, std::string_view path, std::string_view host,
                          const epistula::request_headers& h, std::size_t body_bytes,
                          std::string& head) {
  encode_json_head(method, path, host, body_bytes,
                   {{epistula::version_header, epistula::version},
                    {epistula::timestamp_header, h.timestamp},
                    {epistula::uuid_header, h.uuid},
                    {epistula::signed_by_header, h.signed_by},
                    {epistula::signed_for_header, h.signed_for},
                    {epistula::signature_header, h.signature}},
                   head);
}

void encode_btauth_head(std::string_view method, std::string_view target, std::string_view host,
                        const btauth::request_headers& h, std::size_t body_bytes,
                        std::string& head) {
  encode_json_head(method, target, host, body_bytes,
                   {{btauth::version_header, btauth::version},
                    {btauth::hotkey_header, h.hotkey},
                    {btauth::nonce_header, h.nonce},
                    {btauth::signature_header, h.signature},
                    {btauth::crypto_header, h.crypto},
                    {btauth::receiver_header, h.receiver}},
                   head);
}

}  // namespace bt::detail

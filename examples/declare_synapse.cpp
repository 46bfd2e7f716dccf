// Declaring synapse types and encoding them as a dendrite would (docs/message-model.md).
//
//   build/examples/example_declare_synapse
//
// Prints, for a Dummy, a richer prompting type and a dynamic synapse: the headers of
// to_headers() in emission order, the request body and the body hash; then decodes the
// headers and the body back.
#include <bt/body_hash.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>
#include <bt/synapse.hpp>

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace example {

// The subnet template's Dummy (also available as bt::examples::dummy in <bt/examples/dummy.hpp>):
//   class Dummy(bt.Synapse):
//       dummy_input: int
//       dummy_output: typing.Optional[int] = None
struct dummy : bt::synapse {
  std::int64_t dummy_input = 0;              // required: no default in Python
  std::optional<std::int64_t> dummy_output;  // Optional[int] = None

  // Each field named once: the wire name is the member's name.
  BT_SYNAPSE(dummy, "Dummy", BT_FIELD(dummy_input, bt::required), BT_FIELD(dummy_output))
};

// A nested value type: BT_DEFINE_TYPE_INTRUSIVE keeps the declared key order in bodies and in
// the str() the body hash uses.
struct sampling {
  double top_p = 1.0;
  std::int64_t max_tokens = 256;
  BT_DEFINE_TYPE_INTRUSIVE(sampling, top_p, max_tokens)
};

//   class TextPrompting(bt.Synapse):
//       roles: list[str]
//       messages: list[str]
//       completion: str = ""
//       temperature: float = 0.7
//       params: dict = {"top_p": 1.0, "max_tokens": 256}
//       seed: Optional[int] = None
//       required_hash_fields: ClassVar[tuple[str, ...]] = ("roles", "messages")
struct text_prompting : bt::synapse {
  std::vector<std::string> roles;
  std::vector<std::string> messages;
  std::string completion;
  double temperature = 0.7;
  sampling params;
  std::optional<std::int64_t> seed;

  // bt::hashed: one of required_hash_fields, hashed in declaration order.
  BT_SYNAPSE(text_prompting, "TextPrompting", BT_FIELD(roles, bt::required, bt::hashed),
             BT_FIELD(messages, bt::required, bt::hashed), BT_FIELD(completion),
             BT_FIELD(temperature), BT_FIELD(params), BT_FIELD(seed))
};

// The long form, for a wire name that is not a usable member name (here a C++ keyword) or a
// hashing order other than the declaration order:
//   class Templated(bt.Synapse):
//       template: str
//       values: dict = {}
//       required_hash_fields: ClassVar[tuple[str, ...]] = ("values", "template")
struct templated : bt::synapse {
  std::string template_;  // wire name "template"
  bt::json values = bt::json::object();

  static bt::synapse_schema<templated> schema() {
    return {.name = "Templated",
            .fields = {bt::field<&templated::template_>("template", bt::required),
                       bt::field<&templated::values>("values")},
            .hash_fields = {"values", "template"}};
  }
};

}  // namespace example

namespace {

template <class S>
void show(const char* title, const S& s) {
  std::string body = bt::to_json_body(s);  // the request form (Python json.dumps defaults)
  bt::header_list headers;
  bt::to_headers(s, headers, {.body_bytes = body.size()});
  std::cout << "== " << title << " (route " << bt::descriptor_for(s).route() << ")\n";
  for (const auto& [name, value] : headers.items) std::cout << name << ": " << value << "\n";
  std::cout << "\n" << body << "\n";
  std::cout << "body_hash: " << bt::body_hash(s) << "\n\n";
}

}  // namespace

int main() {
  example::dummy d;
  d.dummy_input = 1;
  d.dendrite.nonce = 1718000000123456789;
  d.dendrite.hotkey = "5Ccpd5yVAaSNdLKK8y2Axrdo8imbyuhXPc6C1zEZypcH78ww";
  d.axon.ip = "127.0.0.1";
  d.axon.port = 8091;
  show("Dummy", d);

  example::text_prompting p;
  p.roles = {"system", "user"};
  p.messages = {"Be terse.", "What's 2+2?"};
  p.timeout = 30;
  show("TextPrompting", p);

  example::templated t;
  t.template_ = "Hello, {name}!";
  t.values = {{"name", "miner"}};
  show("Templated", t);

  // The same kind of type, known only at run time.
  bt::error err;
  auto type = bt::make_dynamic_descriptor(
      "Echo", {{"prompt", bt::required}, {"completion", bt::field_kind::optional}},
      {"prompt", "completion"}, err);
  if (err) {
    std::cerr << err.message() << "\n";
    return 1;
  }
  bt::dynamic_synapse e(type);
  *e.get("prompt") = "ping";
  *e.get("completion") = "";
  show("Echo (dynamic)", e);

  // Decoding: headers fill the base part, the body fills everything.
  bt::header_list headers;
  bt::to_headers(p, headers);
  example::text_prompting from_headers_only;
  if (auto e2 = bt::from_headers(headers.items, from_headers_only)) {
    std::cerr << e2.message() << "\n";
    return 1;
  }
  example::text_prompting back;
  if (auto e3 = bt::from_json_body(bt::to_json_body(p), back)) {
    std::cerr << e3.message() << "\n";
    return 1;
  }
  std::cout << "decoded: timeout " << *from_headers_only.timeout << " from headers, "
            << back.messages.size() << " messages from the body, hash "
            << (bt::body_hash(back) == bt::body_hash(p) ? "matches" : "DIFFERS") << "\n";

  // A malformed header is an error naming the header, never a silent default.
  example::dummy bad;
  const std::vector<std::pair<std::string, std::string>> wire = {
      {"bt_header_dendrite_nonce", "12abc"}};
  std::cout << "malformed: " << bt::from_headers(wire, bad).message() << "\n";
  return 0;
}

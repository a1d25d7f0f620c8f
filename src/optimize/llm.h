// Chat-completion clients for `tacit optimize` (docs/optimize.md): any OpenAI-compatible server
// over HTTP(S) (libcurl from Debian's libcurl4-openssl-dev), a log of every exchange, and a replay
// of such a log that makes a run deterministic offline.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tacit::optimize {

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// A request that could not be answered (after the retries): the reason, for the proposal log.
class LlmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Llm {
 public:
  virtual ~Llm() = default;
  // The reply's text. Throws LlmError.
  virtual std::string chat(const std::vector<Message>& messages) = 0;
};

struct HttpOptions {
  std::string url;  // the server's base URL (".../v1") or the full ".../chat/completions"
  std::string model = "default";
  std::string api_key;  // sent as a bearer token when not empty
  std::chrono::milliseconds timeout{120000};
  int retries = 3;  // after the first attempt: on timeouts, connection errors, 429 and 5xx
  std::chrono::milliseconds backoff{500};  // doubled after each retry
  size_t max_reply_bytes = 1 << 20;        // a longer reply is an error, not read on
  double temperature = 0.7;
  uint64_t seed = 1;  // sent as the request's seed (servers that honour it are reproducible)
};

// The chat-completions endpoint over HTTP(S).
std::unique_ptr<Llm> httpLlm(HttpOptions options);

// Writes every exchange of `inner` to DIR/NNNN.json ({"request": [...], "reply": "..."} or
// {"request": [...], "error": "..."}) as it happens.
std::unique_ptr<Llm> loggedLlm(std::unique_ptr<Llm> inner, std::string dir);

// Answers from a log loggedLlm wrote, exchange by exchange in order (an exchange that failed
// fails again); running out of exchanges is an LlmError.
std::unique_ptr<Llm> replayLlm(const std::string& dir);

}  // namespace tacit::optimize

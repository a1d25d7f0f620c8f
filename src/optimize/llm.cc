#include "optimize/llm.h"

#include <curl/curl.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace tacit::optimize {
namespace {

using nlohmann::json;

json messagesJson(const std::vector<Message>& messages) {
  json a = json::array();
  for (const Message& m : messages)
    a.push_back({{"role", m.role}, {"content", m.content}});
  return a;
}

// libcurl's global state, initialised once for the process.
void curlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Body {
  std::string text;
  size_t limit = 0;
  bool too_long = false;
};

size_t collect(char* data, size_t size, size_t n, void* user) {
  Body& b = *static_cast<Body*>(user);
  if (b.text.size() + size * n > b.limit) {
    b.too_long = true;
    return 0;  // aborts the transfer
  }
  b.text.append(data, size * n);
  return size * n;
}

class HttpLlm : public Llm {
 public:
  explicit HttpLlm(HttpOptions o) : o_(std::move(o)) {
    curlOnce();
    const std::string suffix = "/chat/completions";
    endpoint_ = o_.url;
    if (endpoint_.size() < suffix.size() ||
        endpoint_.compare(endpoint_.size() - suffix.size(), suffix.size(), suffix) != 0) {
      while (!endpoint_.empty() && endpoint_.back() == '/')
        endpoint_.pop_back();
      endpoint_ += suffix;
    }
  }

  std::string chat(const std::vector<Message>& messages) override {
    const json request = {{"model", o_.model},
                          {"messages", messagesJson(messages)},
                          {"temperature", o_.temperature},
                          {"seed", o_.seed}};
    const std::string payload = request.dump();
    std::string last;
    auto wait = o_.backoff;
    for (int attempt = 0; attempt <= o_.retries; ++attempt) {
      if (attempt > 0) {
        std::this_thread::sleep_for(wait);
        wait *= 2;
      }
      Attempt a = post(payload);
      if (a.ok) return a.reply;
      last = a.error;
      if (!a.retry) break;
    }
    throw LlmError(last);
  }

 private:
  struct Attempt {
    bool ok = false, retry = false;
    std::string reply, error;
  };

  Attempt post(const std::string& payload) {
    std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) return {false, false, "", "libcurl could not start a request"};
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (!o_.api_key.empty())
      headers = curl_slist_append(headers, ("Authorization: Bearer " + o_.api_key).c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers, curl_slist_free_all);
    Body body{"", o_.max_reply_bytes, false};
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, endpoint_.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(o_.timeout.count()));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    const CURLcode rc = curl_easy_perform(c);
    if (body.too_long)
      return {false, false, "",
              "the reply is longer than " + std::to_string(o_.max_reply_bytes) + " bytes"};
    if (rc != CURLE_OK) {
      const bool transient = rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_COULDNT_CONNECT ||
                             rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
                             rc == CURLE_GOT_NOTHING;
      return {false, transient, "", std::string("HTTP request failed: ") + curl_easy_strerror(rc)};
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
      const bool transient = status == 429 || status >= 500;
      return {false, transient, "",
              "HTTP " + std::to_string(status) + ": " + body.text.substr(0, 200)};
    }
    try {
      const json reply = json::parse(body.text);
      const json& content = reply.at("choices").at(0).at("message").at("content");
      if (!content.is_string()) return {false, false, "", "the reply's content is not text"};
      return {true, false, content.get<std::string>(), ""};
    } catch (const json::exception& e) {
      return {false, false, "",
              std::string("the reply is not a chat completion (") + e.what() + ")"};
    }
  }

  HttpOptions o_;
  std::string endpoint_;
};

class LoggedLlm : public Llm {
 public:
  LoggedLlm(std::unique_ptr<Llm> inner, std::string dir)
      : inner_(std::move(inner)), dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
  }

  std::string chat(const std::vector<Message>& messages) override {
    json entry = {{"request", messagesJson(messages)}};
    try {
      std::string reply = inner_->chat(messages);
      entry["reply"] = reply;
      write(entry);
      return reply;
    } catch (const LlmError& e) {
      entry["error"] = e.what();
      write(entry);
      throw;
    }
  }

 private:
  void write(const json& entry) {
    char name[32];
    std::snprintf(name, sizeof(name), "%04d.json", next_++);
    std::ofstream(std::filesystem::path(dir_) / name) << entry.dump(2) << "\n";
  }

  std::unique_ptr<Llm> inner_;
  std::string dir_;
  int next_ = 0;
};

class ReplayLlm : public Llm {
 public:
  explicit ReplayLlm(std::string dir) : dir_(std::move(dir)) {}

  std::string chat(const std::vector<Message>&) override {
    char name[32];
    std::snprintf(name, sizeof(name), "%04d.json", next_++);
    const std::filesystem::path file = std::filesystem::path(dir_) / name;
    std::ifstream in(file);
    if (!in) throw LlmError("the replayed log has no exchange " + file.string());
    json entry;
    try {
      entry = json::parse(in);
    } catch (const json::exception& e) {
      throw LlmError(file.string() + ": not a logged exchange (" + e.what() + ")");
    }
    if (entry.contains("reply") && entry["reply"].is_string())
      return entry["reply"].get<std::string>();
    if (entry.contains("error") && entry["error"].is_string())
      throw LlmError(entry["error"].get<std::string>());
    throw LlmError(file.string() + ": an exchange with neither a reply nor an error");
  }

 private:
  std::string dir_;
  int next_ = 0;
};

}  // namespace

std::unique_ptr<Llm> httpLlm(HttpOptions options) {
  return std::make_unique<HttpLlm>(std::move(options));
}

std::unique_ptr<Llm> loggedLlm(std::unique_ptr<Llm> inner, std::string dir) {
  return std::make_unique<LoggedLlm>(std::move(inner), std::move(dir));
}

std::unique_ptr<Llm> replayLlm(const std::string& dir) {
  return std::make_unique<ReplayLlm>(dir);
}

}  // namespace tacit::optimize

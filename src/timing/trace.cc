// Chrome trace-event JSON (the "JSON Array/Object Format" of the Trace Event Format document,
// read by chrome://tracing and ui.perfetto.dev): complete events ("ph": "X") on one track per
// engine and one for the memory port, thread-name metadata for the tracks. Streamed: a trace of
// a million instructions is written without building it in memory.
#include "support/strings.h"
#include "timing/timing.h"

namespace tacit::timing {
namespace {

void threadName(std::ostream& out, size_t tid, const std::string& name) {
  out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": " << tid
      << ", \"args\": {\"name\": " << quote(name, Escapes::kJson) << "}},\n";
}

}  // namespace

void Simulator::writeChromeTrace(std::ostream& out) const {
  out << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"isa\": "
      << quote(isa_.name, Escapes::kJson)
      << ", \"time unit\": \"one cycle is shown as one microsecond\", \"truncated\": "
      << (truncated_ ? "true" : "false") << "},\n\"traceEvents\": [\n";
  out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {\"name\": "
      << quote(isa_.name, Escapes::kJson) << "}},\n";
  for (size_t i = 0; i < engines_.size(); ++i)
    threadName(out, i, engines_[i].use.name);
  size_t port = engines_.size();
  threadName(out, port, "memory port");
  bool first = true;
  auto event = [&](const std::string& name, size_t tid, int64_t ts, int64_t dur,
                   const std::string& args) {
    out << (first ? "" : ",\n") << "{\"ph\": \"X\", \"name\": " << quote(name, Escapes::kJson)
        << ", \"pid\": 0, \"tid\": " << tid << ", \"ts\": " << ts << ", \"dur\": " << dur
        << ", \"args\": {" << args << "}}";
    first = false;
  };
  for (const Event& e : events_) {
    const std::string& name = isa_.instructions[static_cast<size_t>(e.instruction)].name.text;
    event(name, static_cast<size_t>(e.engine), e.start, e.finish - e.start,
          "\"dispatch\": " + std::to_string(e.dispatch) + ", \"interval\": " +
              std::to_string(e.interval) + ", \"hbm_bytes\": " + std::to_string(e.hbm_bytes));
    if (e.port_end > e.port_start)
      event(name, port, e.port_start, e.port_end - e.port_start,
            "\"bytes\": " + std::to_string(e.hbm_bytes));
  }
  out << "\n]}\n";
}

}  // namespace tacit::timing

// Equality-saturation benchmarks for the generic e-graph engine: a classic arithmetic rule set and
// a tensor-shaped one, plus runs that measure how precisely the node and time limits hold.
//
//   egraph_bench            all benchmarks (a table on stdout)
//   egraph_bench --quick    smaller limits (a smoke test)
//
// Columns: e-nodes at the end, iterations, wall time of Runner::run, e-nodes added per second
// (live e-nodes gained / run time), share of run time spent in search / apply / rebuild
// (rebuild includes building the sorted class index), peak RSS of the process during the run
// (VmHWM, reset before each run through /proc/self/clear_refs) and the engine's own peak
// memoryBytes().
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "egraph/all.h"

namespace tacit::egraph {
namespace {

// --- memory -------------------------------------------------------------------------------------

bool resetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  return static_cast<bool>(f);
}

double peakRssMb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// --- the arithmetic benchmark -------------------------------------------------------------------

struct Math {
  std::shared_ptr<Language> lang = std::make_shared<Language>();
  OpId add, mul, sub, num, var;
  Math() {
    add = lang->addOp("+", 2);
    mul = lang->addOp("*", 2);
    sub = lang->addOp("-", 2);
    num = lang->addOp("num", 0);
    var = lang->addOp("var", 0);
    OpId n = num;
    lang->setAttrParser([n](Language& l, OpId op, std::string_view text) {
      return op == n ? l.attrs().internInt(std::stoll(std::string(text))) : l.attrs().intern(text);
    });
    lang->setAttrFormatter([n](const Language& l, OpId op, AttrId a) {
      return op == n ? std::to_string(l.attrs().intValue(a)) : std::string(l.attrs().bytes(a));
    });
  }
};

// Constant folding: the value of a class made of numbers; modify() adds the folded num node.
class ConstFold : public TypedAnalysis<std::optional<int64_t>> {
 public:
  explicit ConstFold(const Math& m) : m_(m) {}
  std::optional<int64_t> make(const EGraph& g, const ENode& n) override {
    if (n.op() == m_.num) return g.language().attrs().intValue(n.attr());
    if (n.arity() != 2) return std::nullopt;
    auto x = data(n.child(0)), y = data(n.child(1));
    if (!x || !y) return std::nullopt;
    // Wrap-around arithmetic: the benchmark's constants stay small, and it is well defined.
    auto ux = static_cast<uint64_t>(*x), uy = static_cast<uint64_t>(*y);
    if (n.op() == m_.add) return static_cast<int64_t>(ux + uy);
    if (n.op() == m_.mul) return static_cast<int64_t>(ux * uy);
    if (n.op() == m_.sub) return static_cast<int64_t>(ux - uy);
    return std::nullopt;
  }
  DidMerge merge(std::optional<int64_t>& into, std::optional<int64_t> from) override {
    if (into && from && *into != *from) throw std::runtime_error("constant folding conflict");
    DidMerge d{!into && from.has_value(), into.has_value() && !from};
    if (!into) into = from;
    return d;
  }
  void modify(EGraph& g, ClassId c) override {
    if (auto v = data(c)) g.unite(c, g.add(m_.num, g.language().attrs().internInt(*v)));
  }

 private:
  const Math& m_;
};

std::vector<Rewrite> mathRules(Math& m) {
  Language& l = *m.lang;
  auto rw = [&](const char* name, const char* lhs, const char* rhs) {
    return Rewrite::parse(l, name, lhs, rhs);
  };
  std::vector<Rewrite> rules;
  rules.push_back(rw("comm-add", "(+ ?a ?b)", "(+ ?b ?a)"));
  rules.push_back(rw("comm-mul", "(* ?a ?b)", "(* ?b ?a)"));
  rules.push_back(rw("assoc-add", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)"));
  rules.push_back(rw("assoc-mul", "(* ?a (* ?b ?c))", "(* (* ?a ?b) ?c)"));
  rules.push_back(rw("sub-canon", "(- ?a ?b)", "(+ ?a (* num[-1] ?b))"));
  rules.push_back(rw("zero-add", "(+ ?a num[0])", "?a"));
  rules.push_back(rw("zero-mul", "(* ?a num[0])", "num[0]"));
  rules.push_back(rw("one-mul", "(* ?a num[1])", "?a"));
  rules.push_back(rw("cancel-sub", "(- ?a ?a)", "num[0]"));
  rules.push_back(rw("distribute", "(* ?a (+ ?b ?c))", "(+ (* ?a ?b) (* ?a ?c))"));
  rules.push_back(rw("factor", "(+ (* ?a ?b) (* ?a ?c))", "(* ?a (+ ?b ?c))"));
  return rules;
}

const char* kMathInputs[] = {
    "(+ (* var[x] (+ var[y] var[z])) (* (- var[x] num[1]) (- var[y] var[z])))",
    "(* (+ var[a] (+ var[b] num[2])) (- (* var[c] var[d]) (* num[3] var[a])))",
    ("(- (+ (* var[x] var[x]) (* num[2] (* var[x] var[y])))"
     " (* (+ var[x] var[y]) (+ var[x] var[y])))"),
};

// --- the tensor benchmark -----------------------------------------------------------------------

using Dims = std::vector<int64_t>;

struct Tensor {
  std::shared_ptr<Language> lang = std::make_shared<Language>();
  OpId input, transpose, reshape, slice, concat, addt;
  Tensor() {
    input = lang->addOp("input", 0);          // attr: name + dims
    transpose = lang->addOp("transpose", 1);  // attr: permutation
    reshape = lang->addOp("reshape", 1);      // attr: dims
    slice = lang->addOp("slice", 1);          // attr: starts ++ limits
    concat = lang->addOp("concat", 2);        // attr: dimension
    addt = lang->addOp("add", 2);
  }
  AttrTable& attrs() { return lang->attrs(); }
  AttrId ints(const Dims& v) { return attrs().internInts(v); }
  // Decoded integer-list attributes, memoised (references stay valid: node-based map).
  const Dims& ints(AttrId a) const {
    auto it = decoded_.find(a.value);
    if (it == decoded_.end()) it = decoded_.emplace(a.value, lang->attrs().intsValue(a)).first;
    return it->second;
  }

 private:
  mutable std::unordered_map<uint32_t, Dims> decoded_;
};

// Shape of every class; merging classes of different shapes is the "internal error" case.
class ShapeAnalysis : public TypedAnalysis<Dims> {
 public:
  explicit ShapeAnalysis(const Tensor& t) : t_(t) {}
  Dims make(const EGraph&, const ENode& n) override {
    if (n.op() == t_.input) {
      AttrReader r(t_.lang->attrs().bytes(n.attr()));
      r.str();
      return r.ints();
    }
    if (n.op() == t_.reshape) return t_.ints(n.attr());
    const Dims& x = data(n.child(0));
    if (n.op() == t_.transpose) {
      const Dims& p = t_.ints(n.attr());
      Dims out(p.size());
      for (size_t i = 0; i < p.size(); ++i)
        out[i] = x[static_cast<size_t>(p[i])];
      return out;
    }
    if (n.op() == t_.slice) {
      const Dims& a = t_.ints(n.attr());
      Dims out(x.size());
      for (size_t i = 0; i < x.size(); ++i)
        out[i] = a[x.size() + i] - a[i];
      return out;
    }
    if (n.op() == t_.concat) {
      Dims out = x;
      auto d = static_cast<size_t>(t_.lang->attrs().intValue(n.attr()));
      out[d] += data(n.child(1))[d];
      return out;
    }
    return x;  // add
  }
  DidMerge merge(Dims& into, Dims from) override {
    if (into != from) throw std::runtime_error("merging classes with different shapes");
    return {};
  }

 private:
  const Tensor& t_;
};

std::vector<Rewrite> tensorRules(Tensor& t, ShapeAnalysis& shapes) {
  Language& l = *t.lang;
  std::vector<Rewrite> rules;
  auto P = [&](const char* text) { return Pattern::parse(l, text); };
  auto isIdentity = [&t](const AttrTable&, AttrId a) {
    const Dims& p = t.ints(a);
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  ParseOptions opts;
  opts.predicates["identity"] = isIdentity;

  {  // transpose(transpose(x, q), p) = transpose(x, q o p)
    Pattern lhs = P("(transpose[?p] (transpose[?q] ?x))");
    Var x = lhs.var("x");
    AttrVar p = lhs.attrVar("p"), q = lhs.attrVar("q");
    rules.emplace_back("transpose-transpose", lhs,
                       [&t, x, p, q](EGraph& g, ClassId, const Subst& s) {
                         const Dims &pp = t.ints(s[p]), &qq = t.ints(s[q]);
                         thread_local Dims r;  // no allocation per application
                         r.assign(pp.size(), 0);
                         for (size_t i = 0; i < pp.size(); ++i)
                           r[i] = qq[static_cast<size_t>(pp[i])];
                         return std::optional<ClassId>(g.add(t.transpose, t.ints(r), {s[x]}));
                       });
  }
  rules.push_back(
      Rewrite::parse(l, "transpose-identity", "(transpose[*:identity] ?x)", "?x", opts));
  rules.push_back(
      Rewrite::parse(l, "reshape-reshape", "(reshape[?s] (reshape[*] ?x))", "(reshape[?s] ?x)"));
  {  // reshape to the operand's own shape
    Pattern lhs = P("(reshape[?s] ?x)");
    Var x = lhs.var("x");
    AttrVar sv = lhs.attrVar("s");
    Rewrite r("reshape-noop", lhs, Pattern::parse(l, "?x"));
    r.when([&t, &shapes, x, sv](const EGraph&, ClassId, const Subst& s) {
      return shapes.data(s[x]) == t.ints(s[sv]);
    });
    rules.push_back(std::move(r));
  }
  {  // slice(slice(x, b), a) = slice(x, b.start + a)
    Pattern lhs = P("(slice[?a] (slice[?b] ?x))");
    Var x = lhs.var("x");
    AttrVar a = lhs.attrVar("a"), b = lhs.attrVar("b");
    rules.emplace_back("slice-slice", lhs, [&t, x, a, b](EGraph& g, ClassId, const Subst& s) {
      const Dims &aa = t.ints(s[a]), &bb = t.ints(s[b]);
      size_t n = aa.size() / 2;
      thread_local Dims r;  // no allocation per application
      r.assign(2 * n, 0);
      for (size_t i = 0; i < n; ++i) {
        r[i] = bb[i] + aa[i];
        r[n + i] = bb[i] + aa[n + i];
      }
      return std::optional<ClassId>(g.add(t.slice, t.ints(r), {s[x]}));
    });
  }
  {  // slicing everything is the identity
    Pattern lhs = P("(slice[?a] ?x)");
    Var x = lhs.var("x");
    AttrVar a = lhs.attrVar("a");
    Rewrite r("slice-full", lhs, Pattern::parse(l, "?x"));
    r.when([&t, &shapes, x, a](const EGraph&, ClassId, const Subst& s) {
      const Dims& aa = t.ints(s[a]);
      const Dims& sh = shapes.data(s[x]);
      for (size_t i = 0; i < sh.size(); ++i)
        if (aa[i] != 0 || aa[sh.size() + i] != sh[i]) return false;
      return true;
    });
    rules.push_back(std::move(r));
  }
  {  // a slice inside one operand of a concat
    Pattern lhs = P("(slice[?a] (concat[?d] ?x ?y))");
    Var x = lhs.var("x"), y = lhs.var("y");
    AttrVar a = lhs.attrVar("a"), d = lhs.attrVar("d");
    rules.emplace_back(
        "slice-concat", lhs,
        [&t, &shapes, x, y, a, d](EGraph& g, ClassId, const Subst& s) -> std::optional<ClassId> {
          Dims aa = t.ints(s[a]);
          auto dim = static_cast<size_t>(t.attrs().intValue(s[d]));
          size_t n = aa.size() / 2;
          int64_t split = shapes.data(s[x])[dim];
          if (aa[n + dim] <= split) return g.add(t.slice, s[a], {s[x]});
          if (aa[dim] >= split) {
            aa[dim] -= split;
            aa[n + dim] -= split;
            return g.add(t.slice, t.ints(aa), {s[y]});
          }
          return std::nullopt;  // straddles both operands
        });
  }
  {  // concat of two adjacent slices of one value (repeated ?x)
    Pattern lhs = P("(concat[?d] (slice[?a] ?x) (slice[?b] ?x))");
    Var x = lhs.var("x");
    AttrVar a = lhs.attrVar("a"), b = lhs.attrVar("b"), d = lhs.attrVar("d");
    rules.emplace_back(
        "concat-slices", lhs,
        [&t, x, a, b, d](EGraph& g, ClassId, const Subst& s) -> std::optional<ClassId> {
          Dims aa = t.ints(s[a]), bb = t.ints(s[b]);
          auto dim = static_cast<size_t>(t.attrs().intValue(s[d]));
          size_t n = aa.size() / 2;
          for (size_t i = 0; i < n; ++i)
            if (i != dim && (aa[i] != bb[i] || aa[n + i] != bb[n + i])) return std::nullopt;
          if (aa[n + dim] != bb[dim]) return std::nullopt;
          aa[n + dim] = bb[n + dim];
          return g.add(t.slice, t.ints(aa), {s[x]});
        });
  }
  {  // transpose distributes over concat
    Pattern lhs = P("(transpose[?p] (concat[?d] ?x ?y))");
    Var x = lhs.var("x"), y = lhs.var("y");
    AttrVar p = lhs.attrVar("p"), d = lhs.attrVar("d");
    rules.emplace_back(
        "transpose-concat", lhs, [&t, x, y, p, d](EGraph& g, ClassId, const Subst& s) {
          const Dims& pp = t.ints(s[p]);
          int64_t dim = t.attrs().intValue(s[d]);
          int64_t out_dim = std::find(pp.begin(), pp.end(), dim) - pp.begin();
          ClassId tx = g.add(t.transpose, s[p], {s[x]});
          ClassId ty = g.add(t.transpose, s[p], {s[y]});
          return std::optional<ClassId>(g.add(t.concat, t.attrs().internInt(out_dim), {tx, ty}));
        });
  }
  {  // slice of a transpose = transpose of a slice
    Pattern lhs = P("(slice[?a] (transpose[?p] ?x))");
    Var x = lhs.var("x");
    AttrVar a = lhs.attrVar("a"), p = lhs.attrVar("p");
    rules.emplace_back("slice-transpose", lhs, [&t, x, a, p](EGraph& g, ClassId, const Subst& s) {
      const Dims &aa = t.ints(s[a]), &pp = t.ints(s[p]);
      thread_local Dims r;  // no allocation per application
      r.assign(aa.size(), 0);
      size_t n = pp.size();
      for (size_t i = 0; i < n; ++i) {
        r[static_cast<size_t>(pp[i])] = aa[i];
        r[n + static_cast<size_t>(pp[i])] = aa[n + i];
      }
      ClassId sl = g.add(t.slice, t.ints(r), {s[x]});
      return std::optional<ClassId>(g.add(t.transpose, s[p], {sl}));
    });
  }
  {  // tiling: split a value in two halves along its first dimension (while it is >= 16)
    Pattern lhs = P("?x");
    Var x = lhs.var("x");
    rules.emplace_back(
        "split", lhs,
        [&t, &shapes, x](EGraph& g, ClassId, const Subst& s) -> std::optional<ClassId> {
          Dims sh = shapes.data(s[x]);
          if (sh.empty() || sh[0] < 16 || sh[0] % 2 != 0) return std::nullopt;
          size_t n = sh.size();
          Dims lo(2 * n, 0), hi(2 * n, 0);
          for (size_t i = 0; i < n; ++i)
            lo[n + i] = hi[n + i] = sh[i];
          lo[n] = hi[0] = sh[0] / 2;
          ClassId a = g.add(t.slice, t.ints(lo), {s[x]});
          ClassId b = g.add(t.slice, t.ints(hi), {s[x]});
          return g.add(t.concat, t.attrs().internInt(0), {a, b});
        });
  }
  rules.push_back(Rewrite::parse(l, "slice-add", "(slice[?a] (add ?x ?y))",
                                 "(add (slice[?a] ?x) (slice[?a] ?y))"));
  rules.push_back(Rewrite::parse(l, "transpose-add", "(transpose[?p] (add ?x ?y))",
                                 "(add (transpose[?p] ?x) (transpose[?p] ?y))"));
  rules.push_back(Rewrite::parse(l, "add-comm", "(add ?x ?y)", "(add ?y ?x)"));
  return rules;
}

// A few kernels' worth of data movement on n x n and n x n/2 inputs (the tiling rule splits the
// first dimension down to 16, so n sets the size of the saturated e-graph).
std::vector<ClassId> tensorInputs(EGraph& g, Tensor& t, int64_t n) {
  auto in = [&](const char* name, Dims dims) {
    return g.add(t.input, t.attrs().intern(AttrWriter().str(name).ints(dims).bytes()));
  };
  ClassId a = in("A", {n, n}), b = in("B", {n, n}), c = in("C", {n, n / 2});
  auto tr = [&](ClassId x) { return g.add(t.transpose, t.ints({1, 0}), {x}); };
  ClassId r1 = tr(g.add(t.addt, {tr(a), b}));
  ClassId cat = g.add(t.concat, t.attrs().internInt(1), {c, c});
  ClassId r2 = g.add(t.slice, t.ints({0, 0, n, n}), {g.add(t.addt, {cat, a})});
  ClassId r3 = g.add(t.reshape, t.ints({n, n}),
                     {g.add(t.reshape, t.ints({n / 4, n * 4}), {g.add(t.addt, {a, b})})});
  return {r1, r2, r3};
}

// --- runs ---------------------------------------------------------------------------------------

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Row {
  std::string name;
  RunReport report;
  double cpu_seconds = 0;  // process CPU time of the run (the machine may be shared)
  double rss_mb = 0;
};

void printHeader() {
  std::printf("%-22s %-15s %5s %8s %8s %8s %8s %10s %10s %7s %7s %8s %7s %7s %8s\n", "benchmark",
              "stop", "iters", "e-nodes", "classes", "wall ms", "cpu ms", "nodes/s", "nodes/cpu-s",
              "search%", "apply%", "rebuild%", "RSS MB", "eng MB", "match MB");
}

void printRow(const Row& r) {
  const RunReport& rep = r.report;
  double total = rep.seconds > 0 ? rep.seconds : 1e-9;
  double added = static_cast<double>(rep.nodes - std::min(rep.nodes, rep.initial_nodes));
  std::printf(
      "%-22s %-15s %5zu %8zu %8zu %8.1f %8.1f %10.0f %10.0f %7.1f %7.1f %8.1f %7.1f %7.1f %8.1f\n",
      r.name.c_str(), std::string(stopReasonName(rep.stop)).c_str(), rep.iterations.size(),
      rep.nodes, rep.classes, rep.seconds * 1e3, r.cpu_seconds * 1e3, added / total,
      added / std::max(r.cpu_seconds, 1e-9), 100 * rep.search_seconds / total,
      100 * rep.apply_seconds / total, 100 * rep.rebuild_seconds / total, r.rss_mb,
      static_cast<double>(rep.peak_memory_bytes) / (1 << 20),
      static_cast<double>(rep.peak_match_bytes) / (1 << 20));
  std::fflush(stdout);
}

Row runRules(const std::string& name, EGraph& g, std::span<const Rewrite> rules, Limits limits,
             bool backoff) {
  Runner runner(g, limits);
  if (!backoff) runner.setScheduler(std::make_unique<SimpleScheduler>());
  double cpu = cpuSeconds();
  Row row{name, runner.run(rules), 0, 0};
  row.cpu_seconds = cpuSeconds() - cpu;
  row.rss_mb = peakRssMb();
  return row;
}

Row runMath(const std::string& name, Limits limits, bool backoff) {
  Math m;
  resetPeakRss();
  EGraph g(m.lang);
  g.addAnalysis<ConstFold>(m);
  for (const char* text : kMathInputs)
    Pattern::parse(*m.lang, text).instantiate(g, {});
  std::vector<Rewrite> rules = mathRules(m);
  return runRules(name, g, rules, limits, backoff);
}

Row runTensor(const std::string& name, int64_t n, Limits limits) {
  Tensor t;
  resetPeakRss();
  EGraph g(t.lang);
  auto& shapes = g.addAnalysis<ShapeAnalysis>(t);
  tensorInputs(g, t, n);
  std::vector<Rewrite> rules = tensorRules(t, shapes);
  return runRules(name, g, rules, limits, false);
}

Limits limits(size_t nodes, size_t iterations, double seconds) {
  Limits l;
  l.max_nodes = nodes;
  l.max_iterations = iterations;
  l.max_time =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
  return l;
}

int main(bool quick) {
  const size_t scale = quick ? 10 : 1;
  std::printf("e-graph benchmarks%s\n\n", quick ? " (quick)" : "");
  printHeader();
  printRow(runMath("math backoff 100k", limits(100'000 / scale, 1000, 60), true));
  printRow(runMath("math backoff 1M", limits(1'000'000 / scale, 1000, 60), true));
  printRow(runMath("math simple 100k", limits(100'000 / scale, 1000, 60), false));
  printRow(runMath("math simple 1M", limits(1'000'000 / scale, 1000, 60), false));
  printRow(runTensor("tensor 64 saturate", 64, limits(5'000'000, 1000, 60)));
  printRow(runTensor("tensor 256 1M", quick ? 128 : 256, limits(1'000'000 / scale, 1000, 60)));

  std::printf("\nlimit accuracy (math, simple scheduler)\n\n");
  std::printf("%-22s %12s %12s %12s %16s\n", "run", "limit", "reached", "overshoot",
              "last iter growth");
  for (size_t limit : {size_t{20'000}, size_t{300'000} / scale}) {
    Row r = runMath("math", limits(limit, 1000, 60), false);
    size_t growth = r.report.iterations.empty() ? 0 : r.report.iterations.back().nodes_added;
    std::printf("%-22s %12zu %12zu %12zd %16zu   (%s)\n", "node limit (e-nodes)", limit,
                r.report.nodes,
                static_cast<ptrdiff_t>(r.report.nodes) - static_cast<ptrdiff_t>(limit), growth,
                std::string(stopReasonName(r.report.stop)).c_str());
  }
  for (double ms : {20.0, 100.0, 400.0 / static_cast<double>(scale)}) {
    Row r = runMath("math", limits(SIZE_MAX, 100000, ms / 1e3), false);
    std::printf("%-22s %9.1f ms %9.1f ms %9.1f ms %16s   (%s, %zu e-nodes)\n", "time limit", ms,
                r.report.seconds * 1e3, r.report.seconds * 1e3 - ms, "",
                std::string(stopReasonName(r.report.stop)).c_str(), r.report.nodes);
  }
  return 0;
}

}  // namespace
}  // namespace tacit::egraph

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return tacit::egraph::main(quick);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "egraph_bench: %s\n", e.what());
    return 1;
  }
}

// Readers of the conformance golden text formats (../shared/conformance/README.md), for tests and
// benchmarks only: the data formats of the published artifact are no part of tacit itself.
//
//   Gemmini `<kernel>/0.txt`: blocks of a header line `NAME d0 d1` followed by whitespace-separated
//   values until d0*d1 are read.
//   AMX `<kernel>_<blocks>/0.txt`: per tensor a header `NAME NDIMS d0 .. dn DTYPE` and one line of
//   all values (floats printed with 6 decimals).
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tacit::testing {

struct GoldenTensor {
  std::string name;
  std::vector<int64_t> dims;
  std::string dtype;                // AMX: i8, u8, i32, f32; Gemmini: empty
  std::vector<std::string> values;  // as printed (parse with std::stoll / std::strtof)
};

inline std::ifstream openGolden(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return in;
}

inline std::vector<GoldenTensor> readGemminiGolden(const std::string& path) {
  std::ifstream in = openGolden(path);
  std::vector<GoldenTensor> out;
  GoldenTensor t;
  while (in >> t.name) {
    int64_t d0 = 0, d1 = 0;
    if (!(in >> d0 >> d1)) throw std::runtime_error(path + ": bad header of " + t.name);
    t.dims = {d0, d1};
    t.values.resize(static_cast<size_t>(d0 * d1));
    for (std::string& v : t.values) {
      if (!(in >> v)) throw std::runtime_error(path + ": " + t.name + " is short");
    }
    out.push_back(t);
  }
  return out;
}

inline std::vector<GoldenTensor> readAmxGolden(const std::string& path) {
  std::ifstream in = openGolden(path);
  std::vector<GoldenTensor> out;
  std::string header, values;
  while (std::getline(in, header) && std::getline(in, values)) {
    std::istringstream h(header);
    GoldenTensor t;
    int64_t rank = 0, count = 1;
    h >> t.name >> rank;
    t.dims.resize(static_cast<size_t>(rank));
    for (int64_t& d : t.dims) {
      h >> d;
      count *= d;
    }
    h >> t.dtype;
    std::istringstream v(values);
    std::string x;
    while (v >> x)
      t.values.push_back(x);
    if (!h || static_cast<int64_t>(t.values.size()) != count)
      throw std::runtime_error(path + ": malformed entry " + t.name);
    out.push_back(t);
  }
  return out;
}

}  // namespace tacit::testing

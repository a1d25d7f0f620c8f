#include "support/npy.h"

#include <gtest/gtest.h>

#include "support/diagnostic.h"

namespace tacit {
namespace {

std::string header(const std::string& dict, int version = 1) {
  std::string h = "\x93NUMPY";
  h += static_cast<char>(version);
  h += '\0';
  std::string d = dict + "\n";
  if (version == 1) {
    h += static_cast<char>(d.size() & 0xff);
    h += static_cast<char>(d.size() >> 8);
  } else {
    h += static_cast<char>(d.size() & 0xff);
    h += static_cast<char>(d.size() >> 8);
    h += '\0';
    h += '\0';
  }
  return h + d;
}

TEST(Npy, RoundTripsEveryShapeRank) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {3}, {2, 3}, {2, 1, 4}}) {
    NpyArray a;
    a.descr = "<i4";
    a.shape = shape;
    a.data.resize(static_cast<size_t>(a.elementCount()) * 4);
    for (size_t i = 0; i < a.data.size(); ++i)
      a.data[i] = static_cast<uint8_t>(i * 7);
    std::string bytes = serializeNpy(a);
    EXPECT_EQ((bytes.size() - a.data.size()) % 64, 0u);
    NpyArray b = parseNpy(bytes, "t.npy");
    EXPECT_EQ(b.descr, "<i4");
    EXPECT_EQ(b.shape, shape);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST(Npy, NormalisesBigEndianAndFortranOrder) {
  // 2x3 big-endian int16, Fortran order: column-major values 1..6 -> C order [[1,3,5],[2,4,6]].
  std::string bytes = header("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }");
  for (int v = 1; v <= 6; ++v) {
    bytes += '\0';
    bytes += static_cast<char>(v);
  }
  NpyArray a = parseNpy(bytes, "f.npy");
  EXPECT_EQ(a.descr, "<i2");
  std::vector<uint8_t> expected = {1, 0, 3, 0, 5, 0, 2, 0, 4, 0, 6, 0};
  EXPECT_EQ(a.data, expected);
}

TEST(Npy, AcceptsVersion2AndVoidBf16) {
  std::string bytes = header("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", 2);
  bytes += std::string("\x80\x3f\x00\x40", 4);
  NpyArray a = parseNpy(bytes, "b.npy");
  EXPECT_EQ(a.descr, "|V2");
  EXPECT_EQ(a.itemSize(), 2u);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
}

TEST(Npy, RejectsMalformedFiles) {
  std::string good =
      header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") + std::string(8, '\0');
  EXPECT_NO_THROW(parseNpy(good, "g.npy"));
  EXPECT_THROW(parseNpy("not numpy", "x.npy"), DiagnosticError);
  EXPECT_THROW(parseNpy(good.substr(0, good.size() - 1), "x.npy"), DiagnosticError);  // short data
  EXPECT_THROW(parseNpy(good + "x", "x.npy"), DiagnosticError);                       // extra data
  EXPECT_THROW(parseNpy(good.substr(0, 20), "x.npy"), DiagnosticError);  // short header
  EXPECT_THROW(
      parseNpy(header("{'descr': '<O8', 'fortran_order': False, 'shape': (1,), }"), "x.npy"),
      DiagnosticError);
  EXPECT_THROW(parseNpy(header("{'descr': '<f4', 'shape': (1,), }"), "x.npy"), DiagnosticError);
  EXPECT_THROW(
      parseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999,), }"),
               "x.npy"),
      DiagnosticError);
  // Fuzz finding (fuzz/seeds/npy/regression-descr-size-overflows-stoi.npy): an item size too long
  // for an int escaped as std::out_of_range.
  EXPECT_THROW(parseNpy(header("{'descr': '|V2777777777777', 'fortran_order': False, 'shape': "
                               "(2,), }"),
                        "x.npy"),
               DiagnosticError);
}

}  // namespace
}  // namespace tacit

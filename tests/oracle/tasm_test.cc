// The .tasm parser and printer: every statement kind, affine values, constants, round trips of
// the shipped programs, and one test per malformed-program diagnostic (acceptance 3 of issue #4).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/paths.h"
#include "hlo/npy_literal.h"
#include "oracle/tasm.h"
#include "oracle/toy_isa.h"
#include "support/output.h"
#include "support/source.h"

namespace tacit::oracle {
namespace {

using testing::toyIsa;

Program parse(const std::string& text, const ParseOptions& o = {}) {
  return parseProgram(toyIsa(), text, "t.tasm", o);
}

void expectRoundTrip(const taidl::Isa& isa, const Program& p) {
  std::string printed = printProgram(isa, p);
  Program again = parseProgram(isa, printed, p.file);
  EXPECT_TRUE(sameProgram(p, again)) << printed;
  EXPECT_EQ(printProgram(isa, again), printed);
}

TEST(Tasm, ParsesEveryStatementKind) {
  Program p = parse(R"(# a comment
kernel all hbm=1024 {            # header
  input x @0 : s32[4,4];
  output y @512 : s32[4,4];
  const c @256 : s32[2] = {5, -6};
  load(4, 0, 0);                 # positional
  store(n=4, row=0, addr=512);   # named
  loop i in [0, 2) {
    loop j in [i, 2*i + 1) { addrows(a=i, b=j + 1, c=3 - j); }
    debug "lbl" sp[i:i + 1, 0:2];
  }
  copy2(addr=0, row=7, out=512);
  debug d0[256:264] as s32;
})");
  EXPECT_EQ(p.name, "all");
  EXPECT_EQ(p.hbm_bytes, 1024);
  ASSERT_EQ(p.tensors.size(), 3u);
  EXPECT_EQ(p.tensors[2].value.getInt64(1), -6);
  ASSERT_EQ(p.body.size(), 5u);
  EXPECT_EQ(p.body[2].kind, StmtKind::kLoop);
  const Stmt& inner = p.body[2].body[0];
  EXPECT_EQ(inner.lo, Affine::var(0));
  EXPECT_EQ(inner.hi, Affine::var(0, 2, 1));
  EXPECT_EQ(inner.body[0].attrs[1], Affine::var(1, 1, 1));
  EXPECT_EQ(inner.body[0].attrs[2], Affine::var(1, -1, 3));
  EXPECT_TRUE(p.body[3].is_macro);
  EXPECT_EQ(p.body[4].view, hlo::PrimitiveType::kS32);
  EXPECT_EQ(p.statementCount(), 8u);
  expectRoundTrip(toyIsa(), p);
}

// A loop of one iteration becomes its body with its variable at its value; the loops inside it
// move one level out (their variables and bounds follow); other loops stay.
TEST(Tasm, SingleIterationLoopsAreInlined) {
  Program p = parse(R"(kernel k hbm=1024 {
  input x @0 : s32[4,4];
  output y @512 : s32[4,4];
  loop i in [0, 2) {
    loop j in [3, 4) {
      loop l in [j, j + 2) { addrows(a=i, b=j + l, c=2*j + 1); }
      debug "lbl" sp[j - 3:j - 2, 0:2];
    }
  }
})");
  inlineSingleIterationLoops(p);
  Program want = parse(R"(kernel k hbm=1024 {
  input x @0 : s32[4,4];
  output y @512 : s32[4,4];
  loop i in [0, 2) {
    loop l in [3, 5) { addrows(a=i, b=l + 3, c=7); }
    debug "lbl" sp[0:1, 0:2];
  }
})");
  EXPECT_EQ(printProgram(toyIsa(), p), printProgram(toyIsa(), want));
}

TEST(Tasm, LabelsOfAnyBytesRoundTrip) {
  // The printer quotes with support's quote (the .taidl/.tasm escapes); every byte reads back.
  std::string every;
  for (int c = 0; c < 256; ++c)
    every += static_cast<char>(c);
  Program p = parse(R"(kernel k hbm=64 {
  debug "lbl" sp[0:1, 0:2];
})");
  p.body[0].label = every;
  expectRoundTrip(toyIsa(), p);
  EXPECT_EQ(parse(printProgram(toyIsa(), p)).body[0].label, every);
}

TEST(Tasm, AffineValuesAreCanonical) {
  Program p = parse(R"(kernel k hbm=64 {
  loop i in [0, 2) { loop j in [0, 2) {
    addrows(a=2*(i + 1) - i, b=(4*j + 2*i)/2 - j - i + 0*j, c=-(-i));
  } }
})");
  const Stmt& call = p.body[0].body[0].body[0];
  EXPECT_EQ(call.attrs[0], Affine::var(0, 1, 2));
  EXPECT_EQ(call.attrs[1], Affine::var(1, 1));
  EXPECT_EQ(call.attrs[2], Affine::var(0));
  std::string printed = printProgram(toyIsa(), p);
  EXPECT_NE(printed.find("addrows(a=i + 2, b=j, c=i);"), std::string::npos) << printed;
}

TEST(Tasm, PrintsNegativeAndExtremeValues) {
  Program p("k", 64);
  Affine i = p.beginLoop("i", -3, 4);
  p.call(toyIsa(), "addrows", {-2 * i + 31, i - 1, Affine(INT64_MIN)});
  p.call(toyIsa(), "addrows", {INT64_MIN * i + 5, INT64_MAX, 0});
  p.endLoop();
  std::string printed = printProgram(toyIsa(), p);
  EXPECT_NE(printed.find("addrows(a=-2*i + 31, b=i - 1, c=(-9223372036854775807 - 1));"),
            std::string::npos)
      << printed;
  expectRoundTrip(toyIsa(), p);
}

TEST(Tasm, ConstantsFromNpyFilesRelativeToTheProgram) {
  std::string dir = ::testing::TempDir() + "tasm_npy";
  makeDirectories(dir);
  hlo::Literal v(hlo::Shape(hlo::PrimitiveType::kS32, {2, 2}));
  v.setInt64(3, 42);
  writeFileAtomic(dir + "/c.npy", hlo::serializeNpyLiteral(v));
  std::string text = "kernel k hbm=64 {\n  const c @16 : s32[2,2] = file \"c.npy\";\n}\n";
  Program p = parseProgram(toyIsa(), text, dir + "/k.tasm");
  EXPECT_TRUE(p.tensors[0].value.bitwiseEqual(v));
  EXPECT_EQ(p.tensors[0].file, "c.npy");
  expectRoundTrip(toyIsa(), p);
  ParseOptions in_dir;
  in_dir.base_dir = dir;
  EXPECT_TRUE(sameProgram(p, parse(text, in_dir)));
}

TEST(Tasm, UnitNamedLikeAKeywordIsACall) {
  std::string spec = std::string(testing::kToySpec) +
                     "\ninstruction loop(; a) { require a >= 0 && a < 8; reads sp[a] size [1]; "
                     "writes sp[a] size [1]; %Out0 = s32[1, 4] copy(%In1); }\n";
  taidl::Isa isa = taidl::loadIsa(spec, "toy2.taidl");
  Program p =
      parseProgram(isa, "kernel k hbm=64 {\n  loop(a=1);\n  loop i in [0, 1) { }\n}\n", "t");
  EXPECT_EQ(p.body[0].kind, StmtKind::kCall);
  EXPECT_EQ(p.body[1].kind, StmtKind::kLoop);
  expectRoundTrip(isa, p);
}

// Every shipped program round-trips (parse -> print -> parse is the identity).
TEST(Tasm, ShippedExamplesRoundTrip) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& e :
       fs::recursive_directory_iterator(tacit::testing::sourceDir() + "/examples")) {
    if (e.path().extension() != ".tasm") continue;
    std::string folder = e.path().parent_path().filename().string();
    std::string spec = folder == "qkv"        ? "qkv"
                       : folder == "amx"      ? "amx"
                       : folder == "trainium" ? "trainium"
                       : folder == "vta"      ? "vta"
                                              : "gemmini";
    int64_t dim = 16;
    std::string stem = e.path().stem().string();
    for (int64_t d : {64, 256})
      if (stem.find("_" + std::to_string(d) + "_") != std::string::npos) dim = d;
    taidl::ParamOverrides params;
    if (spec == "gemmini") params.emplace_back("DIM", dim);
    taidl::Isa isa =
        taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/" + spec + ".taidl", params);
    Program p = parseProgramFile(isa, e.path().string());
    expectRoundTrip(isa, p);
    ++count;
  }
  EXPECT_GE(count, 38);
}

// ---- malformed programs: one diagnostic each, at the right place --------------------------------

struct Bad {
  const char* what;
  const char* text;
  const char* where;    // "line:col"
  const char* message;  // a substring of the diagnostic
};

class Malformed : public ::testing::TestWithParam<Bad> {};

TEST_P(Malformed, OneDiagnosticAtItsPosition) {
  const Bad& b = GetParam();
  try {
    ParseOptions no_files;
    no_files.allow_files = false;
    parse(b.text, no_files);
    FAIL() << b.what << ": no error";
  } catch (const DiagnosticError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find(std::string("t.tasm:") + b.where), std::string::npos)
        << b.what << ": " << text;
    EXPECT_NE(text.find(b.message), std::string::npos) << b.what << ": " << text;
  }
}

const Bad kBad[] = {
    {"unknown_instruction", "kernel k hbm=64 {\n  lod(1, 0, 0);\n}", "2:3",
     "unknown instruction 'lod'"},
    {"missing_attribute", "kernel k hbm=64 {\n  load(n=1, addr=0);\n}", "2:19",
     "missing attribute 'row' of load"},
    {"extra_attribute", "kernel k hbm=64 {\n  load(1, 0, 0, 5);\n}", "2:17",
     "extra attribute: load takes 3 attributes"},
    {"duplicate_attribute", "kernel k hbm=64 {\n  load(1, n=2, row=0);\n}", "2:11",
     "attribute 'n' of load is given twice"},
    {"unknown_named_attribute", "kernel k hbm=64 {\n  load(n=1, adr=0, row=0);\n}", "2:13",
     "load has no attribute 'adr'"},
    {"positional_after_named", "kernel k hbm=64 {\n  load(n=1, 0, 0);\n}", "2:13",
     "positional attribute after a named one"},
    {"wrong_tensor_type", "kernel k hbm=64 {\n  input x @0 : q7[4];\n}", "2:16",
     "'q7' is not an element type"},
    {"overlapping_inputs", "kernel k hbm=64 {\n  input x @0 : s32[4];\n  input y @8 : s8[4];\n}",
     "3:3", "input 'y' [8, 12) overlaps input 'x' [0, 16)"},
    {"input_overlaps_const",
     "kernel k hbm=64 {\n  const c @4 : s8[2] = {1, 2};\n  input x @0 : s32[4];\n}", "3:3",
     "overlaps const 'c'"},
    {"overlapping_outputs",
     "kernel k hbm=64 {\n  output x @0 : s32[4];\n  output y @15 : s8[4];\n}", "3:3",
     "output 'y' [15, 19) overlaps output 'x'"},
    {"hbm_overflow", "kernel k hbm=64 {\n  input x @60 : s32[2];\n}", "2:3",
     "does not fit in the HBM of 64 bytes"},
    {"hbm_zero", "kernel k hbm=0 {\n}", "1:14", "the HBM size must be between 1"},
    {"hbm_too_large", "kernel k hbm=17179869185 {\n}", "1:14", "the HBM size must be between 1"},
    {"non_affine_product",
     "kernel k hbm=64 {\n  loop i in [0,2) { loop j in [0,2) {\n"
     "    addrows(i*j, 0, 0); } }\n}",
     "3:13", "is not affine in the loop variables"},
    {"non_affine_floor_division",
     "kernel k hbm=64 {\n  loop i in [0,2) { addrows(i//2, 0, 0); }\n}", "2:29",
     "`i // 2` is not affine"},
    {"non_affine_modulo", "kernel k hbm=64 {\n  loop i in [0,2) { addrows(0, i % 2, 0); }\n}",
     "2:32", "is not affine"},
    {"non_affine_inexact_division",
     "kernel k hbm=64 {\n  loop i in [0,2) { addrows(0, 0, i/2); }\n}", "2:35", "is not affine"},
    {"non_affine_loop_bound", "kernel k hbm=64 {\n  loop i in [0,2) { loop j in [0, i*i) { } }\n}",
     "2:35", "the loop's upper bound `i * i` is not affine"},
    {"unknown_loop_variable", "kernel k hbm=64 {\n  addrows(k, 0, 0);\n}", "2:11",
     "unknown name 'k'"},
    {"shadowed_loop_variable", "kernel k hbm=64 {\n  loop i in [0,2) { loop i in [0,2) { } }\n}",
     "2:26", "shadows an enclosing loop's variable"},
    {"constant_division_by_zero", "kernel k hbm=64 {\n  addrows(1/0, 0, 0);\n}", "2:12",
     "division by zero"},
    {"float_attribute", "kernel k hbm=64 {\n  addrows(1.5, 0, 0);\n}", "2:11",
     "expected an integer"},
    {"files_not_allowed", "kernel k hbm=64 {\n  const c @0 : s8[2] = file \"c.npy\";\n}", "2:29",
     "files are not allowed"},
    {"const_wrong_size", "kernel k hbm=64 {\n  const c @0 : s32[3] = {1, 2};\n}", "2:", "3"},
    {"const_too_few_values", "kernel k hbm=64 {\n  const c @0 : s8[40] = 1;\n}", "2:25",
     "fewer elements than s8[40]"},
    {"const_unknown_values", "kernel k hbm=64 {\n  const c @0 : s8[2] = {...};\n}", "2:24",
     "needs its values"},
    {"declaration_after_statement",
     "kernel k hbm=64 {\n  addrows(0, 0, 0);\n  input x @0 : s8[1];\n}", "3:3",
     "tensor declarations must precede the statements"},
    {"duplicate_tensor", "kernel k hbm=64 {\n  input x @0 : s8[1];\n  output x @8 : s8[1];\n}",
     "3:3", "tensor 'x' is declared twice"},
    {"missing_semicolon", "kernel k hbm=64 {\n  addrows(0, 0, 0)\n}", "3:1", "expected ';'"},
    {"unterminated_kernel", "kernel k hbm=64 {\n  addrows(0, 0, 0);\n", "3:1", "expected '}'"},
    {"missing_header", "load(1, 0, 0);", "1:1", "expected 'kernel'"},
    {"text_after_kernel", "kernel k hbm=64 {\n}\nextra", "3:1", "expected end of file"},
    {"deep_nesting",
     "kernel k hbm=64 {\n  addrows(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
     "((((0))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))), 0, 0);\n}",
     "2:", "nests more than 64"},
    {"integer_too_large", "kernel k hbm=64 {\n  addrows(99999999999999999999, 0, 0);\n}", "2:11",
     "integer literal is too large"},
    {"affine_overflow", "kernel k hbm=64 {\n  addrows(9223372036854775807 + 1, 0, 0);\n}",
     "2:", "overflow"},
    {"debug_unknown_buffer", "kernel k hbm=64 {\n  debug acc[0];\n}", "2:9", "no buffer 'acc'"},
    {"debug_too_many_ranges", "kernel k hbm=64 {\n  debug sp[0, 0, 0];\n}", "2:18", "2 dimensions"},
    {"debug_view_of_a_buffer", "kernel k hbm=64 {\n  debug sp[0] as f32;\n}", "2:18",
     "views HBM (d0) bytes"},
    {"loop_missing_paren", "kernel k hbm=64 {\n  loop i in [0, 2] { }\n}", "2:18",
     "to close the half-open loop range"},
    {"bad_character", "kernel k hbm=64 {\n  addrows(0, 0, 0); ~\n}", "2:21", ""},
};

INSTANTIATE_TEST_SUITE_P(Diagnostics, Malformed, ::testing::ValuesIn(kBad),
                         [](const auto& i) { return std::string(i.param.what); });

TEST(Tasm, BadNpyFilesAreDiagnosedAtTheConst) {
  std::string dir = ::testing::TempDir() + "tasm_bad_npy";
  makeDirectories(dir);
  writeFileAtomic(dir + "/garbage.npy", "not an npy file");
  hlo::Literal v(hlo::Shape(hlo::PrimitiveType::kS32, {3}));
  writeFileAtomic(dir + "/s32x3.npy", hlo::serializeNpyLiteral(v));
  auto errorOf = [&](const std::string& decl) -> std::string {
    try {
      parseProgram(toyIsa(), "kernel k hbm=64 {\n  " + decl + "\n}\n", dir + "/k.tasm");
    } catch (const DiagnosticError& e) {
      return e.what();
    }
    return "no error";
  };
  std::string e = errorOf("const c @0 : s32[3] = file \"missing.npy\";");
  EXPECT_NE(e.find("k.tasm:2:30: error: cannot read"), std::string::npos) << e;
  e = errorOf("const c @0 : s32[3] = file \"garbage.npy\";");
  EXPECT_NE(e.find("k.tasm:2:30: error: bad .npy for const 'c'"), std::string::npos) << e;
  e = errorOf("const c @0 : s32[2,2] = file \"s32x3.npy\";");
  EXPECT_NE(e.find("k.tasm:2:32: error: bad .npy for const 'c'"), std::string::npos) << e;
  e = errorOf("const c @0 : f32[3] = file \"s32x3.npy\";");
  EXPECT_NE(e.find("bad .npy"), std::string::npos) << e;
  e = errorOf("const c @0 : s32[3] = file \"" + dir + "\";");
  EXPECT_NE(e.find("no such regular file"), std::string::npos) << e;
}

}  // namespace
}  // namespace tacit::oracle

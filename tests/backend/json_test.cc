// The JSON the backend writes (CompileStats::json, emitJson) escapes its strings: they are valid
// JSON strings that read back exactly. Read with the import module's JSON reader, plus a strict
// check of the escapes (that reader also takes escapes JSON does not have).
#include <gtest/gtest.h>

#include <cctype>
#include <string_view>

#include "backend/compiler.h"
#include "import/importer_internal.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

using importer::Json;
using importer::parseJson;

// Fails unless every string in `json` holds no raw control character and only JSON's escapes.
void expectStrictJsonStrings(std::string_view json) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    auto c = static_cast<unsigned char>(json[i]);
    if (!in_string) {
      in_string = c == '"';
      continue;
    }
    ASSERT_GE(c, 0x20) << "raw control character at offset " << i << " of " << json;
    if (c == '"') in_string = false;
    if (c != '\\') continue;
    ASSERT_LT(i + 1, json.size()) << json;
    char e = json[++i];
    ASSERT_NE(std::string_view("\"\\/bfnrtu").find(e), std::string_view::npos)
        << "escape \\" << e << " at offset " << i << " of " << json;
    if (e != 'u') continue;
    ASSERT_LT(i + 4, json.size()) << json;
    for (int k = 1; k <= 4; ++k)
      ASSERT_TRUE(std::isxdigit(static_cast<unsigned char>(json[i + k]))) << json;
    i += 4;
  }
  EXPECT_FALSE(in_string) << json;
}

TEST(Json, QuotedStringsReadBack) {
  std::string every = "\xc3\xa9";  // UTF-8 text is copied
  for (int c = 0; c < 128; ++c)
    every += static_cast<char>(c);
  std::string text = quote(every, Escapes::kJson);
  expectStrictJsonStrings(text);
  EXPECT_EQ(parseJson(text).s, every);
}

TEST(Json, CompileStatsEscapeTheirStrings) {
  CompileStats stats;
  stats.stop = std::string("time \"limit\"\x01\n");
  stats.piecewise = "results\t0, 1\\2";
  stats.parts.push_back(PartStats{"result 0's \"piece\"\x1f", 2, 10, 3, 4, 0.5});
  std::string text = stats.json();
  expectStrictJsonStrings(text);
  Json json = parseJson(text);
  ASSERT_TRUE(json.isObject()) << text;
  EXPECT_EQ(json.find("stop")->s, stats.stop);
  EXPECT_EQ(json.find("piecewise")->s, stats.piecewise);
  const Json* parts = json.find("parts");
  ASSERT_TRUE(parts && parts->isArray() && parts->items.size() == 1) << text;
  EXPECT_EQ(parts->items[0].find("name")->s, stats.parts[0].name);
  EXPECT_EQ(parts->items[0].find("copies")->i, 2);
  EXPECT_TRUE(json.find("saturation")->isString()) << text;
}

}  // namespace
}  // namespace tacit::backend

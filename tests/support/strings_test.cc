// quote: the one string quoting of the project, in the three escape forms its readers accept.
// Round trips through those readers are tested with them: the HLO lexer (tests/hlo), the .tasm
// parser (tests/oracle), the JSON reader (tests/import).
#include "support/strings.h"

#include <gtest/gtest.h>

namespace tacit {
namespace {

const std::string kAwkward = std::string("a\"b\\c\nd\te\rf") + '\x01' + '\0' + "7\x1f\x7f\xc3\xa9";

TEST(Quote, CEscapesUseThreeOctalDigits) {
  EXPECT_EQ(quote(kAwkward), "\"a\\\"b\\\\c\\nd\\te\\rf\\001\\0007\\037\x7f\xc3\xa9\"");
  EXPECT_EQ(quote(kAwkward, Escapes::kC), quote(kAwkward));
}

TEST(Quote, TaidlEscapesOnlyWhatItsLexerKnows) {
  EXPECT_EQ(quote(kAwkward, Escapes::kTaidl),
            std::string("\"a\\\"b\\\\c\\nd\\te\\rf") + '\x01' + "\\07\x1f\x7f\xc3\xa9\"");
}

TEST(Quote, JsonEscapesControlCharactersAsUnicode) {
  EXPECT_EQ(quote(kAwkward, Escapes::kJson),
            "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001\\u00007\\u001f\x7f\xc3\xa9\"");
}

TEST(Quote, PlainTextIsOnlyQuoted) {
  for (Escapes e : {Escapes::kC, Escapes::kTaidl, Escapes::kJson}) {
    EXPECT_EQ(quote("", e), "\"\"");
    EXPECT_EQ(quote("load_rm 0..7", e), "\"load_rm 0..7\"");
  }
}

}  // namespace
}  // namespace tacit

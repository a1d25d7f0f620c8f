#include "support/output.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit {
namespace {

std::string tempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tacit_output_test_" + name + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(OutputTransaction, CommitWritesEveryFile) {
  std::string dir = tempDir("commit");
  {
    OutputTransaction tx;
    tx.write(dir + "/a.txt", "A");
    tx.write(dir + "/b.txt", "B");
    EXPECT_FALSE(fileExists(dir + "/a.txt"));
    tx.commit();
  }
  EXPECT_EQ(readFile(dir + "/a.txt"), "A");
  EXPECT_EQ(readFile(dir + "/b.txt"), "B");
  std::filesystem::remove_all(dir);
}

TEST(OutputTransaction, AbandonedTransactionLeavesNothing) {
  std::string dir = tempDir("abandon");
  {
    OutputTransaction tx;
    tx.write(dir + "/a.txt", "A");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(OutputTransaction, UnwritableDestinationIsADiagnostic) {
  OutputTransaction tx;
  EXPECT_THROW(tx.write("/nonexistent/dir/x.txt", "A"), DiagnosticError);
}

}  // namespace
}  // namespace tacit

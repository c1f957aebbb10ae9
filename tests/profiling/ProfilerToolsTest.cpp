// Finding ncu/nsys and reporting a missing one as a status with a message (nsys is absent on
// the GPU machine; this machine has neither).
#include "profiling/ProfilerTools.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace stitch::profiling;
namespace fs = std::filesystem;

namespace {

fs::path toolsRoot() {
  fs::path root = fs::temp_directory_path() / ("stitch-tools-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* version : {"2024.1.0", "2025.3.1"}) {
    fs::create_directories(root / version / "bin");
    fs::path p = root / version / "bin" / "nsys";
    std::ofstream(p) << "#!/bin/sh\necho 'NVIDIA Nsight Systems version " << version << "'\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  return root;
}

}  // namespace

TEST(ProfilerTools, MissingToolIsAStatusWithAMessage) {
  ToolStatus s = probeTool("stitch-no-such-profiler", {"/nonexistent"});
  EXPECT_FALSE(s.available());
  EXPECT_FALSE(s.path);
  EXPECT_NE(s.message.find("not installed"), std::string::npos);
}

TEST(ProfilerTools, AToolGivenByPathIsNamedByWhatItIs) {
  ToolStatus missing = probeTool("/nonexistent/bin/ncu", {});
  EXPECT_FALSE(missing.available());
  EXPECT_EQ(missing.message, "Nsight Compute (ncu) at /nonexistent/bin/ncu is not there");
  fs::path root = toolsRoot();
  ToolStatus found = probeTool((root / "2024.1.0" / "bin" / "nsys").string(), {});
  ASSERT_TRUE(found.available()) << found.message;
  EXPECT_EQ(found.message, "Nsight Systems (nsys) at " + (root / "2024.1.0" / "bin" / "nsys").string() +
                               " (NVIDIA Nsight Systems version 2024.1.0)");
  fs::remove_all(root);
}

TEST(ProfilerTools, NewestVersionFolderWinsAndItsVersionIsRead) {
  fs::path root = toolsRoot();
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);  // only the extra folders can match
  ToolStatus s = probeTool("nsys", {(root / "*").string()});
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(s.available()) << s.message;
  EXPECT_EQ(*s.path, root / "2025.3.1" / "bin" / "nsys");
  EXPECT_EQ(s.version, "NVIDIA Nsight Systems version 2025.3.1");
  fs::remove_all(root);
}

TEST(ProfilerTools, DefaultFoldersCoverTheCudaInstall) {
  auto dirs = defaultToolDirs("ncu");
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/usr/local/cuda/bin"), dirs.end());
  EXPECT_TRUE(defaultToolDirs("unknown").empty());
}

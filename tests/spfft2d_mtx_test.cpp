// SPDX-License-Identifier: Apache-2.0
// spfft2d_create_from_mtx: the Matrix Market reader (valid files of each kind, malformed files with line
// numbers, pipes/FIFOs/directories, line limits, NUL bytes and strict tokens).
#include "spfft2d_support.hpp"

namespace {

using namespace spfft2d_test;

class Mtx : public testing::Test {
 protected:
  std::string write(const std::string &name, const std::string &text) {
    return files_.emplace_back("spfft2d_" + name + ".mtx", text).path();
  }
  // Spectrum (complex128, CPU) of a plan from the file, or empty with the status in *status.
  std::vector<cd> spectrum_of_file(const std::string &path, int binary, sfft_status *status) {
    sfft_options o = cpu_options();
    spfft2d_plan p = nullptr;
    *status = spfft2d_create_from_mtx(&p, path.c_str(), binary, SFFT_COMPLEX128, &o);
    if (*status != SFFT_SUCCESS) return {};
    uint64_t rows = 0, cols = 0;
    spfft2d_get_info(p, &rows, &cols, nullptr, nullptr, nullptr, nullptr);
    std::vector<cd> y(rows * (cols / 2 + 1));
    EXPECT_EQ(spfft2d_exec(p, y.data()), SFFT_SUCCESS) << sfft_last_error();
    spfft2d_destroy(p);
    return y;
  }
  std::list<sfft_test::TempFile> files_;  // removed when the test ends
  void expect_matches(const std::string &text, int binary, const Coo &want) {
    sfft_status s;
    std::vector<cd> y = spectrum_of_file(write("valid", text), binary, &s);
    ASSERT_EQ(s, SFFT_SUCCESS) << sfft_last_error() << "\n" << text;
    std::vector<cd> ref = reference(want);
    ASSERT_EQ(y.size(), ref.size());
    EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13) << text;
  }
};

TEST_F(Mtx, ValidFilesOfEachKind) {
  expect_matches("%%MatrixMarket matrix coordinate pattern general\n% a comment\n\n3 4 3\n1 1\n2 4\n3 2\n", 1,
                 Coo{3, 4, {0, 1, 2}, {0, 3, 1}, {}});
  expect_matches("%%MatrixMarket matrix coordinate real general\r\n2 3 2\r\n1 3 2.5\r\n2 1 -1e0\r\n", 0,
                 Coo{2, 3, {0, 1}, {2, 0}, {2.5, -1.0}});
  // Binary mode: stored values become 1, a stored zero is dropped.
  expect_matches("%%MatrixMarket matrix coordinate real general\n2 3 3\n1 3 2.5\n2 1 -1\n2 2 0\n", 1,
                 Coo{2, 3, {0, 1}, {2, 0}, {}});
  // Symmetric: both triangles, the diagonal once.
  expect_matches("%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n3 1 2\n3 2 -5\n", 0,
                 Coo{3, 3, {0, 2, 0, 2, 1}, {0, 0, 2, 1, 2}, {4, 2, 2, -5, -5}});
  expect_matches("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n", 1,
                 Coo{3, 3, {1, 0, 2}, {0, 1, 2}, {}});
  expect_matches("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n3 1 1.5\n", 0,
                 Coo{3, 3, {2, 0}, {0, 2}, {1.5, -1.5}});
  expect_matches("%%MATRIXMARKET Matrix Coordinate Pattern General\n2 2 0\n", 1, Coo{2, 2, {}, {}, {}});
}

TEST_F(Mtx, MalformedFilesGiveStatusAndLineNumber) {
  struct Case {
    const char *name, *text;
    sfft_status status;
    const char *needle;
  };
  const Case cases[] = {
      {"empty", "", SFFT_ERROR_INVALID_ARGUMENT, "line 1: empty file"},
      {"no_banner", "3 3 1\n1 1\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1: missing %%MatrixMarket"},
      {"short_banner", "%%MatrixMarket matrix coordinate\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"bad_object", "%%MatrixMarket vector coordinate real general\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"bad_field", "%%MatrixMarket matrix coordinate quaternion general\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"bad_symmetry", "%%MatrixMarket matrix coordinate real upper\n", SFFT_ERROR_INVALID_ARGUMENT, "line 1"},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", SFFT_ERROR_UNSUPPORTED,
       "line 1"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", SFFT_ERROR_UNSUPPORTED, "line 1"},
      {"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", SFFT_ERROR_UNSUPPORTED, "line 1"},
      {"no_size", "%%MatrixMarket matrix coordinate pattern general\n% only a comment\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: file ends before the size line"},
      {"size_words", "%%MatrixMarket matrix coordinate pattern general\n3 3\n", SFFT_ERROR_INVALID_ARGUMENT, "line 2"},
      {"size_text", "%%MatrixMarket matrix coordinate pattern general\n3 x 1\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: COLS 'x'"},
      {"zero_rows", "%%MatrixMarket matrix coordinate pattern general\n0 3 0\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: ROWS = 0"},
      {"huge_dims", "%%MatrixMarket matrix coordinate pattern general\n99999999999 3 0\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: ROWS"},
      {"overflow", "%%MatrixMarket matrix coordinate pattern general\n99999999999999999999999 3 0\n",
       SFFT_ERROR_INVALID_ARGUMENT, "out of range"},
      {"negative_nnz", "%%MatrixMarket matrix coordinate pattern general\n3 3 -1\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: NNZ = -1"},
      {"huge_nnz_claim",
       "%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 4000000000000000000\n1 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3: file ends after 1 of the NNZ"},
      {"nnz_over_dense", "%%MatrixMarket matrix coordinate pattern general\n2 2 5\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 2: NNZ = 5 exceeds"},
      {"non_square_sym", "%%MatrixMarket matrix coordinate pattern symmetric\n2 3 1\n1 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 2"},
      {"truncated", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n2 2\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 4: file ends after 2 of the NNZ = 3"},
      {"too_many", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1\n2 2\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 4: more entries"},
      {"row_zero", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n0 2\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 4: row index 0"},
      {"col_big", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 4\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: column index 4"},
      {"missing_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: entry needs 3 fields"},
      {"extra_field", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 7\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: entry needs 2 fields"},
      {"bad_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: value 'abc'"},
      {"nan_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", SFFT_ERROR_INVALID_ARGUMENT,
       "line 3: value 'nan' is not finite"},
      {"float_integer", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3: integer value"},
      {"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3"},
      {"binary_junk", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n\x01\xff\x02 1\n",
       SFFT_ERROR_INVALID_ARGUMENT, "line 3"},
  };
  for (const Case &c : cases) {
    sfft_status s;
    spectrum_of_file(write(c.name, c.text), 1, &s);
    EXPECT_EQ(s, c.status) << c.name << ": " << sfft_last_error();
    EXPECT_NE(std::string(sfft_last_error()).find(c.needle), std::string::npos)
        << c.name << ": '" << sfft_last_error() << "' should contain '" << c.needle << "'";
  }
  sfft_status s;
  spectrum_of_file(sfft_test::temp_path("spfft2d_does_not_exist.mtx"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "cannot open");
  sfft_options o = cpu_options();
  spfft2d_plan p = nullptr;
  expect_error(spfft2d_create_from_mtx(&p, nullptr, 1, SFFT_COMPLEX64, &o), SFFT_ERROR_INVALID_ARGUMENT,
               "path is NULL");
}

// Issue 26 #5: a valid file read through a pipe (as from <(zcat file.mtx.gz)) or a FIFO gives the same plan as
// the regular file (the reader used to seek, failing as "empty file"); a directory says so.
std::string feed_pipe_and_path(const std::string &text, std::thread &writer) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  writer = std::thread([fd = fds[1], text] {
    for (std::size_t done = 0; done < text.size();) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fd);
  });
  return "/dev/fd/" + std::to_string(fds[0]);
}

TEST_F(Mtx, PipesFifosAndDirectories) {
  // Long enough to take several reads of the reader's block and of the pipe's buffer.
  std::string text = "%%MatrixMarket matrix coordinate real general\n% comment\n300 200 3000\n";
  Coo want{300, 200, {}, {}, {}};
  std::mt19937_64 rng(5);
  for (int k = 0; k < 3000; ++k) {
    int64_t i = static_cast<int64_t>(rng() % 300), j = static_cast<int64_t>(rng() % 200);
    double v = static_cast<double>(rng() % 2001) / 100.0 - 10.0;
    want.r.push_back(i);
    want.c.push_back(j);
    want.v.push_back(v);
    text += std::to_string(i + 1) + " " + std::to_string(j + 1) + " " + std::to_string(v) + "\n";
  }
  const std::vector<cd> ref = reference(want);
  {
    std::thread writer;
    const std::string path = feed_pipe_and_path(text, writer);
    sfft_status s;
    std::vector<cd> y = spectrum_of_file(path, 0, &s);
    writer.join();
    close(std::stoi(path.substr(8)));
    ASSERT_EQ(s, SFFT_SUCCESS) << sfft_last_error();
    EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13);
  }
  {
    const std::string fifo = sfft_test::temp_path("spfft2d_fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
    sfft_status s;
    std::vector<cd> y = spectrum_of_file(fifo, 0, &s);
    writer.join();
    unlink(fifo.c_str());
    ASSERT_EQ(s, SFFT_SUCCESS) << sfft_last_error();
    EXPECT_LE(sfft_test::relative_l2_error(y.data(), ref.data(), y.size()), 1e-13);
  }
  {  // an empty pipe is an empty file
    std::thread writer;
    const std::string path = feed_pipe_and_path("", writer);
    sfft_status s;
    spectrum_of_file(path, 1, &s);
    writer.join();
    close(std::stoi(path.substr(8)));
    expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 1: empty file");
  }
  sfft_status s;
  spectrum_of_file(testing::TempDir(), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "is a directory");
  spectrum_of_file("/proc/self/status", 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 1: missing %%MatrixMarket");
}

// Issue 26 #7: lines are capped (memory used to grow with a line: /dev/zero reached 1 GB), a NUL byte ends
// nothing (an index token "1<NUL>7" used to read as 1), and numbers are whole tokens.
TEST_F(Mtx, LineLimitNulBytesAndStrictTokens) {
  sfft_status s;
  spectrum_of_file("/dev/zero", 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 1: line is longer than 65536 bytes");
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  spectrum_of_file(write("long_comment", banner + "%" + std::string(70000, 'x') + "\n2 2 1\n1 1 1\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 2: line is longer than 65536 bytes");
  spectrum_of_file(write("nul_index", banner + "3 3 1\n1" + std::string(1, '\0') + "7 2 1.5\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: line holds a NUL byte");
  spectrum_of_file(write("nul_comment", banner + "% a" + std::string(1, '\0') + "b\n2 2 1\n1 1 1\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 2: line holds a NUL byte");
  spectrum_of_file(write("hex_index", banner + "3 3 1\n0x1 1 1\n"), 1, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: row index '0x1' is not an integer");
  spectrum_of_file(write("value_tail", banner + "3 3 1\n1 1 1.5x\n"), 0, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: value '1.5x' is not a number");
  spectrum_of_file(write("value_range", banner + "3 3 1\n1 1 1e999\n"), 0, &s);
  expect_error(s, SFFT_ERROR_INVALID_ARGUMENT, "line 3: value '1e999' is not finite");
  // A line just under the cap, explicit '+' signs and a value below the double range (read as 0) are fine.
  expect_matches(banner + "%" + std::string(65000, 'x') + "\n2 2 2\n+1 2 +2.5\n2 2 1e-400\n", 0,
                 Coo{2, 2, {0, 1}, {1, 1}, {2.5, 0.0}});
}

}  // namespace

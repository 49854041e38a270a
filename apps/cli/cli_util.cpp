// SPDX-License-Identifier: Apache-2.0
#include "cli_util.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace cli {

Args::Args(int argc, char **argv) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        value = argv[++i];
      }
      named_.emplace_back(name, value);
    } else {
      positional_.push_back(a);
    }
  }
}

bool Args::has(const std::string &name) const {
  return std::any_of(named_.begin(), named_.end(), [&](const auto &kv) { return kv.first == name; });
}

std::string Args::get(const std::string &name, const std::string &fallback) const {
  for (const auto &kv : named_)
    if (kv.first == name) return kv.second;
  return fallback;
}

int64_t Args::get_int(const std::string &name, int64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name, "");
  if (v.empty()) throw std::invalid_argument("--" + name + " needs an integer value");
  std::size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(v, &used, 0);
  } catch (const std::out_of_range &) {
    throw std::invalid_argument("--" + name + " = '" + v + "' is out of the 64-bit integer range");
  } catch (const std::invalid_argument &) {
    used = 0;
  }
  if (used != v.size()) throw std::invalid_argument("--" + name + " expects an integer, got '" + v + "'");
  return x;
}

int64_t Args::get_int_in(const std::string &name, int64_t fallback, int64_t lo, int64_t hi) const {
  const int64_t x = get_int(name, fallback);
  if (x < lo || x > hi)
    throw std::invalid_argument("--" + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "], got " + std::to_string(x));
  return x;
}

double Args::get_double(const std::string &name, double fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name, "");
  if (v.empty()) throw std::invalid_argument("--" + name + " needs a numeric value");
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != v.size()) throw std::invalid_argument("--" + name + " expects a number, got '" + v + "'");
  return x;
}

std::vector<std::string> Args::unknown(const std::vector<std::string> &known) const {
  std::vector<std::string> bad;
  for (const auto &kv : named_)
    if (std::find(known.begin(), known.end(), kv.first) == known.end()) bad.push_back(kv.first);
  return bad;
}

std::vector<int64_t> parse_list(const std::string &text, char sep) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) {
    std::size_t used = 0;
    if (item.empty()) throw std::invalid_argument("empty item in '" + text + "'");
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != item.size()) throw std::invalid_argument("bad number '" + item + "' in '" + text + "'");
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument("empty list");
  return out;
}

sfft_options options_from(const Args &args) {
  sfft_options opts;
  sfft_options_init(&opts);
  std::string b = args.get("backend", "auto");
  if (b == "cpu")
    opts.backend = SFFT_BACKEND_CPU;
  else if (b == "cuda")
    opts.backend = SFFT_BACKEND_CUDA;
  else if (b != "auto")
    throw std::invalid_argument("--backend must be cpu, cuda or auto, got '" + b + "'");
  opts.threads = static_cast<int>(args.get_int_in("threads", 0, 0, 1 << 20));
  opts.seed = static_cast<uint64_t>(args.get_int_in("seed", 0, 0, INT64_MAX));
  return opts;
}

nufft3_kernel nufft3_kernel_from(const Args &args) {
  const std::string k = args.get("kernel", "es");
  if (k == "es") return NUFFT3_KERNEL_ES;
  if (k == "pswf") return NUFFT3_KERNEL_PSWF;
  if (k == "gaussian") return NUFFT3_KERNEL_GAUSSIAN;
  throw std::invalid_argument("--kernel must be es, pswf or gaussian, got '" + k + "'");
}

void write_summary(const std::string &path, const std::vector<std::pair<std::string, std::string>> &fields) {
  const bool csv = path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  const bool json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (!csv && !json) throw std::invalid_argument("--summary " + path + ": the name must end in .json or .csv");
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error(path + ": cannot create");
  if (csv) {
    std::fprintf(f, "key,value\n");
    for (const auto &kv : fields) std::fprintf(f, "%s,\"%s\"\n", kv.first.c_str(), kv.second.c_str());
  } else {
    std::fprintf(f, "{\n");
    for (std::size_t i = 0; i < fields.size(); ++i)
      std::fprintf(f, "  \"%s\": \"%s\"%s\n", fields[i].first.c_str(), fields[i].second.c_str(),
                   i + 1 < fields.size() ? "," : "");
    std::fprintf(f, "}\n");
  }
  if (std::fclose(f) != 0) throw std::runtime_error(path + ": write error");
}

int report(sfft_status s, const char *what) {
  if (s == SFFT_SUCCESS) return 0;
  std::fprintf(stderr, "sfft %s failed: %s\n  %s\n", what, sfft_status_string(s), sfft_last_error());
  return 1;
}

}  // namespace cli

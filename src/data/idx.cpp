// MNIST and Fashion-MNIST: IDX files (LeCun's format), gzip-compressed as
// distributed or already unpacked. Decompressed in memory with zlib: the
// package's .gz files are read as installed, never unpacked on disk.
#include <zlib.h>

#include <algorithm>
#include <cstdint>

#include "data/dataset.h"
#include "data/format_util.h"

namespace nnbench::data {
namespace fs = std::filesystem;
using internal::fail;

namespace {

constexpr int64_t kClasses = 10;

std::string hex(uint64_t v, int digits) {
  static const char* kHex = "0123456789abcdef";
  std::string s(digits, '0');
  for (int k = digits - 1; k >= 0; --k, v >>= 4) s[k] = kHex[v & 15];
  return "0x" + s;
}

bool is_gzip(const std::string& b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f &&
         static_cast<unsigned char>(b[1]) == 0x8b;
}

// Inflates every gzip member of `in`; a file without the gzip magic is
// returned as is (an unpacked IDX file). Inflates straight into the result,
// sized from the trailer, to avoid a copy of the largest buffer.
std::string gunzip(const fs::path& file, const std::string& in) {
  if (!is_gzip(in)) return in;
  // ISIZE (the last 4 bytes) is the size mod 2^32: a good first guess, capped
  // so a corrupted trailer cannot ask for gigabytes up front.
  size_t guess = 1 << 16;
  if (in.size() >= 4) {
    const auto* p =
        reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    const uint32_t isize = uint32_t{p[0]} | (uint32_t{p[1]} << 8) |
                           (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
    guess = std::clamp<size_t>(isize, 1 << 16, size_t{1} << 28);
  }
  std::string out(guess, '\0');
  size_t produced = 0;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) fail(file, "zlib init");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string error;
  for (;;) {
    if (produced == out.size()) out.resize(out.size() * 2);
    const size_t room =
        std::min<size_t>(out.size() - produced, size_t{1} << 30);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    produced += room - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      // Another member follows (gzip allows concatenation); anything else
      // after the stream is damage.
      if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b) {
        error = "unexpected bytes after the gzip stream";
        break;
      }
      inflateReset(&zs);
      continue;
    }
    // There is always room for output, so no progress means no input left.
    if (rc == Z_BUF_ERROR) {
      error = "truncated gzip stream (unexpected end of file)";
      break;
    }
    if (rc != Z_OK) {
      error = std::string("corrupted gzip stream (") +
              (zs.msg ? zs.msg : "zlib error " + std::to_string(rc)) + ")";
      break;
    }
  }
  inflateEnd(&zs);
  if (!error.empty()) fail(file, error);
  out.resize(produced);
  return out;
}

uint32_t be32(const std::string& b, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct Idx {
  std::vector<int64_t> dims;
  const unsigned char* data = nullptr;
};

// Validates the header of an unsigned-byte IDX array with `ndims`
// dimensions and that the data is exactly as long as the header says.
Idx parse_idx(const fs::path& file, const std::string& b, int ndims,
              const char* what) {
  if (b.size() < 4) {
    fail(file, "too short for an IDX header (" + std::to_string(b.size()) +
                   " bytes)");
  }
  if (b[0] != 0 || b[1] != 0) {
    fail(file, "bad magic number " + hex(be32(b, 0), 8) +
                   ": not an IDX file (the first two bytes must be 0)");
  }
  if (static_cast<unsigned char>(b[2]) != 0x08) {
    fail(file, "IDX element type " + hex(static_cast<unsigned char>(b[2]), 2) +
                   ", expected 0x08 (unsigned byte)");
  }
  const int got = static_cast<unsigned char>(b[3]);
  if (got != ndims) {
    fail(file, "IDX header has " + std::to_string(got) +
                   " dimensions, expected " + std::to_string(ndims) + " (" +
                   what + ")");
  }
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  if (b.size() < header) fail(file, "IDX header truncated");
  Idx idx;
  uint64_t need = 1;
  for (int k = 0; k < ndims; ++k) {
    const uint32_t d = be32(b, 4 + 4 * k);
    if (d == 0) fail(file, "IDX dimension " + std::to_string(k) + " is 0");
    idx.dims.push_back(d);
    // Saturates instead of overflowing: any product past the file size is
    // truncation anyway.
    need = need > UINT64_MAX / d ? UINT64_MAX : need * d;
  }
  const uint64_t have = b.size() - header;
  if (have < need) {
    fail(file, "truncated: the header declares " + std::to_string(need) +
                   " data bytes, the file holds " + std::to_string(have));
  }
  if (have > need) {
    fail(file, std::to_string(have - need) +
                   " unexpected bytes after the data the header declares");
  }
  idx.data = reinterpret_cast<const unsigned char*>(b.data() + header);
  return idx;
}

// `dir/base.gz`, else `dir/base` (already unpacked); the .gz name in the
// error when neither is there, since that is how both datasets ship.
fs::path find_file(const fs::path& dir, const std::string& base) {
  std::error_code ec;
  if (fs::exists(dir / (base + ".gz"), ec)) return dir / (base + ".gz");
  if (fs::exists(dir / base, ec)) return dir / base;
  fail(dir / (base + ".gz"), "missing (nor is there an unpacked " + base + ")");
}

struct Loaded {
  internal::ByteImages images;
  int verified = 0;
};

Loaded load_split(const std::string& name, const fs::path& dir,
                  const std::string& prefix, const DatasetOptions& o) {
  Loaded r;
  const fs::path img_file = find_file(dir, prefix + "-images-idx3-ubyte");
  const fs::path lbl_file = find_file(dir, prefix + "-labels-idx1-ubyte");
  const std::string img_gz = internal::read_file(img_file);
  const std::string lbl_gz = internal::read_file(lbl_file);
  r.verified +=
      internal::check_manifest(name, img_file, img_gz, o.verify_checksums);
  r.verified +=
      internal::check_manifest(name, lbl_file, lbl_gz, o.verify_checksums);
  std::string img_bytes = gunzip(img_file, img_gz);
  const std::string lbl_bytes = gunzip(lbl_file, lbl_gz);
  const Idx img =
      parse_idx(img_file, img_bytes, 3, "images: count, rows, columns");
  const Idx lbl = parse_idx(lbl_file, lbl_bytes, 1, "labels: count");
  const int64_t n = img.dims[0];
  if (lbl.dims[0] != n) {
    fail(lbl_file, std::to_string(lbl.dims[0]) + " labels but " +
                       img_file.string() + " holds " + std::to_string(n) +
                       " images");
  }
  internal::ByteImages& im = r.images;
  im.labels.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    if (lbl.data[k] >= kClasses) {
      fail(lbl_file, "label " + std::to_string(lbl.data[k]) + " of sample " +
                         std::to_string(k) + " is not a class in [0, 10)");
    }
    im.labels[k] = lbl.data[k];
  }
  im.shape = {1, img.dims[1], img.dims[2]};
  im.size = n;
  im.offset = static_cast<size_t>(
      img.data - reinterpret_cast<const unsigned char*>(img_bytes.data()));
  im.bytes = std::move(img_bytes);
  return r;
}

}  // namespace

Dataset load_idx(const std::string& name, const std::string& dir,
                 const DatasetOptions& o) {
  internal::require_dir(dir,
                        "the IDX files of " + name + ": " + dataset_help(name));
  Dataset d;
  d.name = name;
  d.source = dir;
  Loaded train = load_split(name, dir, "train", o);
  Loaded test = load_split(name, dir, "t10k", o);
  if (test.images.shape != train.images.shape) {
    fail(dir, "train images are " + model::shape_str(train.images.shape) +
                  " but test images " + model::shape_str(test.images.shape));
  }
  internal::set_images(d, train.images, test.images, kClasses);
  const int verified = train.verified + test.verified;
  if (verified > 0) {
    d.integrity = "SHA-256 of " + std::to_string(verified) +
                  " of 4 files verified against the manifest";
  } else if (!o.verify_checksums) {
    d.integrity = "SHA-256 not verified (disabled); headers and sizes checked";
  } else {
    d.integrity = "no SHA-256 known for these files; headers and sizes checked";
  }
  return d;
}

}  // namespace nnbench::data

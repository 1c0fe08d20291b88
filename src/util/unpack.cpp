#include "util/unpack.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "util/error.h"

namespace nnbench::util {
namespace {

using Reader = std::unique_ptr<archive, int (*)(archive*)>;

}  // namespace

int64_t unpack_tar_gz(const std::string& archive_path,
                      const std::string& into) {
  Reader in(archive_read_new(), archive_read_free);
  Reader out(archive_write_disk_new(), archive_write_free);
  if (!in || !out) throw Error(archive_path + ": libarchive could not start");
  archive_read_support_filter_gzip(in.get());
  archive_read_support_format_tar(in.get());
  // Owners and modes from the archive are not wanted. Entries are written
  // under `into` (an absolute name of ours), so absolute entry names are
  // refused below; the SECURE flags refuse ".." and links on the way.
  archive_write_disk_set_options(
      out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                     ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  auto fail = [&](archive* a, const std::string& what) {
    throw Error(archive_path + ": " + what + ": " +
                (archive_error_string(a) ? archive_error_string(a) : "error"));
  };
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) !=
      ARCHIVE_OK)
    fail(in.get(), "cannot open");
  int64_t files = 0;
  for (;;) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(in.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) fail(in.get(), "unreadable entry");
    const std::string name = archive_entry_pathname(e);
    const auto type = archive_entry_filetype(e);
    if (name.empty() || name.front() == '/') {
      throw Error(archive_path + ": entry '" + name +
                  "' has an absolute or empty name; refused");
    }
    if (type != AE_IFREG && type != AE_IFDIR) {
      throw Error(archive_path + ": entry " + name +
                  " is neither a file nor a folder; refused");
    }
    archive_entry_set_pathname(e, (into + "/" + name).c_str());
    if (archive_write_header(out.get(), e) != ARCHIVE_OK)
      fail(out.get(), "cannot write " + name);
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    for (;;) {
      const int b = archive_read_data_block(in.get(), &block, &size, &offset);
      if (b == ARCHIVE_EOF) break;
      if (b != ARCHIVE_OK) fail(in.get(), "truncated or corrupt at " + name);
      if (archive_write_data_block(out.get(), block, size, offset) !=
          ARCHIVE_OK)
        fail(out.get(), "cannot write " + name);
    }
    if (archive_write_finish_entry(out.get()) != ARCHIVE_OK)
      fail(out.get(), "cannot finish " + name);
    if (type == AE_IFREG) ++files;
  }
  return files;
}

}  // namespace nnbench::util

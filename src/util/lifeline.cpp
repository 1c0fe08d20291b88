#include "util/lifeline.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace nnbench::util::lifeline {
namespace {

// Fixed-size tables: the handler may only read them, without locks or
// allocation. A slot is taken by storing a nonzero pid.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> children[kMaxChildren];
std::atomic<bool> as_group[kMaxChildren];
volatile sig_atomic_t arrived = 0;

// Paths as C strings, swapped in whole by remove_on_signal: the handler
// reads whichever list is current.
struct Paths {
  std::vector<std::string> files, folders;
  std::vector<const char*> c_files, c_folders;
};
std::atomic<Paths*> paths{nullptr};
std::atomic<const std::string*> note_text{nullptr};

void forward(int sig) {
  for (auto& c : children) {
    const pid_t p = c.load();
    if (p <= 0) continue;
    const bool group = as_group[&c - children].load();
    kill(group ? -p : p, sig);
  }
}

bool any_child() {
  for (auto& c : children)
    if (c.load() > 0) return true;
  return false;
}

struct Tree {
  std::string folder, owner_stat;  // "/proc/<owner>/stat"
};
std::atomic<const Tree*> tree{nullptr};

// Whether the process whose /proc/PID/stat this is has ended (gone, or a
// zombie not yet reaped). open, read and close only: async-signal-safe.
bool ended(const char* stat_path) {
  const int fd = open(stat_path, O_RDONLY);
  if (fd < 0) return true;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  const char* close_paren = strrchr(buf, ')');
  return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

void remove_paths() {
  if (const Paths* p = paths.load()) {
    for (const char* f : p->c_files) unlink(f);
    for (const char* d : p->c_folders) rmdir(d);
  }
  const Tree* t = tree.load();
  if (t && ended(t->owner_stat.c_str())) {
    // A directory walk is not async-signal-safe: /bin/rm does it. _Fork,
    // not fork, which runs atfork handlers and takes locks the signal may
    // have interrupted. Its own session: mpirun's daemon ends a rank's
    // whole process group.
    if (_Fork() == 0) {
      setsid();
      execl("/bin/rm", "rm", "-rf", "--", t->folder.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
}

void write_note() {
  const std::string* n = note_text.load();
  if (!n || n->empty()) return;
  ssize_t ignored = write(STDERR_FILENO, n->data(), n->size());
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
}

// Ends this process by the signal's default action, after its files.
void end_by(int sig) {
  remove_paths();
  write_note();
  signal(sig, SIG_DFL);
  raise(sig);
}

// How long the code that waits for children has, after an interrupt, to
// notice it (lifeline::check) and unwind: code busy elsewhere (a step
// loop while a shape-checking worker lives) never looks, and an
// interrupted nnbench must end whatever it was doing.
constexpr unsigned kUnwindSeconds = 10;

void handler(int sig) {
  const int saved_errno = errno;
  if (sig == SIGALRM) {  // the unwinding did not end the process in time
    forward(SIGKILL);
    end_by(arrived ? arrived : SIGTERM);
  }
  if (any_child()) {
    // A second signal while the children wind down: no more waiting.
    forward(arrived ? SIGKILL : SIGTERM);
    if (!arrived) alarm(kUnwindSeconds);
    arrived = sig;
    errno = saved_errno;
    return;
  }
  end_by(sig);
}

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error(std::string("interrupted by ") + strsignal(signal)),
      signal_(signal) {}

void install() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and waits go on; loops poll the flag
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGALRM}) sigaction(s, &sa, nullptr);
}

void die_with_parent(pid_t parent, bool hold, int signal) {
  if (hold) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, nullptr);  // the mask survives exec
  }
  prctl(PR_SET_PDEATHSIG, signal);
  if (getppid() != parent) _exit(143);  // it died before the call
}

void release() {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &term, nullptr);
}

void add_child(pid_t pid, bool group) {
  for (int i = 0; i < kMaxChildren; ++i) {
    // Claim the slot with a placeholder the handler skips (not > 0), set
    // its flag, then publish the pid.
    pid_t empty = 0;
    if (!children[i].compare_exchange_strong(empty, -1)) continue;
    as_group[i].store(group);
    children[i].store(pid);
    // Asked to end before it was registered: it goes too.
    if (arrived) kill(group ? -pid : pid, SIGTERM);
    return;
  }
}

void remove_child(pid_t pid) {
  for (auto& c : children) {
    pid_t p = pid;
    c.compare_exchange_strong(p, 0);
  }
}

int interrupted() { return arrived; }

void check() {
  if (arrived) throw Interrupted(arrived);
}

void remove_on_signal(const std::vector<std::string>& files,
                      const std::vector<std::string>& folders) {
  auto* p = new Paths{files, folders, {}, {}};
  for (const auto& f : p->files) p->c_files.push_back(f.c_str());
  for (const auto& d : p->folders) p->c_folders.push_back(d.c_str());
  // The old list is leaked on purpose: a handler may be reading it.
  paths.store(p);
}

void cleanup() { remove_paths(); }

void remove_tree_on_signal(const std::string& folder, pid_t owner) {
  // Leaked like the paths.
  tree.store(new Tree{folder, "/proc/" + std::to_string(owner) + "/stat"});
}

void set_note(const std::string& note) {
  note_text.store(new std::string(note));  // leaked like the paths
}

const std::string& note() {
  static const std::string none;
  const std::string* n = note_text.load();
  return n ? *n : none;
}

}  // namespace nnbench::util::lifeline

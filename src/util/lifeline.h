#pragma once
// Child processes die with their parent, and an interrupted nnbench leaves
// nothing behind. A suite runs each case in a child of its own process
// group (so that a timeout can kill the whole group), which the terminal's
// Ctrl-C never reaches: without this, SIGINT, SIGTERM or SIGKILL to the
// suite left its `nnbench case` child computing as an orphan, competing
// with whatever ran next, and its temporary folders in /tmp.
//
// - A forked child calls die_with_parent() before exec: the kernel sends it
//   SIGTERM when its parent dies, SIGKILL included (PR_SET_PDEATHSIG).
// - install() (every nnbench command, cli/app.cpp) catches SIGINT,
//   SIGTERM and SIGHUP. With children registered (add_child), the handler
//   forwards SIGTERM to them and returns: the waiting code reaps them,
//   then throws Interrupted, whose unwinding removes its temporary
//   folders; main() maps it to 128 + the signal. Code that is not waiting
//   for a child when the signal comes does not look: 10 s later (SIGALRM)
//   the children get SIGKILL and the signal ends the process. With no
//   child, the handler removes the paths given to remove_on_signal, writes
//   the note (set_note) and lets the signal end the process. Temporary
//   folders (util/temp_dir.h) go however the process ends.
#include <signal.h>
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace nnbench::util::lifeline {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Installs the handlers (once; later calls do nothing).
void install();

// In a forked child, before exec (async-signal-safe): `signal` when the
// parent dies; exits at once if it already has. SIGTERM lets a child that
// handles it clean up; SIGKILL ends even a stopped child, for children
// with nothing of their own to clean up. With `hold`, SIGTERM stays
// blocked across exec until the new program calls release(): a child that
// registers files to remove cannot be ended before it has.
void die_with_parent(pid_t parent, bool hold = false, int signal = SIGTERM);
// Unblocks SIGTERM (held by die_with_parent): a pending one arrives now.
void release();

// A child to forward the signal to: its process group when `group`.
void add_child(pid_t pid, bool group);
void remove_child(pid_t pid);

// The signal that arrived (0: none).
int interrupted();
// Throws Interrupted when a signal arrived.
void check();

// Files and then (emptied) folders the handler removes when the signal
// ends this process with no child to wait for; cleanup() removes them too.
// Replaces the previous list.
void remove_on_signal(const std::vector<std::string>& files,
                      const std::vector<std::string>& folders);
void cleanup();
// A folder the handler removes with everything in it (through /bin/rm, in
// a process of its own) when the signal ends this process and `owner`, the
// process that made the folder, is gone: the ranks of a launcher that died
// leave no folder behind, while a live launcher (which mpirun's SIGTERM
// to the other ranks after a failure does not end) keeps rank 0's record.
void remove_tree_on_signal(const std::string& folder, pid_t owner);

// One line written to stderr when a signal ends the process ("" none).
void set_note(const std::string& note);
const std::string& note();

}  // namespace nnbench::util::lifeline

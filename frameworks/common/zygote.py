"""A worker zygote: the framework imported once, a fresh worker forked per case.

A suite runs each case in its own process and each framework case starts
a worker that imports its framework (seconds for TensorFlow, JAX and
MXNet) before it builds anything. Inside a suite, nnbench starts one
zygote per engine and worker environment instead
(src/engines/worker/zygote.cpp): it imports the engine's module and
nothing else (no model, no thread pool started, no device opened), then
forks one worker per request. Each worker starts from the same state a
fresh process has after its import, and serves the case exactly as
worker.py's `serve` does.

Protocol on the Unix socket SOCKET, one connection per worker: the client
sends one JSON line {"rlimit_as": BYTES or -1, "cwd": PATH} with three
descriptors attached (the request pipe's read end, the reply pipe's write
end, the log); the zygote answers {"pid": N} once forked and
{"status": S} (the raw wait status) when that worker ends. A client that
closes its connection first has its worker killed. The zygote ends when
the process OWNER_PID ends (the suite), or on SIGTERM.
"""
from __future__ import annotations

import ctypes
import fcntl
import json
import os
import resource
import select
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1


def _child(conn: socket.socket, fds: list[int], req: dict[str, Any],
           module: Any, serve: Callable[[Any], int], close: list[int]) -> None:
    """In the forked worker: takes the case's descriptors and serves it."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # The worker ends with the zygote (its own client's end is watched
        # by the zygote, which kills it).
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG,
                                                int(signal.SIGKILL))
        # Above 10 first: a received descriptor may be 3 or 4 already.
        received, fds = fds, [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
        for fd in [*received, *close]:
            os.close(fd)
        conn.close()
        os.dup2(fds[0], 3)
        os.dup2(fds[1], 4)
        os.dup2(fds[2], 1)
        os.dup2(fds[2], 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd in [*fds, null]:
            os.close(fd)
        if int(req.get("rlimit_as", -1)) >= 0:
            n = int(req["rlimit_as"])
            resource.setrlimit(resource.RLIMIT_AS, (n, n))
        os.chdir(req.get("cwd") or "/")
        code = serve(module.Engine())
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(path: str, owner: int, module: Any,
        serve: Callable[[Any], int]) -> int:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    try:
        owner_fd = os.pidfd_open(owner)
    except (AttributeError, OSError):
        owner_fd = -1  # then polled once a second
    # Threads a framework started while importing are not in the forks
    # (those tested hold no lock then: OpenBLAS's own pool stops for a
    # fork); the log says how many there were.
    print(f"zygote: {module.__name__} imported, "
          f"{len(os.listdir('/proc/self/task'))} threads", file=sys.stderr)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = f"{path}.{os.getpid()}"
    server.bind(tmp)
    server.listen(8)
    # Clients connect only once the import is done and the socket listens.
    os.rename(tmp, path)
    children: dict[int, socket.socket] = {}
    while not stop:
        watched = [server.fileno(), wake_r, *[c.fileno()
                                              for c in children.values()]]
        if owner_fd >= 0:
            watched.append(owner_fd)
        ready, _, _ = select.select(watched, [], [], 1.0)
        if owner_fd in ready or (owner_fd < 0 and not _alive(owner)):
            break
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(children)
        for pid, conn in list(children.items()):
            if conn.fileno() in ready and not conn.recv(1, socket.MSG_PEEK):
                os.kill(pid, signal.SIGKILL)  # its client is gone
        if server.fileno() in ready:
            conn, _ = server.accept()
            try:
                msg, fds, _, _ = socket.recv_fds(conn, 65536, 3)
                req = json.loads(msg.decode() or "{}")
                if len(fds) != 3:
                    raise ValueError(f"{len(fds)} descriptors, not 3")
            except (OSError, ValueError) as e:
                print(f"zygote: a bad request: {e}", file=sys.stderr)
                conn.close()
                continue
            keep = [server.fileno(), wake_r, wake_w, owner_fd,
                    *[c.fileno() for c in children.values()]]
            pid = os.fork()
            if pid == 0:
                _child(conn, fds, req, module, serve,
                       [fd for fd in keep if fd >= 0])
            for fd in fds:
                os.close(fd)
            conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
            children[pid] = conn
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    try:
        os.unlink(path)
    except OSError:
        pass
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall((json.dumps({"status": status}) + "\n").encode())
            except OSError:
                pass
            conn.close()

"""Batch work over a process pool that survives crashed workers, and a progress bar.

Shared by the static site (rendering) and Hugging Face publishing (redaction): a session
that crashes or exhausts a worker must fail alone, never the batch.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from exporter.fsutil import remove_unfinished

T = TypeVar("T")
Context = multiprocessing.context.BaseContext


def fork_context(preload: str) -> Context:
    """fork on Linux when single-threaded (fast, no re-import of ``__main__``), else
    forkserver (fork would copy other threads' locks), else spawn."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return server_context(preload)


def server_context(preload: str) -> Context:
    """forkserver where available (safe when the caller has threads), else spawn.

    The server is started here, ignoring Ctrl-C from its first instruction on
    (:func:`_started_ignoring_ctrl_c`): it ignores SIGINT itself only once it has imported
    ``preload`` (a second or more), and a Ctrl-C at the terminal before that printed its
    ``KeyboardInterrupt`` traceback under the build's "interrupted"."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        from multiprocessing import forkserver

        context = multiprocessing.get_context("forkserver")
        # (a lock: two batches in threads each put back the list the other had set)
        with _SERVER_LOCK, _start_method_kept():
            preloaded = _forkserver_preload()
            context.set_forkserver_preload([preload])
            try:
                with _started_ignoring_ctrl_c():
                    forkserver.ensure_running()  # a no-op while the one started before runs
            except OSError as error:
                if not _socket_path_too_long(error):
                    raise
                # its socket goes in $TMPDIR, and a long TMPDIR (a CI runner's, a test's)
                # is no socket name: every publish failed, saying only "AF_UNIX path too
                # long". spawn needs no socket
                return multiprocessing.get_context("spawn")
            finally:
                # the caller's list for a server they start: ours is imported in this one
                # (one that dies during a batch is started again with theirs, and its
                # workers import what they need)
                if preloaded is not None:
                    context.set_forkserver_preload(preloaded)
        return context
    return multiprocessing.get_context("spawn")


_SERVER_LOCK = threading.Lock()


def _socket_path_too_long(error: OSError) -> bool:
    """The forkserver's socket could not be named: its folder, in $TMPDIR, is longer than
    a Unix socket's name may be (~107 bytes on Linux)."""
    return "AF_UNIX path too long" in str(error)


def _forkserver_preload() -> list[str] | None:
    """The modules the forkserver imports when it starts (``set_forkserver_preload``'s
    list: there is no getter), or None where this Python keeps them elsewhere."""
    from multiprocessing import forkserver

    modules = getattr(getattr(forkserver, "_forkserver", None), "_preload_modules", None)
    return list(modules) if isinstance(modules, list) else None


@contextlib.contextmanager
def _start_method_kept() -> Iterator[None]:
    """Leave multiprocessing's start method unset when it was: starting a forkserver or a
    forkserver or spawn worker asks ``get_start_method()``, which fixes the default for good,
    and a library caller's own ``set_start_method("spawn")`` later raised "context has
    already been set". Only the default those calls fix is undone: a method the caller set
    meanwhile (in another thread) stays."""
    with _METHOD_LOCK:  # builds in two threads: the first in looks, the last out undoes
        if _METHOD_STATE["inside"] == 0:
            _METHOD_STATE["unset"] = multiprocessing.get_start_method(allow_none=True) is None
        _METHOD_STATE["inside"] += 1
    try:
        yield
    finally:
        with _METHOD_LOCK:
            _METHOD_STATE["inside"] -= 1
            fixed = multiprocessing.get_start_method(allow_none=True)
            # (the default is the first of the methods, as documented)
            default = fixed is not None and fixed == multiprocessing.get_all_start_methods()[0]
            if _METHOD_STATE["inside"] == 0 and _METHOD_STATE["unset"] and default:
                multiprocessing.set_start_method(None, force=True)


#: How many builds are inside :func:`_start_method_kept`, and whether the method was unset
#: when the first came in (a build that left while another ran fixed it again: review)
_METHOD_LOCK = threading.Lock()
_METHOD_STATE = {"inside": 0, "unset": False}


@contextlib.contextmanager
def _started_ignoring_ctrl_c() -> Iterator[None]:
    """A process started meanwhile ignores SIGINT (an ignored signal stays ignored across
    exec, and Python leaves it so), as do the workers a forkserver forks: this process
    ignores it meanwhile, holding back (blocked in this thread) a Ctrl-C that comes, which
    it gets when done. Nothing changes off the main thread, where no handler can be set."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    if handler is None:  # not set from Python: it could not be put back
        yield
        return
    # (Linux keeps a blocked signal pending even while it is ignored)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, handler)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _die_with(build: int) -> None:
    """Workers of a build that was killed (SIGKILL, OOM) would wait for work forever.

    A forked worker asks Linux to end it with its parent (PR_SET_PDEATHSIG); a forkserver or
    spawn worker's parent is the server, which outlives the build, so each worker also checks
    every second that the build process still exists.
    """
    if sys.platform.startswith("linux") and os.getppid() == build:
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(build, 0)
            except ProcessLookupError:
                os._exit(1)
            except OSError:  # exists but is not ours to signal: still alive
                pass

    if os.name == "posix":  # on Windows os.kill(pid, 0) would send CTRL_C_EVENT, not probe
        threading.Thread(target=watch, name="watch-build", daemon=True).start()


def _stop_at_once(signum: int, frame: object) -> None:
    """A worker told to stop (the build's Ctrl-C, or the build gone) ends now, removing the
    page it was writing. Raising instead unwound into the pool's own code, which caught it,
    handed the worker a queued task, and could leave a fork pool waiting for good."""
    remove_unfinished()
    os._exit(128 + signum)


def _worker_start(build: int, int_digits: int | None) -> None:
    """Each worker: end with the build (:func:`_die_with`), and read integers as long as the
    build does (the CLI raises Python's 4,300-digit limit; a forkserver or spawn worker
    starts with the default, and failed on sessions the build itself reads)."""
    _die_with(build)
    # the build ends its workers when it stops (SIGTERM, see _stop_at_once); a Ctrl-C at the
    # terminal reaches them too, and is the build's to act on (a worker raising it went on
    # to a queued task)
    signal.signal(signal.SIGTERM, _stop_at_once)
    # a closed terminal hangs up the group: as SIGTERM (but under `nohup` it stays ignored,
    # as the build's own does: a hang-up killed the workers of a nohup'd build, review)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:
        signal.signal(signal.SIGHUP, _stop_at_once)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if int_digits is not None:  # 0 means no limit: passed on too
        sys.set_int_max_str_digits(int_digits)


#: The pools this process made (a library caller may run batches in threads at once): the
#: forkserver is stopped for an abandoned one only while no other still works.
_POOLS: weakref.WeakSet[ProcessPoolExecutor] = weakref.WeakSet()
_POOLS_LOCK = threading.Lock()  # (a WeakSet changed while another thread reads it raises)


def _new_pool(workers: int, context: Context) -> ProcessPoolExecutor:
    """A pool whose workers are set up by :func:`_worker_start` (the first one, and the one
    that runs what is left after a worker died)."""
    digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_worker_start, initargs=(os.getpid(), digits)
    )
    with _POOLS_LOCK:
        _POOLS.add(pool)
    return pool


def _start_pool(workers: int, context: Context) -> ProcessPoolExecutor | None:
    """A pool whose workers answer, or None (e.g. ``__main__`` cannot be re-imported).

    All its workers are started here, before any task. Forkserver and spawn pools otherwise
    start them as tasks are submitted, and one started while another died changed the pool's
    process list under CPython 3.11's manager thread ("dictionary changed size during
    iteration"): that thread died, and a healthy task was reported dead (a CI run)."""
    pool = _new_pool(workers, context)
    try:
        _start_all_workers(pool)
    except OSError:  # no process or file left for one more (EAGAIN, EMFILE): fewer workers
        started = len(getattr(pool, "_processes", None) or {})
        _end_workers(pool)
        pool.shutdown(wait=True)
        return _start_pool(started, context) if started else None
    except BaseException:  # Ctrl-C while the workers start: they must not outlive it
        _abandon(pool)
        raise
    try:
        pool.submit(os.getpid).result()
    except BrokenProcessPool:
        _end_workers(pool)
        pool.shutdown(wait=True)
        return None
    except BaseException:  # Ctrl-C while the workers start: they must not outlive it
        _abandon(pool)
        raise
    return pool


def _start_all_workers(pool: ProcessPoolExecutor) -> None:
    """Start every worker of a pool that has run nothing yet, with CPython's own launcher
    (what it does for fork pools); a Python without it starts them as tasks come."""
    launch = getattr(pool, "_launch_processes", None)
    if callable(launch) and not getattr(pool, "_executor_manager_thread", None):
        launch()


def _submit(pool: ProcessPoolExecutor, work: Callable[[T], Any], task: T) -> Future[Any]:
    """``pool.submit``; a worker that died while the pool was starting another (forkserver
    and spawn pools start them as tasks come) leaves it writing to a closed pipe, which
    CPython raises as ``OSError: handle is closed``: that is a broken pool too."""
    try:
        return pool.submit(work, task)
    except OSError as error:
        raise BrokenProcessPool(f"a worker died while another was starting ({error})") from None


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now (Ctrl-C, or a bug): drop its queue and end the tasks under way, which
    went on writing pages for seconds while the exit waited.

    Its manager thread is then let finish (the exit joins it all the same): it closes its
    wake-up pipe, and CPython 3.11's exit, writing to that pipe meanwhile, printed
    "Exception ignored ... OSError: [Errno 9] Bad file descriptor"."""
    manager = getattr(pool, "_executor_manager_thread", None)  # (shutdown forgets it)
    _end_workers(pool)
    pool.shutdown(wait=False, cancel_futures=True)
    with _POOLS_LOCK:
        _POOLS.discard(pool)
        others = [other for other in _POOLS if not getattr(other, "_shutdown_thread", True)]
    if not others:
        _stop_forkserver()  # (another batch's pool would break with it)
    if isinstance(manager, threading.Thread) and manager is not threading.current_thread():
        manager.join(timeout=10)


def _stop_forkserver() -> None:
    """End the forkserver this process started, at once (SIGTERM; a pool abandoned).

    A Ctrl-C while it was importing its preload module left it a request to start a
    worker, which it served once done, for a build gone by then: the worker's start failed
    with a traceback. The next pool starts another (``ensure_running``)."""
    module = sys.modules.get("multiprocessing.forkserver")
    server = getattr(module, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if not isinstance(pid, int):
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    stop = getattr(server, "_stop", None)  # reaps it and forgets it
    if callable(stop):
        with contextlib.suppress(OSError):
            stop()


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """End a broken pool's workers before joining it.

    CPython (3.11-3.13) terminates the workers it knows when one dies, then joins them all;
    a worker that ``submit`` started meanwhile (forkserver and spawn pools start them one at
    a time) is joined without being terminated and waits for work forever, so the join hung
    the batch. This process is the one that starts workers, so once it stops submitting the
    list is complete.
    """
    processes = getattr(pool, "_processes", None) or {}
    for process in tuple(processes.values()):
        with contextlib.suppress(ValueError):  # closed meanwhile
            process.terminate()  # a no-op for one already reaped


def run_tasks(
    tasks: Sequence[T],
    work: Callable[[T], dict[str, Any]],
    handle: Callable[[T, dict[str, Any]], None],
    *,
    jobs: int,
    died: Callable[[T], dict[str, Any]],
    context: Callable[[], Context],
) -> None:
    """Run ``work`` on every task and ``handle`` each result in this process.

    Inline for one job or one task (or when no pool starts); else a pool. When a worker
    dies, results already finished are kept and the rest run one at a time, so the task
    that kills a worker is found (FIFO) and reported with ``died(task)`` once it has killed
    two: a one-worker pool can break without its task's doing (the forkserver failing to
    start the worker under load), and a healthy session was reported dead (a test run).
    """
    workers = min(jobs, len(tasks))
    if workers <= 1:
        for task in tasks:
            handle(task, work(task))
        return
    with _start_method_kept():  # each worker's start fixes it (see there)
        _run_in_pools(tasks, work, handle, workers=workers, died=died, context=context)


def _run_in_pools(
    tasks: Sequence[T],
    work: Callable[[T], dict[str, Any]],
    handle: Callable[[T, dict[str, Any]], None],
    *,
    workers: int,
    died: Callable[[T], dict[str, Any]],
    context: Callable[[], Context],
) -> None:
    """:func:`run_tasks` with more than one worker: in a pool while one starts (else inline),
    then one at a time after a worker died."""
    pool = _start_pool(workers, context())
    if pool is None:
        for task in tasks:
            handle(task, work(task))
        return
    pending = list(tasks)
    struck: set[int] = set()  # (an index in pending) the task that broke a one-worker pool
    while pending:
        done: set[int] = set()
        futures: dict[Future[dict[str, Any]], int] = {}
        broken = False
        try:
            try:
                for i, task in enumerate(pending):
                    futures[_submit(pool, work, task)] = i
                for future in as_completed(futures):
                    handle(pending[futures[future]], future.result())
                    done.add(futures[future])
            except BrokenProcessPool:
                broken = True
            for future, i in futures.items():  # finished before the pool broke: keep them
                if i not in done and future.done() and future.exception() is None:
                    handle(pending[i], future.result())
                    done.add(i)
        except BaseException:  # Ctrl-C or a bug: not finishing the queue
            _abandon(pool)
            raise
        if broken:
            _end_workers(pool)
        pool.shutdown(wait=True)
        left = [i for i in range(len(pending)) if i not in done]
        again = False
        if left and workers == 1:  # one worker, FIFO: the oldest unfinished task killed it
            again = left[0] not in struck  # ...or its start failed: a second try says
            if not again:
                culprit = pending[left.pop(0)]
                handle(culprit, died(culprit))
        pending, workers = [pending[i] for i in left], 1
        struck = {0} if again else set()
        if pending:
            pool = _answering_pool(context)


def _answering_pool(context: Callable[[], Context]) -> ProcessPoolExecutor:
    """A one-worker pool for what is left after a worker died, whose worker has answered
    (a few tries): a start that failed under load must not count against the next task.
    Else a pool as it comes, whose break the next task is struck for (twice to be blamed)."""
    for _try in range(3):
        pool = _start_pool(1, context())
        if pool is not None:
            return pool
    return _new_pool(1, context())


def results_of(
    tasks: Sequence[T],
    work: Callable[[T], dict[str, Any]],
    *,
    jobs: int | None,
    preload: str,
    label: str,
) -> list[dict[str, Any]]:
    """``work`` on every task in up to ``jobs`` worker processes (None or 0: one per CPU),
    a progress bar on a terminal meanwhile; the results in the tasks' order (tasks are
    distinct and hashable), ``{"error": …}`` for a task whose worker died."""
    found: dict[T, dict[str, Any]] = {}
    bar = ProgressBar(len(tasks), label=label)

    def handle(task: T, result: dict[str, Any]) -> None:
        found[task] = result
        bar.update(len(found))

    try:
        run_tasks(
            tasks,
            work,
            handle,
            jobs=max(1, jobs or os.cpu_count() or 1),
            died=lambda task: {"error": "its worker died (out of memory?)"},
            context=lambda: fork_context(preload),
        )
    finally:
        bar.close()
    return [found[task] for task in tasks]


#: The bar's cells when the terminal has room; it narrows to no fewer than BAR_LEAST.
BAR_CELLS, BAR_LEAST = 28, 10


def stderr_columns() -> int:
    """The width of the terminal stderr shows in (stdout may be a file or a pipe)."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, ValueError, OSError):  # no fd, a closed one, not a terminal
        return shutil.get_terminal_size().columns


class ProgressBar:
    """A one-line bar on stderr (by default only when it is a terminal), at most 10 redraws/s.

    The line fits the terminal: a line that wraps cannot be taken back with ``\r``, and a
    narrow terminal kept a trail of half bars above the results."""

    def __init__(self, total: int, enabled: bool | None = None, label: str = "") -> None:
        enabled = sys.stderr.isatty() if enabled is None else enabled
        self.total, self.enabled, self.label = total, enabled and total > 0, label
        self.start = self.last = time.monotonic()
        self.width = 0

    def update(self, done: int, failed: int = 0) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < self.total):
            return
        self.last = now
        room = max(0, stderr_columns() - 1)  # the last column wraps on some terminals
        line = self.line(done, failed, now - self.start, room)
        # padded over a longer line before, never past the terminal's edge
        self.width = min(max(self.width, len(line)), room)
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()

    def line(self, done: int, failed: int, elapsed: float, room: int) -> str:
        """The bar in at most ``room`` characters: a shorter bar first, then without the
        time left, the time taken, the label, the bar, the failures."""
        counts = f" {done}/{self.total}" + (f" · {failed} failed" if failed else "")
        took = f" · {elapsed:.0f} s"
        eta = f" · eta {elapsed / done * (self.total - done):.0f} s" if done else ""
        prefix = f"{self.label} " if self.label else ""
        tails = (counts + took + eta, counts + took, counts)
        tries = [(prefix, tail, BAR_LEAST) for tail in tails] + [("", counts, 3)]
        for head, tail, least in tries:
            cells = min(BAR_CELLS, room - len(head) - len(tail) - 2)
            if cells >= least:
                filled = int(cells * done / self.total)
                return f"{head}[{'#' * filled}{'.' * (cells - filled)}]{tail}"
        short = f"{done}/{self.total}"  # a cut number ("37/10" of 100) would mislead
        return counts.strip() if len(counts) <= room else short if len(short) <= room else ""

    def close(self) -> None:
        if self.enabled and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()

"""The machinery below the trainers' `# Plumbing` banners, and beneath evaluate.py and further.py: none of it is
algorithm, and a learner can skip it. The algorithm files (mcts.py, puct.py, alphazero.py, gumbel.py,
alphazero_plus.py) import it only below their banners; above them they import games.py, for the rules, and nothing
else of the project.

Five sections, each under a banner that says what it holds and promises, its globals at its top, each using only
those above it: signals and the exit; files and locks; workers and their scheduler (the processes behind a training
and behind evaluate.py's matches); the Run a trainer's train() is handed; the settings and the command line.
"""
import argparse
import contextlib
import copy
import fcntl
import importlib
import itertools
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import signal
import stat
import sys
import threading
import time
import traceback
import warnings
from typing import NamedTuple

import numpy as np
import threadpoolctl

from games import MOST_MOVES, check_network_game

np.finfo(np.float32), np.finfo(np.float64)  # worked out once, on first use: now, since numpy 2.2 warns when it meets
# denormals flushed (the trainers' start_process flushes them)


# ----------------------------------------------------------------------------------------------------------------
# Signals and the exit: each of STOPS ends a run in one line, with nothing left running; a stop, once begun, is not
# interrupted (shielded); a Fault is an error in words; run_main turns what ends a script into its one last line.

STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # Ctrl-C, `kill`, a closing terminal: each ends in one line
STOPPING = []  # the signal of the stop begun, if one has
SHIELDS, HELD = [], []  # the shielded() blocks open now; a stop signal that came in one, handled at its end


class Stopped(KeyboardInterrupt):
    """What a signal raises (see stop): status is the exit status, 128 + the signal; note, what was saved."""
    def __init__(self, signum=signal.SIGINT):
        super().__init__()
        self.status, self.note = 128 + signum, None


def last_line(note, status):
    """End the process at once (no exit handler waits for anything) with status, its last line note on stderr (after
    a new line on a terminal, where ^C was echoed); a stderr closed or without a reader takes nothing."""
    with contextlib.suppress(OSError):
        os.write(2, f"{chr(10) * os.isatty(2)}{note}\n".encode() if note else b"")
    os._exit(status)


def end_in_one_line(signum, frame):
    """The handler of STOPS of mcts.py, puct.py, and evaluate.py until its work begins: "interrupted", 128 + it."""
    last_line("interrupted", 128 + signum)


def stop(signum, frame):
    """The scripts' handler of STOPS: the first raises Stopped (inside a shielded() block, at the block's end); the
    rest do nothing, so that the clean-up it begins (workers killed, lock removed, the note of what was saved) runs
    to its end, with the first one's status."""
    if STOPPING:
        return
    if SHIELDS:
        HELD.append(signum)
        return
    STOPPING.append(signum)
    raise Stopped(signum)


@contextlib.contextmanager
def shielded():
    """A block that no stop signal interrupts: one that comes meanwhile is handled at its end. The signals are
    blocked in this thread, and the handler holds one that another thread of the process took (torch's, a test's)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    SHIELDS.append(held)
    try:
        yield
    finally:
        SHIELDS.pop()
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # one blocked meanwhile is handled now
        if HELD and not SHIELDS:
            stop(HELD.pop(), None)


class Fault(ValueError):
    """What the system did to a run, in words: a worker that died, a file it could not write (see write_atomic)."""


class NotANumber(Fault):
    """A training's loss that is nan or infinite: the run stops, its checkpoint the last iteration with a number."""


class Stalled(Fault):
    """Workers busy, but none has said a word for SILENT seconds."""


class WorkerDied(Fault):
    """A worker process ended during the run: killed (the out-of-memory killer sends SIGKILL) or crashed."""


class RemoteTraceback(Exception):
    """The cause attached to an exception a worker sent back: its traceback there (the game's file and line)."""
    def __str__(self):
        return self.args[0]


class Unbroken:
    """sys.stdout for a run whose product is a file (evaluate.py, further.py): once the reader of its pipe is gone
    (`| head`), what it prints goes nowhere and the run goes on. Its first line is never blank (`| head -1`)."""
    def __init__(self, out):
        self.out, self.begun = out, False

    def __getattr__(self, name):
        return getattr(self.out, name)

    def write(self, text):
        if not self.begun:  # the blank lines that set a table or a progress line apart, before the first words
            text = text.lstrip("\n")
            self.begun = bool(text)
        try:
            self.out.write(text)
            self.out.flush()  # now, so that a reader gone shows here
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())  # what it holds then empties there
        return len(text)

    def flush(self):
        self.write("")


def raised_here(error):
    """Was the error raised in this project's files (in words, for the user), not in a game of one's own? In a
    worker, its traceback there says (RemoteTraceback)."""
    cause = error.__cause__
    files = re.findall(r'File "([^"]+)"', str(cause)) if isinstance(cause, RemoteTraceback) else \
        [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
    return not files or os.path.dirname(os.path.abspath(files[-1])) == os.path.dirname(os.path.abspath(__file__))


def ignore_stops():
    """The work is over: a stop signal while Python exits (a second or so) changes nothing, neither the status nor
    the output (Python would put back the default handlers as it exits)."""
    STOPPING.append(0)  # (one already come is handled by stop, which now does nothing)
    for sig in STOPS:
        signal.signal(sig, signal.SIG_IGN)


def run_main(work):
    """Run a script's work; what ends it is one line and the status: an error in words (1), a signal (128 + it: the
    note of what was saved), the reader of a pipe gone (141), end of input in the terminal game. A ValueError that
    a game of one's own raised (its innermost frame in another folder) keeps its traceback, as any exception does.
    What work returns, if anything, is its last words, printed once the work is over and stop signals ignored."""
    last = None
    if sys.version_info < (3, 11):  # a traceback shows the notes a Run adds (what the checkpoint holds) from 3.11 on
        sys.excepthook = lambda kind, error, trace, shown=sys.excepthook: (shown(kind, error, trace), [
            print(note, file=sys.stderr) for note in getattr(error, "__notes__", ())])
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # a stop held while the imports loaded is handled now
        last = work()
    except ValueError as e:
        if not raised_here(e):
            raise
        sys.exit(f"{os.path.basename(sys.argv[0])}: error: {e}")
    except (Stopped, BrokenPipeError) as e:  # (a pipe's reader gone: quiet, but for what a training saved)
        note = getattr(e, "note", None) or ("" if isinstance(e, BrokenPipeError) else "bye" if "--play" in sys.argv
                                            else "interrupted")
        last_line(note, getattr(e, "status", 128 + signal.SIGPIPE))  # (0: the reader went once the work was done)
    except EOFError:
        print("\nbye")
    finally:
        ignore_stops()
    if last:
        try:
            print(last, flush=True)
        except BrokenPipeError:  # the work is done: its last words go nowhere, and the status stays 0
            os._exit(0)


# ----------------------------------------------------------------------------------------------------------------
# Files and locks: an output is written whole or not at all (write_atomic), replaces only its own kind (holds), and
# is one live run's at a time (lock: an flock that the system lets go whenever the process ends).

WORDS = {True: {"out": "--out", "resume": "--resume", "replace": "--replace", "iterations": "--iterations"},
         False: {"out": "out path", "resume": "resume=True", "replace": "replace=True",
                 "iterations": "cfg's iterations"}}
# the words of a note or a refusal: the command line's flags (Run's flags=True), or Run's own arguments from Python

RUN_CSV = "iteration,positions,value_loss,policy_loss,self_play_s,training_s\n"  # a training's CSV, its header

WRITTEN_BY = "written by"  # the first key of the JSON evaluate.py and further.py write: whose file it is

LOCKS = {}  # path: this process's open PATH.lock, held (see lock); a worker closes its copies as it starts


class NotACheckpoint(ValueError):
    """A path that holds no checkpoint of these scripts (see read_checkpoint)."""


def not_a_file(path):
    """What stands at path, in words, if it is there and is no regular file ("a FIFO", "a character device"); else
    None. Such a path is never opened (a FIFO would block) nor written by a rename (a device would be replaced)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    kinds = ((stat.S_ISREG, None), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (a named pipe)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((words for test, words in kinds if test(mode)), "not a regular file")


def holds(path, read=None):
    """What the file at path holds, in a few words (for a refusal to write over it): nothing (no file, or an empty
    one), a checkpoint of these scripts (read, a trainer's load, finds its game, size and weights), a training's
    CSV, JSON a script of these wrote ("JSON evaluate.py wrote", from WRITTEN_BY), other JSON, text or data; what
    stands there if it is no file ("a FIFO", see not_a_file), never opened."""
    if not_a_file(path):
        return not_a_file(path)
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except FileNotFoundError:
        return "nothing"
    except OSError as e:
        return f"a file that cannot be read ({e.strerror})"
    if not head:
        return "nothing"
    if read and head[:2] == b"PK":  # torch saves a zip file
        try:
            read(path)
        except NotACheckpoint:
            return "a torch or zip file"
        except ValueError:
            pass  # a network of a game this process does not know: a checkpoint of these scripts all the same
        return "a checkpoint of these scripts"
    if head.startswith(RUN_CSV.encode()):
        return "a training's CSV"
    whose = re.search(f'"{WRITTEN_BY}": "([^"]*)"'.encode(), head[:200]) if head.lstrip()[:1] == b"{" else None
    if whose:
        return f"JSON {whose[1].decode(errors='replace')} wrote"
    try:
        head.decode()
        return "JSON" if head.lstrip()[:1] in (b"{", b"[") else "text"
    except UnicodeDecodeError:
        return "data"


def lock(path, flag):
    """Make path this process's, in one step that two runs cannot both win: an flock on PATH.lock, which the system
    lets go when the process ends, however it ends (so a lock left by a dead process, or naming a process id now
    reused, is taken over); the file holds this process's id, for the refusal. A live run's lock: ValueError in one
    line, naming the lock, its process and what to do (flag: the option that chose the path)."""
    if path.endswith(".lock"):  # another run's lock of the path before it: a training onto that one would remove it
        raise ValueError(f"{path} ends in .lock, as the lock beside {path[:-5]} does: choose another {flag}")
    name = f"{path}.lock"
    for _ in range(100):  # (a retry each time a run ending meanwhile removed the lock file taken: a few at most)
        if not_a_file(name):
            raise ValueError(f"{name}, the lock beside {path}, is {not_a_file(name)}: remove it, or choose another "
                             f"{flag}")
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise ValueError(f"cannot write {'the checkpoint ' * (flag in (WORDS[True]['out'], WORDS[False]['out']))}"
                             f"{path}: {e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            for _ in range(100):  # (its holder writes its id just after taking it: a moment at most)
                other = os.pread(fd, 32, 0).decode(errors="replace").strip()
                if other:
                    break
                time.sleep(0.01)
            os.close(fd)
            other = other or "unknown"
            raise ValueError(f"{path} is being written by another run, process {other} (it holds the lock {name}): "
                             f"wait for it to end, or choose another {flag}") from None
        with contextlib.suppress(OSError):
            if os.stat(name).st_ino == os.fstat(fd).st_ino:  # (not a lock file removed as its run ended)
                break
        os.close(fd)
    else:
        raise ValueError(f"{name}, the lock beside {path}, keeps being removed as it is taken: choose another {flag}")
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    LOCKS[path] = fd


def release(path):  # the end of claim(path) or lock(path): its locks (its CSV's too) let go and removed, if they can be
    for name in (path, None if path is None else os.path.splitext(path)[0] + ".csv"):
        fd = LOCKS.pop(name, None)
        if fd is not None:
            with contextlib.suppress(OSError):  # gone already, or its folder made read-only: a lock no process holds
                os.remove(f"{name}.lock")       # is no lock (see lock)
            os.close(fd)


def claim(path, fresh, read, say=WORDS[True]):
    """Before a training writes `path` and its CSV beside it, refuse in one line: a path that a live run writes (see
    lock), that cannot be written, that is no file (a folder, a FIFO, a device: never opened, never replaced), that
    holds anything but this project's own kind (a checkpoint read accepts, a CSV with a training's header) or, for a
    fresh training, a training at all: a finished run is never replaced unless asked (--replace). Then path is this
    process's until release(path)."""
    csv = os.path.splitext(path)[0] + ".csv"
    if csv == path:
        raise ValueError(f"cannot write the checkpoint {path!r}: its CSV, written beside it, would be the same file: "
                         f"choose a name that does not end in .csv")
    if not path or os.path.isdir(path):
        raise ValueError(f"cannot write the checkpoint {path!r}: {'a folder' if path else 'an empty path'}")
    lock(path, say["out"])
    try:
        lock(csv, say["out"])  # (x.pt and x.pth share x.csv)
        for p in (path, csv):
            if not_a_file(p):
                raise ValueError(f"{p} is {not_a_file(p)}, not a file: choose another {say['out']}")
        if holds(path, read) not in ("nothing", "a checkpoint of these scripts"):
            raise ValueError(f"{path} holds {holds(path, read)}, not a checkpoint of these scripts: choose another "
                             f"{say['out']}")
        if holds(csv) not in ("nothing", "a training's CSV"):
            raise ValueError(f"{csv}, where a training writes its progress beside {path}, holds {holds(csv)}: choose "
                             f"another {say['out']}")
        if fresh and holds(path, read) != "nothing":
            raise ValueError(f"{path} holds a training already: add {say['resume']} to go on with it, choose another "
                             f"{say['out']}, or add {say['replace']} to start afresh over it")
        if fresh and holds(csv) != "nothing":
            raise ValueError(f"{csv} holds the progress of a training whose checkpoint {path} is gone: choose another "
                             f"{say['out']}, or add {say['replace']} to start afresh over it")
    except BaseException:
        release(path)
        raise


def write_atomic(path, data):
    """Write data (bytes or text) to path whole or not at all: a temporary file of this process's beside it, then a
    rename; no stop signal interrupts it. An error of the system's (no space, no permission, a read-only file
    system, a folder gone) is a Fault in words, the temporary file removed and what path held intact."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with shielded():
        try:
            with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise Fault(f"cannot write {path}: {e.strerror or e}") from None


def add_row(path, header, row, anew=False):
    """Add a line to a CSV atomically (see write_atomic); a missing file, or anew (a training's first iteration,
    --replace's too), starts with the header."""
    if os.path.exists(path) and not anew:
        with open(path) as f:
            header = f.read()
    write_atomic(path, header + row)


def read_checkpoint(path, read, game=None, known=()):
    """read(path), a checkpoint of these scripts (a dict with the game, the size and the weights), or NotACheckpoint
    in words for a file that is missing, a folder, empty, that read cannot read, or that holds something else; then
    a ValueError for a checkpoint of a game other than `game` (if given), or of one not in `known` (a trainer's
    GAMES)."""
    if not_a_file(path) and not os.path.isdir(path):
        raise NotACheckpoint(f"{path} is {not_a_file(path)}, not a checkpoint")
    try:
        with warnings.catch_warnings():  # (torch warns of a file before it refuses it: the refusal is the one line)
            warnings.simplefilter("ignore")
            ckpt = read(path)
    except Exception as e:
        raise NotACheckpoint(f"no checkpoint at {path!r}" if isinstance(e, FileNotFoundError) else f"{path} is " + (
            "a folder, not a checkpoint" if os.path.isdir(path) else "empty, not a checkpoint" if
            os.path.getsize(path) == 0 else "not a checkpoint: torch cannot read it")) from None
    if not isinstance(ckpt, dict) or not {"game", "hidden", "state_dict"} <= set(ckpt):
        raise NotACheckpoint(f"{path} is a torch file but not a checkpoint of these scripts: no game, size and weights")
    if game and ckpt["game"] != game:
        raise ValueError(f"{path} holds a {ckpt['game']} network, not {game}")
    if ckpt["game"] not in known:
        raise ValueError(f"{path} holds a {ckpt['game']} network, a game that only a trainer's --game {ckpt['game']} "
                         f"knows" if ":" in ckpt["game"] else f"{path} holds a network of {ckpt['game']!r}, a game "
                         f"registered from Python: only a process that registers its class again (a trainer's "
                         f"GAMES[{ckpt['game']!r}] = the class) can load it")
    return ckpt


# ----------------------------------------------------------------------------------------------------------------
# Workers and their scheduler. A job waits in its pool's queue with a rank: a lower one goes first (a training's
# self-play is -1, before any part's; evaluate.py ranks each part by its place in the run). The pools of a process
# share one count of running workers: the pool that hands out lets it reach its n workers (the cores, by default),
# n - 1 while the main process computes. When the best waiting job (a Turn: the batch the main process waits for
# first, then by rank) has an idle worker but no core, the main process asks one running job of a later rank to
# pause: one ask at a time, and never a job ranked before it. The job pauses at its next pause_point and goes on
# once a core is free, before any queued job of its rank in its pool. Every wait is bounded: a worker that dies is
# seen at once, and busy workers silent for SILENT seconds end the run (Stalled). A worker whose main process is
# gone ends itself.
# Why not let the kernel do it, with priorities (os.nice) and no asks? Tried side by side: a worker's niceness set from
# its job's rank (19 for work ahead of its part, or beside a training), every idle worker handed a job, none asked to
# pause. The whole `python evaluate.py` gave the same JSON but the seconds, and took longer: 192.8 s against 180.6 s
# quiet (two pairs, alternately: 4.6% and 8.8%), 316 s against 289 s beside one busy loop (9.3%), with 194% of two
# cores busy against 197%. A niced job still gets its turns on a core beside the self-play, and the switches cost
# (387 user seconds against 361); and a worker cannot lower its niceness again without privileges.

WAIT = 0.5  # seconds: each wait on the workers' pipes, so a signal's handler runs at once; none is unbounded

POOLS = []  # the Workers of this process: each one's waits watch the others' processes too

ASKED = None  # in a worker: its pipe, and the Event its main process clears to ask it to pause (see pause_point)

PAUSED = [0.0]  # the seconds this process has spent paused (in a worker, at pause_point)

BEAT, BEATEN = 5.0, [0.0]  # seconds between a working job's words "going" to its main process; when it last said it

SILENT = 600.0  # seconds: a run whose workers are busy, but none of which has said a word for so long (a job paused
# while a core is free, a worker stopped by SIGSTOP, a job that loops without a step), ends in one line (Stalled)

HEARD = [time.time()]  # when this process last heard from a worker of any of its POOLS (or handed one a job)

START = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)  # on Linux a worker starts
# as a copy of its main process, with what it registered (a game in GAMES): the default before Python 3.14. Python
# 3.12+ warns of a fork in a process that has threads (a notebook's, a test's): a lock one of them held at the fork
# stays held in the copy. A worker takes none of their locks: it runs serve alone (the pipe, numpy, torch in one
# thread), and a test trains with workers started beside threads busy in numpy and torch.

FORK_WITH_THREADS = r"This process \(pid=\d+\) is multi-threaded, use of fork\(\) may lead to deadlocks"

QUEUED = itertools.count()  # the order jobs were added in: among equal ranks, the first added goes first


class Known(int):
    """A job's value that the workers were given as they started (Workers' known), sent as its index: so a game class
    that pickle cannot name (defined in a function, or exec'd) still reaches them."""


def running():  # the workers of all the POOLS doing a job, not paused
    return sum(len(workers.busy) - len(workers.paused) for workers in POOLS)


def orphaned():  # a worker's watch: once its main process is gone (even killed outright), it ends too. The main
    multiprocessing.connection.wait([multiprocessing.parent_process().sentinel])  # process's sentinel, under every
    os._exit(1)  # start method (fork, spawn, forkserver: under the last, the worker's parent is the fork server)


def serve(pipe, setup, known=(), go=None):
    """A worker process: setup(), then fn(**job) for each job that comes through the pipe, its result sent back;
    known: see Known; go: the Event that pause_point waits for."""
    global ASKED
    ASKED = (pipe, go) if go is not None else None
    for sig in STOPS:  # the main process handles signals (it kills the workers); SIGTERM to all kills them at once
        signal.signal(sig, signal.SIG_DFL if sig == signal.SIGTERM else signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
    threading.Thread(target=orphaned, daemon=True).start()
    for fd in LOCKS.values():  # the main process's locks are its own: they go when it goes
        os.close(fd)
    LOCKS.clear()
    POOLS.clear()  # and so are its pools: their pipes and queues are not this worker's to pump
    setup()
    with contextlib.suppress(EOFError, BrokenPipeError):  # the main process is done with it
        while True:
            fn, job = pipe.recv()
            job.update({key: known[value] for key, value in job.items() if type(value) is Known})
            if "on_move" in job:  # self_play's progress goes back the same way
                job["on_move"] = lambda *now: pipe.send(("progress", now))
            try:
                pipe.send(("done", fn(**job)))
            except Exception as e:  # sent back with its traceback here; one that cannot travel, in words
                trace = "".join(traceback.format_exception(e))
                try:
                    pipe.send(("error", (e, trace)))
                except Exception:
                    pipe.send(("error", (RuntimeError(repr(e)), trace)))


def pause_point():
    """Called between two steps of a long job (a training's Adam step or move, Run.show; a round of a match's moves,
    evaluate.play_match): in a worker whose main process asks it to pause (a job ranked before this one waits for a
    core), it says so and waits to be let go on; else, every BEAT seconds, it tells its main process that it goes
    on (see SILENT). Whether it paused; a Run's clock leaves the pause out."""
    if ASKED and ASKED[1].is_set() and time.time() - BEATEN[0] >= BEAT:
        BEATEN[0] = time.time()
        ASKED[0].send(("going", None))
    if ASKED and not ASKED[1].is_set():
        t0 = time.time()
        ASKED[0].send(("paused", None))
        ASKED[1].wait()
        PAUSED[0] += time.time() - t0
        return True
    return False


def clock():  # a Run's clock: seconds, less those paused
    return time.time() - PAUSED[0]


def unreachable(known):
    """Under the spawn and forkserver starts (macOS's; START asks for fork on Linux) a worker is a new process that
    finds a class only by importing its module: a class it cannot find so (defined in a function, in a notebook, or
    registered at run time under another name) is refused in one line that says what to do."""
    for cls in known:
        module = sys.modules.get(cls.__module__)
        if getattr(module, cls.__qualname__, None) is not cls or not getattr(module, "__file__", None):
            raise ValueError(f"the game {cls.__qualname__} cannot reach the worker processes, which this system starts "
                             f"afresh ({START.get_start_method()}): define its class at the top of a module they can "
                             f"import (a file), or play in this process (1 worker)")


class Batch:
    """The jobs of one Workers.add: fn(**job) for each, their results in the jobs' order as they come in; report(k,
    *now) hears how self_play's job k goes, done(jobs done) each end of a job; a lower rank goes first."""

    def __init__(self, fn, n, report, done, rank):
        self.fn, self.results, self.left, self.report, self.done, self.rank = fn, [None] * n, n, report, done, rank


class Turn(NamedTuple):
    """Which waiting job goes on first (the least): the batch the main process waits for, then by rank, then this
    pool's before another's, then a paused job before a queued one."""
    not_awaited: bool
    rank: int
    pool: int
    queued: bool


class Workers:
    """n processes that run setup() and then the jobs they are handed, a pipe each (none for n = 1: this process
    does the work), scheduled as this section's banner says: the jobs go on while this process waits for any pool's
    jobs or pumps (each Adam step). A job that never calls pause_point (a short piece of measures) just ends; so does
    one of a pool with no idle worker (the earlier job waits for a worker of its own). Public APIs only; every wait
    has a timeout and watches each worker's process (those of the other POOLS too) as well as its pipe, so that a
    worker that died, even by SIGKILL, is a WorkerDied at once, never a hang."""

    def __init__(self, n, setup, known=()):
        self.n, self.pipes, self.processes, self.known = n, [], [], list(known)
        if n > 1 and START.get_start_method() != "fork":
            unreachable(self.known)
        self.todo, self.busy = [], {}  # (rank, order, batch, k, job) waiting; {pipe: (batch, k)} being done
        self.go, self.asked, self.paused = [], set(), set()  # an Event a worker; the pipes asked to pause; paused
        POOLS.extend([self] * (n > 1))
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # a signal waits until the workers ignore it
        try:
            for _ in range(n if n > 1 else 0):
                here, there = START.Pipe()
                self.go.append(START.Event())
                self.go[-1].set()
                process = START.Process(target=serve, args=(there, setup, self.known, self.go[-1]), daemon=True)
                with warnings.catch_warnings():  # (see START)
                    warnings.filterwarnings("ignore", FORK_WITH_THREADS, DeprecationWarning)
                    process.start()
                there.close()  # the worker's end is the worker's alone: its death reads here as the end of its pipe
                self.processes.append(process)
                self.pipes.append(here)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a signal that came meanwhile is handled now
        except BaseException:
            self.close()
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            raise

    def add(self, fn, jobs, report=None, done=None, rank=0):
        """Queue fn(**job) for each job, to begin at once beside this process's other work (on all workers but one);
        return their Batch, whose results collect(batch) waits for."""
        batch = Batch(fn, len(jobs), report, done, rank)
        self.todo = sorted(self.todo + [(rank, next(QUEUED), batch, k, job) for k, job in enumerate(jobs)],
                           key=lambda queued: queued[:2])
        self.hand_out(self.n - 1)
        return batch

    def add_first(self, fn, jobs, report=None, done=None):  # add, on every worker at once, before any part's jobs
        self.batch = self.add(fn, jobs, report, done, rank=-1)  # (rank -1: a training's self-play); collect() waits
        self.hand_out(self.n)

    def hand_out(self, room, first=None):
        """While fewer than room workers of all the POOLS are running, the best job waiting in any of them goes on: a
        paused one, or a queued one that has an idle worker; the batch `first` (of this pool) before the rest, then
        by rank, this pool's before another's, a paused job before a queued one. If the best is a queued one with an
        idle worker but no core, the running job of the latest rank after its own is asked to pause (pause_point),
        one ask at a time. An ask stands until the job pauses or ends: a pause not needed by then goes on at the
        next hand_out with a core free. (An ask never taken back cannot be answered late, after another ask.)"""
        pools = [self] + [workers for workers in POOLS if workers is not self]
        while True:
            waiting = []  # (its Turn, workers, a worker's pipe, the queued job's index: None if paused)
            for i, workers in enumerate(pools):
                waiting += [(Turn(workers.busy[pipe][0] is not first, workers.busy[pipe][0].rank, i, False), workers,
                             pipe, None) for pipe in workers.paused]
                idle = [pipe for pipe in workers.pipes if pipe not in workers.busy]
                if idle and workers.todo:
                    j = next((j for j, queued in enumerate(workers.todo) if queued[2] is first), 0)
                    waiting.append((Turn(workers.todo[j][2] is not first, workers.todo[j][0], i, True), workers,
                                    idle[0], j))
            if not waiting:
                break
            turn, workers, pipe, j = min(waiting, key=lambda w: w[0])
            rank = turn.rank
            if running() >= room:
                break
            if j is None:
                workers.go_on(pipe)
            else:
                workers.send(pipe, j)
        if not waiting or j is None:  # no queued job waits for a core
            return
        later = [(batch.rank, workers, pipe) for workers in pools for pipe, (batch, _) in workers.busy.items()
                 if batch.rank > rank and pipe not in workers.asked]
        if later and not any(workers.asked - workers.paused for workers in pools):  # one ask at a time
            _, workers, pipe = max(later, key=lambda b: b[0])
            workers.asked.add(pipe)
            workers.go[workers.pipes.index(pipe)].clear()

    def send(self, pipe, i):  # the queued job i to the idle worker at pipe
        _, _, batch, j, job = self.todo.pop(i)
        self.busy[pipe], HEARD[0] = (batch, j), time.time()
        try:
            sent = {key: Known(i) for key, value in job.items() for i, x in enumerate(self.known) if value is x}
            pipe.send((batch.fn, dict(job, **sent, **({"on_move": True} if batch.report else {}))))
        except OSError:  # its end is closed: the worker is gone
            raise self.died(self.pipes.index(pipe)) from None

    def go_on(self, pipe):  # a worker asked to pause (paused or not yet) lets its job go on
        HEARD[0] = time.time()
        self.asked.discard(pipe)
        self.paused.discard(pipe)
        self.go[self.pipes.index(pipe)].set()

    def pump(self, timeout, room, first=None):
        """The jobs waiting in all the POOLS go on (hand_out) while fewer than room workers are running (n while this
        process waits, n - 1 while it computes), the batch first's first; then what the busy workers of every pool
        sent is taken in, waiting up to timeout."""
        self.hand_out(room, first)
        busy = {pipe: workers for workers in {self, *POOLS} for pipe in workers.busy}
        ends = {process.sentinel: (workers, k) for workers in POOLS for k, process in
                enumerate(workers.processes)}  # each ready once its process has ended; another pool's too (an idle
        for ready in multiprocessing.connection.wait(list(busy) + list(ends), timeout) if ends else ():  # one)
            if ready in ends:
                workers, k = ends[ready]
                raise workers.died(k)
            busy[ready].receive(ready)
        if busy and time.time() - HEARD[0] > SILENT:
            raise Stalled(f"no worker has said a word for {time.time() - HEARD[0]:.0f} s, though "
                          f"{', '.join(workers.state(pipe) for pipe, workers in busy.items())}: a run that makes no "
                          f"progress for {SILENT:.0f} s ends")

    def state(self, pipe):  # a busy worker in words, for Stalled
        k = self.pipes.index(pipe)
        try:  # (Linux: the process's state, T when stopped)
            stopped = open(f"/proc/{self.processes[k].pid}/stat").read().rsplit(")", 1)[1].split()[0] == "T"
        except (OSError, IndexError):
            stopped = False
        how = "stopped (SIGSTOP?)" if stopped else "paused" if pipe in self.paused else "busy"
        return f"worker {k + 1} of {len(self.processes)} (process {self.processes[k].pid}) is {how}"

    def receive(self, pipe):  # what a busy worker sent: how its game goes, its result, or its error
        try:
            kind, what = pipe.recv()
        except (EOFError, ConnectionResetError):  # its end closed, or reset with a job it had not read: gone
            raise self.died(self.pipes.index(pipe)) from None
        batch, k, HEARD[0] = *self.busy[pipe], time.time()
        if kind == "going":  # a long job's sign of life (pause_point)
            return
        if kind == "paused":  # the answer to the ask that stands (see hand_out)
            self.paused.add(pipe)
            return
        if kind != "progress" and pipe in self.asked:  # its job over, the ask is
            self.go_on(pipe)
        if kind == "error":  # the worker's exception, raised here with its traceback there as the cause
            error, trace = what
            raise error from RemoteTraceback(trace)
        if kind == "progress":
            batch.report(k, *what)
        else:
            del self.busy[pipe]
            self.ended(batch, k, what)

    def ended(self, batch, k, result):
        batch.results[k], batch.left = result, batch.left - 1
        if batch.done:
            batch.done(len(batch.results) - batch.left)

    def died(self, k):
        """WorkerDied in words: which worker, and how it ended."""
        process = self.processes[k]
        process.join(WAIT)  # its exit status, now that it has ended
        code = process.exitcode
        if code is not None and -code in STOPS:  # a stop signal: most likely the whole group's (kill -- -PGID),
            time.sleep(4 * WAIT)                 # whose signal here, a moment later, makes this a stop (Stopped)
        how = f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0 else \
            f"ended with status {code}"
        return WorkerDied(f"worker {k + 1} of {len(self.processes)} (process {process.pid}) {how}" +
                          (": out of memory?" if code == -signal.SIGKILL else ""))

    def collect(self, batch=None):
        """The results of batch (by default the last add_first's), in order, once all are in."""
        batch = batch or self.batch
        while batch.left and not self.pipes:  # no workers: this process does the batch's jobs now
            queued = next(queued for queued in self.todo if queued[2] is batch)
            self.todo.remove(queued)
            _, _, _, k, job = queued
            on_move = {"on_move": lambda *now: batch.report(k, *now)} if batch.report else {}
            job = copy.deepcopy(job)  # its own copy, as a worker's (a player's cache, say, starts empty each job)
            self.ended(batch, k, batch.fn(**job, **on_move))
        while batch.left:
            self.pump(WAIT, self.n, batch)
        return batch.results

    def map(self, fn, jobs, report=None, done=None):
        """[fn(**job) for job in jobs], shared among the workers."""
        self.add_first(fn, jobs, report, done)
        return self.collect()

    def close(self):  # the workers this run started, and no other process; no signal interrupts it
        with shielded():
            self.todo = []
            for process in self.processes:
                process.kill()
            for process in self.processes:
                process.join(timeout=10)
            for pipe in self.pipes:
                pipe.close()
            if self in POOLS:
                POOLS.remove(self)


# ----------------------------------------------------------------------------------------------------------------
# The Run: what a trainer's train() is handed. An iteration's games in SHARES shares (the numbers are the work's,
# not the workers'), its checkpoint with what the next iteration needs (--resume goes on as if never stopped), the
# live line, a clean end that says what was saved.

SHARES = 2  # an iteration's games are played as two shares (the lab's two halves), each with its own random stream
# and its own batches of positions (a row's network output differs in the last bits with the batch's size): so the
# numbers are the same with any number of workers, and a training keeps two of them busy at most

PROGRESS_AFTER, PROGRESS_EVERY = 3.0, 0.5  # seconds: a phase running past the first gets a live line, redrawn so often


def one_blas_thread():
    """numpy's BLAS in one thread, set at run time (threadpoolctl finds whichever BLAS numpy loaded), however the
    process started; returns what puts back the threads it had. On the network's small batches (about 20 rows) a
    second thread costs more CPU than it saves, and beside a busy program far more."""
    return threadpoolctl.threadpool_limits(1, "blas").restore_original_limits


def shares(n_games):  # the games of each share, SHARES of them (fewer if there are fewer games)
    return [n_games // SHARES + (k < n_games % SHARES) for k in range(min(n_games, SHARES))]


def portable(kept):
    """A training's `kept` (see Run.begin) as a checkpoint holds it: tensors, lists and plain values, which torch's
    weights_only load reads back."""
    import torch  # (only a trainer, which has torch, saves a checkpoint)
    def plain(x):
        if isinstance(x, np.random.Generator):
            return x.bit_generator.state
        if isinstance(x, np.ndarray):
            return torch.from_numpy(x)
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        return {k: plain(v) for k, v in x.items()} if isinstance(x, dict) else x
    return {**plain(kept), "torch_rng": torch.get_rng_state()}


def restore(kept, saved):
    """Put back what portable(kept) saved, in place: each Generator's place in its stream, each list's examples (as
    numpy arrays), each dict's tensors, and torch's random stream."""
    import torch
    for name, now in kept.items():
        if isinstance(now, np.random.Generator):
            now.bit_generator.state = saved[name]
        elif isinstance(now, list):
            now[:] = [tuple(t.numpy() for t in example) for example in saved[name]]
        else:
            now.clear()
            now.update(saved[name])
    torch.set_rng_state(saved["torch_rng"])


class LiveLine:
    """Long work's progress on a terminal: one line that the next replaces, redrawn at most every `every` seconds;
    nothing on a log file or a pipe, nor from a worker process (evaluate.py's small trainings)."""
    def __init__(self):
        self.on, self.drawn = sys.stdout.isatty() and multiprocessing.parent_process() is None, 0.0

    def draw(self, text, every):
        if self.on and text and time.time() - self.drawn >= every:
            sys.stdout.write(f"\r{text[:shutil.get_terminal_size().columns - 1]}\033[K")  # \r: back to its start;
            sys.stdout.flush()                                                          # \033[K: clears the rest
            self.drawn = time.time()

    def clear(self):  # it gives way to a line that stays
        if self.drawn:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()
            self.drawn = 0.0


class Run:
    """What a trainer's train() is handed: worker processes, --resume, the checkpoint and its CSV, the clock, the log,
    the live line, a clean end. Each trainer's Run is this with its own start_process, save and load, its name
    (`algorithm`), its plain settings (`plain`: its SETTINGS' defaults, no game's own) and its `games` (GAMES)."""

    def __init__(self, workers=1, out=None, resume=False, replace=False, log=print, spent=None, flags=False):
        self.n, self.out, self.resume, self.fresh = workers or os.cpu_count(), out, resume, not (resume or replace)
        self.say = WORDS[flags]  # the caller's words for out, resume, replace and iterations: flags or Python's
        self.log, self.spent, self.phases, self.counts, self.steps = log, {} if spent is None else spent, {}, {}, 0
        self.saved = 0  # the iteration that --out holds from this run (or the one it resumed), none before
        self.kept = {}  # what train keeps for the next iteration (see begin)

    def __enter__(self):
        if self.out is not None:
            claim(self.out, self.fresh, lambda path: self.load(path, as_net=False), self.say)
        try:
            self.restore = self.start_process()  # (at the end, its threads and gc thresholds as they were)
        except BaseException:  # (a stop signal, say: the path is not left claimed by this process)
            release(self.out)
            raise
        self.began, self.workers, self.line = clock(), Workers(1, None), LiveLine()
        return self

    def begin(self, game, cfg, net, optimizer, kept=None):
        """Iterations done: 0, or with --resume the checkpoint's. kept: what the next iteration needs besides the
        network and Adam's state, by name: a random Generator, a list of examples (tuples of arrays: the replay
        window) or a dict of tensors (a network's weights). Each checkpoint saves it; --resume restores it in place,
        so that a run stopped and resumed ends as one never stopped."""
        self.game, self.cfg, self.next, self.kept = game, cfg, None, kept or {}  # (kept: saved with each checkpoint)
        self.done = self.saved = self.resume_from(game, cfg, net, optimizer) if self.resume else 0
        self.workers = Workers(min(self.n, SHARES), self.start_process, [self.games[game]])  # in the `with` block: a
        # signal as they start ends cleanly; the game's class goes to them now (see Known); a worker a share at most
        return self.done

    def resume_from(self, game, cfg, net, optimizer):
        """--resume: load --out's training checkpoint into net, optimizer and kept (see begin); return its iterations
        done. Only --iterations may change; a setting added since the checkpoint was saved takes its plain default
        (what the training did before it existed), not a game's own. A checkpoint saved before checkpoints kept
        `kept` resumes with a line that says what it lacks."""
        path, ckpt = self.out, self.load(self.out, game, as_net=False)  # the game first, alone
        if "optimizer" not in ckpt:
            raise ValueError(f"{path} holds no training state to resume")
        trained_by = ckpt.get("algorithm", "alphazero")  # (the first checkpoints did not say)
        if trained_by != self.algorithm:
            raise ValueError(f"{path} was trained by {trained_by}.py, not {self.algorithm}.py: {self.say['resume']} "
                             f"needs that one")
        then = dict(self.plain, **ckpt.get("settings") or {})
        changed = [f"{k} {then.get(k)!r}, not {v!r}" for k, v in cfg.items() if k != "iterations" and then.get(k) != v]
        if changed:
            raise ValueError(f"{path} was trained with {', '.join(changed)}: {self.say['resume']} needs the same "
                             f"settings")
        if ckpt["iterations_done"] >= cfg["iterations"]:
            raise ValueError(f"{path} has {ckpt['iterations_done']} iterations done, all that {self.say['iterations']} "
                             f"asks: ask "
                             f"for more to go on")
        net.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        if ckpt.get("kept") is not None:
            restore(self.kept, ckpt["kept"])
        else:
            self.log(f"{path} holds no replay window and no random streams (saved by an older version): iteration "
                     f"{ckpt['iterations_done'] + 1} trains on its own games alone, from fresh streams, so the numbers "
                     f"differ from an unbroken run's")
        return ckpt["iterations_done"]

    def in_shares(self, fn, game, net, n_games, cfg, seed):
        """fn(game, net, n_games, cfg, rng) (a trainer's self_play) with its games played as SHARES shares, their
        examples joined in the shares' order: share k, with a random stream of its own, np.random.default_rng((*seed,
        k)); seed is (the run's seed, the iteration), the iteration also named in the progress line. The shares are
        the work's, not the workers': the numbers are the same with any number of workers."""
        self.begin_shares(fn, game, net, n_games, cfg, seed)
        return self.collect_shares()

    def begin_shares(self, fn, game, net, n_games, cfg, seed):  # in_shares' games begin in the workers (none: at
        # collect_shares)
        jobs = [dict(game=game, net=net, n_games=share, cfg=cfg, rng=np.random.default_rng((*seed, k)))
                for k, share in enumerate(shares(n_games))]
        it = seed[-1]
        self.counts, self.next, self.phases["playing"] = {k: (0, 0) for k in range(len(jobs))}, it, (it, clock())
        self.rounds = [0] * len(jobs)  # each share's moves so far: a game that never ends is stopped (MOST_MOVES)
        self.workers.add_first(fn, jobs, lambda k, *now: self.show(counts={k: now}))

    def collect_shares(self):  # the examples of the games begun, joined; the wait (in-process, the games) is self-play
        t0 = clock()
        self.phases["playing"] = self.phases["playing"] if self.workers.pipes else (self.next, t0)
        results = self.workers.collect()
        self.laps, self.phases = (t0, clock()), {"training": (self.next, clock())}
        return tuple(np.concatenate(part) for part in zip(*results))

    def step_done(self):  # fit's on_step: the line counts Adam's steps, and hears how the games played meanwhile go
        self.workers.pump(0, self.workers.n - 1)
        self.show(steps=self.steps + 1)

    def show(self, steps=None, counts=()):  # on a terminal: the work so far, on one line, redrawn; in a worker (a
        pause_point()                       # training beside others), a step where it may pause. A share's moves
        # are counted here too: a game past MOST_MOVES stops the training (a Fault)
        self.steps, now = self.steps if steps is None else steps, clock()
        self.counts.update(counts)
        for k in counts:
            self.rounds[k] += 1
            if self.rounds[k] > MOST_MOVES + 1:
                raise Fault(f"a game of {self.game} has not ended after {MOST_MOVES:,} moves: a game must end (see "
                            f"the contract in games.py)")
        done = [sum(c[i] for c in self.counts.values()) for i in (0, 1)]
        parts = [f"iteration {it}: " + (f"{self.steps}/{self.cfg['steps']} Adam steps" if phase == "training" else
                                        f"{done[0]}/{self.cfg['games']} games over, {done[1]} moves")
                 for phase, (it, since) in self.phases.items() if now - since >= PROGRESS_AFTER]
        self.line.draw("; ".join(parts), PROGRESS_EVERY)

    def iteration_done(self, it, net, optimizer, losses, positions):  # save, then log the iteration's line
        (t0, t1), t2, cfg, (value_loss, policy_loss) = self.laps, clock(), self.cfg, losses
        self.spent.update({k: self.spent.get(k, 0.0) + s for k, s in (("self-play", t1 - t0), ("training", t2 - t1))})
        stepped, self.phases, self.steps = self.steps, {k: v for k, v in self.phases.items() if k == "playing"}, 0
        self.line.clear()
        if stepped and not math.isfinite(value_loss + policy_loss):  # no number: its network is not saved
            raise NotANumber(f"the loss is {value_loss + policy_loss} at iteration {it}: the network's inputs or "
                             f"targets hold a nan or an infinity, or its training diverged")
        if self.out:  # the checkpoint, and beside it the progress as data (connect4.pt, connect4.csv), each atomic
            with shielded():  # a stop signal meanwhile is handled once the save and its row are counted
                self.save(net, self.out, self.game, optimizer, it, cfg, portable(self.kept))
                self.saved = it
                add_row(os.path.splitext(self.out)[0] + ".csv", RUN_CSV,
                        f"{it},{positions},{value_loss:.4f},{policy_loss:.4f},{t1 - t0:.2f},{t2 - t1:.2f}\n", it == 1)
        self.log(f"iteration {it:3d}/{cfg['iterations']}  games {cfg['games']:4d}  positions {positions:6d}  "
                 + (f"loss {value_loss + policy_loss:.3f} (value {value_loss:.3f}, policy {policy_loss:.3f})  "
                    if stepped else "no position kept yet: no Adam step  ") +
                 f"self-play {t1 - t0:4.1f} s  training {t2 - t1:3.1f} s  elapsed {t2 - self.began:5.0f} s, "
                 f"about {(t2 - self.began) / (it - self.done) * (cfg['iterations'] - it):.0f} s left")

    def __exit__(self, kind, error, trace):  # no process and no lock left, whatever ended the run
        with shielded():
            self.line.clear()
            self.workers.close()
            release(self.out)
            self.restore()
        if not self.out or error is None:
            return
        # what the checkpoint holds of this run, and how to go on: the end of the line that ends it
        done = bool(self.saved) and self.saved == self.cfg["iterations"]  # (a run saves only once begun)
        held = (f"{self.out} is gone: nothing saved there" if self.saved and not os.path.isfile(self.out) else
                f"{self.out} holds iteration {self.saved}" + (", the last" if done else ", the last whose loss was a "
                "number" if isinstance(error, NotANumber) else f": add {self.say['resume']} to go on")
                if self.saved else "nothing saved" + f"; {self.out} is as it was" * os.path.isfile(self.out))
        if isinstance(error, BrokenPipeError) and done:  # the reader went after the last line: the work is done
            error.status, error.note = 0, None
        elif isinstance(error, Fault):  # a worker that died, the system's refusal to save (say, a full disk)
            raise type(error)(f"{error}; {held}") from None
        elif isinstance(error, (Stopped, BrokenPipeError)):
            error.note = f"interrupted at iteration {self.saved + 1}; {held}" if not done else f"stopped; {held}"
        else:  # another exception (one's own game's, say): its traceback ends with this (see run_main for 3.10)
            error.__notes__ = [*getattr(error, "__notes__", []), f"({held})"]


# ----------------------------------------------------------------------------------------------------------------
# Settings and the command line: each setting's range checked, the flags made from the settings, a game of one's own
# (--game module:Class).

def check_settings(game, settings, cfg):
    """Before a training, in one line (ValueError): cfg holds every setting of `settings` ({name: Setting}) and no
    other name, each a number in its range (or None where that is its default) or one of its words."""
    missing = [key for key in settings if key not in cfg]
    if missing:
        raise ValueError(f"the settings for {game} lack {', '.join(missing)}: settings() gives every one")
    unknown = [key for key in cfg if key not in settings]
    if unknown:
        raise ValueError(f"no setting {', '.join(unknown)}: the settings are {', '.join(settings)}")
    for key, s in settings.items():
        value = cfg[key]
        if s.choices and value not in s.choices:
            raise ValueError(f"the setting {key} is {value!r}, not one of {', '.join(map(str, s.choices))}")
        number = isinstance(value, (int, float, np.number)) and s.low <= value <= s.high  # (nan is not)
        if not s.choices and not number and not (value is None and s.default is None):
            raise ValueError(f"the setting {key} is {value!r}, not a number from {s.low} to {s.high}")


def whole(lo, hi):
    """An argparse type: a whole number from lo to hi."""
    def parse(text):
        if not text.strip().removeprefix("-").isdecimal() or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"must be a whole number from {lo} to {hi}, not {text!r}")
        return int(text)
    return parse


def number_in(lo, hi):
    """An argparse type: a finite number from lo to hi."""
    def parse(text):
        try:
            x = float(text)
        except ValueError:
            x = math.nan  # fails the check below
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"must be a number from {lo} to {hi}, not {text!r}")
        return x
    return parse


def import_game(text, games):
    """--game module:Class, a game of your own: the class, its module found in the current folder or on Python's
    path. A module that fails to import is one line with its own error: the file and line of a syntax error, the
    missing package's name, or the exception and where it was raised."""
    module, _, name = text.partition(":")
    if not module or not name.isidentifier():
        raise ValueError(f"no game {text!r}: {', '.join(games)}, or your own as module:Class")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # (the script's own folder is on it already; the folder it is run from is not)
    try:
        found = importlib.import_module(module)
    except SyntaxError as e:
        raise ValueError(f"{module}: {e.msg} ({e.filename}, line {e.lineno})") from None
    except ModuleNotFoundError as e:
        if e.name and (module + ".").startswith(e.name + "."):
            raise ValueError(f"no module {module!r} in this folder ({os.getcwd()}) or on Python's path") from None
        raise ValueError(f"{module} imports {e.name}, which is not installed") from None
    except Exception as e:
        where = traceback.extract_tb(e.__traceback__)[-1]
        raise ValueError(f"{module} failed to import: {type(e).__name__}: {e} ({where.filename}, line "
                         f"{where.lineno})") from None
    if not hasattr(found, name):
        raise ValueError(f"{module} ({found.__file__}) has no {name}")
    return getattr(found, name)


def command_line(doc, settings, game_settings, games, default, for_play, idle=None):
    """A trainer's flags: one for each setting ({name: Setting}), with each game's own default named, then the rest,
    the same in each; checked, each refusal one line: ranges, flags for training given to --play and the other way,
    --resume with --replace, 0 simulations outside --play, a flag that does nothing (idle: {name: (other, value)},
    name does nothing while the setting other is value). --game module:Class imports a game of your own into
    `games`. default: the default checkpoint's name ("GAME.pt")."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("--game", default="connect4", help="tictactoe, connect4, or your own as module:Class (a "
                        "class in an importable module, with the settings' first defaults; default connect4)")
    for key, setting in settings.items():
        value = setting.default
        own = "".join(f"; {game}'s {s[key]}" for game, s in game_settings.items() if key in s)
        kind = dict(choices=setting.choices) if setting.choices else \
            dict(type=(number_in if type(setting.low) is float else whole)(setting.low, setting.high),
                 metavar="X" if type(setting.low) is float else "N")
        span = "" if setting.choices else f", {setting.low:g} to {setting.high:g}"
        parser.add_argument(f"--{key.replace('_', '-')}", **kind,
                            help=f"{setting.meaning}{span} (default {'none' if value is None else value}{own})")
    parser.add_argument("--seed", type=whole(0, 2**32 - 1), help="random seed, 0 to 2^32 - 1 (default 0)")
    parser.add_argument("--workers", type=whole(1, 256), help=f"self-play processes, 1 to 256 (default "
                        f"{os.cpu_count()}); a training's {SHARES} shares keep {SHARES} busy at most")
    parser.add_argument("--out", help=f"checkpoint path, saved every iteration, its CSV beside it (default {default})")
    parser.add_argument("--resume", action="store_true", help="train --out's checkpoint on to --iterations")
    parser.add_argument("--replace", action="store_true", help="start afresh over --out's checkpoint and CSV: without "
                        "it, a training refuses a path that holds one")
    parser.add_argument("--play", action="store_true", help="play against a saved checkpoint instead of training")
    parser.add_argument("--checkpoint", help=f"the checkpoint --play loads (default {default})")
    parser.add_argument("--first", choices=["human", "agent"], help="who starts with --play (default human)")
    args = parser.parse_args()
    given = {k for k, v in vars(args).items() if v not in (None, False)} - {"game", "play"}
    for key in sorted(given - for_play if args.play else given & for_play - set(settings)):
        parser.error(f"--{key.replace('_', '-')} is for " + ("training; --play plays a checkpoint" if args.play
                                                             else "--play; training writes --out"))
    if args.resume and args.replace:
        parser.error("--resume goes on with --out's training and --replace starts afresh over it: choose one")
    if args.simulations == 0 and not args.play:
        parser.error("--simulations 0 is for --play (the raw policy); self-play needs at least 1")
    if args.play and args.simulations == 0 and getattr(args, "reuse_tree", None):
        parser.error("--reuse-tree 1 keeps a search's tree, and --simulations 0 searches nothing: drop one")
    for key, (other, value) in (idle or {}).items():
        now = next(v for v in (getattr(args, other), game_settings.get(args.game, {}).get(other),
                               settings[other].default) if v is not None)
        if getattr(args, key) is not None and now == value and not args.play:
            parser.error(f"--{key.replace('_', '-')} does nothing with --{other.replace('_', '-')} {value}" +
                         ("" if getattr(args, other) is not None else " (the default)") + ": drop one")
    if args.game not in games:  # module:Class, a game of your own
        try:
            games[args.game] = import_game(args.game, games)
            check_network_game(args.game, games[args.game])  # (the contract's core here: its name is the flag's)
        except ValueError as e:
            parser.error(f"argument --game: {e}")
    return args

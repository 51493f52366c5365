"""The machinery below the trainers' `# Plumbing` banners and beneath evaluate.py and further.py, no algorithm: workers
in a ProcessPoolExecutor (one that dies is BrokenProcessPool at once), a stop as a KeyboardInterrupt caught where a
script ends (run_main), files written whole then renamed (os.replace), one live run an output (fcntl.flock)."""
import argparse
import concurrent.futures
import contextlib
import copy
import dataclasses
import fcntl
import gc
import importlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import traceback

from games import check_network_game

START = "forkserver" if sys.platform.startswith("linux") else "spawn"  # how a worker starts beside other threads
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # Ctrl-C, `kill`, a closing terminal
HERE = os.path.dirname(os.path.abspath(__file__))  # this project's folder


# ----------------------------------------------------------------------------------------------------------------
# How each process computes, and the workers

def start_process():
    """How every process computes, set first thing in each (README: Speed); returns what puts back the caller's
    threads (numpy's and torch's) and gc thresholds (not denormals: torch cannot say how they were)."""
    import threadpoolctl  # (here: importing it sets KMP_DUPLICATE_LIB_OK in os.environ)
    import torch
    threads, thresholds = torch.get_num_threads(), gc.get_threshold()
    blas = threadpoolctl.threadpool_limits(1, "blas")  # numpy's small batches: a second thread costs more than it saves
    torch.set_num_threads(1)  # a second thread is slower beside any busy program, and its numbers differ from one's
    torch.set_flush_denormal(True)  # Adam's moments reach denormals, which some CPUs handle many times slower
    gc.set_threshold(50_000, 20, 20)  # trees are many small objects, cycles or not: the default made self-play 1.45x
    return lambda: (torch.set_num_threads(threads), gc.set_threshold(*thresholds), blas.restore_original_limits())


def start_worker(nice):  # the stops are for the main process (it ends its workers); a worker ends once it is gone
    for sig in STOPS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # (blocked as it started: see pool)
    os.nice(nice)  # (evaluate.py's work ahead: a lower priority)
    main = multiprocessing.parent_process().sentinel
    threading.Thread(target=lambda: (multiprocessing.connection.wait([main]), os._exit(1)), daemon=True).start()
    start_process()


def pool(workers, nice=0):
    """`workers` processes (None for 1: each job is done here as it is submitted): forked from a process with no other
    thread (a script), else started as Python 3.14 does (START), never forked beside a thread that may hold a lock (a
    notebook's): then from a server that loaded torch once, finding a game's class by its module's name."""
    if workers < 2:
        return None
    how = multiprocessing.get_context("fork" if START == "forkserver" and threading.active_count() == 1 else START)
    how.set_forkserver_preload(["__main__", "torch", "games"])
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # a stop as they start is this process's (see start_worker)
    try:
        executor = concurrent.futures.ProcessPoolExecutor(workers, how, initializer=start_worker, initargs=(nice,))
        executor.submit(int).result()  # they start now (forked: while this process has no other thread)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return executor


def submit(pool, fn, *args):  # fn(*args) in a worker, a Future; without one, done now on a copy, as a worker would
    if pool:
        return pool.submit(fn, *args)
    done = concurrent.futures.Future()
    done.set_result(fn(*copy.deepcopy(args)))
    return done


def close(pool):  # its workers ended now, whatever they do (Python 3.14's kill_workers)
    if pool:
        for process in list((pool._processes or {}).values()):
            process.kill()
        pool.shutdown(cancel_futures=True)


# ----------------------------------------------------------------------------------------------------------------
# Files: whole or not at all, one live run each

LOCKS = {}  # path: this process's open PATH.lock


def write_atomic(path, data):
    """data (bytes or text) to path, whole or not at all: what path held stays as it was if the system refuses (no
    space, no permission, a folder gone: a ValueError in words) or a stop comes."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(e, OSError):
            raise ValueError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def lock(path, flag):
    """path this process's until unlock(path): an flock on PATH.lock, which the system lets go however the process
    ends; another live run's is a ValueError in words (flag: the option that chose path)."""
    try:
        LOCKS[path] = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(LOCKS[path], fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        unlock(path)
        raise ValueError(f"{path} is being written by another run (it holds {path}.lock): wait for it to end, or choose"
                         f" another {flag}" if isinstance(e, BlockingIOError) else f"cannot write {path}: {e.strerror}")


def unlock(path):
    if path in LOCKS:
        os.close(LOCKS.pop(path))


def read_checkpoint(path, game=None, known=None):
    """A checkpoint of these scripts (a dict: the game, the size, the weights), loaded with weights_only; else a
    ValueError in words: missing, no file, damaged, not ours, another game's, a game not in known (GAMES)."""
    import torch
    try:
        ckpt = torch.load(path, weights_only=True) if os.path.isfile(path) or not os.path.lexists(path) else None
    except FileNotFoundError:
        raise ValueError(f"no checkpoint at {path!r}") from None
    except Exception:
        raise ValueError(f"{path} is damaged, or no checkpoint: torch cannot read it") from None
    if not isinstance(ckpt, dict) or not {"game", "hidden", "state_dict"} <= set(ckpt):
        raise ValueError(f"{path} is not a checkpoint of these scripts")
    where, unknown = ckpt["game"], known is not None and ckpt["game"] not in known
    if unknown or game and where != game:  # (one's own game's: module:Class, the --game that knows it)
        raise ValueError(f"{path} holds a network of {where}" + (f": add --game {where}" if unknown and ":" in where else
                         f", not {game}" if game and where != game else ": register its class in GAMES to load it"))
    return ckpt


# ----------------------------------------------------------------------------------------------------------------
# The Run: where a training runs and keeps its checkpoint

@dataclasses.dataclass
class Run:
    """Where train() runs: its workers (1: this process alone), its checkpoint out (None: nothing saved) with its CSV
    beside it (x.pt, x.csv), resume (go on with out's training) or replace (start afresh over it), log for its lines;
    flags: its words name the command line's flags, not Python's arguments. `with run:` claims out and starts the
    workers; however the block ends, it leaves no worker nor lock, puts back the caller's threads, and an error (a stop
    too) gets a note that says what out holds."""
    workers: int = 1
    out: str = None
    resume: bool = False
    replace: bool = False
    log: object = print
    flags: bool = False
    rows: list = dataclasses.field(default_factory=list)  # a dict an iteration: the CSV's rows, and evaluate's times

    def say(self, name):  # an argument, in the caller's words
        return f"--{name}" if self.flags else "another out path" if name == "out" else f"{name}=True"

    def __enter__(self):
        if self.out is not None:
            self.claim(self.out, os.path.splitext(self.out)[0] + ".csv")
        self.pool, self.restore = None, start_process()
        try:
            self.pool = pool(self.workers or os.cpu_count())
        except BaseException as e:  # (a stop as the workers start: the same end)
            self.__exit__(type(e), e, None)
            raise
        return self

    def claim(self, path, csv):
        """Refuse before any work a path that is no regular file, another live run's, or that holds a training when
        asked neither to resume nor to replace it (and replace only a torch file: a zip)."""
        for p in (path, csv):
            if not path or p == csv == path or os.path.lexists(p) and not os.path.isfile(p):
                raise ValueError(f"{p!r} is not a regular file for a checkpoint and its CSV: choose {self.say('out')}")
        lock(path, self.say("out"))
        with open(path, "rb") if os.path.isfile(path) else contextlib.nullcontext() as f:
            head = f.read(2) if f else b""
        if head and not (self.resume or self.replace) or head not in (b"", b"PK"):
            unlock(path)
            raise ValueError(f"{path} holds a training already: add {self.say('resume')} to go on with it, or "
                             f"{self.say('replace')} to start afresh over it" if head == b"PK" else
                             f"{path} holds no checkpoint of these scripts: choose {self.say('out')}")

    def submit(self, fn, *args):  # fn(*args) in a worker: a Future
        return submit(self.pool, fn, *args)

    def map(self, fn, *iterables):  # [fn(*args) for args in zip(*iterables)], in the workers
        return [future.result() for future in [self.submit(fn, *args) for args in zip(*iterables)]]

    def resumable(self, ckpt, algorithm, cfg):
        """out's checkpoint, if this training can go on with it (trained by the same algorithm with the same settings
        but iterations, fewer done than cfg asks); else a ValueError in words."""
        then = ckpt.get("settings") or {}
        changed = [f"{k} {then.get(k)!r}" for k, v in cfg.items() if k != "iterations" and then.get(k) != v]
        if "rows" not in ckpt or ckpt.get("algorithm") != algorithm:
            raise ValueError(f"{self.out} holds no training of {algorithm}.py to resume")
        if changed:
            raise ValueError(f"{self.out} was trained with {', '.join(changed)}: choose the same")
        if ckpt["iterations_done"] >= cfg["iterations"]:
            raise ValueError(f"{self.out} has {ckpt['iterations_done']} iterations done: ask for more to go on")
        return ckpt

    def log_iteration(self, cfg):  # the last row as a line of the log, and the CSV of all the rows, whole
        r = self.rows[-1]
        if self.out is not None:
            write_atomic(os.path.splitext(self.out)[0] + ".csv", "".join(
                ["iteration,positions,value_loss,policy_loss,self_play_s,training_s\n", *(
                    f"{r['iteration']},{r['positions']},{r['value_loss']:.4f},{r['policy_loss']:.4f},"
                    f"{r['self_play_s']:.2f},{r['training_s']:.2f}\n" for r in self.rows)]))
        loss, left = r["value_loss"] + r["policy_loss"], cfg["iterations"] - r["iteration"]
        self.log(f"iteration {r['iteration']:3d}/{cfg['iterations']}  games {cfg['games']:4d}  positions "
                 f"{r['positions']:6d}  " + (f"loss {loss:.3f} (value {r['value_loss']:.3f}, policy "
                 f"{r['policy_loss']:.3f})" if loss == loss else "no position kept yet: no Adam step") +  # (nan)
                 f"  self-play {r['self_play_s']:4.1f} s  training {r['training_s']:3.1f} s  about "
                 f"{(r['self_play_s'] + r['training_s']) * left:.0f} s left")

    def __exit__(self, kind, error, trace):
        held = [signal.signal(sig, signal.SIG_IGN) for sig in STOPS] if isinstance(error, KeyboardInterrupt) and \
            threading.current_thread() is threading.main_thread() else []  # a second stop: nothing to interrupt
        close(self.pool)
        self.restore()
        unlock(self.out)
        for sig, handler in zip(STOPS, held):
            signal.signal(sig, handler)
        if error is not None and self.out is not None:
            try:
                ckpt = read_checkpoint(self.out)
                done, asked = ckpt.get("iterations_done", 0), (ckpt.get("settings") or {}).get("iterations", 0)
                error.add_note(f"{self.out} holds iteration {done}" + (
                    f": add {self.say('resume')} to go on" if done < asked else ", the last"))
            except ValueError as e:
                error.add_note(str(e) if os.path.exists(self.out) else f"nothing saved at {self.out}")


# ----------------------------------------------------------------------------------------------------------------
# A script's end, in one line

class Stopped(KeyboardInterrupt):  # SIGTERM or SIGHUP, raised as Ctrl-C's KeyboardInterrupt is
    def __init__(self, signum):
        super().__init__()
        self.status = 128 + signum  # the exit status


def stop(signum, frame):
    raise Stopped(signum)


def run_main(work):
    """Run a script's work, then exit; what ends it early is one line on stderr and a status: an error in words or a
    worker that died (1), a stop (128 + its signal), the reader of its output gone (141), the terminal game's input
    ended (0); an error's notes (what a checkpoint holds) end its line. A ValueError from a game of one's own (its
    last frame outside this folder) keeps its traceback. What work returns is printed last."""
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    status, words, error = 0, [], None
    try:
        words = [work() or ""]
    except KeyboardInterrupt as e:
        status, words, error = getattr(e, "status", 130), ["bye" if "--play" in sys.argv else "interrupted"], e
    except concurrent.futures.BrokenExecutor as e:
        status, words, error = 1, ["a worker process ended abruptly (killed, or out of memory?)"], e
    except ValueError as e:
        if os.path.dirname(os.path.abspath(traceback.extract_tb(e.__traceback__)[-1].filename)) != HERE:
            raise  # (a game of one's own, or a worker's: its traceback is worth keeping)
        status, words, error = 1, [f"{os.path.basename(sys.argv[0])}: error: {e}"], e
    except BrokenPipeError as e:  # (`| head`: quiet, but for what a training saved)
        status, error = 141, e
    except EOFError:
        words = ["bye"]
    for sig in STOPS:  # the work is over: a second stop changes nothing now
        signal.signal(sig, signal.SIG_IGN)
    line = "; ".join([*words, *getattr(error, "__notes__", ())])
    if status == 1:
        sys.exit(line)  # (on stderr, status 1)
    try:
        print(line, file=sys.stderr if status else sys.stdout, flush=True) if line else sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (what stdout holds goes nowhere)
    sys.exit(status)


# ----------------------------------------------------------------------------------------------------------------
# Settings and the command line

def check_settings(settings, cfg):  # each setting ({name: Setting}) in cfg, in its range; or a ValueError in one line
    for key in [k for k in cfg if k not in settings] + [k for k in settings if k not in cfg]:
        raise ValueError(f"no setting {key}: the settings are {', '.join(settings)}" if key in cfg else
                         f"the settings lack {key}: settings() gives every one")
    for key, s in settings.items():
        value = cfg[key]
        if s.choices and value not in s.choices or not s.choices and not (value is None and s.default is None or (
                isinstance(value, (int, float)) and s.low <= value <= s.high)):  # (nan is not)
            raise ValueError(f"the setting {key} is {value!r}, not " + (f"one of {', '.join(map(str, s.choices))}"
                             if s.choices else f"a number from {s.low} to {s.high}"))


def number(lo, hi, kind=int):  # an argparse type: a whole number (kind int), or a finite one, from lo to hi
    def parse(text):
        with contextlib.suppress(ValueError):
            if lo <= kind(text) <= hi:
                return kind(text)
        raise argparse.ArgumentTypeError(f"must be a {'whole ' * (kind is int)}number from {lo} to {hi}, not {text!r}")
    return parse


def command_line(doc, settings, game_settings, games, default, for_play):
    """A trainer's flags: one a setting ({name: Setting}, each game's own default named), then the rest; a refusal in one
    line: a range, a flag for training with --play or one for --play (for_play) without, --resume with --replace."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("--game", default="connect4", help="tictactoe, connect4, or your own as module:Class (a "
                        "class in an importable module; default connect4)")
    for key, s in settings.items():
        own = "".join(f"; {game}'s {values[key]}" for game, values in game_settings.items() if key in values)
        kind = dict(choices=s.choices) if s.choices else dict(type=number(s.low, s.high, type(s.low)), metavar="N")
        parser.add_argument(f"--{key.replace('_', '-')}", **kind, help=f"{s.meaning}" + (
            "" if s.choices else f", {s.low:g} to {s.high:g}") + f" (default {s.default}{own})")
    parser.add_argument("--seed", type=number(0, 2**32 - 1), default=0, help="random seed, 0 to 2^32 - 1 (default 0)")
    parser.add_argument("--workers", type=number(1, 256), help=f"self-play processes, 1 to 256 (default "
                        f"{os.cpu_count()}); a training's two shares of games keep two busy at most")
    parser.add_argument("--out", help=f"checkpoint path, saved every iteration, its CSV beside it (default {default})")
    parser.add_argument("--resume", action="store_true", help="train --out's checkpoint on to --iterations")
    parser.add_argument("--replace", action="store_true", help="start afresh over --out's checkpoint and CSV")
    parser.add_argument("--play", action="store_true", help="play against a saved checkpoint instead of training")
    parser.add_argument("--checkpoint", help=f"the checkpoint --play loads (default {default})")
    parser.add_argument("--first", choices=["human", "agent"], help="who starts with --play (default human)")
    args = parser.parse_args()
    given = {k for k, v in vars(args).items() if v not in (None, False)} - {"game", "play", "seed"}
    for key in sorted(given - for_play if args.play else given & for_play - set(settings)):
        parser.error(f"--{key.replace('_', '-')} is for {'training' if args.play else '--play'}")
    if args.resume and args.replace or args.simulations == 0 and not args.play:
        parser.error("choose one of --resume and --replace" if args.replace else "--simulations 0 is for --play")
    if args.game not in games:  # module:Class, a game of your own, from the folder it runs in or Python's path (an
        sys.path.append(os.getcwd())  # error inside its module keeps its traceback: it is the module's)
        try:
            module, _, name = args.game.partition(":")
            games[args.game] = getattr(importlib.import_module(module), name)
            check_network_game(args.game, games[args.game])
        except (ModuleNotFoundError, AttributeError, ValueError) as e:
            parser.error(f"argument --game: {args.game!r}: {e} (tictactoe, connect4, or your own as module:Class)")
    return args

"""The machinery beneath the trainers and the reports, which a learner can skip: it holds no algorithm. Its six sections
(workers, files, checkpoints, the Run, a script's end, the flags) each open with a comment on what they guarantee."""
import argparse
import concurrent.futures
import contextlib
import copy
import fcntl
import gc
import importlib.machinery
import multiprocessing.connection
import os
import signal
import sys
import threading
import traceback

import torch
import torch._dynamo  # noqa: F401 (imported now, because a stop while a new optimizer imported it broke torch)

from mcts import number  # the argparse type of mcts.py's flags: a number in a range, or a one-line error


# Workers. Each process computes with one thread, so its numbers repeat exactly on one machine and it does not slow
# down when the machine is busy. Workers ignore the stops: the main process ends them, or they exit once it is gone.

START = "forkserver" if sys.platform.startswith("linux") else "spawn"  # how workers start beside other threads
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # Ctrl-C, `kill`, a closing terminal


def start_process():  # set how this process computes (README: Speed), and return a function that puts it back
    import threadpoolctl  # (imported only here, because importing it sets KMP_DUPLICATE_LIB_OK in os.environ)
    threads, thresholds = torch.get_num_threads(), gc.get_threshold()
    blas = threadpoolctl.threadpool_limits(1, "blas")  # numpy's batches are small: a second thread costs more
    torch.set_num_threads(1)  # a second thread is slower beside any busy program, and its last bits differ
    torch.set_flush_denormal(True)  # Adam's moments reach denormals, which some CPUs handle many times slower
    gc.set_threshold(50_000, 20, 20)  # the trees are many small objects: the default made self-play 1.45x slower
    # threadpoolctl's restore also puts torch's thread count back (they share OpenMP), so no test here can see whether
    # set_num_threads(threads) alone would. torch has no getter for the flush of denormals, so it goes back to off.
    return lambda: (torch.set_num_threads(threads), torch.set_flush_denormal(False), gc.set_threshold(*thresholds),
                    blas.restore_original_limits())


def start_worker(nice):
    for sig in STOPS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # blocked since Run.__enter__, and now ignored
    os.nice(nice)
    threading.Thread(target=lambda main=multiprocessing.parent_process().sentinel: (
        multiprocessing.connection.wait([main]), os._exit(1)), daemon=True).start()
    start_process()


def start_workers(n, nice):  # n workers. With no other thread running, they are forked now (copies of this process);
    # beside another thread a fork can copy a lock that thread holds and hang, so a fork server starts them as needed
    how = multiprocessing.get_context("fork" if START == "forkserver" and threading.active_count() == 1 else START)
    how.set_forkserver_preload(["__main__", "torch", "games"])
    pool = concurrent.futures.ProcessPoolExecutor(n, how, initializer=start_worker, initargs=[nice])
    if error := pool.submit(int).exception():
        pool.shutdown()
        raise error if how.get_start_method() == "fork" else ValueError(
            "the worker processes ended as they started: a script that trains as it is imported trains again in each "
            'of them; put its work under `if __name__ == "__main__":`, or use one process')
    return pool


# Files. A file is written whole or not at all, and one run at a time writes a path (a link and its target are one).

LOCKS = {}  # the paths this process locked, each with its open PATH.lock


def write_atomic(path, data):  # a temporary file, then a rename: never half-written; an OSError becomes a ValueError
    path = os.path.realpath(path)  # (written through a link, the link stays a link)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise ValueError(f"cannot write {path}: {e.strerror or e}") if isinstance(e, OSError) else e


def lock(path, flag):  # path is this process's until unlock(path); flag is the option that chose it, for the message
    if path.endswith(os.sep):  # realpath would drop the slash, and a file would take the folder's name
        raise ValueError(f"{path} names a folder, not a file: choose another {flag}")
    try:
        LOCKS[path] = os.open(f"{os.path.realpath(path)}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(LOCKS[path], fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        unlock(path)
        raise ValueError(f"{path} is being written by another run: wait for it to end, or choose another {flag}"
                         if isinstance(e, BlockingIOError) else f"cannot write {path}: {e.strerror}")


def unlock(path):
    os.close(LOCKS.pop(path)) if path in LOCKS else None


# Checkpoints: plain dicts, loaded with weights_only=True so that a file from someone else cannot run code; anything
# not ours is refused in words.
def read_checkpoint(path, game=None, known=None):
    try:
        ckpt = torch.load(path, weights_only=True) if os.path.isfile(path) or not os.path.lexists(path) else None
    except FileNotFoundError:
        raise ValueError(f"no checkpoint at {path!r}") from None
    except Exception:
        raise ValueError(f"{path} is damaged, or no checkpoint: torch cannot read it") from None
    if not isinstance(ckpt, dict) or not {"game", "hidden", "state_dict"} <= set(ckpt):
        raise ValueError(f"{path} is not a checkpoint of these scripts")
    where, unknown = ckpt["game"], known is not None and ckpt["game"] not in known
    if unknown or game and where != game:  # (the name of one's own game is module:Class, which --game imports)
        module = where.partition(":")[0].partition(".")[0]
        found = importlib.machinery.PathFinder.find_spec(module, [*sys.path, os.getcwd()])
        raise ValueError(f"{path} holds a network of {where}" + (f", not {game}" if game and not unknown else
                         ": register its class in GAMES first" if ":" not in where else f", whose module {module} is "
                         "not found (run from its folder; renamed? name it back)" if not found else
                         f": play it with python {ckpt.get('algorithm')}.py --game {where} --play --checkpoint {path}"))
    return ckpt


# The Run handed to train(). workers=1 means this process alone, None every core; out=None saves nothing. `with run:`
# locks out, sets how this process computes and starts the workers. However the training ends, it then kills the
# workers and puts the caller's settings back; after an error or a stop, it notes what out now holds.
class Run:
    def __init__(self, workers=1, out=None, resume=False, replace=False, log=print, flags=False, nice=0):
        self.workers, self.out, self.resume, self.replace, self.log, self.flags, self.nice = \
            workers, out, resume, replace, log, flags, nice
        self.rows = []  # one dict for each iteration: the CSV's rows, and evaluate's times

    def say(self, name):  # an argument as the caller gives it: a flag, or Python's keyword
        return f"--{name}" if self.flags else "out path" if name == "out" else f"{name}=True"

    def __enter__(self):
        if getattr(multiprocessing.current_process(), "_inheriting", False):  # a worker importing a script with no
            raise SystemExit(1)  # __main__ guard would train again: it exits quietly, and start_workers says why
        if self.out is not None:
            self.claim(self.out, os.path.splitext(self.out)[0] + ".csv")
        self.pool, self.restore, n = None, start_process(), self.workers or os.cpu_count()
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # workers start with it: a stop then is ours alone
        try:
            self.pool = start_workers(n, self.nice) if n > 1 else None
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # (a stop that came meanwhile is raised now)
        except BaseException as e:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            self.__exit__(type(e), e, None)
            raise
        return self

    def claim(self, path, csv):  # refuse a path that is no regular file, is a live run's, or holds something already
        if path == csv:
            raise ValueError(f"{path} would be its own CSV: choose another {self.say('out')}")
        if any(os.path.lexists(p) and not os.path.isfile(p) for p in (path, csv)):
            raise ValueError(f"{path!r} or its CSV is not a regular file: choose another {self.say('out')}")
        lock(path, self.say("out"))
        if os.path.isfile(path) and os.path.getsize(path) and not (self.resume or self.replace):
            unlock(path)
            raise ValueError(f"{path} holds something already: add {self.say('resume')} to go on with its training, "
                             f"or {self.say('replace')} to start afresh over it")

    def submit(self, fn, *args):  # fn(*args) in a worker; without workers, run now on a copy, as a worker would
        if getattr(self, "pool", None):
            return self.pool.submit(fn, *args)
        (done := concurrent.futures.Future()).set_result(fn(*copy.deepcopy(args)))
        return done

    def map(self, fn, *iterables):  # [fn(*args) for args in zip(*iterables)], in the workers
        return [future.result() for future in [self.submit(fn, *args) for args in zip(*iterables)]]

    def resumable(self, ckpt, algorithm, cfg):  # ckpt, if this training can go on from it (same settings, more to do)
        then, done = ckpt.get("settings") or {}, ckpt.get("iterations_done", 0)
        changed = ", ".join(f"{k} {then.get(k)!r}" for k, v in cfg.items() if k != "iterations" and then.get(k) != v)
        if "rows" not in ckpt or ckpt["algorithm"] != algorithm:
            raise ValueError(f"{self.out} holds no training of {algorithm}.py to resume")
        if changed or done >= cfg["iterations"]:
            raise ValueError(f"{self.out} " + (f"was trained with {changed}: choose the same" if changed else
                                               f"has {done} iterations done: ask for more to go on"))
        return ckpt

    def log_iteration(self, cfg):  # the last row as a line of the log, and the CSV of all the rows, whole
        r = self.rows[-1]
        if self.out is not None:
            write_atomic(os.path.splitext(self.out)[0] + ".csv", "".join(",".join(map(str, row)) + "\n" for row in (
                r, *(row.values() for row in self.rows))))
        loss = r["value_loss"] + r["policy_loss"]  # (nan when no position is kept yet)
        self.log(f"iteration {r['iteration']}/{cfg['iterations']}: {r['positions']} positions, " + (
            f"loss {loss:.3f} (value {r['value_loss']:.3f}, policy {r['policy_loss']:.3f})" if loss == loss else
            "no Adam step") + f", self-play {r['self_play_s']:.1f} s, training {r['training_s']:.1f} s")

    def __exit__(self, kind, error, trace):
        for process in list((getattr(self.pool, "_processes", None) or {}).values()):  # ended now, whatever they do
            process.kill()  # (as Python 3.14's kill_workers does)
        if self.pool:  # a worker killed half-way through a reply leaves the pool's result reader waiting for the rest;
            self.pool._result_queue._writer.close()  # closing the last writer lets that reader see the end of the pipe
            self.pool.shutdown(cancel_futures=True)
        self.restore()
        unlock(self.out)
        if error is not None and self.out is not None:  # what the checkpoint holds, in words
            try:
                ckpt = read_checkpoint(self.out)
                done, wanted = ckpt["iterations_done"], ckpt["settings"]["iterations"]
                error.add_note(f"{self.out} holds iteration {done}" + (f": add {self.say('resume')} to go on"
                               if done < wanted else f" of {wanted}: the training is done"))
            except (ValueError, KeyError, TypeError):  # (no checkpoint of a training there)
                error.add_note(f"nothing saved at {self.out}")


# A script's end: a stop, a lost worker, a lost reader or one of our ValueErrors ends it in one line that says what was
# saved (a second stop is ignored), with exit status 128 + the signal, 1, or 141. Other errors, like a ValueError from
# your own game, keep their traceback.
def run_main(work):
    ours = {f"{n}.py" for n in "alphazero alphazero_plus evaluate further games gumbel mcts plots plumbing puct".split()}
    def stop(signum, frame):
        for sig in STOPS:
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt(128 + signum)
    for sig in STOPS:
        signal.signal(sig, stop)
    status, words, error = 0, [], None
    try:
        words = [work() or ""]
    except KeyboardInterrupt as e:
        status, words, error = (e.args or [130])[0], ["bye" if "--play" in sys.argv else "interrupted"], e
    except concurrent.futures.BrokenExecutor as e:
        status, words, error = 1, ["a worker process ended abruptly (killed, or out of memory?)"], e
    except ValueError as e:
        if os.path.basename(traceback.extract_tb(e.__traceback__)[-1].filename) not in ours:
            raise
        status, words, error = 1, [f"{os.path.basename(sys.argv[0])}: error: {e}"], e
    except BrokenPipeError as e:  # (`| head`)
        status, words, error = 141, ["the output's reader is gone"], e
    line = "; ".join([*words, *getattr(error, "__notes__", ())])
    try:
        print(line, file=sys.stderr if status else sys.stdout, flush=True) if line and status != 1 else sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (what stdout still holds goes nowhere)
    sys.exit(line if status == 1 else status)  # (with status 1, SystemExit prints the line on stderr)


# The flags: one for each setting, and every refusal one line before any work.
def check_settings(settings, cfg):  # every setting ({name: Setting}) in cfg, each in its range, or a ValueError
    for key in [*cfg, *settings]:
        s, value = settings.get(key), cfg.get(key, "missing")
        if s is None:
            raise ValueError(f"no setting {key}: the settings are {', '.join(settings)}")
        if s.choices and value not in s.choices or not s.choices and not (value is None and s.default is None or (
                isinstance(value, (int, float)) and s.low <= value <= s.high)):  # (nan is not)
            raise ValueError(f"the setting {key} is {value!r}, not " + (f"one of {', '.join(map(str, s.choices))}"
                             if s.choices else f"a number from {s.low} to {s.high}"))


def command_line(doc, settings, game_settings, games, default, plays):
    """A trainer's flags; --game module:Class imports one's own game, --play reads only `plays` of the settings."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("--game", default="connect4", help="tictactoe, connect4 (default), or module:Class")
    for key, s in settings.items():
        own = "".join(f"; {game}'s {values[key]}" for game, values in game_settings.items() if key in values)
        kind = dict(choices=s.choices) if s.choices else dict(type=number(s.low, s.high, type(s.low)), metavar="N")
        parser.add_argument(f"--{key.replace('_', '-')}", **kind, help=f"{s.meaning}" + (
            "" if s.choices else f", {s.low:g} to {s.high:g}") + f" (default {s.default}{own})")
    parser.add_argument("--seed", type=number(0, 2**32 - 1), default=0, help="random seed, 0 to 2^32 - 1 (default 0)")
    parser.add_argument("--workers", type=number(1, 256), default=2, help="worker processes for self-play; a training "
                        "plays its games in 2 shares, so more than 2 never help (default 2)")
    parser.add_argument("--out", help=f"checkpoint path, saved every iteration, its CSV beside it (default {default})")
    parser.add_argument("--resume", action="store_true", default=None, help="train --out on to --iterations")
    parser.add_argument("--replace", action="store_true", default=None, help="start afresh over --out and its CSV")
    parser.add_argument("--play", action="store_true", help="play against a saved checkpoint instead of training, "
                        "searching as it was trained (unless --simulations and the like say otherwise)")
    parser.add_argument("--checkpoint", help=f"the checkpoint --play loads (default {default})")
    parser.add_argument("--first", choices=["human", "agent"], help="who starts with --play (default human)")
    args = parser.parse_args()
    trains = [f"--{k}".replace("_", "-") for k in [*settings, "out", "resume", "replace"] if k not in plays and
              getattr(args, k) is not None]  # (the flags given that --play never reads)
    if args.resume and args.replace or args.simulations == 0 and not args.play or args.play and trains:
        parser.error("choose one of --resume and --replace" if args.replace and args.resume else
                     f"{trains[0]} is for a training; --play takes --checkpoint, --first, --game, --"
                     + ", --".join(plays).replace("_", "-") if args.play else "--simulations 0 is for --play")
    if args.game not in games:  # module:Class, from the folder it runs in or Python's path
        sys.path.append(os.getcwd())
        try:
            module, _, name = args.game.partition(":")
            games[args.game] = getattr(importlib.import_module(module), name or "")  # (train checks the contract)
        except (ModuleNotFoundError, AttributeError, ValueError) as e:
            parser.error(f"argument --game: {args.game!r}: " + (f"{e} " if name else "not a game the trainers play ") +
                         "(tictactoe, connect4, or your own as module:Class)")
    return args

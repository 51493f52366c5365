"""The article's and the lab's expected-results tables, our numbers beside theirs. Each part is a function that reads
top to bottom: train, measure, print, judge. part_blog runs the article's experiments (UCT on Go and chess, PUCT, the
worked example). The lab's part_1 measures AlphaZero on tic-tac-toe against the exact solution, and part_2 on Connect
Four against three opponents; part_3a trains PUCT and Gumbel with 2 simulations a move, and part_3b plays Gumbel
against PUCT with Part 2's network.

    python evaluate.py                      # every table (2.5 to 9 minutes on 2 cores)
    python evaluate.py --part 2             # one part: blog, 1, 2, 3a or 3b
    python evaluate.py --quick              # every part at a small size, in seconds
    python evaluate.py --seeds 8            # every part at seeds 0 to 7: our median and range beside each number
    python evaluate.py --plots figures      # then the figures (python plots.py evaluate.json --plots DIR redraws them)
    python evaluate.py --checkpoint connect4.pt    # one saved network, measured as Part 1 or 2 measures its own
further.py goes beyond the documents: the exact Connect Four solver, the five questions and the strong player.
"""
import argparse
import collections
import contextlib
import dataclasses
import functools
import importlib
import io
import json
import math
import os
import statistics
import sys
import time

import numpy as np

import alphazero
import alphazero_plus
import games
import gumbel
import mcts
import plots
import plumbing
import puct

# ----------------------------------------------------------------------------------------------------------------
# The documents' numbers. The article ran each experiment once; the lab gives tables by iteration, seed or budget.

ARTICLE = {"go": {"b1_visits": 4331, "b1_win_rate": 0.90, "runner_up": "F1 51 (0.53)", "b1_leads_from": 100,
                  "seconds": "~6"},
           "chess": {"flat_qxd7": 0.686, "flat_qxd7_rank": 1, "flat_kf1": 0.626, "flat_kf1_rank": 2,
                     "mcts_qxd7_visits": 73, "top6": "f4 f3 Kf1 h3 g4 h4", "top6_allowing_mate": 0,
                     "moves_allowing_mate": "11 of 26"},
           "puct": {"uniform_leads_from": "489 (seed 0); 1-200 (three others)", "leaning_leads_from": 2,
                    "leaning_share": 0.96}}

# A row of the lab's tic-tac-toe tables: the optimal-move fraction and the losses, for the raw policy and for search
TicTacToeRow = collections.namedtuple("TicTacToeRow", "policy_optimal policy_losses search_optimal search_losses")
# A row of the lab's Part 2 table: the scores (win 1, draw 1/2) of the raw policy and of search against each opponent
Connect4Row = collections.namedtuple("Connect4Row", "policy_v_tactical search_v_random search_v_tactical search_v_uct")

LAB = {"1": {0: TicTacToeRow(0.574, 76, 0.982, 42), 5: TicTacToeRow(0.885, 3, 0.988, 5),
             10: TicTacToeRow(0.889, 3, 0.989, 0), 20: TicTacToeRow(0.910, 0, 0.988, 10),
             40: TicTacToeRow(0.917, 7, 0.987, 8)},
       "2": {0: Connect4Row(0.00, 0.90, 0.28, 0.00), 10: Connect4Row(0.17, 1.00, 0.54, 0.14),
             20: Connect4Row(0.20, 1.00, 0.69, 0.14), 40: Connect4Row(0.37, 0.98, 0.82, 0.47),
             60: Connect4Row(0.41, 1.00, 0.84, 0.43)},
       "2_more_search": {0: 0.12, 50: 0.43, 200: 0.59, 800: 0.70},
       "3a": {"puct seed 0": TicTacToeRow(0.622, 100, 0.622, 100), "puct seed 1": TicTacToeRow(0.646, 60, 0.646, 60),
              "puct seed 2": TicTacToeRow(0.628, 59, 0.628, 59), "gumbel seed 0": TicTacToeRow(0.814, 52, 0.865, 36),
              "gumbel seed 1": TicTacToeRow(0.869, 26, 0.907, 30),
              "gumbel seed 2": TicTacToeRow(0.831, 51, 0.893, 32)},
       "3b": {2: 0.54, 4: 0.55, 8: 0.49, 16: 0.49, 32: 0.45, 64: 0.43}}
NAMES = {"alphazero": "puct", "gumbel": "gumbel"}
ALGORITHMS = {"alphazero": alphazero, "gumbel": gumbel, "alphazero_plus": alphazero_plus}

# ----------------------------------------------------------------------------------------------------------------
# The arena every table plays in, modelled on alpha-zero-general's Arena.py. A player takes a batch of states (one per
# game running side by side) with their random generators, and returns a move for each. A job measures `size` games
# (Match) or positions (OptimalMoves): run(indices) plays a slice of them in a worker, and total() makes the job's
# number from the slices' results.

SOLVED = {}  # the minimax value for the player to move, by (x bits, o bits)


def solve(state):
    """Tic-tac-toe's exact value for the player to move (1 win, 0 draw, -1 loss), by memoised minimax."""
    key = (state.x, state.o)
    if key not in SOLVED:
        SOLVED[key] = alphazero.outcome(state) if state.is_over() else max(-solve(after(state, m))
                                                                           for m in state.legal_moves())
    return SOLVED[key]


def after(state, move):
    s = state.copy()
    s.play(move)
    return s


def optimal_moves(state):
    best = solve(state)
    return [m for m in state.legal_moves() if -solve(after(state, m)) == best]


def reached(moves_of):
    """The unfinished positions reached from the empty board when both sides play only moves_of(state), by key."""
    found, stack = {}, [games.TicTacToe()]
    while stack:
        s = stack.pop()
        if s.key() not in found:
            found[s.key()] = s
            stack.extend(after(s, m) for m in moves_of(s))
    return {key: s for key, s in found.items() if not s.is_over()}


@functools.lru_cache(maxsize=1)
def tictactoe_positions():
    """The 4,520 tic-tac-toe positions with a move to make, in a fixed order."""
    return [s for key, s in sorted(reached(games.TicTacToe.legal_moves).items())]


class Agent:
    """A network that plays its raw policy (0 simulations) or searches with `algorithm`, passing it any options."""

    def __init__(self, net, n_simulations, algorithm="alphazero", **options):  # a name, as modules don't pickle
        self.net, self.n_simulations, self.algorithm, self.options = net, n_simulations, algorithm, options
        self.cache = {}  # the network's outputs by position, kept from move to move as self-play keeps them

    def __call__(self, states, rngs):
        algorithm = ALGORITHMS[self.algorithm]
        if len(self.cache) > 200_000:
            self.cache.clear()  # bounds the memory of long matches with many simulations
        if self.n_simulations == 0:
            return [max(priors, key=priors.get) for priors, _ in algorithm.predict(self.net, states, self.cache)]
        return [algorithm.best_move(root) for root in algorithm.search(states, self.net, self.n_simulations,
                                                                       cache=self.cache, **self.options)]


def random_player(states, rngs):
    return [s.legal_moves()[rng.integers(len(s.legal_moves()))] for s, rng in zip(states, rngs)]


def perfect_player(states, rngs):
    return [rng.choice(optimal_moves(s)) for s, rng in zip(states, rngs)]


def winning_columns(state, player):
    """The Connect Four columns where `player` (0 first, 1 second) would complete a four at once."""
    return [c for c in state.legal_moves()
            if games.ConnectFour.has_four(state.bits[player] | 1 << (7 * c + state.heights[c]))]


def tactical_player(states, rngs):
    """Win at once if possible; else block the opponent's win; else avoid moves that let the opponent win at once;
    else a random move weighted towards the centre."""
    moves = []
    for s, rng in zip(states, rngs):
        me = s.moves % 2
        wins, threats = winning_columns(s, me), winning_columns(s, 1 - me)
        safe = [c for c in s.legal_moves() if not winning_columns(after(s, c), 1 - me)]
        choices = wins[:1] or threats[:1] or safe or s.legal_moves()
        w = np.array([1.0, 2, 3, 4, 3, 2, 1])[choices]  # the centre first
        moves.append(choices[rng.choice(len(choices), p=w / w.sum())])
    return moves


class UCTPlayer:
    """Plain UCT from mcts.py with uniformly random rollouts, for Connect Four. The lab's c = 1.4 is for values in
    [-1, 1]; mcts.py's values lie in [0, 1], half the scale, so c = 0.7 makes the same choices."""

    def __init__(self, n_simulations, c=0.7):
        self.n_simulations, self.c = n_simulations, c

    def __call__(self, states, rngs):
        return [mcts.best_move(mcts.uct_search(s, games.connect4_rollout, self.n_simulations, c=self.c,
                                               seed=int(rng.integers(2 ** 31)))) for s, rng in zip(states, rngs)]


def play_match(game, agent, opponent, indices, seed, opening):
    """Play a Match's games `indices` side by side; return the agent's scores and the finished games."""
    states, rngs = [], [np.random.default_rng([seed, i, 1]) for i in indices]
    for i in indices:
        s, orng = alphazero.GAMES[game](), np.random.default_rng([seed, i // 2])
        for _ in range(opening):
            s.play(s.legal_moves()[orng.integers(len(s.legal_moves()))])
        states.append(s)
    agent_first = [i % 2 == 0 for i in indices]
    while not all(s.is_over() for s in states):
        for player, is_agent in ((agent, True), (opponent, False)):
            turn = [j for j, s in enumerate(states)
                    if not s.is_over() and s.first_to_move() == (agent_first[j] == is_agent)]
            if turn:
                for j, move in zip(turn, player([states[j] for j in turn], [rngs[j] for j in turn])):
                    states[j].play(move)
    return [s.result() if first else 1 - s.result() for s, first in zip(states, agent_first)], states


@dataclasses.dataclass
class Match:
    """`size` games of `agent` against `opponent`. Each opening of `opening` random moves is played twice, with the
    agent first in the even game. The total is the agent's score in each game (win 1, draw 1/2, loss 0)."""
    game: str
    agent: object
    opponent: object
    size: int
    seed: int
    opening: int = 2

    def run(self, indices):
        return play_match(self.game, self.agent, self.opponent, indices, self.seed, self.opening)[0]

    def total(self, scores):
        return scores


@dataclasses.dataclass
class OptimalMoves:
    """The fraction of the first `size` of the 4,520 tic-tac-toe positions that the agent answers optimally."""
    agent: object
    size: int

    def run(self, indices):
        positions = [tictactoe_positions()[i] for i in indices]
        moves = self.agent(positions, [None] * len(positions))
        return [sum(m in optimal_moves(s) for s, m in zip(positions, moves))]

    def total(self, counts):
        return sum(counts) / self.size


def mean(scores):
    return sum(scores) / len(scores)


# The workers share the cores by their nice level: a training's self-play workers at 0, the jobs of the part at hand
# (POOLS["now"]) at 10, and work begun early for a later part (POOLS["ahead"]) at 19, so each gets only the cores that
# those before it leave idle. Until main starts the pools, everything runs in this process.
POOLS, START = {"now": plumbing.Run(), "ahead": plumbing.Run()}, time.time()
# Each job is cut into 4 pieces whatever the number of workers. The games of a piece share network batches, and the
# batch size can change the last bits of the outputs, so fixed pieces give the same numbers with any --workers.
PIECES = 4


def run_piece(job, indices):  # the job travels as an argument, so that each piece works on its own copy of it
    return job.run(indices)


class Jobs:
    """Jobs ({key: job}) run in the workers from the moment they are added; results() waits and returns their totals."""

    def __init__(self, jobs=None):
        self.jobs, self.pieces = {}, []
        self.add(jobs or {})

    def add(self, jobs):
        self.jobs.update(jobs)
        for key, job in jobs.items():  # PIECES nearly equal slices of range(job.size), none empty
            cuts = sorted({job.size * i // PIECES for i in range(PIECES + 1)})
            for a, b in zip(cuts, cuts[1:]):
                self.pieces.append((key, POOLS["now"].submit(run_piece, job, list(range(a, b)))))

    def results(self):
        results = {key: [] for key in self.jobs}
        for key, piece in self.pieces:
            results[key] += piece.result()
        return {key: self.jobs[key].total(r) for key, r in results.items()}


def run_jobs(jobs):  # measure the jobs now and return {key: the job's total}
    return Jobs(jobs).results()


# A finished training: settings, kept networks, training seconds up to each, wall-clock seconds, the final network
Trained = collections.namedtuple("Trained", "cfg nets clock seconds net", defaults=[None])


def train_keeping(game, cfg, seed, keep, trainer=alphazero, workers=1, on_kept=None, log=True):
    """Train `game` with the module `trainer`, keeping numpy copies of the networks at the iterations in `keep`.
    Each kept network goes to on_kept(it, net) at once, so that its measures can run while the training goes on."""
    t0, nets, clock = time.time(), {}, {}
    run = trainer.Run(workers, log=lambda line: log and print("  " + line, flush=True))

    def kept(it, net):
        if it in keep:
            nets[it] = trainer.NumpyNet(net)
            clock[it] = round(sum(r["self_play_s"] + r["training_s"] for r in run.rows), 1)
            on_kept and on_kept(it, nets[it])
    net = trainer.train(game, cfg, seed, run, on_iteration=kept)
    return Trained(cfg, nets, clock, time.time() - t0, net)


def train_one(module, game, cfg, seed, keep):  # train_keeping quietly in a worker, so that trainings run side by side
    return train_keeping(game, cfg, seed, keep, importlib.import_module(module), log=False)._replace(net=None)


# ----------------------------------------------------------------------------------------------------------------
# The verdicts and the tables. A Check holds one of our numbers beside the documents'; `within` says whether it lies
# within their noise or bounds.

Check = collections.namedtuple("Check", "name ours theirs within")
FRACTION_TOLERANCE = 0.05  # for optimal-move fractions: about the spread between the lab's own seeds in Part 3a


def within_noise(ours, lab, n=None):
    """Whether two scores over n games each differ by at most two standard errors of their difference. With n None
    they are optimal-move fractions, which must lie within FRACTION_TOLERANCE."""
    if n is None:
        return abs(ours - lab) <= FRACTION_TOLERANCE
    p = (ours + lab) / 2
    return abs(ours - lab) <= 2 * math.sqrt(p * (1 - p) * 2 / n) + 1e-9


def check(name, ours, lab, n=None):
    """Check our numbers, one for each seed, against the lab's single number. They are scores over n games, losses in
    n games (the lab's are out of 100), or optimal-move fractions when n is None. The lab's number is within if it lies
    in our range, or if within_noise accepts it beside either end of the range (with one seed, beside our number)."""
    losses = n is not None and "losses" in name
    theirs, scores = (lab / 100, [x / n for x in ours]) if losses else (lab, ours)
    within = min(scores) <= theirs <= max(scores) or any(within_noise(x, theirs, n) for x in (min(scores), max(scores)))
    return Check(name, f"{spread(ours)} of {n}" if losses else spread(ours), f"{lab} of 100" if losses else lab, within)


def spread(values):
    """One table cell for our numbers over the seeds: for one seed the number itself, else the median and range, as
    in 0.430 [0.310-0.520]. For words (the chess trap's six moves, say), the most common and how many seeds gave it."""
    if len(values) == 1:
        return "-" if values[0] is None else values[0]
    if not all(isinstance(x, (int, float, type(None))) for x in values):
        word, k = collections.Counter(map(str, values)).most_common(1)[0]
        return f"{word} ({k} of {len(values)})"
    known = [x for x in values if x is not None]  # None means never (B1 never took the lead, say): counted apart
    number = (lambda x: f"{x:g}") if all(isinstance(x, int) for x in known) else (lambda x: f"{x:.3f}")
    return (f"{number(statistics.median(known))} [{number(min(known))}-{number(max(known))}]" if known else "") + \
        (f"; never in {len(values) - len(known)}" if len(known) < len(values) else "")


def table(title, header, rows):
    """Print a title, a header line and rows of cells. Floats get 3 decimals; nan (a fraction of nothing) prints -."""
    first, *rest = title.split("\n")
    print(f"\n=== {first} ===" + "".join("\n" + line for line in rest))
    rows = [[("-" if math.isnan(x) else f"{x:.3f}") if isinstance(x, float) else x for x in cells] for cells in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for cells in [header] + rows:
        print("  " + "  ".join(f"{str(x):>{w}}" if i else f"{str(x):<{w}}"
                               for i, (x, w) in enumerate(zip(cells, widths))))


def beside(ours, theirs):
    """A row's cells: each field's spread over the seeds (ours holds a record per seed), then the lab's or a blank."""
    return [x for pair in zip(map(spread, zip(*ours)), theirs or [""] * 4) for x in pair]


def seeds(args):  # the run's seeds: --seed and the ones after it, --seeds in all
    return list(range(args.seed, args.seed + args.seeds))


def over(args):  # which seeds a table's numbers come from, for its title
    return f"seed {args.seed}" if args.seeds == 1 else \
        f"seeds {args.seed}-{args.seed + args.seeds - 1}; ours: the median [and range] over the seeds"


def progress(text):  # print a line stamped with the seconds since the run began
    print(f"\n[{time.time() - START:4.0f} s] {text}", flush=True)


# ----------------------------------------------------------------------------------------------------------------
# The article: UCT on the Go corner and the chess trap, PUCT with a stand-in network, the worked PUCT example. The
# searches run in the worker processes (go_run, chess_run, puct_run); part_blog prints and judges them.

def go_run(seed, n):
    """Run one UCT search of the Go corner; return B1's numbers and the CPU seconds it took."""
    b1, state, start = games.go_point("B1"), games.go_corner(), time.process_time()
    on_step, record = mcts.track_lead(b1)
    root = mcts.uct_search(state, games.go_rollout, n, c=1.0, seed=seed, on_step=on_step)
    node = next(ch for ch in root.children if ch.move == b1)
    second = max((ch for ch in root.children if ch.move != b1), key=lambda ch: ch.n)
    return {"seed": seed, "best": state.move_name(mcts.best_move(root)), "b1_visits": node.n,
            "b1_win_rate": round(node.w / node.n, 3),
            "runner_up": f"{state.move_name(second.move)} {second.n} ({second.w / second.n:.2f})",
            "b1_leads_from": record["lead_from"], "seconds": round(time.process_time() - start, 2),
            "visits": {state.move_name(ch.move): ch.n for ch in root.children}, "b1_share": record["share"]}


def chess_run(seed, n, n_flat):
    """Run flat Monte Carlo and UCT on the chess trap; return the table's numbers and the figure's."""
    state, start = games.chess_trap(), time.process_time()
    name = state.move_name
    flat = {name(m): score for m, score in mcts.flat_monte_carlo(state, games.chess_rollout, n_flat, seed=seed).items()}
    root = mcts.uct_search(state, games.chess_rollout, n, c=0.7, seed=seed)
    seconds, ranking = time.process_time() - start, sorted(flat, key=lambda m: -flat[m])
    top6 = [name(ch.move) for ch in sorted(root.children, key=lambda ch: -ch.n)[:6]]
    allowing = [name(m) for m in state.legal_moves() if games.allows_mate_in_one(state, m)]
    visits = {name(ch.move): ch.n for ch in root.children}
    ours = {"flat_qxd7": round(flat["Qxd7"], 3), "flat_qxd7_rank": ranking.index("Qxd7") + 1,
            "flat_kf1": round(flat["Kf1"], 3), "flat_kf1_rank": ranking.index("Kf1") + 1,
            "mcts_qxd7_visits": visits["Qxd7"], "top6": " ".join(top6),
            "top6_allowing_mate": sum(m in allowing for m in top6),
            "moves_allowing_mate": f"{len(allowing)} of {len(flat)}", "seconds": round(seconds, 2)}
    return ours, {"flat": flat, "uct_visits": visits, "allowing_mate": allowing}


def puct_run(seed, weight, n):
    """Run one PUCT search of the Go corner with the stand-in network; return when B1 took the lead, and its share."""
    b1 = games.go_point("B1")
    network = puct.rollout_network(games.go_rollout, hint=b1, weight=weight, seed=seed)
    on_step, record = puct.track_lead(b1)
    root = puct.puct_search(games.go_corner(), network, n, c_puct=1.5, on_step=on_step)
    return {"seed": seed, "weight": weight, "b1_leads_from": record["lead_from"],
            "b1_share": round(puct.visit_policy(root)[b1], 3)}


def worked_example():
    """Work the article's junction by hand (40 trips, c_puct 1.5). The article gives the crack's numbers (prior 0.25,
    11 trips); we chose the streamway's and the squeeze's so that the text's statements hold."""
    c, total = 1.5, 40
    passages = {"crack": (0.25, 11, 0.64), "streamway": (0.55, 24, 0.58), "squeeze": (0.05, 5, 0.40)}
    bonus = {name: c * prior * math.sqrt(total) / (1 + n) for name, (prior, n, q) in passages.items()}
    score = {name: q + bonus[name] for name, (prior, n, q) in passages.items()}
    table("Article, Part 2: the worked PUCT example (40 trips, c_puct = 1.5; article: crack's bonus 0.198, wins by "
          "0.049)", ["passage", "prior P", "trips N", "average Q", "bonus U = c P sqrt(40) / (1 + N)", "Q + U"],
          [[name, prior, n, q, f"{c} x {prior} x {math.sqrt(total):.2f} / {1 + n} = {bonus[name]:.3f}",
            f"{score[name]:.3f}"] for name, (prior, n, q) in passages.items()])
    margin = score["crack"] - score["streamway"]
    print(f"  the crack wins by {score['crack']:.3f} - {score['streamway']:.3f} = {margin:.3f}")
    return {"passages": passages, "crack_bonus": round(bonus["crack"], 3), "crack_margin": round(margin, 3),
            "article": {"crack_bonus": 0.198, "crack_margin": 0.049}}


def part_blog(args):
    n_go, n_chess, n_flat, n_puct = (500, 500, 40, 200) if args.quick else (5000, 5000, 400, 1000)
    go_seeds, pool = range(args.seed, args.seed + 4 * args.seeds), POOLS["now"]  # four Go searches for each run seed
    progress(f"the article: UCT on the Go corner ({n_go:,} simulations, seeds {go_seeds[0]}-{go_seeds[-1]}), the "
             f"chess trap, PUCT")
    go = [pool.submit(go_run, seed, n_go) for seed in go_seeds]  # all begun at once, then collected
    chess = [pool.submit(chess_run, seed, n_chess, n_flat) for seed in seeds(args)]
    runs = [pool.submit(puct_run, seed, weight, n_puct) for seed in go_seeds for weight in (0.0, 0.5)]

    go, a = [f.result() for f in go], ARTICLE["go"]
    rows = [("B1 visits", "b1_visits"), ("B1 win rate", "b1_win_rate"), ("runner-up", "runner_up"),
            ("B1 most visited from simulation", "b1_leads_from"), ("CPU seconds", "seconds")]
    table(f"Article, Part 1: UCT on the 7x7 Go corner ({n_go:,} simulations, c = 1.0; ours: the median [and range] "
          f"over {len(go)} seeds)", ["", "article", "ours"],
          [[label, a[key], spread([r[key] for r in go])] for label, key in rows])
    chess, a = [f.result() for f in chess], ARTICLE["chess"]
    every, figure = [c[0] for c in chess], chess[0][1]  # the figure shows the first seed
    rows = [("flat Monte Carlo: Qxd7's score", "flat_qxd7"), ("  its rank", "flat_qxd7_rank"),
            ("flat Monte Carlo: Kf1's score", "flat_kf1"), ("  its rank", "flat_kf1_rank"),
            (f"UCT: Qxd7's visits of {n_chess:,}", "mcts_qxd7_visits"), ("UCT: six most visited", "top6"),
            ("  of them allowing ...Re1#", "top6_allowing_mate"),
            ("White's moves allowing ...Re1#", "moves_allowing_mate"), ("CPU seconds (both searches)", "seconds")]
    table(f"Article, Part 1: the chess trap (flat: {n_flat} rollouts a move; UCT: {n_chess:,} simulations, c = 0.7; "
          f"{over(args)})", ["", "article", "ours"], [[label, a.get(key, ""), spread([c[key] for c in every])]
                                                        for label, key in rows])
    runs, a = [f.result() for f in runs], ARTICLE["puct"]
    uniform, leaning = [r for r in runs if r["weight"] == 0.0], [r for r in runs if r["weight"] == 0.5]
    table(f"Article, Part 2: PUCT on the Go corner, stand-in network ({n_puct:,} simulations, c_puct = 1.5; ours: the "
          f"median [and range] over {len(uniform)} seeds)", ["", "article", "ours"],
          [[label, theirs, spread([r[key] for r in group])] for label, theirs, group, key in (
              ("uniform priors: B1 leads from", a["uniform_leads_from"], uniform, "b1_leads_from"),
              ("uniform priors: B1's share", "", uniform, "b1_share"),
              ("leaning 0.5 on B1: B1 leads from", a["leaning_leads_from"], leaning, "b1_leads_from"),
              ("leaning 0.5 on B1: B1's share", a["leaning_share"], leaning, "b1_share"))])
    worked = worked_example()

    # The article ran each experiment once, so we judge each run by bounds around its numbers (not CPU seconds)
    checks = [Check(f"Go, seed {r['seed']}: {name}", r[key], theirs, ok(r[key]))
              for r in go for name, key, theirs, ok in (
        ("B1's visits", "b1_visits", ">= 3500", lambda v: v >= 3500),
        ("B1's win rate", "b1_win_rate", "0.80-0.97", lambda v: 0.80 <= v <= 0.97),
        ("B1 most visited from", "b1_leads_from", "<= 500", lambda v: (v or 1e9) <= 500))]
    checks += [Check(f"chess, seed {seed}: {name}", ours[key], theirs, ok(ours[key]))
               for seed, ours in zip(seeds(args), every) for name, key, theirs, ok in (
        ("flat Qxd7's rank", "flat_qxd7_rank", 1, lambda v: v == 1),
        ("flat Qxd7's score", "flat_qxd7", "0.64-0.78", lambda v: 0.64 <= v <= 0.78),
        ("UCT's visits to Qxd7", "mcts_qxd7_visits", "<= 150", lambda v: v <= 150),
        ("UCT's six most visited allowing ...Re1#", "top6_allowing_mate", 0, lambda v: v == 0),
        ("White's moves allowing ...Re1#", "moves_allowing_mate", "11 of 26", lambda v: v == "11 of 26"))]
    checks += [Check(f"PUCT leaning on B1, seed {r['seed']}: {name}", r[key], theirs, ok(r[key])) for r in leaning
               for name, key, theirs, ok in (("B1 leads from", "b1_leads_from", "2 or 3", lambda v: v in (2, 3)),
                                             ("B1's share", "b1_share", ">= 0.9", lambda v: v >= 0.9))]
    checks += [Check(f"worked example: the crack's {name}", worked[f"crack_{name}"], theirs, worked[f"crack_{name}"]
                     == theirs) for name, theirs in (("bonus", 0.198), ("margin", 0.049))]
    return {"go": {"runs": go, "article": ARTICLE["go"]},
            "chess": {"ours": dict(zip(seeds(args), every)), "article": ARTICLE["chess"], "figure": figure},
            "puct": {"runs": runs, "article": ARTICLE["puct"]}, "worked_example": worked, "checks": checks}


# ----------------------------------------------------------------------------------------------------------------
# The lab's Part 1: AlphaZero on tic-tac-toe, against the exact solution

def tictactoe_jobs(net, n_simulations, n_games, n_positions, seed, tag="", algorithm="alphazero", **options):
    """The raw policy's and the search's optimal-move fractions, and their games against the perfect player."""
    jobs = {}
    for label, sims in (("policy", 0), ("search", n_simulations)):
        agent = Agent(net, sims, algorithm, **options)
        jobs[f"{tag}{label}_optimal"] = OptimalMoves(agent, n_positions)
        jobs[f"{tag}{label}_games"] = Match("tictactoe", agent, perfect_player, n_games, seed, opening=0)
    return jobs


def tictactoe_row(r, tag=""):  # a loss is a score of 0
    return TicTacToeRow(round(r[f"{tag}policy_optimal"], 3), r[f"{tag}policy_games"].count(0.0),
                        round(r[f"{tag}search_optimal"], 3), r[f"{tag}search_games"].count(0.0))


def tictactoe_checks(name, rows, lab, n_games):
    """Check our four numbers over the seeds (a row for each seed) against the lab's row, as check does."""
    return [check(f"{name}: {field}", [getattr(row, field) for row in rows], getattr(lab, field),
                  None if "optimal" in field else n_games) for field in TicTacToeRow._fields]


def part_1(args):
    q = args.quick
    cfg = alphazero.settings("tictactoe", **(dict(iterations=5, games=20, simulations=20) if q else {}))
    keep, (n_games, n_positions) = (0, 5) if q else (0, 5, 10, 20, 40), (10, 500) if q else (100, 4520)
    jobs = Jobs()  # each network's measures begin as soon as the training keeps it
    for seed in seeds(args):
        progress(f"part 1: training tic-tac-toe, {cfg['iterations']} iterations x {cfg['games']} games x "
                 f"{cfg['simulations']} simulations, seed {seed}")
        train_keeping("tictactoe", cfg, seed, keep, workers=args.workers, on_kept=lambda it, net, seed=seed: jobs.add(
            tictactoe_jobs(net, cfg["simulations"], n_games, n_positions, seed, tag=f"{seed}:{it}:")))
    progress(f"part 1: measuring {len(keep)} networks a seed on {n_positions:,} positions and {n_games} games each")
    r = jobs.results()
    ours = {seed: {it: tictactoe_row(r, f"{seed}:{it}:") for it in keep} for seed in seeds(args)}
    by_iteration = {it: [row[it] for row in ours.values()] for it in keep}
    table(f"Part 1: AlphaZero on tic-tac-toe ({cfg['simulations']} simulations per move, {cfg['games']} games per "
          f"iteration, {over(args)})\n  optimal-move fraction over {n_positions:,} positions and losses in {n_games} "
          f"games{' (the lab: in 100)' * (n_games != 100)} against the perfect player:\n  the raw policy, and PUCT "
          f"search with {cfg['simulations']} simulations",
          ["iteration", "policy: optimal", "lab", "losses", "lab", "search: optimal", "lab", "losses", "lab"],
          [[it] + beside(by_iteration[it], LAB["1"].get(it)) for it in keep])
    checks = [c for it in keep if it in LAB["1"]
              for c in tictactoe_checks(f"part 1, iteration {it}", by_iteration[it], LAB["1"][it], n_games)]
    return {"ours": ours, "lab": LAB["1"], "checks": checks, "simulations": cfg["simulations"],
            "positions": n_positions}


# ----------------------------------------------------------------------------------------------------------------
# The lab's Part 2: AlphaZero on Connect Four, against random, tactical and UCT-400

def part_2_sizes(quick):  # the games against the tactical player, the games against random and UCT, UCT's simulations
    return (4, 2, 50) if quick else (100, 50, 400)


def connect4_jobs(net, n_simulations, sizes, seed, tag="", algorithm="alphazero", **options):
    n_tactical, n_other, uct = sizes
    agent = Agent(net, n_simulations, algorithm, **options)
    return {f"{tag}policy_v_tactical": Match("connect4", Agent(net, 0), tactical_player, n_tactical, seed),
            f"{tag}search_v_random": Match("connect4", agent, random_player, n_other, seed),
            f"{tag}search_v_tactical": Match("connect4", agent, tactical_player, n_tactical, seed),
            f"{tag}search_v_uct": Match("connect4", agent, UCTPlayer(uct), n_other, seed)}


PART_2 = {}  # Part 2's trainings by (quick, seed), each trained once a run: Part 3b and further.py reuse the networks


def part_2_settings(quick):
    return alphazero.settings("connect4", **(dict(iterations=2, games=10, simulations=10) if quick else {}))


def part_2_training(args, seed, on_kept=None):
    """Part 2's Connect Four training at `seed` (a Trained), trained only the first time a run asks. Each network goes
    to on_kept(it, net) as the training keeps it, or at once if this run has trained it already."""
    key = args.quick, seed
    if key in PART_2:
        for it, net in PART_2[key].nets.items():
            on_kept and on_kept(it, net)
        return PART_2[key]
    cfg = part_2_settings(args.quick)
    progress(f"part 2: training Connect Four, {cfg['iterations']} iterations x {cfg['games']} games x "
             f"{cfg['simulations']} simulations, seed {seed}")
    PART_2[key] = train_keeping("connect4", cfg, seed, (0, 2) if args.quick else (0, 10, 20, 40, 60),
                                workers=args.workers, on_kept=on_kept)
    return PART_2[key]


def part_2(args, on_kept=None):
    """The lab's Part 2 table. If on_kept(it, net) is given, it gets each seed's networks as the training keeps them."""
    sizes, more, jobs = part_2_sizes(args.quick), (0, 10) if args.quick else (0, 50, 200, 800), Jobs()
    n_sims = part_2_settings(args.quick)["simulations"]
    for seed in seeds(args):
        def kept(it, net, seed=seed):  # each network's matches begin as soon as the training keeps it
            jobs.add(connect4_jobs(net, n_sims, sizes, seed, tag=f"{seed}:{it}:"))
            on_kept and on_kept(it, net)
        trained = part_2_training(args, seed, kept)
        cfg, keep = trained.cfg, list(trained.nets)
        final = trained.nets[cfg["iterations"]]  # its games with more search begin now, beside the next training
        jobs.add({f"{seed}:more:{sims}": Match("connect4", Agent(final, sims), UCTPlayer(sizes[2]), sizes[1], seed)
                  for sims in more})
    progress(f"part 2: matches for {len(keep)} networks a seed, then the final one with {more} simulations against "
             f"UCT-{sizes[2]}")
    r = jobs.results()
    keys = Connect4Row._fields
    ours = {seed: {it: Connect4Row(*(round(mean(r[f"{seed}:{it}:{k}"]), 3) for k in keys)) for it in keep}
            for seed in seeds(args)}
    by_iteration = {it: [row[it] for row in ours.values()] for it in keep}
    table(f"Part 2: AlphaZero on Connect Four ({cfg['simulations']} simulations per move, {cfg['iterations']} "
          f"iterations of {cfg['games']} games, {over(args)})\n  score (win 1, draw 1/2) from random two-move "
          f"openings, both colours: the raw policy against the tactical player ({sizes[0]} games),\n  and search with "
          f"{cfg['simulations']} simulations against random ({sizes[1]}), tactical ({sizes[0]}) and UCT-{sizes[2]} "
          f"({sizes[1]} games)",
          ["iteration", "policy v tactical", "lab", "search v random", "lab", "search v tactical", "lab",
           f"search v UCT-{sizes[2]}", "lab"], [[it] + beside(by_iteration[it], LAB["2"].get(it)) for it in keep])
    more_search = {seed: {sims: round(mean(r[f"{seed}:more:{sims}"]), 3) for sims in more} for seed in seeds(args)}
    by_sims = {sims: [scores[sims] for scores in more_search.values()] for sims in more}
    table(f"Part 2: the final network with more search, against UCT-{sizes[2]} ({sizes[1]} games each, {over(args)})",
          ["simulations", "score", "lab"], [[s, spread(by_sims[s]), LAB["2_more_search"].get(s, "")] for s in more])
    n_games = dict(zip(keys, (sizes[0], sizes[1], sizes[0], sizes[1])))
    checks = [check(f"part 2, iteration {it}: {k}", [getattr(row, k) for row in by_iteration[it]],
                    getattr(LAB["2"][it], k), n_games[k]) for it in keep if it in LAB["2"] for k in keys]
    checks += [check(f"part 2, the final network with {s} simulations v UCT", by_sims[s], LAB["2_more_search"][s],
                     sizes[1]) for s in more if s in LAB["2_more_search"]]
    return {"ours": ours, "more_search": more_search, "lab": LAB["2"], "lab_more_search": LAB["2_more_search"],
            "checks": checks, "uct": sizes[2]}


# ----------------------------------------------------------------------------------------------------------------
# The lab's Part 3a: tic-tac-toe trained with 2 simulations a move, PUCT against Gumbel, 3 seeds each

@functools.cache  # once a run: main starts them before the first part
def part_3a_trainings(quick, seed, n_seeds):
    """Start Part 3a's trainings in the lowest-priority workers, to fill the cores the parts before leave idle:
    {(algorithm, seed): a Future of its Trained}. Like the lab, we train three seeds of each algorithm, but for each
    seed of the run, so the lab's "puct seed i" stands beside our seeds seed + i, seed + i + 3, and so on."""
    cfgs = {a: ALGORITHMS[a].settings("tictactoe", simulations=2, **(dict(iterations=5, games=20) if quick else {}))
            for a in ("alphazero", "gumbel")}
    return {(a, s): POOLS["ahead"].submit(train_one, a, "tictactoe", cfgs[a], s, (cfgs[a]["iterations"],))
            for a in ("alphazero", "gumbel") for s in range(seed, seed + 3 * n_seeds)}


def part_3a(args):
    n_games, n_positions = (10, 500) if args.quick else (100, 4520)
    trainings = part_3a_trainings(args.quick, args.seed, args.seeds)
    progress(f"part 3a: training tic-tac-toe with 2 simulations per move, PUCT and Gumbel, seeds "
             f"{args.seed}-{args.seed + 3 * args.seeds - 1}, side by side")
    trained, jobs = {run: future.result() for run, future in trainings.items()}, {}
    progress(f"part 3a: measuring the {len(trained)} networks on {n_positions:,} positions and {n_games} games each")
    for (a, seed), t in trained.items():  # every network plays the same games (the run's seed), as in the lab
        jobs.update(tictactoe_jobs(t.nets[t.cfg["iterations"]], 2, n_games, n_positions, args.seed, f"{a}:{seed}:", a))
    r = run_jobs(jobs)
    ours = {f"{NAMES[a]} seed {seed}": tictactoe_row(r, f"{a}:{seed}:") for a, seed in trained}
    rows, checks = [], []
    for name, lab in LAB["3a"].items():  # the lab's "puct seed 1" beside ours at seeds 1, 4, 7, ... (from --seed)
        algorithm, group = name.split()[0], range(args.seed + int(name[-1]), args.seed + 3 * args.seeds, 3)
        label = f"{algorithm} seed{'s' * (len(group) > 1)} {', '.join(map(str, group))}"
        group_rows = [ours[f"{algorithm} seed {s}"] for s in group]
        rows.append([label] + beside(group_rows, lab))
        checks += tictactoe_checks(f"part 3a, {label}", group_rows, lab, n_games)
    cfg = trained["gumbel", args.seed].cfg
    table("Part 3a: training tic-tac-toe with 2 simulations per move, PUCT against Gumbel search, 3 seeds each" + (
          "\n  and 3 more for each further seed of the run: each row puts one of the lab's seeds beside our seeds k, "
          "k + 3, ...; ours: their median [and range]" if args.seeds > 1 else "") + "\n"
          f"  after {cfg['iterations']} iterations of {cfg['games']} games: optimal-move fraction and losses against "
          f"the perfect player ({n_games} games{'; the lab: 100' * (n_games != 100)})",
          ["", "policy: optimal", "lab", "losses", "lab", "search: optimal", "lab", "losses", "lab"], rows)
    return {"ours": ours, "lab": LAB["3a"], "checks": checks, "positions": n_positions}


# ----------------------------------------------------------------------------------------------------------------
# The lab's Part 3b: Gumbel against PUCT search with Part 2's final network, at equal budgets

def part_3b(args):
    (budgets, n_games), jobs = ((2, 4), 10) if args.quick else ((2, 4, 8, 16, 32, 64), 100), Jobs()
    for seed in seeds(args):
        if (args.quick, seed) not in PART_2:
            progress(f"part 3b needs Part 2's final Connect Four network at seed {seed}, not trained in this run: "
                     f"training it first")
        trained = part_2_training(args, seed)
        final = trained.nets[trained.cfg["iterations"]]
        jobs.add({(seed, sims): Match("connect4", Agent(final, sims, "gumbel"), Agent(final, sims), n_games, seed)
                  for sims in budgets})
    progress(f"part 3b: Gumbel against PUCT with the final Connect Four network, {n_games} games per budget")
    r = jobs.results()
    ours = {seed: {sims: round(mean(r[seed, sims]), 3) for sims in budgets} for seed in seeds(args)}
    by_sims = {sims: [scores[sims] for scores in ours.values()] for sims in budgets}
    table(f"Part 3b: Gumbel against PUCT search with the same Connect Four network and budget ({n_games} games, "
          f"random two-move openings, both colours, {over(args)})", ["simulations each", "Gumbel scores", "lab"],
          [[sims, spread(by_sims[sims]), LAB["3b"].get(sims, "")] for sims in budgets])
    checks = [check(f"part 3b, {s} simulations: Gumbel's score", by_sims[s], LAB["3b"][s], n_games) for s in budgets]
    return {"ours": ours, "lab": LAB["3b"], "checks": checks}


# ----------------------------------------------------------------------------------------------------------------
# One saved network, measured as Part 1 or Part 2 measures theirs (--checkpoint)

def search_options(cfg):
    return {"solver": cfg["solver"]} if cfg.get("solver") else {}


def load_any(path):
    """Load a checkpoint of any trainer as a NumpyNet, with its game, its algorithm and its search_options."""
    ckpt = alphazero.load(path, as_net=False)
    module, options = ALGORITHMS.get(ckpt.get("algorithm"), alphazero), search_options(ckpt.get("settings") or {})
    return module.NumpyNet(module.load(path)), ckpt["game"], module.ALGORITHM, options


def measure_checkpoint(args):
    """Measure one saved network as Part 1 or Part 2 measures theirs, searching as the algorithm that trained it."""
    net, game, algorithm, options = load_any(args.checkpoint)
    sims, (n_games, n_positions) = alphazero.settings(game)["simulations"], (10, 500) if args.quick else (100, 4520)
    if game == "connect4":
        jobs = connect4_jobs(net, sims, part_2_sizes(args.quick), args.seed, "", algorithm, **options)
        ours = {key: round(mean(scores), 3) for key, scores in run_jobs(jobs).items()}
    else:
        jobs = tictactoe_jobs(net, sims, n_games, n_positions, args.seed, "", algorithm, **options)
        ours = tictactoe_row(run_jobs(jobs))._asdict()
    table(f"{args.checkpoint}: a {game} network trained by {algorithm}.py, {sims} simulations of its search",
          ["measure", "of", "ours"], [[key.replace("_", " "), f"{jobs[key.replace('losses', 'games')].size} " + (
              "positions" if "optimal" in key else "games"), value] for key, value in ours.items()])
    return ours


# ----------------------------------------------------------------------------------------------------------------
# The command line, shared with further.py: the flags, the JSON report, the timed parts and the summary

PARTS = {"blog": ("the article: UCT, flat Monte Carlo, PUCT", part_blog), "1": ("AlphaZero on tic-tac-toe", part_1),
         "2": ("AlphaZero on Connect Four", part_2), "3a": ("training with 2 simulations: PUCT v Gumbel", part_3a),
         "3b": ("Gumbel v PUCT with the same network", part_3b)}
WRITTEN_BY = "written by"  # the first key of the JSON: which script wrote the file


def command_line(doc, parts, json_path, seeds=False):
    """The flags both scripts take, and evaluate.py's --seeds. A bad flag prints one line and exits with status 1."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")
    parser.add_argument("--part", choices=[*parts, "all"], default="all", help="which part (default all)")
    parser.add_argument("--quick", action="store_true", help="every part at a small size (a check that it runs)")
    parser.add_argument("--seed", type=plumbing.number(0, 2**32 - 1), default=0, help="base random seed (default 0)")
    parser.set_defaults(seeds=1)  # further.py has no --seeds: its parts run once, at --seed
    if seeds:
        parser.add_argument("--seeds", type=plumbing.number(1, 1000), metavar="N", help="run every part at N seeds, "
                            "from --seed on (the article's Go and PUCT searches at 4 N, Part 3a's trainings at 3 N an "
                            "algorithm); each table then gives our median [and range] over them (default 1)")
    parser.add_argument("--workers", type=plumbing.number(1, 256), default=os.cpu_count(),
                        help=f"processes for self-play and matches (default all cores: {os.cpu_count()})")
    parser.add_argument("--json", default=json_path, help=f"where to write every number (default {json_path})")
    parser.add_argument("--checkpoint", help="measure this saved network instead of running the parts")
    parser.add_argument("--plots", metavar="DIR", help="then draw the tables as figures, a PNG each, into DIR")
    return parser


@contextlib.contextmanager
def report(args, parser):
    """Check the flags and claim the JSON before any work, then start the workers and hand the body a dict to fill.
    Only a JSON this script wrote is replaced, and never by two runs at once. The results are written atomically, so a
    run stopped half-way leaves the last file whole; then --plots draws them."""
    if args.checkpoint is not None:
        for flag, default in (("part", "all"), ("seeds", 1)):
            if getattr(args, flag) != default:
                parser.error(f"--{flag} is for the parts; --checkpoint measures one network")
        alphazero.load(args.checkpoint, as_net=False)
    if not args.json or os.path.lexists(args.json) and not os.path.isfile(args.json):  # a FIFO, say: never open it
        raise ValueError(f"{args.json!r} is not a regular file: choose another --json")
    with open(args.json, "rb") if os.path.isfile(args.json) else io.BytesIO() as f:
        if (head := f.read(200)) and f'"{WRITTEN_BY}": "{parser.prog}"'.encode() not in head:
            raise ValueError(f"{args.json} holds something other than {parser.prog}'s JSON: choose another --json")
    args.plots is None or plots.folder(args.plots)
    plumbing.lock(args.json, "--json")  # each refusal is a ValueError, which plumbing.run_main prints as one line
    POOLS.update(now=plumbing.Run(args.workers, nice=10), ahead=plumbing.Run(args.workers, nice=19))
    print(" ".join([parser.prog, *sys.argv[1:]]) + f": every number goes to {args.json}", flush=True)  # line 1
    try:
        with POOLS["now"], POOLS["ahead"]:  # this process and the workers now compute as a training does
            yield (results := {})
        plumbing.write_atomic(args.json, json.dumps({WRITTEN_BY: parser.prog, **plain(results)}, indent=1))
    finally:
        plumbing.unlock(args.json)
    args.plots is None or plots.draw([args.json], args.plots)


def plain(x):
    """x in a form JSON holds: records become objects, nan becomes null, and anything else JSON lacks becomes text."""
    x = x._asdict() if hasattr(x, "_asdict") else x  # a record (a namedtuple)
    if isinstance(x, dict):
        return {k if isinstance(k, (str, int, float)) else str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x if isinstance(x, (str, int, float, type(None))) \
        else str(x)


def run_parts(parts, args):
    """Run and time the parts --part asks for, then print how many checks hold in each and every one that does not."""
    results = {}
    for part in parts if args.part == "all" else [args.part]:
        since = time.time()
        results[part] = parts[part][1](args)
        results[part]["seconds"] = round(time.time() - since, 1)
    table("Summary: each part's time, and how many of its checks hold\n"
          "  (our numbers within the documents' noise or bounds, a bar met)",
          ["part", "", "time", "within"], [[part, parts[part][0], f"{r['seconds']:.0f} s",
                                            f"{sum(c.within for c in r['checks'])} of {len(r['checks'])}"]
                                           for part, r in results.items()])
    missed = [c for r in results.values() for c in r["checks"] if not c.within]
    print("  outside the noise (or the bounds, the bar):" if missed else "  every check holds")
    for c in missed:
        print(f"    {c.name}: ours {c.ours}, theirs {c.theirs}")
    return results


def main():
    parser = command_line(__doc__, PARTS, "evaluate.json", seeds=True)
    args = parser.parse_args()
    with report(args, parser) as results:
        if args.checkpoint:
            results["checkpoint"] = measure_checkpoint(args)
        else:
            if args.part in ("all", "3a"):
                part_3a_trainings(args.quick, args.seed, args.seeds)  # started now, to fill the cores idle before it
            results.update(run_parts(PARTS, args))
            article = "  the article ran each experiment once: each of our runs is checked against bounds around it"
            lab = ("  a number of the lab's is within when it lies in our range over the seeds, or within two standard "
                   "errors\n  of the difference of two scores over N games each from its nearer end (an optimal-move "
                   f"fraction: within {FRACTION_TOLERANCE})")
            print("\n".join([article] * (args.part in ("all", "blog")) + [lab] * (args.part != "blog") + [
                "  (--quick: every part at a small size, so these verdicts say little)"] * args.quick))
    return f"\n{time.time() - START:.0f} s in all; every number is in {args.json}"


if __name__ == "__main__":
    plumbing.run_main(main)

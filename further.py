"""Going further: what the documents ask but do not measure. It builds an exact Connect Four solver and the truth
measure on it, answers the lab's five "Going further" questions by measurement, and trains and reports a strong player.

    python further.py                          # everything: about 46 minutes on 2 cores (estimated)
    python further.py --part questions         # the five questions; the solver is checked first, then Part 2 runs
    python further.py --part recipe            # trains the strong player with alphazero_plus.py and reports on it
    python further.py --quick                  # every part at a small size, in seconds
    python further.py --checkpoint data/connect4_plus.pt  # measure a saved network instead (see measure_checkpoint)
"""
import collections
import contextlib
import dataclasses
import functools
import math
import os
import statistics
import time

import numpy as np

import alphazero
import alphazero_plus
import evaluate
import games
import plumbing
from evaluate import (Agent, Match, UCTPlayer, mean, perfect_player, play_match, run_jobs, tactical_player,
                      winning_columns)  # from evaluate.py's arena section; other helpers are used as evaluate.NAME

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
C4_POSITIONS = os.path.join(DATA, "c4_positions.txt")  # positions valued by a public solver, to check ours

# The exact Connect Four solver, after Pascal Pons. On the game's bitboards a cell is bit 7 * column + row, and the
# top bit of each column stays empty. The search is negamax with alpha-beta over null windows and a table of bounds.
# It skips moves that hand the opponent a four and tries the moves that make the most threats first. Scores are for
# the player to move: 0 is a draw, a win is 22 minus the winner's stones when it makes four, and a loss is negative.

BOTTOM = sum(1 << 7 * c for c in range(7))
BOARD = BOTTOM * 0b111111  # every playable cell
COLUMNS = [0b111111 << 7 * c for c in (3, 2, 4, 1, 5, 0, 6)]  # centre first


def winning_cells(stones, mask):
    """The empty cells (playable now or not) where one more stone would give `stones` a four."""
    r = (stones << 1) & (stones << 2) & (stones << 3)  # vertical: three below
    for d in (7, 6, 8):  # horizontal and both diagonals: the cell can be any of the four places in a line
        pair = (stones << d) & (stones << 2 * d)
        r |= pair & (stones << 3 * d) | pair & (stones >> d)
        pair = (stones >> d) & (stones >> 2 * d)
        r |= pair & (stones << d) | pair & (stones >> 3 * d)
    return r & (BOARD ^ mask)


class Bounds:
    """The solver's memory: lower and upper bounds on positions' values, and how many nodes it may still search."""

    def __init__(self, budget=math.inf):
        self.lower, self.upper, self.left = {}, {}, budget


class TooHard(Exception):
    """The solver's node budget ran out before the position was solved."""


def negamax(me, mask, moves, alpha, beta, bounds):
    """The value for the player to move, whose stones are `me` and who cannot win at once, within [alpha, beta]."""
    bounds.left -= 1
    if bounds.left < 0:
        raise TooHard
    possible = (mask + BOTTOM) & BOARD
    threats = winning_cells(me ^ mask, mask)
    forced = possible & threats
    safe = (forced or possible) & ~(threats >> 1)  # and never play just below a cell where the opponent would win
    if forced & (forced - 1) or not safe:  # with two threats to block or no safe move, the opponent wins next
        return -((42 - moves) // 2)
    if moves >= 40:
        return 0
    key = me + mask
    alpha = max(alpha, -((40 - moves) // 2), bounds.lower.get(key, -99))  # the soonest loss, or the table's bound
    if alpha >= beta:
        return alpha
    beta = min(beta, (41 - moves) // 2, bounds.upper.get(key, 99))
    if alpha >= beta:
        return beta
    order = sorted((c & safe for c in COLUMNS if c & safe),
                   key=lambda move: -winning_cells(me | move, mask).bit_count())  # stable sort: ties stay centre first
    for move in order:
        score = -negamax(me ^ mask, mask | move, moves + 1, -beta, -alpha, bounds)
        if score >= beta:
            bounds.lower[key] = score
            return score
        alpha = max(alpha, score)
    bounds.upper[key] = alpha
    return alpha


def solve_connect4(state, bounds=None):
    """The exact value for the player to move. Calls may share `bounds`; TooHard is raised when its budget runs out."""
    moves, mask = state.moves, state.bits[0] | state.bits[1]
    if state.is_over():  # a win scores 22 minus the winner's stones, here (moves + 1) // 2; a full board is a draw
        return -(22 - (moves + 1) // 2) if any(map(state.has_four, state.bits)) else 0
    me = state.bits[moves % 2]
    if winning_cells(me, mask) & (mask + BOTTOM) & BOARD:
        return (43 - moves) // 2
    bounds = bounds or Bounds()
    lo, hi = -((42 - moves) // 2), (43 - moves) // 2
    while lo < hi:  # narrow the score with null windows, probing near zero first
        med = lo + (hi - lo) // 2
        if med <= 0 and int(lo / 2) < med:
            med = int(lo / 2)
        elif med >= 0 and int(hi / 2) > med:
            med = int(hi / 2)
        r = negamax(me, mask, moves, med, med + 1, bounds)
        lo, hi = (lo, r) if r <= med else (r, hi)  # a result at most med is an upper bound, else a lower bound
    return lo


def connect4_move_value(state, move, bounds=None):
    """The exact value, for the player to move, of playing `move`."""
    if move in winning_columns(state, state.moves % 2):
        return (43 - state.moves) // 2
    return -solve_connect4(evaluate.after(state, move), bounds)


TRUTH_MIN_STONES, TRUTH_BUDGET = 8, 30_000  # judge positions with 8+ stones, within 30,000 solver nodes (~0.5 s)
DEEP_BUDGET = 150_000  # enough for every position with 14+ stones that we met (at most 2.45 s; see FURTHER.md)


class Judged:
    """Wraps a player, and asks the solver whether each move keeps a won position won and a drawn one drawn. It skips
    lost positions (every move keeps them lost, which would flatter a weak player), early ones, and ones too hard."""

    def __init__(self, player, budget=TRUTH_BUDGET):
        self.player, self.budget, self.bounds, self.kept, self.judged, self.skipped = player, budget, Bounds(), 0, 0, 0

    def __call__(self, states, rngs):
        moves = self.player(states, rngs)
        for s, move in zip(states, moves):
            try:
                self.bounds.left = self.budget
                if s.moves < TRUTH_MIN_STONES or (value := solve_connect4(s, self.bounds)) < 0:
                    raise TooHard  # too few stones, or already lost, so there is nothing to keep
                self.bounds.left = self.budget
                moved = connect4_move_value(s, move, self.bounds)
                self.kept += moved > 0 if value > 0 else moved >= 0  # a win must stay a win, a draw at least a draw
                self.judged += 1
            except TooHard:
                self.skipped += 1
        return moves


@dataclasses.dataclass
class Truth(Match):
    """A Match in which the solver judges each of the agent's moves within `budget` nodes. Its total is the fraction of
    moves that kept the outcome, with the counts of moves judged and skipped."""
    budget: int = TRUTH_BUDGET

    def run(self, indices):
        judged = Judged(self.agent, self.budget)
        play_match(self.game, judged, self.opponent, indices, self.seed, self.opening)
        return [(judged.kept, judged.judged, judged.skipped)]

    def total(self, counts):
        kept, judged, skipped = map(sum, zip(*counts))  # with no move judged the fraction is nan, printed as "-"
        return {"fraction": round(kept / judged, 3) if judged else math.nan, "judged": judged, "skipped": skipped}


def truth_jobs(agent, simulations, n_games, seed, budget, tag=""):
    """Truth jobs for agent(n), each n in `simulations` (0 is the raw policy), in games against the tactical player."""
    return {f"{tag}{'policy' if n == 0 else f'search {n}'}: truth":
            Truth("connect4", agent(n), tactical_player, n_games, seed, budget=budget) for n in simulations}


class SolverPlayer:
    """The solver as a player, choosing uniformly among the best moves. Below TRUTH_MIN_STONES stones, or over budget,
    the player `stand_in` moves instead, as pure Python cannot solve the opening. stood_in maps id(state) to the stones
    on the board when the stand-in last moved in that game."""

    def __init__(self, stand_in, budget=DEEP_BUDGET):
        self.stand_in, self.budget, self.bounds, self.best, self.stood_in = stand_in, budget, Bounds(), {}, {}

    def best_moves(self, s):
        if s.key() not in self.best:  # None marks a position too hard to solve
            self.best[s.key()] = None
            if s.moves >= TRUTH_MIN_STONES:
                with contextlib.suppress(TooHard):
                    self.bounds.left = self.budget
                    values = {m: connect4_move_value(s, m, self.bounds) for m in s.legal_moves()}
                    self.best[s.key()] = [m for m, v in values.items() if v == max(values.values())]
        return self.best[s.key()]

    def __call__(self, states, rngs):
        best = [self.best_moves(s) for s in states]
        hard = [j for j, moves in enumerate(best) if moves is None]
        stood_in = dict(zip(hard, self.stand_in([states[j] for j in hard], [rngs[j] for j in hard]) if hard else []))
        self.stood_in.update({id(states[j]): states[j].moves for j in hard})
        return [stood_in[j] if moves is None else moves[rngs[j].integers(len(moves))] for j, moves in enumerate(best)]


@dataclasses.dataclass
class VersusSolver:
    """Connect Four games of `agent` against SolverPlayer from the empty board, the agent first in even games. Each game
    gives the agent's score, its number of moves, and the most stones on the board when the stand-in moved."""
    agent: object
    stand_in: object
    size: int
    seed: int
    budget: int

    def run(self, indices):
        solver = SolverPlayer(self.stand_in, self.budget)
        scores, states = play_match("connect4", self.agent, solver, indices, self.seed, 0)
        return [(score, (s.moves + (i % 2 == 0)) // 2, solver.stood_in.get(id(s), 0))
                for i, score, s in zip(indices, scores, states)]

    def total(self, games):
        first, second = games[0::2], games[1::2]
        return dict(first_wins=sum(g[0] == 1 for g in first), first_draws=sum(g[0] == 0.5 for g in first),
                    second_moves=round(mean([g[1] for g in second]), 1), second_not_lost=sum(g[0] > 0 for g in second),
                    games_each=len(first), stand_in_up_to=max(g[2] for g in games))


# The sizes of connect4_report's measures: game counts (v_solver's per colour), UCT's simulations, node budgets
ReportSizes = collections.namedtuple("ReportSizes", "v_tactical v_uct uct truth v_solver truth_budget solver_budget")
REPORT_SIZES = {False: ReportSizes(100, 400, 400, 40, 50, TRUTH_BUDGET, DEEP_BUDGET),
                True: ReportSizes(4, 2, 50, 2, 2, 5_000, 5_000)}  # --quick


def connect4_report(net, name, n_simulations, args, algorithm="alphazero", **options):
    """Measure a Connect Four network that searches as `algorithm` with `options` (alphazero_plus's solver=True, say)
    against the tactical player, UCT-400 and SolverPlayer, by the truth (also at `n_simulations`) and the benchmark."""
    n, deep = REPORT_SIZES[args.quick], 20 if args.quick else DEEP_SIMULATIONS
    agent = lambda sims: Agent(net, sims, algorithm, **options)
    jobs = {"policy v tactical": Match("connect4", agent(0), tactical_player, n.v_tactical, args.seed),
            f"search {deep} v tactical": Match("connect4", agent(deep), tactical_player, n.v_tactical, args.seed),
            f"search {deep} v UCT-{n.uct}": Match("connect4", agent(deep), UCTPlayer(n.uct), n.v_uct, args.seed),
            "v_solver": VersusSolver(agent(deep), agent(4 * deep), 2 * n.v_solver, args.seed, n.solver_budget),
            **truth_jobs(agent, (0, n_simulations, deep), n.truth, args.seed, n.truth_budget)}
    positions = read_benchmark()[::40 if args.quick else 1]  # --quick: 5 in each set
    jobs.update(benchmark_jobs(agent, positions, "benchmark: ", (0, 10, 20) if args.quick else BENCHMARK_SIMULATIONS))
    evaluate.progress(f"measuring {name}: {n.v_tactical} games v tactical, {n.v_uct} v UCT-{n.uct}, {2 * n.v_solver} "
                      f"v the solver player, the truth along {n.truth}")
    r = run_jobs(jobs)
    benchmark = {k.removeprefix("benchmark: "): r.pop(k) for k in list(r) if k.startswith("benchmark: ")}
    p = r.pop("v_solver")
    ours = {k: v if isinstance(v, dict) else round(mean(v), 3) for k, v in r.items()}
    rows = [[k, (f"{v['fraction']:.3f}" if v["judged"] else "-") + f" ({v['judged']} moves judged, {v['skipped']} not)"
             if isinstance(v, dict) else v] for k, v in ours.items()]
    each, versus, lost = p["games_each"], f"search {deep} v solver", p["games_each"] - p["second_not_lost"]
    rows += [[f"{versus}, first", f"won {p['first_wins']} of {each} (drew {p['first_draws']})"],
             [f"{versus}, second", f"lasted {p['second_moves']} moves on average, lost {lost} of {each}"]]
    evaluate.table(f"{name}: a connect4 network; games from random two-move openings, both colours\n  the truth: the "
                   f"fraction of its moves that keep a won or drawn position's exact outcome ({TRUTH_MIN_STONES}+ "
                   f"stones), along {n.truth} games against the tactical player\n  the solver player: the solver's "
                   f"best moves, but below {TRUTH_MIN_STONES} stones or beyond {n.solver_budget:,} nodes the network "
                   f"with {4 * deep} simulations moves (here up to {p['stand_in_up_to']} stones): not perfect in the "
                   f"opening", ["measure", "ours"], rows)
    columns = {**{f"{k} (theirs)": v for k, v in THEIRS.items()}, **benchmark}  # each player's error rate in each set
    rows = [[s] + [f"{100 * columns[c][s]:.1f}%" for c in columns] for s in SETS]
    rows.append(["average"] + [f"{100 * statistics.mean(columns[c].values()):.1f}%" for c in columns])
    evaluate.table(f"{name} on the benchmark: the fraction of positions where the move gives up the best outcome\n  "
                   f"({len(positions) // len(SETS)} positions from random games in each set, every move valued by a "
                   f"public perfect solver)", ["set", *columns], rows)
    return {**ours, "v_solver": p, "benchmark": benchmark, "theirs": THEIRS}


# ----------------------------------------------------------------------------------------------------------------
# A benchmark like Pascal Pons': positions from uniformly random games, with every legal move's exact value. A move
# is an error when it gives up the best outcome still open, turning a win into a draw or loss, or a draw into a loss,
# so no move in a lost position is an error. The six sets split positions by stones on the board (beginning at most
# 14, middle 15-28, end more) and by moves left under perfect play (easy under 14, medium 14-28, hard more).

SETS = ("beginning-easy", "middle-easy", "end-easy", "beginning-medium", "middle-medium", "beginning-hard")
THEIRS = {  # error rates read off the plot in AlphaZero.jl's Connect Four tutorial (to about +-0.005), for its agent
    "AlphaZero.jl, MCTS-600": dict(zip(SETS, (0.0, 0.0, 0.0, 0.02, 0.028, 0.07))),  # iteration 15, 600 simulations
    "minimax depth 5": dict(zip(SETS, (0.017, 0.007, 0.014, 0.073, 0.092, 0.235)))}  # and for its minimax baseline
BENCHMARK_SIMULATIONS = (0, 200, 600)  # 0 is the raw policy; the others search


@dataclasses.dataclass
class Position:
    """A benchmark position: its set, the columns played from the empty board (1 is leftmost), and each legal move's
    exact value for the player to move (above 0 a win, 0 a draw, below 0 a loss)."""
    set: str
    moves: str
    values: dict

    def state(self):  # replay the columns from the empty board
        return functools.reduce(evaluate.after, [int(c) - 1 for c in self.moves], games.ConnectFour())

    def is_error(self, move):
        """Whether `move` gives up the best outcome still open, which is the best sign among the moves' values."""
        sign = lambda v: (v > 0) - (v < 0)
        return sign(self.values[move]) < max(map(sign, self.values.values()))


def read_benchmark(path=os.path.join(DATA, "c4_benchmark.txt")):
    """Read the benchmark's positions, one "SET MOVES SCORE S1 .. S7" a line, with '.' for a full column."""
    lines = [line.split() for line in open(path) if line.strip() and not line.startswith("#")]
    return [Position(name, moves, {c: int(v) for c, v in enumerate(values) if v != "."})
            for name, moves, _, *values in lines]


@dataclasses.dataclass
class Benchmark:
    """A job asking the agent to move in each benchmark position, side by side. Its total is each set's error rate."""
    agent: object
    positions: list
    size: int

    def run(self, indices):
        chosen = [self.positions[i] for i in indices]
        moves = self.agent([p.state() for p in chosen], [np.random.default_rng(i) for i in indices])
        return [(p.set, p.is_error(m)) for p, m in zip(chosen, moves)]

    def total(self, judged):  # a set with no positions here (only part of the file) gets nan
        return {name: round(mean(e), 4) if (e := [error for s, error in judged if s == name]) else math.nan
                for name in SETS}


def benchmark_jobs(agent, positions, tag="", simulations=BENCHMARK_SIMULATIONS):
    """Benchmark jobs for agent(n), the player with n simulations (0 is the raw policy)."""
    return {f"{tag}{'policy' if n == 0 else f'search {n}'}": Benchmark(agent(n), positions, len(positions))
            for n in simulations}


# ----------------------------------------------------------------------------------------------------------------
# Going further: the lab's open questions about Connect Four, answered by measurement against the exact solver

def solve_listed(line, budgets):
    """Solve a listed position ("MOVES SCORE ...", columns from 1) within the budget for its stones (below 14, or 14+).
    Returns its stones, whether the solver agrees (None if over budget), and the CPU seconds taken."""
    (below_14, from_14), (moves, score) = budgets, line.split()[:2]
    state, start = Position("listed", moves, {}).state(), time.process_time()
    try:
        agrees = solve_connect4(state, Bounds(from_14 if len(moves) >= 14 else below_14)) == int(score)
    except TooHard:
        agrees = None
    return len(moves), agrees, time.process_time() - start


def read_positions(path):
    """The lines of a positions file after its comments, each "MOVES SCORE ...". A fault is a one-line ValueError."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):  # a FIFO would block
        raise ValueError(f"cannot read the positions file {path}: it is not a regular file")
    try:
        numbered = [(i, line) for i, line in enumerate(open(path), 1) if line.strip() and not line.startswith("#")]
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read the positions file {path!r}: {getattr(e, 'strerror', None) or e}") from None
    for i, row in numbered:
        moves, score, *_ = row.split() + ["", ""]
        if not (set(moves) <= set("1234567") and score.lstrip("-").isdigit()):
            raise ValueError(f"{path}, line {i}: not 'MOVES SCORE ...' (columns 1-7, then an integer): {row.strip()!r}")
    return [line for _, line in numbered]


def further_solver(args):
    """The solver against a public perfect solver's values, by the number of stones on the board."""
    lines = read_positions(args.c4_positions)
    # Positions with 14+ stones need at most about 110k nodes. Below 14, the truth measure's budget shows what it can
    # judge; a bigger budget would mostly be spent on positions that no budget here would solve.
    lines, budget = (lines[::10], (5_000, 20_000)) if args.quick else (lines, (TRUTH_BUDGET, DEEP_BUDGET))
    found = evaluate.POOLS["now"].map(solve_listed, lines, [budget] * len(lines))  # one task per position
    rows, bands = [], {}
    for lo, hi in ((4, 7), (8, 13), (14, 20), (21, 36)):
        band = [r for r in found if lo <= r[0] <= hi]
        judged = sorted(r[2] for r in band if r[1] is not None)
        bands[f"{lo}-{hi}"] = {"positions": len(band), "judged": len(judged), "agree": sum(r[1] is True for r in band),
                               "median_seconds": round(statistics.median(judged), 4) if judged else None}
        rows.append([f"{lo}-{hi} stones", len(band), len(judged), bands[f"{lo}-{hi}"]["agree"],
                     f"{statistics.median(judged):.3f}" if judged else "", f"{judged[-1]:.2f}" if judged else ""])
    evaluate.table(f"Going further: the exact solver against a public perfect solver ({len(found)} positions of "
                   f"{os.path.basename(args.c4_positions)},\n  at most {budget[1]:,} nodes each with 14+ stones, "
                   f"{budget[0]:,} below)", ["", "positions", "judged", "agree", "median CPU-s", "max CPU-s"], rows)
    judged = [r for r in found if r[1] is not None]
    every14, deep = all(r[1] is not None for r in found if r[0] >= 14), [r[2] for r in judged if r[0] >= 14]
    median = statistics.median(deep) if deep else None  # a positions file may hold none with 14+ stones
    answer(args, f"the solver agrees on {sum(r[1] for r in judged)} of the {len(judged)} positions it judged "
          f"({len(found) - len(judged)} skipped, over the budget); " + (f"{'every' if every14 else 'not every'} "
          f"position with 14 or more stones was judged (a median {median:.4f} CPU-s each)" if deep else
          "no position with 14 or more stones was judged"))
    agree = all(r[1] for r in judged)
    return {"bands": bands, "budget": budget, "median_seconds_14": median,
            "checks": [evaluate.Check("the solver agrees on every position it judged", agree, True, agree),
                       evaluate.Check("every position with 14+ stones judged", every14, True, every14)]}


def answer(args, text):
    """Print an answer line computed from the numbers above it, and say so when --quick makes them toy-sized."""
    print(f"  answer{' at --quick toy size, so it says little' if args.quick else ''}: {text}")


def part_2_results(args, truth):
    """Part 2's networks and scores, on which the Connect Four questions build (the same seed trains the same networks).
    The truth jobs of each network's raw policy and search go into `truth` (a Jobs) as soon as the training keeps it."""
    evaluate.progress("further: Part 2 first (the same seed: the same networks)")
    sims, n_truth = evaluate.part_2_settings(args.quick)["simulations"], 4 if args.quick else 40
    budget = 20_000 if args.quick else TRUTH_BUDGET
    measure = lambda it, net: truth.add(truth_jobs(functools.partial(Agent, net), (0, sims), n_truth, args.seed,
                                                   budget, f"{it}:"))
    scores, trained = evaluate.part_2(args, measure)["ours"][args.seed], evaluate.part_2_training(args, args.seed)
    return dict(nets=trained.nets, scores=scores, clock=trained.clock, simulations=sims, n_truth=n_truth)


def further_truth(args, part2, measures):
    """Question 1: Part 2's snapshots measured by the truth (part_2_results' jobs), beside their scores against UCT."""
    its, sims, n_games = list(part2["nets"]), part2["simulations"], part2["n_truth"]
    _, uct_games, uct = evaluate.part_2_sizes(args.quick)
    score = {it: part2["scores"][it].search_v_uct for it in its}
    evaluate.progress(f"further: the truth along {n_games} games against the tactical player, for {len(its)} networks")
    r = measures.results()
    policy = {it: r[f"{it}:policy: truth"] for it in its}
    search = {it: r[f"{it}:search {sims}: truth"] for it in its}
    rows = [[it, policy[it]["fraction"], search[it]["fraction"], search[it]["judged"], f"{score[it]:.2f}"]
            for it in its]
    evaluate.table(f"Going further: the truth, the fraction of the agent's moves that keep the exact outcome "
                   f"({TRUTH_MIN_STONES}+ stones),\n  along {n_games} games against the tactical player (random "
                   f"two-move openings, both colours), beside the score against UCT-{uct}",
                   ["iteration", "policy: truth", f"search {sims}: truth", "moves judged", f"search v UCT-{uct}"], rows)
    pairs = [(a, b) for i, a in enumerate(its) for b in its[i + 1:]]
    sign = lambda x: (x > 0) - (x < 0)
    agree = sum(sign(search[b]["fraction"] - search[a]["fraction"]) == sign(score[b] - score[a]) for a, b in pairs)
    judged = [s for s in search.values() if s["judged"]]  # at --quick's size a network may have no move judged
    se_truth = statistics.mean(math.sqrt(max(s["fraction"] * (1 - s["fraction"]), 1e-9) / s["judged"])
                               for s in judged) if judged else None
    se_uct = statistics.mean(math.sqrt(score[it] * (1 - score[it]) / uct_games) for it in its)
    steadier = "the truth" if se_truth is not None and se_truth < se_uct else "the score"
    se = "-, no move judged," if se_truth is None else f"{se_truth:.3f}"
    answer(args, f"the truth (search) orders {agree} of the {len(pairs)} pairs of snapshots as the score against "
          f"UCT-{uct} does;\n  standard errors: the truth's {se} on average, the score's {se_uct:.3f} (over "
          f"{uct_games} games): {steadier} is the steadier measure")
    return {"ours": {it: {"policy": policy[it], "search": search[it], "search_v_uct": score[it]} for it in its},
            "pairs_agreeing": agree, "pairs": len(pairs), "se_truth": se_truth, "se_uct": se_uct, "uct": uct}


def strength_jobs(net, n_simulations, args, tag, algorithm="alphazero", labels=("policy", "search")):
    """Jobs to compare trainings: policy and search against the tactical player, search against UCT, and the truth."""
    n_tactical, n_other, uct = evaluate.part_2_sizes(args.quick)
    n, jobs = REPORT_SIZES[args.quick], {}  # the truth at connect4_report's sizes
    for label in labels:
        agent = Agent(net, n_simulations if label == "search" else 0, algorithm)
        jobs[f"{tag}{label}_v_tactical"] = Match("connect4", agent, tactical_player, n_tactical, args.seed)
        jobs[f"{tag}{label}_truth"] = Truth("connect4", agent, tactical_player, n.truth, args.seed,
                                            budget=n.truth_budget)
    agent = Agent(net, n_simulations, algorithm)
    jobs[f"{tag}search_v_uct"] = Match("connect4", agent, UCTPlayer(uct), n_other, args.seed)
    return jobs


def strengths(r, tag):
    """One row from strength_jobs' results: the scores and the truth fractions."""
    return {k: r[tag + k]["fraction"] if k.endswith("truth") else round(mean(r[tag + k]), 3)
            for k in ("policy_v_tactical", "search_v_tactical", "search_v_uct", "policy_truth", "search_truth")
            if tag + k in r}


def lab_settings(game, **overrides):
    """alphazero_plus.py's settings with its changes off, so it trains as alphazero.py does, plus the overrides."""
    changes_off = {key: setting.default for key, setting in alphazero_plus.SETTINGS.items()}
    return {**changes_off, **alphazero.settings(game), **overrides}


def further_conv(args, part2, truth):
    """Question 2: the convolutional network against the lab's MLP at Part 2's settings, per game and per second of
    training. It stops at iteration 40, not 60, as its iterations cost about 5 times the MLP's on two cores."""
    keep, uct = [it for it in part2["nets"] if 0 < it <= 40], evaluate.part_2_sizes(args.quick)[2]
    cfg = lab_settings("connect4", net="conv", iterations=keep[-1], simulations=part2["simulations"],
                       **(dict(games=10, steps=10) if args.quick else {}))
    evaluate.progress(f"further: training Connect Four with the convolutional network, {cfg['iterations']} iterations")
    measures = evaluate.Jobs()  # measure each network as soon as it is kept, while training goes on
    measure = lambda it, net: measures.add(strength_jobs(net, cfg["simulations"], args, f"{it}:", labels=("search",)))
    clock = evaluate.train_keeping("connect4", cfg, args.seed, keep, alphazero_plus, args.workers, measure).clock
    evaluate.progress(f"further: measuring {len(keep)} convolutional network{'s' * (len(keep) > 1)}")
    r = measures.results()
    conv = {it: dict(strengths(r, f"{it}:"), seconds=round(clock[it])) for it in keep}
    mlp = {it: dict(search_v_tactical=part2["scores"][it].search_v_tactical, search_v_uct=t["search_v_uct"],
                    search_truth=t["search"]["fraction"], seconds=round(part2["clock"][it]))
           for it, t in truth["ours"].items() if it > 0}
    evaluate.table(f"Going further: a convolutional network (two 3x3 convolutions, 32 channels) against the lab's MLP, "
                   f"both at Part 2's settings\n  search with {cfg['simulations']} simulations: score against the "
                   f"tactical player and UCT-{uct}, truth fraction, and cumulative training seconds",
                   ["iteration", "mlp v tactical", "conv", f"mlp v UCT-{uct}", "conv", "mlp truth", "conv",
                    "mlp seconds", "conv"],
                   [[it] + [x for k, v in mlp[it].items() for x in (v, conv.get(it, {}).get(k, ""))] for it in mlp])
    # to compare at equal seconds, pair each conv snapshot with the MLP snapshot nearest in training time
    nearest = {it: min(mlp, key=lambda m: abs(mlp[m]["seconds"] - conv[it]["seconds"])) for it in keep}
    by_games = sum(conv[it]["search_truth"] > mlp[it]["search_truth"] for it in keep)
    by_seconds = sum(conv[it]["search_truth"] > mlp[nearest[it]]["search_truth"] for it in keep)
    pairs = ", ".join(f"conv {it} ({conv[it]['seconds']:.0f} s) ~ mlp {m} ({mlp[m]['seconds']:.0f} s)"
                      for it, m in nearest.items())
    who = lambda k: "the convolutional network" if k > len(keep) / 2 else "the MLP" if k < len(keep) / 2 else "neither"
    answer(args, f"at equal games (the same iteration) the convolutional network keeps the truth more often at "
          f"{by_games} of {len(keep)} snapshots: {who(by_games)} is stronger;\n  at equal seconds ({pairs}) at "
          f"{by_seconds} of {len(keep)}: {who(by_seconds)} is stronger per second on two cores")
    return {"conv": conv, "mlp": mlp, "nearest": nearest, "stronger_by_games": who(by_games),
            "stronger_by_seconds": who(by_seconds), "games": cfg["games"]}


GUMBEL_BUDGETS = (4, 8)


def gumbel_trainings(args):
    """Start question 3's four trainings now (see part_questions); return their Futures and the iterations."""
    iterations, toy = (2, dict(games=10, steps=10)) if args.quick else (30, {})
    cfgs = {(a, sims): evaluate.ALGORITHMS[a].settings("connect4", simulations=sims, iterations=iterations, **toy)
            for sims in GUMBEL_BUDGETS for a in ("alphazero", "gumbel")}
    return {run: evaluate.POOLS["ahead"].submit(evaluate.train_one, run[0], "connect4", cfg, args.seed, (iterations,))
            for run, cfg in cfgs.items()}, iterations


def further_gumbel(args, begun):
    """Question 3: PUCT against Gumbel in Connect Four (Part 3a's question), trained with 4 and 8 simulations."""
    (trainings, iterations), (n_tactical, _, uct) = begun, evaluate.part_2_sizes(args.quick)
    evaluate.progress(f"further: training PUCT and Gumbel, {GUMBEL_BUDGETS} simulations, {iterations} iterations each")
    nets = {run: training.result().nets[iterations] for run, training in trainings.items()}
    evaluate.progress("further: measuring the four networks")
    r = run_jobs({key: job for (a, sims), net in nets.items()
                  for key, job in strength_jobs(net, sims, args, f"{a}:{sims}:", algorithm=a).items()})
    ours = {f"{evaluate.NAMES[a]} {sims}": strengths(r, f"{a}:{sims}:") for a, sims in nets}
    columns = ("policy_v_tactical", "policy_truth", "search_v_tactical", "search_v_uct", "search_truth")
    evaluate.table(f"Going further: training Connect Four with few simulations, PUCT against Gumbel search "
                   f"({iterations} iterations of Part 2's settings)\n  the raw policy and search at the training "
                   f"budget: score against the tactical player and UCT-{uct}, truth fraction",
                   ["", *(k.replace("_", " ").replace("uct", f"UCT-{uct}") for k in columns)],
                   [[label] + [row[k] for k in columns] for label, row in ours.items()])
    gap = lambda sims, k: ours[f"gumbel {sims}"][k] - ours[f"puct {sims}"][k]  # Gumbel's lead
    better = {sims: [k for k in ("policy_v_tactical", "policy_truth") if gap(sims, k) > 0] for sims in GUMBEL_BUDGETS}
    se = math.sqrt(2 * 0.25 / n_tactical)  # the largest standard error of a difference of two scores
    survives = "survives" if all(len(b) == 2 for b in better.values()) else "does not clearly survive"
    each = [f"with {sims} simulations Gumbel's raw policy is ahead on {len(better[sims])} of 2 measures (against the "
            f"tactical player by {gap(sims, 'policy_v_tactical'):+.2f}, two standard errors {2 * se:.2f})"
            for sims in GUMBEL_BUDGETS]
    answer(args, "; ".join(each) + f":\n  Part 3a's advantage {survives} in Connect Four")
    return {"ours": ours, "iterations": iterations, "gumbel_ahead": better}


def losses_by_opening(scores, seed):
    """Count losses to the perfect player (play_match with opening 0) by who opened: the agent (first in even games),
    or the perfect player on the centre, a corner or an edge. To find the perfect player's opening in game i, we redo
    its first draw from that game's generator, which the agent never draws from."""
    openings = {4: "centre"} | dict.fromkeys((0, 2, 6, 8), "corner") | dict.fromkeys((1, 3, 5, 7), "edge")
    split = dict.fromkeys(("agent first", "centre", "corner", "edge"), 0)
    for i, score in enumerate(scores):
        if score == 0:
            opening = perfect_player([games.TicTacToe()], [np.random.default_rng([seed, i, 1])])[0]
            split["agent first" if i % 2 == 0 else openings[opening]] += 1
    return split


@functools.lru_cache(maxsize=1)
def common_positions():
    """The positions that arise when both sides play only optimal moves, from the empty board."""
    return list(evaluate.reached(evaluate.optimal_moves).values())


def policy_measures(net):
    """Measure the raw policy on the 4,520 positions: its optimal-move fraction there and on the common positions, and
    its blind spots, where its move worsens the exact outcome (a win to a draw or loss, a draw to a loss)."""
    positions, common = evaluate.tictactoe_positions(), {s.key() for s in common_positions()}
    moves = Agent(net, 0)(positions, [None] * len(positions))
    optimal = [m in evaluate.optimal_moves(s) for s, m in zip(positions, moves)]
    return {"optimal": round(mean(optimal), 3),
            "common_optimal": round(mean([o for s, o in zip(positions, optimal) if s.key() in common]), 3),
            "blind_spots": sum(-evaluate.solve(evaluate.after(s, m)) < evaluate.solve(s)
                               for s, m in zip(positions, moves))}


WAYS = {"default": {}, "random openings 0.25": dict(random_openings=0.25), "no noise": dict(noise=0.0),
        "temperature on move 1": dict(temp_moves=1), "no noise, temperature on move 1": dict(noise=0.0, temp_moves=1)}


def tictactoe_trainings(args):
    """Start the tic-tac-toe questions' fifteen trainings now (see part_questions); return their Futures and `keep`."""
    keep, toy = ((1, 2), dict(games=10, simulations=10, steps=10)) if args.quick else ((5, 10, 20, 40), {})
    cfgs = {way: lab_settings("tictactoe", iterations=keep[-1], **toy, **changes) for way, changes in WAYS.items()}
    return {(way, seed): evaluate.POOLS["ahead"].submit(evaluate.train_one, "alphazero_plus", "tictactoe", cfgs[way],
                                                        seed, keep)
            for way in WAYS for seed in range(args.seed, args.seed + 3)}, keep


def tictactoe_measured(args, begun):
    """Measure the networks of questions 4 and 5 (begun by tictactoe_trainings at Part 1's settings): the raw policy at
    each kept iteration, and at the last the losses of the raw policy and search, split by opening."""
    (trainings, keep), n_games, labels = begun, 10 if args.quick else 100, ("policy", "search")
    runs, last = list(trainings), keep[-1]
    evaluate.progress(f"further: training tic-tac-toe {len(runs)} times, {len(WAYS)} ways x 3 seeds, {last} iterations")
    trained = {run: training.result() for run, training in trainings.items()}
    evaluate.progress(f"further: measuring {len(runs)} networks: {n_games} games each against the perfect player")
    r = run_jobs({(run, label): Match("tictactoe", Agent(t.nets[last], sims), perfect_player, n_games, args.seed,
                                      opening=0)
                  for run, t in trained.items() for label, sims in zip(labels, (0, t.cfg["simulations"]))})
    measured = {run: {it: policy_measures(t.nets[it]) for it in keep} for run, t in trained.items()}
    n_common = len(common_positions())
    print(f"\n  common positions: the {n_common} positions (with a move to make) that arise when both sides play only "
          f"optimal moves;\n  blind spots: positions among the 4,520 where the raw policy's move worsens the exact "
          f"outcome")
    return {"final": {run: dict(measured[run][last], **{f"{label}_losses": losses_by_opening(r[run, label], args.seed)
                                                        for label in labels}) for run in runs},
            "curves": {run: {it: m["optimal"] for it, m in measured[run].items()} for run in runs},
            "n_common": n_common, "keep": keep, "n_games": n_games}


def losses(m, run, label, opening=None):  # a network's losses to the perfect player, in all or after one opening
    split = m["final"][run][f"{label}_losses"]
    return sum(split.values()) if opening is None else split[opening]


def mean_and_spread(values, digits=3):  # (evaluate.spread gives a median and range)
    return f"{statistics.mean(values):.{digits}f} ± {statistics.pstdev(values):.{digits}f}"


def further_blind_spot(args, m):
    """Question 4: does starting some self-play games from a random first move cure the edge-opening blind spot?"""
    last, labels, final = m["keep"][-1], ("policy", "search"), m["final"]
    by_way = {way: [run for run in final if run[0] == way] for way in WAYS}
    edge_only = all(losses(m, run, label) == losses(m, run, label, "edge") for run in by_way["default"]
                    for label in labels)
    rows = [[f"{way}, seed {run[1]}"] + [f"{losses(m, run, label, 'edge')} of {losses(m, run, label)}"
                                         for label in labels]
            + [final[run]["optimal"], final[run]["common_optimal"], final[run]["blind_spots"]]
            for way in ("default", "random openings 0.25") for run in by_way[way]]
    evaluate.table(f"Going further: curing the blind spot. Part 1 retrained with --random-openings 0.25 against the "
                   f"default, 3 seeds each, iteration {last}\n  losses in {m['n_games']} games against the perfect "
                   f"player (those after its edge opening, of all), for the raw policy and search; the raw policy's "
                   f"optimal-move fraction", ["", "policy: edge losses", "search: edge losses", "optimal (4,520)",
                                              f"optimal (common {m['n_common']})", "blind spots"], rows)
    edges = {way: sum(losses(m, run, label, "edge") for run in by_way[way] for label in labels) for way in WAYS}
    common = {way: mean_and_spread([final[run]["common_optimal"] for run in by_way[way]]) for way in WAYS}
    print(f"  the lab's thing to notice (at iteration {last} every loss comes after the edge opening): "
          f"{'holds' if edge_only else 'does not hold'} on our 3 default seeds")
    before, after = edges["default"], edges["random openings 0.25"]
    verdict = ("no edge-opening loss either way" if before == after == 0 else "random openings end them" if after == 0
               else "random openings cut them" if after < before else "random openings do not cut them")
    answer(args, f"edge-opening losses (policy and search, 3 seeds) {before} by default, {after} with random "
          f"openings: {verdict}; optimal in the common positions {common['default']} by default, "
          f"{common['random openings 0.25']} with random openings")
    return {"edge_only_by_default": edge_only, "edge_losses": edges}


def further_noise(args, m):
    """Question 5: what do the Dirichlet noise and the temperature do to learning and to the blind spots?"""
    keep, final, curves = m["keep"], m["final"], m["curves"]
    four = [way for way in WAYS if way != "random openings 0.25"]
    by_way = {way: [run for run in final if run[0] == way] for way in four}
    rows = [[way] + [mean_and_spread([curves[run][it] for run in by_way[way]]) for it in keep]
            + [mean_and_spread([losses(m, run, label) for run in by_way[way]], 1) for label in ("policy", "search")]
            + [mean_and_spread([final[run]["blind_spots"] for run in by_way[way]], 1)] for way in four]
    evaluate.table(f"Going further: what noise and temperature do. Part 1 retrained four ways, 3 seeds each (mean ± "
                   f"spread)\n  the raw policy's optimal-move fraction by iteration; at iteration {keep[-1]} losses "
                   f"in {m['n_games']} games against the perfect player and blind spots",
                   ["", *[f"optimal @{it}" for it in keep], "policy losses", "search losses", "blind spots"], rows)
    learn = {way: statistics.mean(curves[run][keep[0]] for run in by_way[way]) for way in four}
    spots = {way: statistics.mean(final[run]["blind_spots"] for run in by_way[way]) for way in four}
    fast, slow = max(learn, key=learn.get), min(learn, key=learn.get)
    few, most = min(spots, key=spots.get), max(spots, key=spots.get)
    answer(args, f"fastest to learn (optimal at iteration {keep[0]}): {fast} ({learn[fast]:.3f}), slowest {slow} "
          f"({learn[slow]:.3f});\n  fewest blind spots at iteration {keep[-1]}: {few} ({spots[few]:.1f}), most "
          f"{most} ({spots[most]:.1f})")
    return {"learns_fastest": fast, "fewest_blind_spots": few}


def timed(title, measure, *args):
    """Run measure(*args) after printing its title, then print its seconds and keep them in its result."""
    start = time.time()
    evaluate.progress(f"further, {title}")
    result = measure(*args)
    result["seconds"] = round(time.time() - start, 1)
    print(f"  ({result['seconds']:.0f} s)")
    return result


def part_questions(args):
    """The lab's five questions, numbered as in FURTHER.md, each with a table and an answer line. The solver's check
    comes first, because the first three rest on it."""
    # The trainings for questions 3 to 5 need no earlier result, so they start now, at a lower priority.
    # The truth of Part 2's networks is measured as its training keeps them.
    truth, gumbel, tictactoe = evaluate.Jobs(), gumbel_trainings(args), tictactoe_trainings(args)
    r = {"solver": timed("the solver's check: the exact Connect Four solver against a public perfect solver",
                         further_solver, args)}
    part2 = part_2_results(args, truth)
    r["truth"] = timed("question 1 of 5: measuring Part 2's networks against the truth", further_truth, args, part2,
                       truth)
    r["conv"] = timed("question 2 of 5: a convolutional network against the MLP", further_conv, args, part2,
                      r["truth"])
    r["gumbel"] = timed("question 3 of 5: PUCT against Gumbel when training with 4 and 8 simulations", further_gumbel,
                        args, gumbel)
    m = tictactoe_measured(args, tictactoe)
    r["blind_spot"] = timed("question 4 of 5: tic-tac-toe, curing the blind spot", further_blind_spot, args, m)
    r["noise"] = timed("question 5 of 5: tic-tac-toe, what noise and temperature do", further_noise, args, m)
    r["tictactoe"] = {"final": {f"{way} seed {seed}": v for (way, seed), v in m["final"].items()},
                      "curves": {f"{way} seed {seed}": v for (way, seed), v in m["curves"].items()},
                      "n_common": m["n_common"], **r["blind_spot"]}
    r["checks"] = r["solver"].pop("checks")
    return r


# ----------------------------------------------------------------------------------------------------------------
# A strong Connect Four player, trained from zero on two cores. We show the recipe's learning curve, then measure its
# last network as `--checkpoint` would. The bars it aims at: on every benchmark set, search with 600 simulations errs
# no more often than AlphaZero.jl's agent, and the raw policy no more than minimax of depth 5; with 200 simulations it
# scores 0.95 against UCT-400 over 400 games; it trains in at most 6 times the lab's Part 2 training (python
# alphazero.py --game connect4) on the same machine, a ratio because a 2-core machine's speed varies up to 2x by day.

RECIPE_RATIO, DEEP_SIMULATIONS = 6, 200  # the training-time limit as a multiple of the lab's, and the bars' simulations


def part_recipe(args):
    q = args.quick
    cfg = alphazero_plus.settings("connect4", **(dict(iterations=2, games=10, simulations=10, steps=10) if q else {}))
    last, deep, n = cfg["iterations"], 20 if q else DEEP_SIMULATIONS, REPORT_SIZES[q]
    keep = (1, 2) if q else (10, 20, 40, 80, last)
    n_uct = min(n.v_uct, 100)  # the curve is measured like the last network, but with at most 100 games against UCT
    truths, v_uct = ("policy: truth", f"search {deep}: truth"), f"search {deep} v UCT-{n.uct}"
    errors = {"benchmark errors: policy": "policy", f"benchmark errors: search {deep}": f"search {deep}"}
    if (args.quick, args.seed) not in evaluate.PART_2:
        evaluate.progress("recipe: first the lab's Part 2 training (python alphazero.py), the yardstick of its time")
    lab_seconds = evaluate.part_2_training(args, args.seed).seconds
    evaluate.progress(f"recipe: training alphazero_plus.py on Connect Four{' (--quick: 2 iterations)' if q else ''}")
    positions = read_benchmark()[::40 if q else 1]

    def curve_jobs(it, net):  # each network searches as the recipe's does (with --solver, say)
        agent = lambda sims: Agent(net, sims, "alphazero_plus", **evaluate.search_options(cfg))
        return {**truth_jobs(agent, (0, deep), n.truth, args.seed, n.truth_budget, f"{it}:"),
                f"{it}:{v_uct}": Match("connect4", agent(deep), UCTPlayer(n.uct), n_uct, args.seed),
                **benchmark_jobs(agent, positions, f"{it}:benchmark ", (0, deep))}
    measures = evaluate.Jobs()  # measure each network as soon as it is kept, while training goes on
    trained = evaluate.train_keeping("connect4", cfg, args.seed, keep, alphazero_plus, args.workers, lambda it, net:
                                     measures.add(curve_jobs(it, net)) if it != last else None)
    clock, seconds = trained.clock, trained.seconds
    evaluate.progress(f"recipe: measuring iterations {keep[:-1]}: the truth, UCT-{n.uct} and the benchmark")
    r = measures.results()
    final = connect4_report(trained.nets[last], f"the recipe's network (iteration {last})", cfg["simulations"], args,
                            "alphazero_plus", **evaluate.search_options(cfg))
    bench = final["benchmark"]
    errors_of = lambda rates: {k: statistics.mean(rates[label].values()) for k, label in errors.items()}  # averaged
    curve = {it: {**{k: r[f"{it}:{k}"] for k in truths}, v_uct: round(mean(r[f"{it}:{v_uct}"]), 3),
                  **errors_of({label: r[f"{it}:benchmark {label}"] for label in errors.values()})} for it in keep[:-1]}
    curve[last] = {**{k: final[k] for k in (*truths, v_uct)}, **errors_of(bench)}
    rows = [[it, f"{clock[it]:.0f}", *(c[k]["fraction"] for k in truths), f"{c[v_uct]:.2f}",
             *(f"{100 * c[k]:.1f}%" for k in errors)] for it, c in curve.items()]
    evaluate.table(f"The recipe's learning curve: python alphazero_plus.py --game connect4\n  truth along {n.truth} "
                   f"games against the tactical player; UCT-{n.uct}: {n_uct} games ({n.v_uct} at the last iteration), "
                   f"both colours, random two-move openings; the benchmark's error rate, averaged over its six sets",
                   ["iteration", "seconds", *truths, v_uct, *errors], rows)
    deepest = list(bench)[-1]  # search with the most simulations: 600 (20 with --quick)
    bars = [evaluate.Check(f"{player} on {s}: errors in %, at most {whose}'s", round(100 * bench[player][s], 1),
                           round(100 * THEIRS[key][s], 1), bench[player][s] <= THEIRS[key][s])
            for player, whose, key in ((deepest, "AlphaZero.jl", "AlphaZero.jl, MCTS-600"),
                                       ("policy", "minimax depth 5", "minimax depth 5")) for s in SETS]
    bars += [evaluate.Check(f"{v_uct} >= 0.95 over {n.v_uct} games", final[v_uct], 0.95, final[v_uct] >= 0.95),
             evaluate.Check(f"training <= {RECIPE_RATIO} x the lab's Part 2 training ({lab_seconds:.0f} s)",
                            round(seconds), round(RECIPE_RATIO * lab_seconds), seconds <= RECIPE_RATIO * lab_seconds)]
    met = lambda within: ", ".join(c.name for c in bars if c.within == within) or "none"
    answer(args, f"trained in {seconds:.0f} s wall, {seconds / lab_seconds:.1f} times the lab's Part 2 training "
          f"({lab_seconds:.0f} s on this machine); the bars met: {met(True)}; not met: {met(False)}")
    alphazero_plus.save(trained.net, args.recipe, "connect4", cfg=cfg)  # weights and settings, not Adam's state
    return {"settings": cfg, "curve": curve, "clock": clock, "final": final, "bars": {c.name: c.within for c in bars},
            "checks": bars, "seconds_trained": round(seconds, 1), "lab_seconds": round(lab_seconds, 1)}


def measure_checkpoint(args):
    """Run connect4_report on a saved Connect Four network, which searches as the algorithm that trained it."""
    alphazero.load(args.checkpoint, "connect4", as_net=False)  # refuses another game's network in a one-line message
    net, game, algorithm, options = evaluate.load_any(args.checkpoint)
    return connect4_report(net, args.checkpoint, alphazero_plus.settings("connect4")["simulations"], args, algorithm,
                           **options)


PARTS = {"questions": ("the five going-further questions", part_questions),
         "recipe": ("a strong Connect Four player", part_recipe)}


def main():
    parser = evaluate.command_line(__doc__, PARTS, "further.json")
    parser.add_argument("--c4-positions", default=C4_POSITIONS, help="Connect Four positions valued by a public "
                        "solver, to check ours (default data/c4_positions.txt)")
    parser.add_argument("--replace", action="store_true", help="replace the recipe's network (see --json) if a file "
                        "holds one already")
    args = parser.parse_args()
    read_positions(args.c4_positions)  # check the file before any work
    # The recipe's last network is saved beside the JSON when the part is done: further.json -> further_recipe.pt.
    # With --quick it is further_recipe_quick.pt, so that a toy run never replaces a full run's network.
    args.recipe = os.path.splitext(args.json)[0] + ("_recipe_quick.pt" if args.quick else "_recipe.pt")
    recipe = args.part in ("recipe", "all") and not args.checkpoint
    if recipe:  # claim it as a training claims --out: lock it until we exit, and keep it unless --replace
        plumbing.lock(args.recipe, "--json")
        if os.path.lexists(args.recipe) and not os.path.isfile(args.recipe) or os.path.isfile(args.recipe) and \
                os.path.getsize(args.recipe) and not args.replace:
            raise ValueError(f"{args.recipe} holds something already: add --replace to write the recipe's network "
                             "over it, or choose another --json")
    with evaluate.report(args, parser) as results:
        results.update({"checkpoint": measure_checkpoint(args)} if args.checkpoint else evaluate.run_parts(PARTS, args))
    return f"\n{time.time() - evaluate.START:.0f} s in all; every number is in {args.json}" + (
        f", the recipe's network in {args.recipe}" if recipe else "")


if __name__ == "__main__":
    plumbing.run_main(main)

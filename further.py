"""Going further: what the documents ask but do not measure. The exact Connect Four solver, the truth measure, the
lab's five "Going further" questions answered by measurement, and the strong player's learning curve and report.

    python further.py                          # everything: about 46 minutes on 2 cores, estimated (44 measured
                                               # when the recipe had 120 iterations; see PARTS)
    python further.py --part questions         # the five questions: the solver's check, then Part 2, then the rest
    python further.py --part recipe            # the strong player: alphazero_plus.py's learning curve and report
    python further.py --quick                  # every part at a small size, in under a minute
    python further.py --checkpoint data/connect4_plus.pt  # a Connect Four network: the truth, UCT-400, the solver
                                               # player and the benchmark of positions from random games
"""
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
from evaluate import (Agent, Match, UCTPlayer, mean, parallel, perfect_player, play_match, run_jobs, tactical_player,
                      winning_columns)  # the arena (evaluate.py's section of that name); the rest as evaluate.NAME

# The exact Connect Four solver: Pascal Pons' method on the game's bitboards (bit 7 * column + row, the top bit of
# each column always empty). Negamax with alpha-beta over null windows, a table of bounds, only moves that do not
# hand the opponent a four, and the moves that make the most threats first. Scores: 0 a draw; a win is 22 minus the
# stones the winner has placed when it makes four; a loss the negative. All for the player to move.

BOTTOM = sum(1 << 7 * c for c in range(7))
BOARD = BOTTOM * 0b111111  # every playable cell
COLUMNS = [0b111111 << 7 * c for c in (3, 2, 4, 1, 5, 0, 6)]  # centre first


def winning_cells(stones, mask):
    """The empty cells (playable now or not) where one more stone would give `stones` a four."""
    r = (stones << 1) & (stones << 2) & (stones << 3)  # vertical: three below
    for d in (7, 6, 8):  # horizontal and the two diagonals: the four patterns of three around the cell
        pair = (stones << d) & (stones << 2 * d)
        r |= pair & (stones << 3 * d) | pair & (stones >> d)
        pair = (stones >> d) & (stones >> 2 * d)
        r |= pair & (stones << d) | pair & (stones >> 3 * d)
    return r & (BOARD ^ mask)


class Bounds:
    """What the solver has learned: lower and upper bounds of positions' values, and a budget of nodes to search."""

    def __init__(self, budget=None):
        self.lower, self.upper, self.left = {}, {}, budget if budget is not None else math.inf


class TooHard(Exception):
    """The solver's node budget ran out before the position was solved."""


def negamax(me, mask, moves, alpha, beta, bounds):
    """The value for the player to move (whose stones are `me`), who cannot win at once, within [alpha, beta]."""
    bounds.left -= 1
    if bounds.left < 0:
        raise TooHard
    possible = (mask + BOTTOM) & BOARD
    threats = winning_cells(me ^ mask, mask)
    forced = possible & threats
    if forced & (forced - 1):
        return -((42 - moves) // 2)  # two threats to block: the opponent wins with its next stone
    safe = (forced or possible) & ~(threats >> 1)  # nor play under a cell that wins for the opponent
    if not safe:
        return -((42 - moves) // 2)
    if moves >= 40:
        return 0
    key = me + mask
    alpha = max(alpha, -((40 - moves) // 2), bounds.lower.get(key, -99))  # what the stones left and the table allow
    if alpha >= beta:
        return alpha
    beta = min(beta, (41 - moves) // 2, bounds.upper.get(key, 99))
    if alpha >= beta:
        return beta
    order = sorted((c & safe for c in COLUMNS if c & safe),
                   key=lambda move: -winning_cells(me | move, mask).bit_count())  # stable: centre first on ties
    for move in order:
        score = -negamax(me ^ mask, mask | move, moves + 1, -beta, -alpha, bounds)
        if score >= beta:
            bounds.lower[key] = score
            return score
        alpha = max(alpha, score)
    bounds.upper[key] = alpha
    return alpha


def solve_connect4(state, bounds=None):
    """The exact value of a Connect Four position for the player to move. `bounds` (a Bounds) can be shared between
    positions, and limits the search: TooHard when its budget runs out."""
    moves, mask = state.moves, state.bits[0] | state.bits[1]
    if state.is_over():  # the last mover made four with its (moves + 1) // 2-th stone, or the board is full
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
        if r <= med:
            hi = r
        else:
            lo = r
    return lo


def connect4_move_value(state, move, bounds=None):
    """The exact value, for the player to move, of playing `move`."""
    if move in winning_columns(state, state.moves % 2):
        return (43 - state.moves) // 2
    return -solve_connect4(evaluate.after(state, move), bounds)


def connect4_move_values(state, bounds=None):
    """{column: the exact value, for the player to move, of playing it}."""
    bounds = bounds or Bounds()
    return {m: connect4_move_value(state, m, bounds) for m in state.legal_moves()}


TRUTH_MIN_STONES, TRUTH_BUDGET = 8, 30_000  # judge positions with 8+ stones, within 30,000 solver nodes (~0.5 s)
DEEP_BUDGET = 150_000  # enough for every position with 14+ stones that we met (~2 s at most)


class Judged:
    """A player whose moves the solver judges: does each keep the position's exact outcome (a won position won, a
    drawn one drawn)? Skipped: lost positions (every move keeps them lost, so they would flatter a weak player),
    positions with fewer than TRUTH_MIN_STONES stones, and those too hard to solve."""

    def __init__(self, player, budget=TRUTH_BUDGET):
        self.player, self.budget, self.bounds, self.kept, self.judged, self.skipped = player, budget, Bounds(), 0, 0, 0

    def __call__(self, states, rngs):
        moves = self.player(states, rngs)
        for s, move in zip(states, moves):
            try:
                if s.moves < TRUTH_MIN_STONES:
                    raise TooHard
                self.bounds.left = self.budget
                value = solve_connect4(s, self.bounds)
                if value < 0:
                    raise TooHard  # nothing to keep
                self.bounds.left = self.budget
                moved = connect4_move_value(s, move, self.bounds)
                self.kept += moved > 0 if value > 0 else moved >= 0  # won stays won; drawn at least drawn
                self.judged += 1
            except TooHard:
                self.skipped += 1
        return moves


@dataclasses.dataclass
class Truth(Match):
    """A Match whose agent's moves the solver judges (within `budget` nodes a position): the total is the fraction of
    judged moves that kept the exact outcome, and how many were judged and skipped."""
    budget: int = 30_000

    def run(self, indices):
        judged = Judged(self.agent, self.budget)
        play_match(self.game, judged, self.opponent, indices, self.seed, self.opening)
        return [(judged.kept, judged.judged, judged.skipped)]

    def total(self, counts):
        kept, judged, skipped = map(sum, zip(*counts))  # the fraction of no judged move is nan, shown as "-"
        return {"fraction": round(kept / judged, 3) if judged else math.nan, "judged": judged, "skipped": skipped}


class SolverPlayer:
    """The solver as a player, where it can solve: uniformly among the moves of the best exact value. Pure Python
    cannot solve the first moves of a game (an opening book or compiled code would), so below TRUTH_MIN_STONES
    stones, or when the solver's budget runs out, `stand_in` moves instead: this is not a perfect player from the
    first move. stood_in: {game's state id: the most stones it saw}."""

    def __init__(self, stand_in, budget=DEEP_BUDGET):
        self.stand_in, self.budget, self.bounds, self.best, self.stood_in = stand_in, budget, Bounds(), {}, {}

    def best_moves(self, s):
        if s.key() not in self.best:  # None: too hard
            self.best[s.key()] = None
            if s.moves >= TRUTH_MIN_STONES:
                try:
                    self.bounds.left = self.budget
                    values = connect4_move_values(s, self.bounds)
                    self.best[s.key()] = [m for m, v in values.items() if v == max(values.values())]
                except TooHard:
                    pass
        return self.best[s.key()]

    def __call__(self, states, rngs):
        best = [self.best_moves(s) for s in states]
        hard = [j for j, moves in enumerate(best) if moves is None]
        stood_in = dict(zip(hard, self.stand_in([states[j] for j in hard], [rngs[j] for j in hard]) if hard else []))
        for j in hard:
            self.stood_in[id(states[j])] = states[j].moves
        return [stood_in[j] if moves is None else moves[rngs[j].integers(len(moves))] for j, moves in enumerate(best)]


@dataclasses.dataclass
class VersusSolver:
    """Connect Four games of `agent` against SolverPlayer from the empty board (the agent first in even games):
    [(the agent's score, the moves it made, the most stones on the board when the stand-in moved)]."""
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
        return games


@dataclasses.dataclass
class ReportSizes:
    """How much connect4_report measures: games against the tactical player and against UCT, UCT's simulations,
    games along which the truth is measured, games against the solver player with each colour, and the solver's
    node budgets for the truth and for the solver player."""
    v_tactical: int
    v_uct: int
    uct: int
    truth: int
    v_solver: int
    truth_budget: int
    solver_budget: int


def report_sizes(quick):
    return ReportSizes(4, 2, 50, 2, 2, 5_000, 5_000) if quick else ReportSizes(100, 400, 400, 40, 50, TRUTH_BUDGET,
                                                                                  DEEP_BUDGET)


def connect4_report(net, name, n_simulations, args, algorithm="alphazero", **options):
    """A Connect Four network, measured with `n_simulations` and with DEEP_SIMULATIONS: against the tactical player and UCT-400,
    the truth fraction, and games against the solver player (SolverPlayer, with the network as its stand-in). Its
    search is `algorithm`'s with `options` (alphazero_plus's solver=True, say)."""
    deep = 20 if args.quick else DEEP_SIMULATIONS
    n = report_sizes(args.quick)
    agent = lambda sims: Agent(net, sims, algorithm, **options)
    jobs = {"policy v tactical": Match("connect4", agent(0), tactical_player, n.v_tactical, args.seed),
            f"search {deep} v tactical": Match("connect4", agent(deep), tactical_player, n.v_tactical, args.seed),
            f"search {deep} v UCT-{n.uct}": Match("connect4", agent(deep), UCTPlayer(n.uct), n.v_uct, args.seed),
            "v_solver": VersusSolver(agent(deep), agent(4 * deep), 2 * n.v_solver, args.seed, n.solver_budget)}
    for label, sims in (("policy", 0), (f"search {n_simulations}", n_simulations), (f"search {deep}", deep)):
        jobs[f"{label}: truth"] = Truth("connect4", agent(sims), tactical_player, n.truth, args.seed,
                                        budget=n.truth_budget)
    positions = read_benchmark()[::40] if args.quick else read_benchmark()  # --quick: 5 in each set
    jobs.update(benchmark_jobs(agent, positions, "benchmark: ", (0, 10, 20) if args.quick else BENCHMARK_SIMULATIONS))
    evaluate.progress(f"measuring {name}: {n.v_tactical} games against the tactical player, {n.v_uct} against "
                      f"UCT-{n.uct}, {2 * n.v_solver} against the solver player, the truth along {n.truth}")
    r = run_jobs(jobs)
    benchmark = {k.removeprefix("benchmark: "): r.pop(k) for k in list(r) if k.startswith("benchmark: ")}
    games_v_solver = r.pop("v_solver")
    first, second = games_v_solver[0::2], games_v_solver[1::2]  # the agent moved first in the even games
    ours = {k: v if isinstance(v, dict) else round(mean(v), 3) for k, v in r.items()}
    ours["v_solver"] = {"first_wins": sum(g[0] == 1 for g in first), "first_draws": sum(g[0] == 0.5 for g in first),
                         "second_moves": round(mean([g[1] for g in second]), 1),
                         "second_not_lost": sum(g[0] > 0 for g in second), "games_each": len(first),
                         "stand_in_up_to": max(g[2] for g in games_v_solver)}
    p = ours["v_solver"]
    rows = [[k, (f"{v['fraction']:.3f}" if v["judged"] else "-") + f" ({v['judged']} moves judged, {v['skipped']} not)"
             if isinstance(v, dict) else v] for k, v in ours.items() if k != "v_solver"]
    rows += [[f"search {deep} v solver, first", f"won {p['first_wins']} of {p['games_each']} (drew "
                                                   f"{p['first_draws']})"],
             [f"search {deep} v solver, second", f"lasted {p['second_moves']} moves on average, lost "
                                                    f"{p['games_each'] - p['second_not_lost']} of {p['games_each']}"]]
    evaluate.table(f"{name}: a connect4 network. Games from random two-move openings, both colours. The truth: the "
                   f"fraction of the agent's moves\n  that keep the exact outcome of a won or drawn position with "
                   f"{TRUTH_MIN_STONES}+ stones, along {n.truth} games against the tactical player.\n  The solver "
                   f"player: the solver's best moves from the empty board, except below {TRUTH_MIN_STONES} stones or "
                   f"beyond {n.solver_budget:,} nodes, where the same network\n  with {4 * deep} simulations moves for "
                   f"it (here up to {p['stand_in_up_to']} stones): not a perfect player in the opening",
                   ["measure", "ours"], rows)
    benchmark_table(name, benchmark, len(positions) // len(SETS))
    ours["benchmark"] = benchmark
    return ours


# ----------------------------------------------------------------------------------------------------------------
# A benchmark like Pascal Pons': positions from uniformly random games, each legal move's exact value. A move is an
# error when it gives up the best outcome the position still has: a win thrown to a draw or a loss, or a draw thrown
# to a loss (so no move in a lost position is an error). Six sets, by the stones on the board (beginning at most 14,
# middle 15-28, end more) and by the moves left under perfect play (easy under 14, medium 14-28, hard more).

BENCHMARK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "c4_benchmark.txt")
SETS = ("beginning-easy", "middle-easy", "end-easy", "beginning-medium", "middle-medium", "beginning-hard")
THEIRS = {  # error rates, read off the plot of AlphaZero.jl's Connect Four tutorial (about +-0.005): its agent at
    "AlphaZero.jl, MCTS-600": dict(zip(SETS, (0.0, 0.0, 0.0, 0.02, 0.028, 0.07))),  # iteration 15, 600 simulations
    "minimax depth 5": dict(zip(SETS, (0.017, 0.007, 0.014, 0.073, 0.092, 0.235)))}  # and its minimax baseline
BENCHMARK_SIMULATIONS = (0, 200, 600)  # the raw policy, and search


@dataclasses.dataclass
class Position:
    """A benchmark position: its set, the columns played from the empty board (1 = leftmost), and each legal move's
    exact value for the player to move (> 0 a win, 0 a draw, < 0 a loss)."""
    set: str
    moves: str
    values: dict

    def state(self):
        s = games.ConnectFour()
        for c in self.moves:
            s.play(int(c) - 1)
        return s

    def is_error(self, move):
        """Does `move` give up the best outcome the position still has (the best sign among its moves' values)?"""
        sign = lambda v: (v > 0) - (v < 0)
        return sign(self.values[move]) < max(map(sign, self.values.values()))


def read_benchmark(path=BENCHMARK):
    """The benchmark's positions: "SET MOVES SCORE S1 .. S7" a line, '.' for a full column."""
    positions = []
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            name, moves, _, *values = line.split()
            positions.append(Position(name, moves, {c: int(v) for c, v in enumerate(values) if v != "."}))
    return positions


@dataclasses.dataclass
class Benchmark:
    """A job: the agent's move in each benchmark position (all searched side by side); the total is the fraction of
    errors in each set."""
    agent: object
    positions: list
    size: int

    def run(self, indices):
        chosen = [self.positions[i] for i in indices]
        moves = self.agent([p.state() for p in chosen], [np.random.default_rng(i) for i in indices])
        return [(p.set, p.is_error(m)) for p, m in zip(chosen, moves)]

    def total(self, judged):  # a set with no position here (a part of the file): nan
        return {name: round(mean(e), 4) if (e := [error for s, error in judged if s == name]) else math.nan
                for name in SETS}


def benchmark_jobs(agent, positions, tag="", simulations=BENCHMARK_SIMULATIONS):
    """agent(n): the player with n simulations (0: the raw policy)."""
    return {f"{tag}{'policy' if n == 0 else f'search {n}'}": Benchmark(agent(n), positions, len(positions))
            for n in simulations}


def benchmark_table(name, rates, size=200):
    """Each set's error rate, ours ({label: {set: rate}}) beside AlphaZero.jl's and minimax's (theirs), in %."""
    columns = {**{f"{k} (theirs)": v for k, v in THEIRS.items()}, **rates}
    rows = [[s] + [f"{100 * columns[c][s]:.1f}%" for c in columns] for s in SETS]
    rows.append(["average"] + [f"{100 * statistics.mean(columns[c].values()):.1f}%" for c in columns])
    evaluate.table(f"{name} on the benchmark: the fraction of positions where the move gives up the best outcome\n  "
                   f"({size} positions from random games in each set, every move valued by a public perfect solver)",
                   ["set", *columns],
                   rows)


# ----------------------------------------------------------------------------------------------------------------
# Going further: the lab's open questions about Connect Four, answered by measurement against the exact solver

C4_POSITIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "c4_positions.txt")


def solve_listed(task):
    """Solve listed positions ("MOVES SCORE ...", columns from 1) within a node budget, (positions with fewer than 14
    stones, budget for those with 14+): [(stones, agrees, seconds)], agrees None when the budget ran out."""
    lines, (budget_below_14, budget) = task
    out = []
    for line in lines:
        moves, score = line.split()[:2]
        s = games.ConnectFour()
        for c in moves:
            s.play(int(c) - 1)
        start = time.process_time()
        try:
            value = solve_connect4(s, Bounds(budget if len(moves) >= 14 else budget_below_14))
            out.append((len(moves), value == int(score), time.process_time() - start))
        except TooHard:
            out.append((len(moves), None, time.process_time() - start))
    return out


def read_positions(path):
    """The lines of a positions file ("MOVES SCORE ..." after the comments); ValueError in one line, naming the line,
    for a file that cannot be read or a line of another shape."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):  # a FIFO would block
        raise ValueError(f"cannot read the positions file {path}: it is not a regular file")
    try:
        numbered = [(i, line) for i, line in enumerate(open(path), 1) if line.strip() and not line.startswith("#")]
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read the positions file {path!r}: {getattr(e, 'strerror', None) or e}") from None
    for i, line in numbered:
        moves, score, *_ = line.split() + ["", ""]
        if not (set(moves) <= set("1234567") and score.lstrip("-").isdigit()):
            raise ValueError(f"{path}, line {i}: not 'MOVES SCORE ...' (columns 1-7, then an integer): {line.strip()!r}")
    return [line for _, line in numbered]


def further_solver(args):
    """The solver against a public perfect solver's values, by the number of stones on the board."""
    lines = read_positions(args.c4_positions)
    # 14+ stones need at most ~110k nodes; below, the truth measure's budget shows what it can judge (more is
    # mostly spent on positions no budget here would solve)
    lines, budget = (lines[::10], (5_000, 20_000)) if args.quick else (lines, (TRUTH_BUDGET, DEEP_BUDGET))
    k = 2 * args.workers
    found = [r for part in parallel(solve_listed, [(lines[i::k], budget) for i in range(k)]) for r in part]
    rows, bands = [], {}
    for lo, hi in ((4, 7), (8, 13), (14, 20), (21, 36)):
        band = [r for r in found if lo <= r[0] <= hi]
        judged = sorted(r[2] for r in band if r[1] is not None)
        bands[f"{lo}-{hi}"] = {"positions": len(band), "judged": len(judged), "agree": sum(r[1] is True for r in band),
                               "median_seconds": round(statistics.median(judged), 4) if judged else None}
        rows.append([f"{lo}-{hi} stones", len(band), len(judged), bands[f"{lo}-{hi}"]["agree"],
                     f"{statistics.median(judged):.3f}" if judged else "", f"{judged[-1]:.2f}" if judged else ""])
    evaluate.table(f"Going further: the exact Connect Four solver against a public perfect solver ({len(found)} "
                   f"positions of {args.c4_positions.split(os.sep)[-1]},\n  at most {budget[1]:,} nodes each with 14+ "
                   f"stones, {budget[0]:,} below)",
                   ["", "positions", "judged", "agree", "median CPU-s", "max CPU-s"], rows)
    judged = [r for r in found if r[1] is not None]
    every14 = all(r[1] is not None for r in found if r[0] >= 14)
    median = statistics.median(r[2] for r in judged if r[0] >= 14) if judged else None
    answer(args, f"the solver agrees on {sum(r[1] for r in judged)} of the {len(judged)} positions it judged "
          f"({len(found) - len(judged)} skipped, over the budget); {'every' if every14 else 'not every'} "
          f"position with 14 or more stones was judged (a median {median:.4f} CPU-s each)")
    agree = all(r[1] for r in judged)
    return {"bands": bands, "budget": budget, "median_seconds_14": median,
            "checks": [evaluate.Check("the solver agrees on every position it judged", agree, True, agree),
                       evaluate.Check("every position with 14+ stones judged", every14, True, every14)]}


def answer(args, text):
    """An answer line, computed from the numbers above it; at --quick's toy size it says so."""
    print(f"  answer{' at --quick toy size, so it says little' if args.quick else ''}: {text}")


def part_2_results(args, also):
    """Part 2's snapshots and their scores, which the Connect Four questions start from (Part 2 runs here: the same
    seed trains the same networks). also(it, net) is told each network as the training keeps it."""
    evaluate.progress("further: Part 2 first (the same seed: the same networks)")
    scores = evaluate.part_2(args, also)["ours"]
    cfg, nets, _, clock, _ = evaluate.part_2_training(args)
    n_tactical, uct_games, uct_sims = evaluate.part_2_sizes(args.quick)
    return dict(nets=nets, scores=scores, clock=clock, simulations=cfg["simulations"], n_tactical=n_tactical,
                uct_games=uct_games, uct_sims=uct_sims)


def truth_games(quick):
    return 4 if quick else 40


def truth_jobs(args, it, net):
    """The truth along games for one of Part 2's networks, its raw policy and its search: begun as Part 2's
    training keeps the network, they run beside that training and Part 2's matches."""
    sims, budget = evaluate.part_2_settings(args.quick)[0]["simulations"], 20_000 if args.quick else TRUTH_BUDGET
    return {f"{it}:{label}": Truth("connect4", Agent(net, n), tactical_player, truth_games(args.quick), args.seed,
                                   budget=budget) for label, n in (("policy", 0), ("search", sims))}


def further_truth(args, part2, measures):
    """Part 2's snapshots measured against the truth (measures: truth_jobs' for each): the fraction of the agent's moves
    (against the tactical player) that keep the exact outcome, beside the snapshot's score against UCT-400."""
    nets, uct = part2["nets"], {it: part2["scores"][it].search_v_uct for it in part2["nets"]}
    n_games, sims = truth_games(args.quick), part2["simulations"]
    evaluate.progress(f"further: the truth along {n_games} games against the tactical player, for {len(nets)} networks")
    r = measures.results()
    rows = [[it, r[f"{it}:policy"]["fraction"], r[f"{it}:search"]["fraction"], r[f"{it}:search"]["judged"],
             f"{uct[it]:.2f}"] for it in nets]
    evaluate.table(f"Going further: measuring against the truth. Along {n_games} games against the tactical player "
                   f"(random two-move openings, both colours),\n  the fraction of the agent's moves that keep the "
                   f"position's exact outcome (positions with {TRUTH_MIN_STONES}+ stones the solver judges), beside "
                   f"the score against UCT-{part2['uct_sims']}",
                   ["iteration", "policy: truth", f"search {sims}: truth", "moves judged",
                                               f"search v UCT-{part2['uct_sims']}"], rows)
    its = list(nets)
    pairs = [(a, b) for i, a in enumerate(its) for b in its[i + 1:]]
    sign = lambda x: (x > 0) - (x < 0)
    agree = sum(sign(r[f"{b}:search"]["fraction"] - r[f"{a}:search"]["fraction"]) == sign(uct[b] - uct[a])
                for a, b in pairs)
    judged = [it for it in its if r[f"{it}:search"]["judged"]]  # (at --quick's size, a network may have none)
    se_truth = statistics.mean(math.sqrt(max(r[f"{it}:search"]["fraction"] * (1 - r[f"{it}:search"]["fraction"]), 1e-9)
                                         / r[f"{it}:search"]["judged"]) for it in judged) if judged else None
    se_uct = statistics.mean(math.sqrt(uct[it] * (1 - uct[it]) / part2["uct_games"]) for it in its)
    steadier = "the truth" if se_truth is not None and se_truth < se_uct else "the score"
    answer(args, f"the truth (search) orders {agree} of the {len(pairs)} pairs of snapshots as the score against "
          f"UCT-{part2['uct_sims']} does;\n  standard errors: the truth's "
          f"{'-, no move judged,' if se_truth is None else f'{se_truth:.3f}'} on average, the score's {se_uct:.3f} "
          f"(over {part2['uct_games']} games): {steadier} is the steadier measure")
    return {"ours": {it: {"policy": r[f"{it}:policy"], "search": r[f"{it}:search"], "search_v_uct": uct[it]}
                     for it in its}, "pairs_agreeing": agree, "pairs": len(pairs), "se_truth": se_truth,
            "se_uct": se_uct}


def strength_jobs(net, n_simulations, args, tag, algorithm="alphazero", labels=("policy", "search")):
    """The measures that compare two trainings: the raw policy and search against the tactical player, search
    against UCT-400 (Part 2's game counts), and the truth fraction of the raw policy and of search."""
    n_tactical, n_other, uct = evaluate.part_2_sizes(args.quick)
    n_truth, budget = (2, 5_000) if args.quick else (40, TRUTH_BUDGET)
    jobs = {}
    for label in labels:
        agent = Agent(net, n_simulations if label == "search" else 0, algorithm)
        jobs[f"{tag}{label}_v_tactical"] = Match("connect4", agent, tactical_player, n_tactical, args.seed)
        jobs[f"{tag}{label}_truth"] = Truth("connect4", agent, tactical_player, n_truth, args.seed, budget=budget)
    jobs[f"{tag}search_v_uct"] = Match("connect4", Agent(net, n_simulations, algorithm), UCTPlayer(uct), n_other,
                                       args.seed)
    return jobs


def strengths(r, tag):
    """strength_jobs' results as one row: scores, and truth fractions."""
    return {k: r[tag + k]["fraction"] if k.endswith("truth") else round(mean(r[tag + k]), 3)
            for k in ("policy_v_tactical", "search_v_tactical", "search_v_uct", "policy_truth", "search_truth")
            if tag + k in r}


def lab_settings(game, **overrides):
    """alphazero_plus.py's settings at the lab's values (its changes off), with any of them overridden: to train as
    alphazero.py does, plus one change."""
    cfg = {key: setting.default for key, setting in alphazero_plus.SETTINGS.items()}  # every change off
    cfg.update(alphazero.settings(game))
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return cfg


def further_conv(args, part2, truth):
    """The convolutional network against the lab's MLP, both at Part 2's settings: strength per game (the same
    iteration) and per second of training (the nearest cumulative seconds). Up to iteration 40, not 60: each of
    its iterations costs about 11 s here against the MLP's 3 (about 8 times the arithmetic in the Adam steps), and
    the 60th would cost this part 4 more minutes."""
    keep = [it for it in part2["nets"] if 0 < it <= 40]
    cfg = lab_settings("connect4", net="conv", iterations=keep[-1], games=10 if args.quick else None,
                       steps=10 if args.quick else None, simulations=part2["simulations"])
    evaluate.progress(f"further: training Connect Four with the convolutional network, {cfg['iterations']} iterations")
    measures = evaluate.Measures()  # each network's measures begin as it is kept, beside the training
    nets, _, clock = evaluate.snapshots_of("connect4", cfg, args.seed, args.workers, keep, alphazero_plus,
                                           on_kept=lambda it, net: measures.add(
                                               strength_jobs(net, cfg["simulations"], args, f"{it}:", labels=("search",))))
    evaluate.progress(f"further: measuring {len(keep)} convolutional networks")
    r = measures.results()
    conv = {it: dict(strengths(r, f"{it}:"), seconds=round(clock[it])) for it in keep}
    mlp = {it: dict(search_v_tactical=part2["scores"][it].search_v_tactical,
                    search_v_uct=part2["scores"][it].search_v_uct, search_truth=truth["ours"][it]["search"]["fraction"],
                    seconds=round(part2["clock"][it])) for it in part2["nets"] if it > 0}
    columns = ("search_v_tactical", "search_v_uct", "search_truth", "seconds")
    uct = part2["uct_sims"]
    evaluate.table(f"Going further: a convolutional network (two 3x3 convolutions, 32 channels) against the lab's MLP, "
                   f"both at Part 2's settings\n  search with {cfg['simulations']} simulations: score against the "
                   f"tactical player and UCT-{uct}, truth fraction, and cumulative training seconds",
                   ["iteration", "mlp v tactical", "conv", f"mlp v UCT-{uct}", "conv", "mlp truth", "conv",
                    "mlp seconds", "conv"],
                   [[it] + [x for k in columns for x in (mlp[it][k], conv[it][k] if it in conv else "")] for it in mlp])
    # at equal seconds: each conv snapshot beside the MLP snapshot whose training time is nearest
    nearest = {it: min(mlp, key=lambda m: abs(mlp[m]["seconds"] - conv[it]["seconds"])) for it in keep}
    by_games = sum(conv[it]["search_truth"] > mlp[it]["search_truth"] for it in keep)
    by_seconds = sum(conv[it]["search_truth"] > mlp[nearest[it]]["search_truth"] for it in keep)
    pairs = ", ".join(f"conv {it} ({conv[it]['seconds']:.0f} s) ~ mlp {nearest[it]} ({mlp[nearest[it]]['seconds']:.0f} s)"
                      for it in keep)
    verdict = lambda k: "the convolutional network" if k > len(keep) / 2 else "the MLP" if k < len(keep) / 2 else "neither"
    answer(args, f"at equal games (the same iteration) the convolutional network keeps the truth more often at "
          f"{by_games} of {len(keep)} snapshots: {verdict(by_games)} is stronger;\n  at equal seconds ({pairs}) at "
          f"{by_seconds} of {len(keep)}: {verdict(by_seconds)} is stronger per second on two cores")
    return {"conv": conv, "mlp": mlp, "nearest": nearest, "stronger_by_games": verdict(by_games),
            "stronger_by_seconds": verdict(by_seconds)}


GUMBEL_BUDGETS = (4, 8)


def gumbel_runs(quick):
    """The Gumbel question's four trainings, (algorithm, simulations) each, and their settings."""
    runs = [(a, sims) for sims in GUMBEL_BUDGETS for a in ("alphazero", "gumbel")]
    return runs, {(a, sims): evaluate.ALGORITHMS[a].settings("connect4", simulations=sims, iterations=2 if quick else 30,
                                                             games=10 if quick else None, steps=10 if quick else None)
                  for a, sims in runs}


def gumbel_trainings(args):
    """The Gumbel question's four trainings, each in one worker process, begun now (see part_questions)."""
    runs, cfgs = gumbel_runs(args.quick)
    return evaluate.begin(evaluate.train_one, [(a, "connect4", cfgs[a, sims], args.seed, (cfgs[a, sims]["iterations"],))
                                               for a, sims in runs], ahead=True)


def further_gumbel(args, part2, trainings):
    """Part 3a's question in Connect Four: trained with 4 and with 8 simulations a move (trainings: gumbel_trainings'),
    PUCT against Gumbel."""
    budgets, (runs, cfgs) = GUMBEL_BUDGETS, gumbel_runs(args.quick)
    iterations = cfgs[runs[0]]["iterations"]
    evaluate.progress(f"further: training Connect Four with {budgets} simulations a move, PUCT and Gumbel, "
                      f"{iterations} iterations each, the four side by side")
    snapshots, _ = zip(*evaluate.collect(trainings))
    nets = [s[iterations] for s in snapshots]
    evaluate.progress("further: measuring the four networks")
    jobs = {}
    for (a, sims), net in zip(runs, nets):
        jobs.update(strength_jobs(net, sims, args, f"{a}:{sims}:", algorithm=a))
    r = run_jobs(jobs)
    ours = {f"{evaluate.NAMES[a]} {sims}": strengths(r, f"{a}:{sims}:") for a, sims in runs}
    columns = ("policy_v_tactical", "policy_truth", "search_v_tactical", "search_v_uct", "search_truth")
    uct = part2["uct_sims"]
    evaluate.table(f"Going further: training Connect Four with few simulations, PUCT against Gumbel search "
                   f"({iterations} iterations of Part 2's settings)\n  the raw policy and search at the training "
                   f"budget: score against the tactical player and UCT-{uct}, truth fraction",
                   ["", "policy v tactical", "policy truth", "search v tactical", f"search v UCT-{uct}",
                    "search truth"],
                   [[label] + [row[k] for k in columns] for label, row in ours.items()])
    n_tactical = part2["n_tactical"]
    better = {sims: [k for k in ("policy_v_tactical", "policy_truth") if ours[f"gumbel {sims}"][k] > ours[f"puct {sims}"][k]]
              for sims in budgets}
    gaps = {sims: ours[f"gumbel {sims}"]["policy_v_tactical"] - ours[f"puct {sims}"]["policy_v_tactical"] for sims in budgets}
    se = math.sqrt(2 * 0.25 / n_tactical)  # the largest standard error of a difference of two scores
    answer(args, "; ".join(f"with {sims} simulations Gumbel's raw policy is ahead on {len(better[sims])} of 2 "
                                   f"measures (against the tactical player by {gaps[sims]:+.2f}, two standard errors "
                                   f"{2 * se:.2f})" for sims in budgets)
          + f":\n  Part 3a's advantage {'survives' if all(len(b) == 2 for b in better.values()) else 'does not clearly survive'} "
            f"in Connect Four")
    return {"ours": ours, "iterations": iterations, "gumbel_ahead": better}


OPENINGS = {4: "centre", 0: "corner", 2: "corner", 6: "corner", 8: "corner", 1: "edge", 3: "edge", 5: "edge", 7: "edge"}


def losses_by_opening(scores, seed):
    """Losses to the perfect player (play_match with opening 0) split by who opened: the agent (first in even
    games), or the perfect player on the centre, a corner or an edge. The perfect player's opening in game i is its
    first draw from that game's generator (the agent draws nothing), replayed here."""
    split = dict.fromkeys(("agent first", "centre", "corner", "edge"), 0)
    for i, score in enumerate(scores):
        if score == 0:
            opening = perfect_player([games.TicTacToe()], [np.random.default_rng([seed, i, 1])])[0]
            split["agent first" if i % 2 == 0 else OPENINGS[opening]] += 1
    return split


@functools.lru_cache(maxsize=1)
def common_positions():
    """The positions that arise when both sides play only optimal moves, from the empty board."""
    return list(evaluate.reached(evaluate.optimal_moves).values())


def policy_measures(net):
    """The raw policy over the 4,520 positions: its optimal-move fraction there and over the common positions, and
    its blind spots: positions where its move worsens the exact outcome (a win to a draw or loss, a draw to a loss)."""
    positions, common = evaluate.tictactoe_positions(), {s.key() for s in common_positions()}
    moves = Agent(net, 0)(positions, [None] * len(positions))
    optimal = [m in evaluate.optimal_moves(s) for s, m in zip(positions, moves)]
    return {"optimal": round(mean(optimal), 3),
            "common_optimal": round(mean([o for s, o in zip(positions, optimal) if s.key() in common]), 3),
            "blind_spots": sum(-evaluate.solve(evaluate.after(s, m)) < evaluate.solve(s)
                               for s, m in zip(positions, moves))}


def spread(values, digits=3):
    """The mean ± the standard deviation over seeds, as text."""
    return f"{statistics.mean(values):.{digits}f} ± {statistics.pstdev(values):.{digits}f}"


WAYS = {"default": {}, "random openings 0.25": dict(random_openings=0.25), "no noise": dict(noise=0.0),
        "temperature on move 1": dict(temp_moves=1), "no noise, temperature on move 1": dict(noise=0.0, temp_moves=1)}


def tictactoe_runs(args):
    """The tic-tac-toe questions' trainings, (way, seed) each: their settings, and the iterations kept."""
    q = args.quick
    seeds, keep = [args.seed + i for i in range(3)], ((1, 2) if q else (5, 10, 20, 40))
    cfgs = {way: lab_settings("tictactoe", iterations=keep[-1], games=10 if q else None,
                              simulations=10 if q else None, steps=10 if q else None, **o)
            for way, o in WAYS.items()}
    return [(way, seed) for way in WAYS for seed in seeds], cfgs, keep


def tictactoe_trainings(args):
    """The tic-tac-toe questions' fifteen trainings, each in one worker process, begun now (see part_questions)."""
    runs, cfgs, keep = tictactoe_runs(args)
    return evaluate.begin(evaluate.train_one, [("alphazero_plus", "tictactoe", cfgs[way], seed, keep)
                                               for way, seed in runs], ahead=True)


def further_tictactoe(args, trainings):
    """The lab's two tic-tac-toe questions, with Part 1's settings and 3 seeds each (trainings: tictactoe_trainings'):
    does starting some self-play games from a random first move cure the edge-opening blind spot, and what do noise
    and temperature do?"""
    ways, n_games = WAYS, 10 if args.quick else 100
    runs, cfgs, keep = tictactoe_runs(args)
    seeds = sorted({seed for _, seed in runs})
    evaluate.progress(f"further: training tic-tac-toe {len(runs)} times ({len(ways)} ways x seeds {seeds}), {keep[-1]} "
                      f"iterations each, side by side")
    snapshots, _ = zip(*evaluate.collect(trainings))
    nets = dict(zip(runs, snapshots))
    evaluate.progress(f"further: measuring {len(runs)} networks: {n_games} games against the perfect player each, "
                      f"policy and search, and the raw policy on every position")
    jobs = {}
    for run in runs:
        for label, sims in (("policy", 0), ("search", cfgs[run[0]]["simulations"])):
            jobs[run + (label,)] = Match("tictactoe", Agent(nets[run][keep[-1]], sims), perfect_player, n_games,
                                         args.seed, opening=0)
    r = run_jobs(jobs)
    final = {run: dict(policy_measures(nets[run][keep[-1]]),
                       **{f"{label}_losses": losses_by_opening(r[run + (label,)], args.seed) for label in ("policy", "search")})
             for run in runs}
    curves = {run: {it: policy_measures(nets[run][it])["optimal"] for it in keep[:-1]} for run in runs}
    for run in runs:
        curves[run][keep[-1]] = final[run]["optimal"]
    total = lambda run, label: sum(final[run][f"{label}_losses"].values())
    by_way = {way: [run for run in runs if run[0] == way] for way in ways}
    n_common = len(common_positions())
    print(f"\n  common positions: the {n_common} positions (with a move to make) that arise when both sides play only "
          f"optimal moves;\n  blind spots: positions among the 4,520 where the raw policy's move worsens the exact outcome")

    # 1. Curing the blind spot
    default = by_way["default"]
    edge_only = all(total(run, label) == final[run][f"{label}_losses"]["edge"] for run in default for label in ("policy", "search"))
    rows = [[f"{way}, seed {run[1]}"] + [f"{final[run][f'{label}_losses']['edge']} of {total(run, label)}"
                                          for label in ("policy", "search")]
            + [final[run]["optimal"], final[run]["common_optimal"], final[run]["blind_spots"]]
            for way in ("default", "random openings 0.25") for run in by_way[way]]
    evaluate.table(f"Going further: curing the blind spot. Part 1 retrained with --random-openings 0.25 against the "
                   f"default, 3 seeds each, iteration {keep[-1]}\n  losses in {n_games} games against the perfect "
                   f"player (those after its edge opening, of all), for the raw policy and search; the raw policy's "
                   f"optimal-move fraction",
                   ["", "policy: edge losses", "search: edge losses", "optimal (4,520)", f"optimal (common {n_common})",
                    "blind spots"], rows)
    edge = {way: sum(final[run][f"{label}_losses"]["edge"] for run in by_way[way] for label in ("policy", "search"))
            for way in ways}
    common = {way: [final[run]["common_optimal"] for run in by_way[way]] for way in ways}
    print(f"  the lab's thing to notice (at iteration {keep[-1]} every loss comes after the edge opening): "
          f"{'holds' if edge_only else 'does not hold'} on our 3 default seeds")
    before, after = edge["default"], edge["random openings 0.25"]
    verdict = ("no edge-opening loss either way" if before == after == 0 else "random openings end them" if after == 0
               else "random openings cut them" if after < before else "random openings do not cut them")
    answer(args, f"edge-opening losses (policy and search, 3 seeds) {before} by default, {after} with random "
          f"openings: {verdict}; optimal in the common positions "
          f"{spread(common['default'])} by default, {spread(common['random openings 0.25'])} with random openings")

    # 2. What noise and temperature do
    rows = [[way] + [spread([curves[run][it] for run in by_way[way]]) for it in keep]
            + [spread([total(run, label) for run in by_way[way]], 1) for label in ("policy", "search")]
            + [spread([final[run]["blind_spots"] for run in by_way[way]], 1)]
            for way in ways if way != "random openings 0.25"]
    evaluate.table(f"Going further: what noise and temperature do. Part 1 retrained four ways, 3 seeds each (mean ± "
                   f"spread)\n  the raw policy's optimal-move fraction by iteration; at iteration {keep[-1]} losses in "
                   f"{n_games} games against the perfect player and blind spots",
                   ["", *[f"optimal @{it}" for it in keep], "policy losses", "search losses", "blind spots"], rows)
    learn = {way: statistics.mean(curves[run][keep[0]] for run in by_way[way]) for way in ways}
    spots = {way: statistics.mean(final[run]["blind_spots"] for run in by_way[way]) for way in ways}
    four = [way for way in ways if way != "random openings 0.25"]
    answer(args, f"fastest to learn (optimal at iteration {keep[0]}): {max(four, key=learn.get)} "
          f"({learn[max(four, key=learn.get)]:.3f}), slowest {min(four, key=learn.get)} ({learn[min(four, key=learn.get)]:.3f});"
          f"\n  fewest blind spots at iteration {keep[-1]}: {min(four, key=spots.get)} ({spots[min(four, key=spots.get)]:.1f}), "
          f"most {max(four, key=spots.get)} ({spots[max(four, key=spots.get)]:.1f})")
    return {"final": {f"{way} seed {seed}": final[way, seed] for way, seed in runs},
            "curves": {f"{way} seed {seed}": curves[way, seed] for way, seed in runs}, "n_common": n_common,
            "edge_only_by_default": edge_only, "edge_losses": edge}


def part_questions(args):
    """The lab's five questions, one table each with an answer line computed from its numbers; the solver's check
    against a public solver first, since three of the answers rest on it."""
    r, part2 = {}, None
    # What needs no earlier question's result begins now, beside the rest, at a lower priority: the last two
    # questions' trainings; the truth of Part 2's networks begins as its training keeps them
    truth, gumbel, tictactoe = evaluate.Measures(), gumbel_trainings(args), tictactoe_trainings(args)
    steps = [("solver", "the exact Connect Four solver against a public perfect solver", further_solver),
             ("truth", "measuring Part 2's networks against the truth", lambda args: further_truth(args, part2, truth)),
             ("conv", "a convolutional network against the MLP", lambda args: further_conv(args, part2, r["truth"])),
             ("gumbel", "PUCT against Gumbel when training with 4 and 8 simulations",
              lambda args: further_gumbel(args, part2, gumbel)),
             ("tictactoe", "tic-tac-toe: curing the blind spot; what noise and temperature do",
              lambda args: further_tictactoe(args, tictactoe))]
    for i, (key, title, fn) in enumerate(steps):
        start = time.time()
        if key == "truth":
            part2 = part_2_results(args, lambda it, net: truth.add(truth_jobs(args, it, net)))
        evaluate.progress(f"further, question {i + 1} of {len(steps)}: {title}")
        r[key] = fn(args)
        r[key]["seconds"] = round(time.time() - start, 1)
        print(f"  ({r[key]['seconds']:.0f} s)")
    r["checks"] = r["solver"].pop("checks")
    return r


# ----------------------------------------------------------------------------------------------------------------
# A strong Connect Four player, trained from zero on two cores: the recipe's learning curve, then its
# final network measured as `--checkpoint` measures one. The bars: on every set of the benchmark, search with 600
# simulations errs no more often than AlphaZero.jl's agent and the raw policy no more often than minimax of depth 5;
# with 200 simulations it scores 0.95 against UCT-400 over 400 games; its training takes at most 6 times as long as
# the lab's Part 2 training (python alphazero.py --game connect4) on the same machine: a ratio, since a 2-core
# machine's speed changes from day to day by up to 2x.

RECIPE_RATIO, DEEP_SIMULATIONS = 6, 200  # the training's limit, against the lab's; the simulations of the bars


def part_recipe(args):
    q = args.quick
    cfg = alphazero_plus.settings("connect4", **(dict(iterations=2, games=10, simulations=10, steps=10) if q else {}))
    last, deep = cfg["iterations"], 20 if q else DEEP_SIMULATIONS
    keep = (1, 2) if q else (10, 20, 40, 80, last)
    sizes = report_sizes(q)  # the curve measured as the last network is, with 100 games against UCT
    n_uct, uct, n_truth, truth_budget = min(sizes.v_uct, 100), sizes.uct, sizes.truth, sizes.truth_budget
    first = not evaluate.part_2_trained(args)
    if first:
        evaluate.progress("recipe: its budget is measured against the lab's Part 2 training (python alphazero.py "
                          "--game connect4), which this run has not trained yet: training that first")
    lab_spent, lab_seconds = evaluate.part_2_training(args)[2::2]
    evaluate.progress("recipe: training Connect Four with alphazero_plus.py's defaults"
                      + (" (--quick: 2 small iterations)" if q else ""))
    positions = read_benchmark()[::40] if q else read_benchmark()

    def curve_jobs(it, net):  # each network searches as the recipe's does (with --solver, say)
        agent = lambda sims: Agent(net, sims, "alphazero_plus", **evaluate.search_options(cfg))
        jobs = {f"{it}:policy: truth": Truth("connect4", agent(0), tactical_player, n_truth, args.seed,
                                             budget=truth_budget),
                f"{it}:search {deep}: truth": Truth("connect4", agent(deep), tactical_player, n_truth, args.seed,
                                                    budget=truth_budget),
                f"{it}:search {deep} v UCT-{uct}": Match("connect4", agent(deep), UCTPlayer(uct), n_uct, args.seed)}
        return dict(jobs, **benchmark_jobs(agent, positions, f"{it}:benchmark ", (0, deep)))
    t0 = time.time()
    measures = evaluate.Measures()  # the curve's measures begin as each network is kept, beside the training
    nets, spent, clock = evaluate.snapshots_of("connect4", cfg, args.seed, args.workers, keep, alphazero_plus,
                                               save_last=recipe_path(args), on_kept=lambda it, net: measures.add(
                                                   curve_jobs(it, net)) if it != last else None)
    t1 = time.time()
    evaluate.progress(f"recipe: the truth along {n_truth} games, {n_uct} games against UCT-{uct} and the benchmark for "
                      f"iterations {keep[:-1]}")
    r = measures.results()
    final = connect4_report(nets[last], f"the recipe's network (iteration {last})", cfg["simulations"], args,
                            "alphazero_plus", **evaluate.search_options(cfg))
    truths, v_uct = ("policy: truth", f"search {deep}: truth"), f"search {deep} v UCT-{uct}"
    errors = ("benchmark errors: policy", f"benchmark errors: search {deep}")
    curve = {it: {truths[0]: r[f"{it}:{truths[0]}"], truths[1]: r[f"{it}:{truths[1]}"],
                  v_uct: round(mean(r[f"{it}:{v_uct}"]), 3),
                  errors[0]: statistics.mean(r[f"{it}:benchmark policy"].values()),
                  errors[1]: statistics.mean(r[f"{it}:benchmark search {deep}"].values())} for it in keep[:-1]}
    bench = final["benchmark"]
    curve[last] = {**{k: final[k] for k in (*truths, v_uct)}, errors[0]: statistics.mean(bench["policy"].values()),
                   errors[1]: statistics.mean(bench[f"search {deep}"].values())}
    rows = [[it, f"{clock[it]:.0f}", c[truths[0]]["fraction"], c[truths[1]]["fraction"], f"{c[v_uct]:.2f}",
             f"{100 * c[errors[0]]:.1f}%", f"{100 * c[errors[1]]:.1f}%"] for it, c in curve.items()]
    evaluate.table(f"The recipe's learning curve: python alphazero_plus.py --game connect4\n  truth along {n_truth} "
                   f"games against the tactical player; UCT-{uct}: {n_uct} games ({sizes.v_uct} at the last "
                   f"iteration), both colours, random two-move openings; the benchmark's error rate, averaged over its "
                   f"six sets",
                   ["iteration", "seconds", *truths, v_uct, *errors], rows)
    trained, limit = t1 - t0, RECIPE_RATIO * lab_seconds
    deepest = list(bench)[-1]  # search with the most simulations: 600 (20 with --quick)
    bars = [evaluate.Check(f"{player} on {s}: errors in %, at most {whose}'s", round(100 * bench[player][s], 1),
                           round(100 * THEIRS[key][s], 1), bench[player][s] <= THEIRS[key][s])
            for player, whose, key in ((deepest, "AlphaZero.jl", "AlphaZero.jl, MCTS-600"),
                                       ("policy", "minimax depth 5", "minimax depth 5")) for s in SETS]
    bars += [evaluate.Check(f"{v_uct} >= 0.95 over {sizes.v_uct} games", final[v_uct], 0.95, final[v_uct] >= 0.95),
             evaluate.Check(f"training <= {RECIPE_RATIO} x the lab's Part 2 training ({lab_seconds:.0f} s)",
                            round(trained), round(limit), trained <= limit)]
    answer(args, f"trained in {trained:.0f} s wall, {trained / lab_seconds:.1f} times the lab's Part 2 training "
          f"({lab_seconds:.0f} s on this machine); the bars met: {', '.join(c.name for c in bars if c.within) or 'none'}; "
          f"not met: {', '.join(c.name for c in bars if not c.within) or 'none'}")
    both = {k: spent[k] + (lab_spent[k] if first else 0) for k in spent}  # the lab's training, if it ran here
    return {"settings": cfg, "curve": curve, "clock": clock, "final": final, "bars": {c.name: c.within for c in bars},
            "checks": bars, "seconds_trained": round(trained, 1), "lab_seconds": round(lab_seconds, 1),
            "time_split": evaluate.time_split(both, t1 - t0 + (lab_seconds if first else 0), time.time() - t1)}


# Pictures (--plots DIR), as evaluate.py draws its own

def plot_questions(r):
    plt, figures = evaluate.pyplot(), {}
    truth = r["truth"]["ours"]
    its = list(truth)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(its, [truth[it]["policy"]["fraction"] for it in its], "o--", color="C0", label="raw policy: the truth")
    ax.plot(its, [truth[it]["search"]["fraction"] for it in its], "o-", color="C0", label="search: the truth")
    ax.plot(its, [truth[it]["search_v_uct"] for it in its], "s-", color="C1", label="search: score against UCT-400")
    ax.set(xlabel="Part 2's iteration", ylabel="fraction of moves keeping the exact outcome; score", ylim=(0, 1.02))
    ax.legend()
    fig.suptitle("Going further: measuring against the truth, beside the score against UCT-400")
    figures["further_truth_v_uct"] = fig

    conv, mlp = r["conv"]["conv"], r["conv"]["mlp"]
    fig, (by_games, by_seconds) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for k, (name, runs) in enumerate((("MLP", mlp), ("conv", conv))):
        its = list(runs)
        by_games.plot(its, [runs[it]["search_truth"] for it in its], "o-", color=f"C{k}", label=name)
        by_seconds.plot([runs[it]["seconds"] for it in its], [runs[it]["search_truth"] for it in its], "o-",
                        color=f"C{k}", label=name)
    by_games.set(xlabel="iteration (games played: 100 each)", ylabel="search: the truth")
    by_seconds.set(xlabel="seconds of training on two cores")
    by_games.legend()
    fig.suptitle("Going further: a convolutional network against the lab's MLP, per game and per second")
    figures["further_conv_v_mlp"] = fig

    ours = r["gumbel"]["ours"]
    measures = ("policy_v_tactical", "policy_truth", "search_v_tactical", "search_truth")
    fig, ax = plt.subplots(figsize=(9, 4.2))
    x = np.arange(len(measures))
    for k, label in enumerate(ours):
        ax.bar(x + (k - 1.5) * 0.2, [ours[label][m] for m in measures], 0.2, label=label, color=f"C{k // 2}",
               alpha=0.55 if label.startswith("puct") else 1.0)
    ax.set_xticks(x, [m.replace("_", " ") for m in measures])
    ax.set(ylabel="score; fraction keeping the exact outcome", ylim=(0, 1))
    ax.legend()
    fig.suptitle("Going further: Connect Four trained with 4 and 8 simulations a move, PUCT (pale) against Gumbel")
    figures["further_puct_v_gumbel"] = fig

    ttt = r["tictactoe"]
    ways = list(dict.fromkeys(key.rsplit(" seed ", 1)[0] for key in ttt["curves"]))  # in the order they ran
    fig, (curves, spots) = plt.subplots(1, 2, figsize=(12, 4.2))
    for k, way in enumerate(ways):
        runs = [c for key, c in ttt["curves"].items() if key.rsplit(" seed ", 1)[0] == way]
        its = list(runs[0])
        curves.plot(its, [statistics.mean(c[it] for c in runs) for it in its], "o-", color=f"C{k}", label=way)
        spots.bar(k, statistics.mean(f["blind_spots"] for key, f in ttt["final"].items()
                                     if key.rsplit(" seed ", 1)[0] == way), color=f"C{k}")
    curves.set(xlabel="iteration", ylabel="raw policy: optimal over the 4,520 positions (mean of 3 seeds)")
    curves.legend(fontsize="small")
    spots.set_xticks(range(len(ways)), ways, rotation=25, ha="right")
    spots.set(ylabel="blind spots at the last iteration (mean of 3 seeds)")
    fig.suptitle("Going further in tic-tac-toe: random openings, and what noise and temperature do")
    fig.tight_layout()
    figures["further_tictactoe"] = fig
    return figures


def plot_recipe(r):
    plt = evaluate.pyplot()
    curve = r["curve"]
    its = [int(it) for it in curve]
    truths = [k for k in curve[its[0]] if k.endswith("truth")]
    versus = next(k for k in curve[its[0]] if " v UCT" in k)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, key in enumerate(truths):
        ax.plot(its, [curve[it][key]["fraction"] for it in its], "o-", color=f"C{k}", label=key)
    ax.plot(its, [curve[it][versus] for it in its], "s-", color="C2", label=versus)
    for it in its:
        ax.annotate(f"{r['clock'][it]:.0f} s", (it, curve[it][versus]), textcoords="offset points", xytext=(0, -14),
                    ha="center", fontsize="small")
    ax.set(xlabel="iteration (seconds of training beside each point)", ylabel="fraction keeping the outcome; score",
           ylim=(0, 1.02))
    ax.legend()
    fig.suptitle("The recipe's learning curve: python alphazero_plus.py --game connect4")
    return {"further_recipe": fig}


def plot_benchmark(name, rates):
    """Each set's error rate: ours ({label: {set: rate}}) as bars, AlphaZero.jl's and minimax's as markers."""
    plt = evaluate.pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    x = np.arange(len(SETS))
    for k, (label, rate) in enumerate(rates.items()):
        ax.bar(x + (k - (len(rates) - 1) / 2) * 0.25, [100 * rate[s] for s in SETS], 0.25, label=f"{label}: ours")
    for marker, (label, rate) in zip("Dv", THEIRS.items()):
        ax.plot(x, [100 * rate[s] for s in SETS], marker, color="k", markerfacecolor="none", ls="", label=f"{label}: theirs")
    ax.set_xticks(x, SETS)
    ax.set(ylabel="errors (% of the set's 200 positions)")
    ax.legend(fontsize="small")
    fig.suptitle(f"{name} on the benchmark: positions from random games, each move valued by a perfect solver")
    return fig


def plot_checkpoint(r):
    return {"further_benchmark_checkpoint": plot_benchmark("the network", r["benchmark"])}


PLOTS = {"questions": plot_questions, "recipe": lambda r: dict(plot_recipe(r), further_benchmark_recipe=plot_benchmark(
    "the recipe's network", r["final"]["benchmark"])), "checkpoint": plot_checkpoint}


def measure_checkpoint(args):
    """A Connect Four network (from alphazero.py or alphazero_plus.py): the truth, UCT-400, the solver player. It
    searches as the settings it records say (alphazero_plus's --solver); without them, as alphazero.py does."""
    net = alphazero_plus.NumpyNet(alphazero_plus.load(args.checkpoint, "connect4"))
    cfg = alphazero_plus.load(args.checkpoint, "connect4", as_net=False).get("settings") or {}
    return connect4_report(net, args.checkpoint, alphazero_plus.settings("connect4")["simulations"], args,
                           "alphazero_plus", **evaluate.search_options(cfg))


def recipe_path(args):
    """Where --part recipe saves its last network (its weights and settings, without Adam's state) beside the JSON:
    further.json -> further_recipe.pt (further_recipe_quick.pt with --quick, so that a toy run never replaces a full
    run's network)."""
    return os.path.splitext(args.json)[0] + ("_recipe_quick.pt" if args.quick else "_recipe.pt")


PARTS = {"questions": ("the five going-further questions", part_questions),
         "recipe": ("a strong Connect Four player", part_recipe)}

if __name__ == "__main__":
    plumbing.run_main(lambda: evaluate.main(PARTS, __doc__, measure_checkpoint, "further.json", PLOTS,
                                            add_arguments=lambda parser: parser.add_argument(
        "--c4-positions", default=C4_POSITIONS, help="Connect Four positions valued by a public solver, to check ours "
        "(default data/c4_positions.txt)"), check=lambda args: read_positions(args.c4_positions)))

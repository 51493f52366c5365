"""Monte Carlo tree search with UCT and random rollouts: Part 1 of the article.

    python mcts.py --game go       # Figure 2: the 7x7 corner, B1 is the vital point
    python mcts.py --game chess    # Figure 3: flat Monte Carlo takes the knight, the tree sees ...Re1#
"""
import argparse
import math
import random
import sys
import time

import games


class Node:
    def __init__(self, state, move=None, parent=None):
        self.move, self.parent, self.children = move, parent, []
        self.untried = state.legal_moves()            # moves with no child node yet
        self.first_moved = not state.first_to_move()  # True if the first player made `move`
        self.n, self.w = 0, 0.0                       # visits, and the sum of results for whoever made `move`


def uct_search(root_state, rollout, n_simulations, c=1.0, seed=0, on_step=None):
    """Grow a tree from root_state, which is left unchanged, by n_simulations of select, expand, simulate and back up.
    Return the root; best_move(root) is the move to play. rollout(state, rng) plays out a copy that it may change,
    using rng, a random.Random, and returns the first player's result in [0, 1]. c weighs exploration against the
    averages. on_step(t, root), if given, runs after each simulation so that a caller can watch the search grow."""
    rng = random.Random(seed)
    root = Node(root_state)
    for t in range(1, n_simulations + 1):
        node, state = root, root_state.copy()

        # 1. Select: while every move of a node has a child, descend to the child with the best UCT score
        while not node.untried and node.children:
            log_n = math.log(node.n)
            node = max(node.children, key=lambda ch: uct_score(ch, log_n, c))
            state.play(node.move)

        # 2. Expand: give one untried move, picked at random, a node of its own
        if node.untried and not state.is_over():
            move = node.untried.pop(rng.randrange(len(node.untried)))
            state.play(move)
            child = Node(state, move, node)
            node.children.append(child)
            node = child

        # 3. Simulate: finish the game with random moves
        result = rollout(state, rng)

        # 4. Back up: every node on the path counts a visit and adds the result to W, as seen by the player
        #    who moved into it. That player is the parent's player to move, so the parent picks the child with
        #    the best Q = W / N for itself. `result` is the first player's, so a node that the second player
        #    moved into adds 1 - result instead.
        while node is not None:
            node.n += 1
            node.w += result if node.first_moved else 1 - result
            node = node.parent

        if on_step:
            on_step(t, root)
    return root


def uct_score(child, log_n, c):
    """UCT's select rule (Kocsis and Szepesvari 2006): Q + c sqrt(ln N(parent) / N), where log_n = ln N(parent) and
    Q = W / N is the child's average for the player who made its move. N is never 0 here, because the search descends
    through a node only once each of its moves has a child, and a child gets its first visit when it is made."""
    return child.w / child.n + c * math.sqrt(log_n / child.n)


def best_move(root):
    """The most visited move: a high average over few visits may be luck."""
    return max(root.children, key=lambda ch: ch.n).move


def flat_monte_carlo(state, rollout, n_per_move, seed=0):
    """Brügmann's flat Monte Carlo (1993): the mean rollout result after each legal move, for the player to move."""
    rng = random.Random(seed)
    scores = {}
    for move in state.legal_moves():
        after = state.copy()
        after.play(move)
        total = sum(rollout(after, rng) for _ in range(n_per_move))
        scores[move] = total / n_per_move if state.first_to_move() else 1 - total / n_per_move
    return scores


# Plumbing: the printing helpers and the command line ------------------------------------------------------------------
import contextlib  # noqa: E402
import signal  # noqa: E402


def track_lead(move, every=100):
    """Make an on_step callback that records the simulation from which `move` stays the most visited, and the move's
    share of the visits every `every` simulations."""
    record = {"lead_from": None, "share": {}}

    def on_step(t, root):
        n_move = sum(ch.n for ch in root.children if ch.move == move)
        leads = all(ch.n < n_move for ch in root.children if ch.move != move)
        record["lead_from"] = (record["lead_from"] or t) if leads else None
        if t % every == 0:
            record["share"][t] = n_move / t
    return on_step, record


def print_visits(state, root, top=6):
    total = sum(ch.n for ch in root.children)
    print(f"  {'move':>6} {'visits':>7} {'win rate':>9}")
    for ch in sorted(root.children, key=lambda ch: -ch.n)[:top]:
        value = f"{ch.w / ch.n:9.2f}" if ch.n else f"{'-':>9}"  # an unvisited move has no value yet
        print(f"  {state.move_name(ch.move):>6} {ch.n:7d} {value}  {'#' * round(40 * ch.n / total)}")


def number(lo, hi, kind=int):
    """An argparse type for a number from lo to hi, whole if kind is int; anything else gets a one-line error."""
    def parse(text):
        with contextlib.suppress(ValueError):
            if lo <= kind(text) <= hi:
                return kind(text)
        raise argparse.ArgumentTypeError(f"must be a {'whole ' * (kind is int)}number from {lo} to {hi}, not {text!r}")
    return parse


if __name__ == "__main__":
    for stop in (signal.SIGPIPE, signal.SIGINT):  # `| head` cuts the output without a traceback, and Ctrl-C stops
        signal.signal(stop, signal.SIG_DFL)  # the run at once, because a search has nothing to save
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # a one-line error and exit status 1
    parser.add_argument("--game", choices=list(games.GAMES), default="go", help="which position to search (default go)")
    parser.add_argument("--simulations", type=number(1, 10**7), default=5000, help="simulations (default 5000)")
    parser.add_argument("--seed", type=number(0, 2**32 - 1), default=0, help="the search's seed (default 0)")
    parser.add_argument("--c", type=number(0, 100, float), default=None,
                        help="UCT exploration constant, 0 to 100 (default 0.7 in chess, else 1.0)")
    parser.add_argument("--flat", type=number(1, 10**6),
                        help="chess only: flat Monte Carlo rollouts after each move (default 400)")
    args = parser.parse_args()
    if args.flat and args.game != "chess":
        parser.error("--flat is for --game chess: only there does flat Monte Carlo run beside UCT")
    c = args.c if args.c is not None else 0.7 if args.game == "chess" else 1.0
    state, rollout, b1 = games.GAMES[args.game](), games.ROLLOUTS[args.game], games.go_point("B1")
    print(f"{state}\n{dict(go='Black', chess='White').get(args.game, 'X')} to move")  # the first player is to move
    on_step, record = track_lead(b1) if args.game == "go" else (None, None)
    start = time.process_time()
    root = uct_search(state, rollout, args.simulations, c=c, seed=args.seed, on_step=on_step)
    seconds, n = time.process_time() - start, f"{args.simulations} simulation" + "s" * (args.simulations > 1)
    print(f"\nUCT, {n}, c = {c}, seed {args.seed}: {seconds:.1f} CPU-seconds")
    print_visits(state, root)
    print(f"best move: {state.move_name(best_move(root))}")
    if args.game == "go":
        share, lead = record["share"], record["lead_from"]  # under 100 simulations, print only the final share
        spark = "".join("▁▂▃▄▅▆▇█"[min(7, int(v * 8))] for v in share.values())
        shares = "  ".join(f"{t}: {share[t]:.0%}" for t in (100, 200, 500, 1000, 2000, 5000) if t in share)
        last = sum(ch.n for ch in root.children if ch.move == b1) / args.simulations
        print(f"\nB1's share of the visits, every 100 simulations: {spark}\n  {shares}" if share else
              f"\nB1's share of the visits: {last:.0%}")
        print(f"B1 is the most visited move for good from simulation {lead}" if lead is not None else
              f"B1 is not the most visited move at the end ({n})")
    if args.game == "chess":
        n_flat = args.flat or 400
        flat = flat_monte_carlo(state, rollout, n_flat, seed=args.seed)
        visits = {ch.move: ch.n for ch in root.children}
        print(f"\nFlat Monte Carlo ({n_flat} rollouts a move) beside UCT's visits; '!' = allows ...Re1# at once")
        print(f"  {'rank':>4} {'move':>6} {'flat':>6} {'visits':>7}")
        for rank, move in enumerate(sorted(flat, key=lambda m: -flat[m]), 1):
            trap = "  <- Qxd7, the trap" if state.move_name(move) == "Qxd7" else ""
            mate = "!" if games.allows_mate_in_one(state, move) else " "
            print(f"  {rank:4d} {state.move_name(move):>6}{mate}{flat[move]:6.3f} {visits.get(move, 0):7d}{trap}")

"""PUCT, Part 2 of the article: mcts.py with a network's priors in the select step and its value in place of the
rollout. The "network" here is a stand-in: uniform priors, or priors leaning on one move, and one rollout as its value.

    python puct.py              # uniform priors against priors leaning 0.5 on B1, 1,000 simulations each
    python puct.py --seeds 4    # the same for seeds 0..3
"""
import argparse
import math
import random
import sys
import time

import games


class Node:
    def __init__(self, first_moved, move=None, parent=None, prior=1.0):
        self.move, self.parent, self.children = move, parent, []
        self.prior = prior                            # P(s,a): the network's guess that `move` is good
        self.first_moved = first_moved                # True if the first player made `move`
        self.n, self.w = 0, 0.0                       # visits, and the sum of results for whoever made `move`


def puct_search(root_state, network, n_simulations, c_puct=1.5, on_step=None):
    """Grow a tree from root_state, which is left unchanged, by n_simulations of select, expand, evaluate and back up.
    Return the root; best_move(root) is the move to play and visit_policy(root) the training label. network(state)
    returns ({legal move: prior}, the first player's result in [0, 1]), or no priors and the result for a finished
    game. c_puct weighs the priors against the averages. on_step(t, root), if given, runs after each simulation."""
    root = Node(not root_state.first_to_move())
    for t in range(1, n_simulations + 1):
        node, state = root, root_state.copy()

        # 1. Select: while a node has children, descend to the child with the best PUCT score
        while node.children:
            sqrt_n = math.sqrt(node.n)
            node = max(node.children, key=lambda ch: puct_score(ch, sqrt_n, c_puct))
            state.play(node.move)

        # 2. Expand: one network call gives every legal move a child with its prior
        priors, result = network(state)
        node.children = [Node(state.first_to_move(), move, node, p)
                         for move, p in priors.items()]

        # 3. Evaluate: the network call above also gave the value (the stand-in's is one rollout), so nothing is left

        # 4. Back up: every node on the path counts a visit and adds the result to W, as seen by the player
        #    who moved into it. That player is the parent's player to move, so the parent picks the child with
        #    the best Q = W / N for itself. `result` is the first player's, so a node that the second player
        #    moved into adds 1 - result instead. An unvisited child counts Q = 0, which is a loss
        #    on this [0, 1] scale (and a draw on alphazero.py's [-1, 1]).
        while node is not None:
            node.n += 1
            node.w += result if node.first_moved else 1 - result
            node = node.parent

        if on_step:
            on_step(t, root)
    return root


def puct_score(child, sqrt_n, c_puct):
    """PUCT's select rule: Rosin's (2011) formula in the form AlphaGo Zero and AlphaZero use (Silver et al. 2017, 2018),
    Q + c_puct P sqrt(N(parent)) / (1 + N). Here sqrt_n = sqrt(N(parent)), P is the child's prior, and Q = W / N is
    the child's average for the player who made its move, or 0 for an unvisited child (a loss on this [0, 1] scale)."""
    return (child.w / child.n if child.n else 0.0) + c_puct * child.prior * sqrt_n / (1 + child.n)


def best_move(root):
    """The most visited move: a high average over few visits may be luck."""
    return max(root.children, key=lambda ch: ch.n).move


def visit_policy(root, tau=1.0):
    """The training label pi(a) = N(a)^(1/tau) / sum_b N(b)^(1/tau). tau = 0 puts all of it on the most visited move."""
    if tau == 0:
        return {ch.move: float(ch.move == best_move(root)) for ch in root.children}
    weights = {ch.move: ch.n ** (1 / tau) for ch in root.children}
    total = sum(weights.values())
    return {move: x / total for move, x in weights.items()}


def rollout_network(rollout, hint=None, weight=0.5, seed=0):
    """A stand-in for the policy-value network. Its priors are uniform, except that `weight` of the mass moves onto
    `hint` where it is legal, and its value is one rollout. A finished game gets no priors and its exact result."""
    rng = random.Random(seed)

    def network(state):
        if state.is_over():
            return {}, state.result()
        moves = state.legal_moves()
        rng.shuffle(moves)  # with equal priors, chance rather than board order decides which move is tried first
        lean = weight if hint in moves else 0.0
        priors = {move: (1 - lean) / len(moves) + (lean if move == hint else 0.0) for move in moves}
        return priors, rollout(state, rng)
    return network


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
    parser.add_argument("--simulations", type=number(2, 10**7), default=1000,
                        help="simulations per search; the first expands the root (default 1000)")
    parser.add_argument("--seed", type=number(0, 2**32 - 1), default=0, help="the rollouts' seed (default 0)")
    parser.add_argument("--seeds", type=number(1, 1000), default=1, help="seeds SEED .. SEED+SEEDS-1 (default 1)")
    parser.add_argument("--c-puct", type=number(0, 100, float), default=1.5,
                        help="PUCT exploration constant, 0 to 100 (default 1.5)")
    parser.add_argument("--weight", type=number(0, 1, float), default=0.5,
                        help="prior mass moved onto B1 when leaning, 0 to 1 (default 0.5)")
    args = parser.parse_args()
    state, b1 = games.go_corner(), games.go_point("B1")
    print(f"{state}\n\nPUCT, {args.simulations} simulations, c_puct = {args.c_puct}; value = one random rollout")
    print(f"  {'seed':>4}  {'priors':<18} {'B1 visits':>9} {'B1 win rate':>11} {'pi(B1)':>7} {'B1 leads from':>14} {'CPU s':>6}")
    for seed in range(args.seed, args.seed + args.seeds):
        for label, weight in (("uniform", 0.0), (f"leaning {args.weight} on B1", args.weight)):
            network = rollout_network(games.go_rollout, hint=b1, weight=weight, seed=seed)
            on_step, record = track_lead(b1)
            start = time.process_time()
            root = puct_search(state, network, args.simulations, c_puct=args.c_puct, on_step=on_step)
            seconds, lead = time.process_time() - start, record["lead_from"]
            node = next(ch for ch in root.children if ch.move == b1)
            print(f"  {seed:4d}  {label:<18} {node.n:9d} {node.w / max(node.n, 1):11.2f} {visit_policy(root)[b1]:7.2f} "
                  f"{'-' if lead is None else lead:>14} {seconds:6.1f}")
            if args.seeds == 1:
                print_visits(state, root)

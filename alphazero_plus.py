"""AlphaZero, going further: alphazero.py plus twelve changes that the lab's questions led to. Each is a flag; --help
says what it does and FURTHER.md says why: --q-weight, --random-openings, --random-moves, --lr-final, --lr-cycle, --net
conv, --pipeline, --solver, --full-fraction, --target improved, --average and --window-start. Its Connect Four
defaults are the strong player's recipe; its tic-tac-toe defaults are the lab's plus a quarter of random openings,
which left fewer blind spots at each of 3 seeds at no cost elsewhere.

    python alphazero_plus.py --game connect4                  # the strong player (see the README), connect4_plus.pt
    python alphazero_plus.py --game connect4 --play           # then play against it in the terminal
    python alphazero_plus.py --game connect4 --play --checkpoint data/connect4_plus.pt   # the one shipped
"""
import copy
import io
import math
import sys
import time
from collections import namedtuple

import numpy as np
import torch

import games


# Each setting is also a command-line flag. A number has a default and a range (low to high); a word has its
# choices; the meaning is the flag's --help.
Setting = namedtuple("Setting", "default low high meaning choices", defaults=(None, None, "", ()))


ALGORITHM = "alphazero_plus"  # saved in checkpoints, so --resume refuses one that another script trained
GAMES = {"tictactoe": games.TicTacToe, "connect4": games.ConnectFour}  # --game module:Class adds a game of your own
SETTINGS = {  # the defaults are the lab's, with each change turned off
    "iterations": Setting(40, 1, 10_000, "self-play iterations"),
    "games": Setting(100, 1, 100_000, "self-play games per iteration"),
    "simulations": Setting(100, 0, 100_000, "simulations per move; 0, allowed only with --play, plays the raw policy "
                           "(with --solver, a win in one first)"),
    "temp_moves": Setting(4, 0, 1_000, "moves sampled by visit counts at the start of a game, then the most visited"),
    "hidden": Setting(128, 1, 4_096, "units in each of the network's two hidden layers"),
    "steps": Setting(200, 1, 100_000, "Adam steps per iteration"),
    "batch": Setting(256, 1, 65_536, "minibatch size"),
    "window": Setting(20, 1, 10_000, "train on the positions of the last N iterations"),
    "lr": Setting(1e-3, 1e-6, 1.0, "Adam step size"),
    "lr_final": Setting(None, 1e-6, 1.0, "Adam step size at the last iteration, reached by a geometric fall from --lr"),
    "weight_decay": Setting(1e-4, 0.0, 1.0, "Adam weight decay"),
    "c_puct": Setting(1.25, 0.0, 100.0, "PUCT exploration constant c"),
    "alpha": Setting(1.0, 1e-3, 100.0, "Dirichlet noise concentration"),
    "noise": Setting(0.25, 0.0, 1.0, "weight of the Dirichlet noise in the root's priors in self-play"),
    "mirror": Setting(0, 0, 1, "1: add the left-right mirror image of every position to the training data"),
    "reuse_tree": Setting(0, 0, 1, "1: keep the chosen move's subtree for the next search"),
    "net": Setting("mlp", meaning="mlp: the lab's network; conv: two 3x3 convolutions (32 channels) before it",
                   choices=("mlp", "conv")),
    "random_openings": Setting(0.0, 0.0, 1.0, "fraction of self-play games that start with random, unsearched moves"),
    "opening_moves": Setting(1, 1, 1_000, "a random opening plays k uniformly random moves, k uniform from 1 to N"),
    "q_weight": Setting(0.0, 0.0, 1.0, "weight of the search's value of a position in its value target (0: none)"),
    "pipeline": Setting(0, 0, 1, "1: games are played while the network trains, by the network one iteration older"),
    "solver": Setting(0, 0, 2, "1: MCTS-solver, which scores game ends exactly and passes proven values up the tree; "
                      "2: as 1, and a move that lets the opponent win at once counts as lost"),
    "full_fraction": Setting(1.0, 0.01, 1.0, "fraction of self-play moves searched in full and kept (playout cap)"),
    "fast_simulations": Setting(8, 1, 100_000, "simulations of the other moves' cheap searches, which are not kept"),
    "random_moves": Setting(0.0, 0.0, 1.0, "share of self-play moves made at random (their positions searched, kept)"),
    "target": Setting("visits", meaning="the policy's label: the root's visits, or softmax(log P + sigma(Q))",
                      choices=("visits", "improved")),
    "average": Setting(0, 0, 1, "1: a position met more than once in the window is one example, its pi and z averaged"),
    "window_start": Setting(None, 1, 10_000, "a window that grows: max(N, half the iterations played) to --window"),
    "lr_cycle": Setting(0, 0, 1, "1: each iteration's step sizes rise from a tenth of a peak and fall back, same mean")}
GAME_SETTINGS = {  # each game's defaults: the lab's, plus the going-further changes that beat them
    "tictactoe": dict(random_openings=0.25),
    "connect4": dict(hidden=384, iterations=135, games=200, simulations=35, temp_moves=8, steps=800, mirror=1,
                     window=30, window_start=4, lr_final=1e-4, q_weight=1.0, random_openings=0.5, opening_moves=30,
                     random_moves=0.2, solver=1, reuse_tree=1, pipeline=1)}


class Node:
    """A position in the tree, reached by playing `move`; N and W count for the player who made `move`. There is no
    parent link: the back-up walks the path that selection took, so a tree has no cycles and is freed once dropped."""
    __slots__ = ("move", "children", "prior", "network_prior", "n", "w", "proven")  # self-play makes millions of nodes

    def __init__(self, move=None, prior=1.0):
        self.move, self.children = move, []
        self.prior = prior                            # P(s,a): the network's guess that `move` is good
        self.network_prior = prior                    # P(s,a) free of the noise that add_dirichlet mixes into
                                                      # `prior`, for best_move to break ties in the visits
        self.n, self.w = 0, 0.0                       # visits, and the sum of values for whoever made `move`
        self.proven = None                            # with --solver, the exact value for whoever made `move`

    def q(self):
        """The value for whoever made `move`: the proven value if known, else W / N, or 0 before any visit."""
        return self.proven if self.proven is not None else self.w / self.n if self.n else 0.0


def search(root_states, net, n_simulations, c_puct=1.25, noise=None, roots=None, cache=None, solver=False):
    """Run puct_search on many games side by side and return their roots. As in the lab, the network expands each
    root first (see expand_roots) and n_simulations follow; puct.py counts that expansion as its first simulation. Each
    simulation walks every game's tree down to a leaf, and one network call scores all the leaves for the cost of one.
    `roots` holds trees kept from the last move (--reuse-tree) or None; `cache` keeps network outputs (see predict).
    With `solver` (MCTS-solver), a finished game has an exact value, and exact values climb the tree by minimax (see
    prove). A proven node acts as a leaf with an exact value, and a game whose root is proven stops searching."""
    roots = expand_roots(root_states, net, roots, noise, cache, solver)
    for t in range(1, n_simulations + 1):
        leaves = []
        for root, root_state in zip(roots, root_states):
            if root.proven is not None:
                continue
            node, state, path = root, root_state.copy(), [root]

            # 1. Select: while a node has children (and is not proven), descend to the child with the best PUCT score
            while node.children and node.proven is None:
                sqrt_n = math.sqrt(node.n)
                node = max(node.children, key=lambda ch: puct_score(ch, sqrt_n, c_puct))
                state.play(node.move)
                path.append(node)
            leaves.append((path, state))
        if not leaves:
            break

        # 2. Expand: one network call gives every legal move a child with its prior (a proven leaf needs no call)
        known = [path[-1].proven is not None for path, _ in leaves]
        outputs = iter(predict(net, [state for (_, state), k in zip(leaves, known) if not k], cache))
        for (path, state), k in zip(leaves, known):
            node = path[-1]
            if not k:
                priors, value = next(outputs)
                node.children = [Node(move, p)
                                 for move, p in priors.items()]
                if solver:
                    mark_ends(node, state, value, solver)

            # 3. Evaluate: the same call scored the position in [-1, 1] for the player to move there, not in [0, 1]
            #    for the first player, so one network plays both sides and a value just flips sign between them
            if k:
                value = -node.proven

            # 4. Back up: each node on the path counts a visit and adds the leaf's value to W, summed for
            #    the player who moved into the node. That player is to move at the parent, so the parent picks the
            #    child with the best Q = W / N for itself. `value` starts out for the player to move at the leaf, who
            #    did not move into it, so its sign flips before the first increment and again at each step up.
            #    An unvisited child counts Q = 0, a draw on this [-1, 1] scale; a proven child counts its exact value.
            for depth in reversed(range(len(path))):  # walk back along the path, not by parent links
                node = path[depth]
                value = -value  # now for the player who moved into this node
                if node.proven is not None:
                    value = node.proven  # a proven node passes up its exact value instead of the value from below
                node.n += 1
                node.w += value
                if node.proven is not None and depth and path[depth - 1].proven is None:
                    path[depth - 1].proven = prove(path[depth - 1])  # (Winands et al. 2008, MCTS-solver)
    return roots


def puct_score(child, sqrt_n, c_puct):
    """The PUCT select score, Rosin's (2011) formula as AlphaGo Zero and AlphaZero use it (Silver et al. 2017, 2018):
    Q + c_puct P sqrt(N(parent)) / (1 + N). Here sqrt_n = sqrt(N(parent)), P is the child's prior, and Q is its q():
    W / N for the player who made its move, 0 (a draw) if unvisited, or the exact value once proven (--solver)."""
    return child.q() + c_puct * child.prior * sqrt_n / (1 + child.n)


def mark_ends(node, state, value, solver=1):
    """MCTS-solver at an expansion. A finished game's value is exact, and so is that of each move that ends the game at
    once (a win for its mover, or a draw), whatever its prior; together these may prove the node. Solver 2 also marks
    as lost any move that lets the opponent win at once, like Pons' solver, which keeps to non-losing moves."""
    if not node.children:
        node.proven = -value  # the game is over, so value is its exact outcome for the player to move
        return
    for ch in node.children:
        after = state.copy()
        after.play(ch.move)
        if after.is_over():
            ch.proven = -outcome(after)  # for whoever made the move: 1 for a win, 0 for a draw
        elif solver > 1 and any(outcome(end) == -1 for end in endings(after)):  # the opponent can win at once
            ch.proven = -1
    node.proven = prove(node)


def endings(state):
    """The finished games that one move of `state` reaches."""
    for move in state.legal_moves():
        after = state.copy()
        after.play(move)
        if after.is_over():
            yield after


def prove(node):
    """MCTS-solver's rule (Winands et al. 2008). The value is for whoever moved into `node`, and its children are the
    opponent's replies. If any reply is a proven win for the opponent, return -1 (a loss); if all are proven, return
    minus the best of them (exact minimax); otherwise return None, as the value is not yet known."""
    values = [ch.proven for ch in node.children]
    if 1 in values:
        return -1
    return None if None in values else -max(values)


def expand_roots(root_states, net, roots=None, noise=None, cache=None, solver=False):
    """Return the search's roots, expanded by the network. A None becomes a new root, and a tree kept from the last
    move is used as it is. A new root counts its expansion as its first visit, so that sqrt(N(root)) equals the lab's
    sqrt(sum_b N(b) + 1). In self-play, noise = (rng, alpha, weight) mixes Dirichlet noise into every root's priors."""
    roots = roots or [None] * len(root_states)  # None means no tree was kept from the last move
    roots = [Node() if root is None else root for root in roots]  # a new root where no tree was kept
    new = [(root, s) for root, s in zip(roots, root_states) if not root.children]
    for (root, state), (priors, value) in zip(new, predict(net, [s for _, s in new], cache)):
        root.children = [Node(move, p) for move, p in priors.items()]
        root.n, root.w = 1, -value  # W is for whoever moved into the root, as in the back-up
        if solver:
            mark_ends(root, state, value, solver)
    if noise is not None:
        for root in roots:
            add_dirichlet(root, *noise)
    return roots


def best_move(root):
    """Return the most visited move, since a high average over few visits may be luck. A tie goes to the higher
    network prior, as in the lab's code: in self-play the root's noise is there to explore, not to pick among equals.
    With --solver, a proven win comes first, and a proven loss is chosen only when every move loses."""
    return max(root.children, key=lambda ch: (ch.proven == 1, ch.proven != -1, ch.n, ch.network_prior)).move


def visit_policy(root, tau=1.0):
    """The training label pi(a) = N(a)^(1/tau) / sum_b N(b)^(1/tau); tau = 0 puts everything on best_move. So
    does a proven root (--solver), because its search stopped when the proof came and its visits say little."""
    if tau == 0 or root.proven is not None:
        return {ch.move: float(ch.move == best_move(root)) for ch in root.children}
    weights = {ch.move: ch.n ** (1 / tau) for ch in root.children}
    total = sum(weights.values())
    return {move: x / total for move, x in weights.items()}


def add_dirichlet(root, rng, alpha=1.0, weight=0.25):
    """Mix noise into the root's priors in self-play: P = (1 - weight) p + weight eta, with eta ~ Dir(alpha) over the
    legal moves, so that every move gets tried now and then, even one the network has learned to ignore."""
    eta = rng.dirichlet([alpha] * len(root.children)).tolist()
    for ch, e in zip(root.children, eta):
        ch.prior = (1 - weight) * ch.prior + weight * e


class Net(torch.nn.Module):
    """The policy-value network. It maps a position's encoding (n_inputs numbers, seen by the player to move) through
    two hidden layers of `hidden` units to a logit for each of n_actions moves and a value in [-1, 1]. With `board`,
    the board's (rows, columns) for --net conv, two 3x3 convolutions with 32 channels first read its 2 planes."""

    def __init__(self, n_inputs, n_actions, hidden, board=None):
        super().__init__()
        self.hidden, self.board, self.kind = hidden, board, "conv" if board else "mlp"
        self.conv = torch.nn.Identity()  # no weights, matching an mlp checkpoint, which has none here
        if board:
            self.conv = torch.nn.Sequential(torch.nn.Unflatten(1, (2, *board)),
                                            torch.nn.Conv2d(2, 32, 3, padding=1), torch.nn.ReLU(),
                                            torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten())
            n_inputs = 32 * board[0] * board[1]
        self.body = torch.nn.Sequential(torch.nn.Linear(n_inputs, hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(hidden, hidden), torch.nn.ReLU())
        self.policy, self.value = torch.nn.Linear(hidden, n_actions), torch.nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(self.conv(x))
        return self.policy(h), torch.tanh(self.value(h)).squeeze(-1)


def conv3x3(x, weight, bias):
    """A 3x3 convolution with padding 1 in numpy, for x of shape (batch, in, rows, cols) and weight (out, in, 3, 3).
    Stacking nine shifted copies of the padded input turns it into one matrix product."""
    b, _, rows, cols = x.shape
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    patches = np.stack([p[:, :, i:i + rows, j:j + cols] for i in range(3) for j in range(3)], axis=2)
    out = patches.transpose(0, 3, 4, 1, 2).reshape(b * rows * cols, -1) @ weight.reshape(len(weight), -1).T + bias
    return out.reshape(b, rows, cols, -1).transpose(0, 3, 1, 2)


class NumpyNet:
    """The same network in numpy, for the search: torch adds tens of microseconds of overhead to every call."""

    def __init__(self, net):
        self.board = net.board
        self.convs = [(layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy())
                      for layer in net.conv.children() if isinstance(layer, torch.nn.Conv2d)]
        w = [(layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy())
             for layer in (net.body[0], net.body[2], net.policy, net.value)]
        (self.w1, self.b1), (self.w2, self.b2), (self.wp, self.bp), (self.wv, self.bv) = w

    def __call__(self, x):
        if self.convs:
            x = x.reshape(len(x), 2, *self.board)
            for weight, bias in self.convs:
                x = np.maximum(conv3x3(x, weight, bias), 0)
            x = x.reshape(len(x), -1)
        h = np.maximum(x @ self.w1 + self.b1, 0)
        h = np.maximum(h @ self.w2 + self.b2, 0)
        return h @ self.wp + self.bp, np.tanh(h @ self.wv + self.bv)[:, 0]


def predict(net, states, cache=None):
    """Run the network on a batch of states and return ({legal move: prior}, value for the player to move) for each.
    The priors are a softmax over the legal moves only; a finished game gets no priors and its exact value. `cache`
    maps a position's key to this network's output, so positions seen before cost nothing (in self-play with the
    recipe's settings, about one in five)."""
    net = NumpyNet(net) if isinstance(net, torch.nn.Module) else net  # a torch Net (from load) is copied for this call
    cache, keys = {} if cache is None else cache, [s.key() for s in states]
    new = {key: s for key, s in zip(keys, states) if key not in cache}  # each position only once, even if repeated
    moves = {key: s.legal_moves() for key, s in new.items()}
    live = [key for key in new if moves[key]]
    cache.update({key: ({}, outcome(new[key])) for key in new if not moves[key]})  # finished games get exact values
    if live:
        logits, values = net(type(new[live[0]]).encode_many([new[key] for key in live]))
        rows = [row for row, key in enumerate(live) for _ in moves[key]]
        columns = [m for key in live for m in moves[key]]
        masked = np.full(logits.shape, -np.inf)  # illegal moves get probability 0
        masked[rows, columns] = logits[rows, columns]
        e = np.exp(masked - masked.max(axis=1, keepdims=True))
        priors = (e / e.sum(axis=1, keepdims=True)).tolist()
        for key, p, value in zip(live, priors, values.tolist()):
            cache[key] = ({m: p[m] for m in moves[key]}, value)
    return [cache[key] for key in keys]


def outcome(state):
    """A finished game's value for the player to move: 1 for a win, -1 for a loss, 0 for a draw."""
    r = 2 * state.result() - 1
    return r if state.first_to_move() else -r


def choose_move(state, net, n_simulations, solver=False):
    """Return the agent's move in `state`: the most visited after n_simulations of search without noise, or with 0
    simulations the raw policy's most likely legal move. `net` is a Net (from load) or a NumpyNet. With the solver,
    a win in one move comes first, since expanding the root proves it."""
    return best_move(search([state], net, n_simulations, solver=solver)[0])


def self_play(game, net, n_games, cfg, rng):
    """Play n_games of `game` (a class whose constructor gives the start position) side by side, with both sides
    searching with the settings cfg. Return the examples (x, pi, z): each position seen by the player to move,
    its visit distribution (the improved policy with --target improved), and the game's outcome for that player.
    --q-weight w mixes z with the search's value q as (1 - w) z + w q, to be less noisy. With --full-fraction f
    (KataGo's playout cap randomisation), a move gets the full search with noise and becomes an example with probability
    f; the rest get a cheap, noiseless search of fast_simulations and are not kept. With --random-moves p, a move is
    random with probability p, yet its position is searched and kept, so the opponent meets what random play reaches."""
    states = [game() for _ in range(n_games)]
    random_openings, opening_moves, full_fraction = cfg["random_openings"], cfg["opening_moves"], cfg["full_fraction"]
    for s in states:  # with --random-openings, this fraction of the games begins with k uniformly random moves
        if random_openings and rng.random() < random_openings:  # they make no examples; the positions they reach do
            for _ in range(rng.integers(1, opening_moves + 1) if opening_moves > 1 else 1):
                move = rng.choice(s.legal_moves())
                after = s.copy()
                after.play(move)
                if after.is_over():  # stop short of the end, so every game has a position to search
                    break
                s.play(move)
    roots = [None] * n_games
    cache = {}  # this network's outputs by position, shared by every game and move in this call
    history = [[] for _ in range(n_games)]
    played = [0] * n_games  # how many moves each game has played since its opening
    while live := [i for i in range(n_games) if not states[i].is_over()]:  # the games still going
        full = {i for i in live if full_fraction >= 1 or rng.random() < full_fraction}
        found = {}
        for group, sims, root_noise in (([i for i in live if i in full], cfg["simulations"],
                                         (rng, cfg["alpha"], cfg["noise"])),
                                        ([i for i in live if i not in full], cfg["fast_simulations"], None)):
            if group:
                found.update(zip(group, search([states[i] for i in group], net, sims, cfg["c_puct"], noise=root_noise,
                                               roots=[roots[i] for i in group], cache=cache, solver=cfg["solver"])))
        for i in live:
            root = found[i]
            pi = np.zeros(game.n_actions, dtype=np.float32)  # each move's share of the visits, which is the label
            for move, p in visit_policy(root).items():  # with --target improved, improved_target gives the label
                pi[move] = p
            if i in full:
                label = pi
                if cfg["target"] == "improved":  # the root's priors and value, before the noise, are in the cache
                    label = np.zeros_like(pi)
                    for move, p in improved_target(root, *cache[states[i].key()]).items():
                        label[move] = p
                history[i].append((states[i].encode(), label, states[i].first_to_move(), -root.q()))
            # to explore, the first temp_moves moves are sampled by visit count; later ones are the most visited
            played[i] += 1
            move = rng.choice(len(pi), p=pi / pi.sum()) if played[i] <= cfg["temp_moves"] else best_move(root)
            if cfg["random_moves"] and rng.random() < cfg["random_moves"]:
                move = rng.choice(states[i].legal_moves())
            states[i].play(move)
            roots[i] = None  # the next search grows a new tree...
            if cfg["reuse_tree"]:  # ...or, with --reuse-tree, goes on from the chosen move's subtree and its visits
                for child in root.children:
                    if child.move == move and child.children:  # a child never expanded has nothing to keep
                        roots[i] = child  # the rest of the old tree is freed
    x, pis, zs = [], [], []
    for state, positions in zip(states, history):
        result = 2 * state.result() - 1  # the first player's result: 1 for a win, -1 for a loss, 0 for a draw
        for encoding, pi, first, q in positions:
            x.append(encoding)
            pis.append(pi)
            z = result if first else -result  # z is that result for the player who was to move there
            zs.append((1 - cfg["q_weight"]) * z + cfg["q_weight"] * q)  # --q-weight mixes in the search's value
    return (np.array(x, np.float32).reshape(-1, game.encoding_size),  # the right shape even when no position was kept
            np.array(pis, np.float32).reshape(-1, game.n_actions), np.array(zs, np.float32))


MAXVISIT_INIT, VALUE_SCALE, EPSILON = 50.0, 0.1, 1e-8  # sigma's constants, as named and valued in mctx (see gumbel.py)


def root_completed_q(root, priors, value):
    """gumbel.py's completed_q at a self-play root, using the network's `priors` ({move: P}, before the noise) and
    `value` rather than the node's. A visited (or proven) move keeps its q(); an unvisited one gets the mixed value,
    which mixes `value` with the visited moves' mean q() weighted by `priors`."""
    seen = [ch for ch in root.children if ch.n or ch.proven is not None]
    n_seen = sum(ch.n for ch in seen)
    mixed = value
    if seen:  # (EPSILON below: a move proven at its expansion may have a prior of 0)
        weighted = sum(priors[ch.move] * ch.q() for ch in seen) / max(sum(priors[ch.move] for ch in seen), EPSILON)
        mixed = (value + n_seen * weighted) / (1 + n_seen)
    return [ch.q() if ch in seen else mixed for ch in root.children]


def root_sigma_q(root, priors, value):
    """gumbel.py's sigma_q applied to root_completed_q: rescaled to [0, 1] over the moves (a spread below EPSILON
    counts as EPSILON), then multiplied by (MAXVISIT_INIT + max N) * VALUE_SCALE."""
    q = root_completed_q(root, priors, value)
    lo, hi = min(q), max(q)
    scale = (MAXVISIT_INIT + max(ch.n for ch in root.children)) * VALUE_SCALE
    return [scale * (x - lo) / max(hi - lo, EPSILON) for x in q]


def improved_target(root, priors, value):
    """The label for --target improved: gumbel.py's improved_policy, softmax(log P + sigma(completed Q)) over the
    root's moves, from the given `priors` and `value` (see root_completed_q), with log P floored at the smallest normal
    float. It improves on the policy at any number of visits (Danihelka et al. 2022)."""
    if root.proven is not None:  # its search stopped at the proof, so use best_move
        return visit_policy(root)
    z = [math.log(max(priors[ch.move], sys.float_info.min)) + s
         for ch, s in zip(root.children, root_sigma_q(root, priors, value))]
    e = np.exp(np.array(z) - max(z))
    return dict(zip((ch.move for ch in root.children), (e / e.sum()).tolist()))


def average_positions(x, pi, z):
    """With --average 1 (AlphaZero.jl's use_position_averaging), each distinct position in the window becomes one
    example whose pi and z are the means over its occurrences. An opening met in every game then counts once, with
    its full statistics."""
    x, index, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    order = np.argsort(index.ravel(), kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pi = np.add.reduceat(pi[order], starts) / counts[:, None]
    z = np.add.reduceat(z[order], starts) / counts
    return x, pi.astype(np.float32), z.astype(np.float32)


def fit(net, optimizer, data, steps, batch, rng, cycle=False):
    """Run Adam steps on minibatches of the replay window, minimising (z - v)^2 - pi . log p; return the mean losses.
    With cycle (--lr-cycle 1), each step size is the optimizer's rate times one_cycle's factor."""
    x, pi, z = (torch.from_numpy(np.concatenate(part)) for part in zip(*data))
    if not len(z):  # with --full-fraction, no position may be kept yet
        return [math.nan, math.nan]
    losses, (group,) = [], optimizer.param_groups  # a single group holds every weight
    rate = group["lr"]
    for step in range(steps):  # each minibatch is drawn uniformly, with replacement, from the window
        group["lr"] = rate * one_cycle(step, steps) if cycle else rate
        idx = torch.from_numpy(rng.integers(0, len(z), size=batch))
        logits, v = net(x[idx])
        value_loss = ((z[idx] - v) ** 2).mean()
        policy_loss = -(pi[idx] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        optimizer.zero_grad()  # the loss's third term, an L2 penalty on the weights, comes from Adam's weight_decay
        (value_loss + policy_loss).backward()
        optimizer.step()
        losses.append((value_loss.item(), policy_loss.item()))
    group["lr"] = rate  # restore it, so a checkpoint records the iteration's step size
    return np.mean(losses, axis=0).tolist()


def one_cycle(step, steps, low=0.1):
    """The factor on the size of Adam step `step` of `steps` with --lr-cycle 1, a 1cycle (Smith 2018) per iteration.
    It rises linearly from `low` times the peak to the peak, 2 / (1 + low), at mid-way and falls back, so its mean over
    an even number of steps is 1."""
    x = (step + 0.5) / steps  # where the step lies in the cycle, in (0, 1)
    return (low + (1 - low) * (1 - abs(2 * x - 1))) * 2 / (1 + low)


def step_size(cfg, it):
    """Adam's step size at iteration `it`: lr, or with --lr-final one that falls geometrically to lr_final at the last
    iteration. A --resume to more iterations replans the fall, so the step size jumps up to the new plan."""
    if cfg["lr_final"] is None or cfg["iterations"] == 1:
        return cfg["lr"]
    return cfg["lr"] * (cfg["lr_final"] / cfg["lr"]) ** ((it - 1) / (cfg["iterations"] - 1))


def window_size(cfg, it):
    """How many iterations' games the network trains on at iteration `it`: `window`, or with --window-start N a window
    that grows like AlphaZero.jl's, max(N, it / 2 rounded up) up to `window`, so early networks' games leave sooner."""
    return min(cfg["window"], max(cfg["window_start"] or cfg["window"], (it + 1) // 2))


def settings(game, **overrides):
    """Return the settings for `game`: SETTINGS' defaults, then the game's own GAME_SETTINGS, then any overrides that
    are not None. An unknown name raises ValueError."""
    unknown = [key for key in overrides if key not in SETTINGS]
    if unknown:
        raise ValueError(f"no setting {', '.join(unknown)}: the settings are {', '.join(SETTINGS)}")
    defaults = {key: setting.default for key, setting in SETTINGS.items()}
    return {**defaults, **GAME_SETTINGS.get(game, {}), **{k: v for k, v in overrides.items() if v is not None}}


def with_weights(net, weights):  # return a copy of net with the given weights
    other = copy.deepcopy(net)
    other.load_state_dict(weights)
    return other


def train(game, cfg, seed=0, run=None, on_iteration=None):
    """The self-play loop: play an iteration's games with the network (one step older with --pipeline), train it on
    the replay window (see window_size, average_positions), and repeat; return the trained Net. on_iteration(it, net)
    is called after each iteration, and at 0 before any training. Lines marked `# plumbing` are machinery a reader can
    skip. check_game, load and save are defined at the end of this file, and `run` is a plumbing.Run holding the
    workers, the checkpoint path and the log; by default it is this process alone and saves nothing."""
    check_game(game, cfg)  # plumbing: refuse bad settings or a bad game with a one-line error, before any work
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    Game = GAMES[game]  # the game's class, whose constructor gives the start position
    net = Net(Game.encoding_size, Game.n_actions, cfg["hidden"], Game.board_shape if cfg["net"] == "conv" else None)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"], fused=True)
    replay, older, done = [], {}, 0  # the replay window, the older weights (--pipeline), the iterations done
    # With --pipeline, `older` holds the weights that play the games in flight, so that a resume can replay them.
    run = run or Run()  # plumbing, to the end of the block: resume from run.out's checkpoint as if never stopped
    if run.resume:
        ckpt = run.resumable(load(run.out, game, as_net=False), ALGORITHM, cfg)
        net.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        rng.bit_generator.state = ckpt["rng"]
        replay = [tuple(part.numpy() for part in example) for example in ckpt["replay"]]
        run.rows, done, older = ckpt["rows"], ckpt["iterations_done"], ckpt["older"]
    # `with run` claims run.out, sets this process to one thread and starts the workers. However the loop ends, Run
    # then stops the workers and restores the caller's settings; after an error or a stop, it notes what run.out holds.
    with run:
        if on_iteration and not done:
            on_iteration(0, net)
        for it in range(done + 1, cfg["iterations"] + 1):
            t0 = time.time()
            snapshot = NumpyNet(net)
            if it == done + 1 or not cfg["pipeline"]:  # with --pipeline, only a run's first iteration plays here
                played = play_shares(run, Game, NumpyNet(with_weights(net, older)) if older else snapshot, cfg,
                                     (seed, it))  # a resume plays with the saved older weights, as an unbroken run did
            x, pi, z = (np.concatenate(part) for part in zip(*[share.result() for share in played]))
            if cfg["pipeline"] and it < cfg["iterations"]:  # with --pipeline, the next iteration's games start now
                played = play_shares(run, Game, snapshot, cfg, (seed, it + 1))  # and play while this network trains
                older = {name: w.clone() for name, w in net.state_dict().items()}
            if cfg["mirror"]:  # left-right mirror images: twice the data for free
                x = np.concatenate([x, Game.mirror_encoding(x)])
                pi = np.concatenate([pi, Game.mirror_policy(pi)])
                z = np.concatenate([z, z])
            replay = (replay + [(x, pi, z)])[-window_size(cfg, it):]  # keep only the last iterations' games
            optimizer.param_groups[0]["lr"] = step_size(cfg, it)  # (a single group holds every weight)
            window = [average_positions(*(np.concatenate(p) for p in zip(*replay)))] if cfg["average"] else replay
            t1 = time.time()
            value_loss, policy_loss = fit(net, optimizer, window, cfg["steps"], cfg["batch"], rng, cfg["lr_cycle"])
            if not math.isfinite(value_loss + policy_loss) and sum(len(z) for *_, z in window):  # it diverged
                raise ValueError(f"the loss is {value_loss + policy_loss} at iteration {it}: the training diverged")
            run.rows.append(dict(iteration=it, positions=len(z), value_loss=value_loss, policy_loss=policy_loss,
                                 self_play_s=t1 - t0, training_s=time.time() - t1))
            if run.out:  # plumbing: save a checkpoint with all that --resume needs
                save(net, run.out, game, optimizer, cfg, dict(iterations_done=it, rng=rng.bit_generator.state,
                                                            replay=replay, rows=run.rows, older=older))
            run.log_iteration(cfg)  # plumbing: print the iteration's line and write the CSV beside the checkpoint
            if on_iteration:
                on_iteration(it, net)
    return net


def play_shares(run, Game, net, cfg, seed):
    """Start an iteration's games in the workers as two shares, share k seeded with (*seed, k); return their Futures."""
    shares = [cfg["games"] - cfg["games"] // 2, cfg["games"] // 2][:cfg["games"]]
    return [run.submit(self_play, Game, net, n, cfg, np.random.default_rng((*seed, k))) for k, n in enumerate(shares)]


def play(game, net, n_simulations, human_first=True, c_puct=1.25, reuse_tree=False, solver=False):
    """Let a human play the agent in the terminal, from the start of `game` (a class). With reuse_tree, the agent
    keeps growing the subtree from its last search."""
    kept = [None]  # with reuse_tree, the node of the agent's last move
    def agent(state, reply):
        root = next((ch for ch in kept[0].children if ch.move == reply and ch.children), None) if kept[0] else None
        before = root.n if root else 0  # the visits the kept subtree already had, before this search adds more
        root = search([state], net, n_simulations, c_puct, roots=[root], solver=solver)[0]
        chosen = next(ch for ch in root.children if ch.move == best_move(root))
        kept[0] = chosen if reuse_tree else None
        value = chosen.q() if chosen.n or chosen.proven is not None else -root.w / root.n  # exact once proven
        return games.show_search(state, root, n_simulations, chosen.move, value, before, lambda ch: ch.proven)
    games.play_in_terminal(game(), agent, human_first)


# Plumbing: the Run given to train, the checks, saving and loading checkpoints, and the command line (plumbing.py) ----
from plumbing import Run, check_settings, command_line, read_checkpoint, run_main, write_atomic  # noqa: E402


def check_game(game, cfg):  # refuse bad settings, alone or together, or a broken game, with a one-line error
    check_settings(SETTINGS, cfg)
    if (cfg["lr_final"] or 0) > cfg["lr"] or (cfg["window_start"] or 0) > cfg["window"]:
        raise ValueError("--lr-final and --window-start must be at most --lr and --window")
    needs = [games.Mirrored] * cfg["mirror"] + [games.Board] * (cfg["net"] == "conv")  # the optional parts in use
    games.check_network_game(game, GAMES[game], *needs)


def save(net, path, game, optimizer=None, cfg=None, kept=None):
    """Save the network and its settings atomically; with an optimizer, also Adam and `kept` for --resume."""
    ckpt = {"game": game, "algorithm": ALGORITHM, "hidden": net.hidden, "net": net.kind,
            "state_dict": net.state_dict(), "settings": cfg}
    if optimizer:
        replay = [[torch.from_numpy(part) for part in example] for example in kept["replay"]]
        ckpt.update(kept, optimizer=optimizer.state_dict(), replay=replay)
    torch.save(ckpt, buffer := io.BytesIO())  # serialise in memory first, so that disk errors come only from the write
    write_atomic(path, buffer.getvalue())


def load(path, game=None, as_net=True):  # return a saved Net, or the checkpoint's dict (see plumbing.read_checkpoint)
    ckpt = read_checkpoint(path, game, GAMES)
    if not as_net:
        return ckpt
    g = GAMES[ckpt["game"]]  # the checkpoint records the network's kind, mlp or conv
    net = Net(g.encoding_size, g.n_actions, ckpt["hidden"], g.board_shape if ckpt.get("net") == "conv" else None)
    net.load_state_dict(ckpt["state_dict"])
    return net


PLAYS = ("simulations", "c_puct", "reuse_tree", "solver")  # the settings --play reads


def main():  # build the flags from SETTINGS, then train or --play
    args = command_line(__doc__, SETTINGS, GAME_SETTINGS, GAMES, "GAME_plus.pt", PLAYS)
    cfg = settings(args.game, **{key: getattr(args, key) for key in SETTINGS})
    path = (args.checkpoint if args.play else args.out) or f"{args.game.split(':')[-1].lower()}_plus.pt"
    if args.play:  # search settings not given as flags come from the checkpoint
        saved = load(path, args.game, as_net=False).get("settings") or {}
        cfg.update({k: saved[k] for k in PLAYS if k in saved and getattr(args, k) is None})
        play(GAMES[args.game], NumpyNet(load(path, args.game)), cfg["simulations"], args.first != "agent",
             cfg["c_puct"], cfg["reuse_tree"], cfg["solver"])
    else:
        train(args.game, cfg, args.seed, Run(args.workers, path, args.resume, args.replace, flags=True))
        return f"\ncheckpoint: {path}\nplay it: python {sys.argv[0]} --game {args.game} --play --checkpoint {path}"


if __name__ == "__main__":
    run_main(main)

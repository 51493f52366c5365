"""AlphaZero, going further: alphazero.py plus eight changes, each a flag, that the lab's questions led to.
  --q-weight W        the value target mixes the game's outcome with the search's value of the position
  --random-openings F this fraction of self-play games starts from uniformly random moves (--opening-moves: how many)
  --lr-final X        Adam's step size falls geometrically from --lr to X at the last iteration
  --net conv          two 3x3 convolutions (32 channels) on the board before the MLP
  --pipeline 1        each iteration's games are played while the network trains on the last ones: every core busy
  --solver 1          MCTS-solver: the game's end is exact in the search; proven wins and losses climb the tree
  --random-moves P    this fraction of self-play moves is uniformly random, though searched and kept as examples
  --full-fraction F   playout cap randomisation: only this fraction of moves get the full search and become examples
Its Connect Four defaults are the strong player's recipe (FURTHER.md says why each); its tic-tac-toe defaults are
the lab's plus a quarter of random openings, which left fewer blind spots at each of 3 seeds at no cost elsewhere.

    python alphazero_plus.py --game connect4                  # the strong player (see the README), connect4_plus.pt
    python alphazero_plus.py --game connect4 --play           # then play against it in the terminal
    python alphazero_plus.py --game connect4 --play --checkpoint data/connect4_plus.pt   # the one shipped
"""
import os
import signal

if __name__ == "__main__":  # before numpy and torch load: one BLAS thread (see start_process); Ctrl-C ends quietly
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # MKL's too: torch's numbers follow it
        os.environ.setdefault(_var, "1")
    signal.signal(signal.SIGINT, lambda *_: os._exit(os.write(2, b"\ninterrupted\n") and 130))
import argparse
import contextlib
import gc
import math
import multiprocessing
import multiprocessing.pool
import shutil
import sys
import time

import numpy as np
import torch

import games

ALGORITHM = "alphazero_plus"  # recorded in checkpoints: --resume goes on only with the algorithm that trained one
GAMES = {"tictactoe": games.TicTacToe, "connect4": games.ConnectFour}
SETTINGS = {  # the lab's settings and the going-further ones that beat them; every one has a flag
    "tictactoe": dict(hidden=128, iterations=40, games=100, simulations=100, temp_moves=4, steps=200, mirror=0,
                      random_openings=0.25),
    "connect4": dict(hidden=384, iterations=120, games=200, simulations=35, temp_moves=8, steps=800, mirror=1,
                     window=30, lr_final=1e-4, q_weight=1.0, random_openings=0.5, opening_moves=30, random_moves=0.2,
                     solver=1, reuse_tree=1, pipeline=1)}
COMMON = dict(window=20, batch=256, lr=1e-3, lr_final=None, weight_decay=1e-4, c_puct=1.25, alpha=1.0, noise=0.25,
              net="mlp", reuse_tree=0, random_openings=0.0, opening_moves=1, q_weight=0.0, pipeline=0, solver=0,
              full_fraction=1.0, fast_simulations=8, random_moves=0.0)
FLAGS = {  # what each setting means, and the range its flag takes (whole numbers if the bounds are whole)
    "iterations": (1, 10_000, "self-play iterations"),
    "games": (1, 100_000, "self-play games per iteration"),
    "simulations": (0, 100_000, "simulations per move; --play takes 0: the raw policy"),
    "temp_moves": (0, 1_000, "moves sampled by visit counts at the start of a game, then the most visited"),
    "hidden": (1, 4_096, "units in each of the network's two hidden layers"),
    "steps": (1, 100_000, "Adam steps per iteration"),
    "batch": (1, 65_536, "minibatch size"),
    "window": (1, 10_000, "train on the positions of the last N iterations"),
    "lr": (1e-6, 1.0, "Adam step size"),
    "lr_final": (1e-6, 1.0, "Adam step size at the last iteration, reached by a geometric fall from --lr"),
    "weight_decay": (0.0, 1.0, "Adam weight decay"),
    "c_puct": (0.0, 100.0, "PUCT exploration constant c"),
    "alpha": (1e-3, 100.0, "Dirichlet noise concentration"),
    "noise": (0.0, 1.0, "weight of the Dirichlet noise in the root's priors in self-play"),
    "mirror": (0, 1, "1: add the left-right mirror image of every position to the training data"),
    "reuse_tree": (0, 1, "1: keep the chosen move's subtree for the next search"),
    "random_openings": (0.0, 1.0, "fraction of self-play games that start with uniformly random moves, not searched"),
    "opening_moves": (1, 1_000, "a random opening plays k uniformly random moves, k drawn uniformly from 1 to N"),
    "q_weight": (0.0, 1.0, "weight of the search's value of each position in its value target (0: the outcome)"),
    "pipeline": (0, 1, "1: each iteration's games are played while the network trains, by the network one step older"),
    "solver": (0, 1, "1: MCTS-solver: a game's end is exact in the search, proven wins and losses climb the tree"),
    "full_fraction": (0.01, 1.0, "fraction of self-play moves searched in full and kept as examples (playout cap)"),
    "fast_simulations": (1, 100_000, "simulations of the other moves' cheap searches, which are not examples"),
    "random_moves": (0.0, 1.0, "share of self-play moves made at random (their positions are still searched examples)")}


class Node:
    """A position in the tree, reached by `move` from its parent; N and W count for the player who made `move`."""
    __slots__ = ("move", "parent", "children", "prior", "n", "w", "proven")  # self-play makes millions

    def __init__(self, move=None, parent=None, prior=1.0):
        self.move, self.parent, self.children = move, parent, []
        self.prior = prior                            # P(s,a): the network's guess that `move` is good
        self.n, self.w = 0, 0.0                       # visits, and the sum of values for whoever made `move`
        self.proven = None                            # --solver: the exact value for whoever made `move`, once known

    def q(self):
        """The value for whoever made `move`: exact once proven, else the mean of the visits (0 before any)."""
        return self.proven if self.proven is not None else self.w / self.n if self.n else 0.0


def search(root_states, net, n_simulations, c_puct=1.25, noise=None, roots=None, cache=None, solver=False):
    """puct_search on many games side by side; returns their roots. As the lab says, the network expands each root
    first (see expand_roots), then n_simulations follow (puct.py's first simulation is its root's expansion). Each
    walks every game's tree down to a leaf; one network call then scores all the leaves, for about the cost of one.
    roots: trees kept from the last move, or None (--reuse-tree); cache: the network's outputs (see predict).
    solver (MCTS-solver): a game's end is an exact value, and exact values climb the tree by minimax (see prove);
    a proven node is a leaf whose value is exact, and a game whose root is proven needs no more simulations."""
    roots = expand_roots(root_states, net, roots, noise, cache, solver)
    for t in range(1, n_simulations + 1):
        leaves = []
        for root, root_state in zip(roots, root_states):
            if root.proven is not None:
                continue
            node, state = root, root_state.copy()

            # 1. Select: while a node has children (and is not proven), descend to the child with the best PUCT score
            while node.children and node.proven is None:
                sqrt_n = math.sqrt(node.n)
                node = max(node.children,
                           key=lambda ch: ch.q()
                                          + c_puct * ch.prior * sqrt_n / (1 + ch.n))
                state.play(node.move)
            leaves.append((node, state))
        if not leaves:
            break

        # 2. Expand: one network call gives every legal move a child with its prior (a proven leaf needs no call)
        known = [node.proven is not None for node, _ in leaves]
        outputs = iter(predict(net, [state for (_, state), k in zip(leaves, known) if not k], cache))
        for (node, state), k in zip(leaves, known):
            if not k:
                priors, value = next(outputs)
                node.children = [Node(move, node, p)
                                 for move, p in priors.items()]
                if solver:
                    mark_ends(node, state, value)

            # 3. Evaluate: the same call scored the position in [-1, 1] for the player to move there, not in [0, 1]
            #    for the first player: one network then plays both sides, and a value changes sign with the view
            if k:
                value = -node.proven

            # 4. Back up: each node on the path counts a visit and adds the leaf's value to W, summed for
            #    the player who moved into it (its parent's player to move), so that the parent picks the child
            #    with the best Q = W / N for itself. `value` is for the player to move at the leaf, the other one,
            #    so its sign flips before the first increment and again at each step up, as the players alternate.
            #    An unvisited child counts Q = 0: on this scale of [-1, 1] a draw (on puct.py's [0, 1], a loss).
            while node is not None:
                value = -value  # now for the player who moved into this node
                if node.proven is not None:
                    value = node.proven  # an exact value climbs as it is, never averaged with guesses
                node.n += 1
                node.w += value
                if node.proven is not None and node.parent is not None and node.parent.proven is None:
                    node.parent.proven = prove(node.parent)
                node = node.parent
    return roots


def mark_ends(node, state, value):
    """MCTS-solver at an expansion: a finished game's value is exact, and so is each move's that ends the game (a
    win for whoever plays it, or a draw), looked at one move ahead whatever its prior; they may prove the node."""
    if not node.children:
        node.proven = -value  # the game is over here: value is its exact outcome for the player to move
        return
    for ch in node.children:
        after = state.copy()
        after.play(ch.move)
        if after.is_over():
            ch.proven = -outcome(after)  # for whoever made the move: 1 for a win, 0 for a draw
    node.proven = prove(node)


def prove(node):
    """MCTS-solver's rule, for whoever made the move into `node` (the children are its opponent's moves): if one
    move wins for the opponent, a loss (-1); if every move is proven, minus the best of them (exact minimax); else
    not yet known (None)."""
    values = [ch.proven for ch in node.children]
    if 1 in values:
        return -1
    return None if None in values else -max(values)


def expand_roots(root_states, net, roots=None, noise=None, cache=None, solver=False):
    """The roots of a search, expanded by the network: new ones for None, and a tree kept from the last move as it
    is. A new root counts its expansion as its first visit, so that sqrt(N(root)) = sqrt(sum_b N(b) + 1), the lab's
    formula. noise = (rng, alpha, weight) mixes Dirichlet noise into every root's priors (self-play)."""
    if roots is None:  # no trees kept from the last move
        roots = [None] * len(root_states)
    roots = [Node() if root is None else root for root in roots]  # a new root where no tree was kept
    new = [(root, s) for root, s in zip(roots, root_states) if not root.children]
    for (root, state), (priors, value) in zip(new, predict(net, [s for _, s in new], cache)):
        root.children = [Node(move, root, p) for move, p in priors.items()]
        root.n, root.w = 1, -value  # the value for whoever moved into the root, as the back-up scores it
        if solver:
            mark_ends(root, state, value)
    if noise is not None:
        for root in roots:
            add_dirichlet(root, *noise)
    return roots


def best_move(root):
    """The most visited move (a high average over few visits may be luck); a tie goes to the higher prior. With
    --solver, a proven win first, and a proven loss only when every move is one."""
    return max(root.children, key=lambda ch: (ch.proven == 1, ch.proven != -1, ch.n, ch.prior)).move


def visit_policy(root, tau=1.0):
    """The training label pi(a) = N(a)^(1/tau) / sum_b N(b)^(1/tau); tau = 0 puts everything on best_move, and so
    does a proven root (--solver): its search stopped when the proof came, so its visits say little or nothing."""
    if tau == 0 or root.proven is not None:
        return {ch.move: float(ch.move == best_move(root)) for ch in root.children}
    weights = {ch.move: ch.n ** (1 / tau) for ch in root.children}
    total = sum(weights.values())
    return {move: x / total for move, x in weights.items()}


def add_dirichlet(root, rng, alpha=1.0, weight=0.25):
    """Self-play only: P = (1 - weight) p + weight eta, eta ~ Dir(alpha) over the legal moves, so that every move
    gets tried now and then, even one the network has learned to ignore."""
    eta = rng.dirichlet([alpha] * len(root.children)).tolist()
    for ch, e in zip(root.children, eta):
        ch.prior = (1 - weight) * ch.prior + weight * e


class Net(torch.nn.Module):
    """The policy-value network: the mover's and the opponent's stones in, move logits and a value in [-1, 1] out.
    kind "mlp" is the lab's two hidden layers; "conv" puts two 3x3 convolutions (32 channels) on the board first."""

    def __init__(self, game, hidden, kind="mlp"):
        super().__init__()
        self.game, self.hidden, self.kind = game, hidden, kind
        n_in, n_out = GAMES[game].encoding_size, GAMES[game].n_actions
        self.conv = torch.nn.Identity()  # no weights: a mlp checkpoint has none here
        if kind == "conv":
            rows, cols = GAMES[game].board_shape
            self.conv = torch.nn.Sequential(torch.nn.Unflatten(1, (2, rows, cols)),
                                            torch.nn.Conv2d(2, 32, 3, padding=1), torch.nn.ReLU(),
                                            torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten())
            n_in = 32 * rows * cols
        self.body = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(hidden, hidden), torch.nn.ReLU())
        self.policy, self.value = torch.nn.Linear(hidden, n_out), torch.nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(self.conv(x))
        return self.policy(h), torch.tanh(self.value(h)).squeeze(-1)


def conv3x3(x, weight, bias):
    """A 3x3 convolution with padding 1 in numpy: x (batch, in, rows, cols), weight (out, in, 3, 3). The nine shifted
    copies of the padded input side by side make it one matrix product."""
    b, _, rows, cols = x.shape
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    patches = np.stack([p[:, :, i:i + rows, j:j + cols] for i in range(3) for j in range(3)], axis=2)
    out = patches.transpose(0, 3, 4, 1, 2).reshape(b * rows * cols, -1) @ weight.reshape(len(weight), -1).T + bias
    return out.reshape(b, rows, cols, -1).transpose(0, 3, 1, 2)


class NumpyNet:
    """The same network in numpy, for search: through torch one position costs tens of microseconds of overhead."""

    def __init__(self, net):
        self.game = net.game
        self.convs = [(layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy())
                      for layer in net.conv.children() if isinstance(layer, torch.nn.Conv2d)]
        w = [(layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy())
             for layer in (net.body[0], net.body[2], net.policy, net.value)]
        (self.w1, self.b1), (self.w2, self.b2), (self.wp, self.bp), (self.wv, self.bv) = w

    def __call__(self, x):
        if self.convs:
            x = x.reshape((len(x), 2) + GAMES[self.game].board_shape)
            for weight, bias in self.convs:
                x = np.maximum(conv3x3(x, weight, bias), 0)
            x = x.reshape(len(x), -1)
        h = np.maximum(x @ self.w1 + self.b1, 0)
        h = np.maximum(h @ self.w2 + self.b2, 0)
        return h @ self.wp + self.bp, np.tanh(h @ self.wv + self.bv)[:, 0]


def predict(net, states, cache=None):
    """The network on a batch of states: for each, ({legal move: prior}, its value for the player to move). The
    priors are a softmax over the legal moves only; a finished game gets none, and its exact value. cache ({position's
    key: output}, for this network) answers the positions met before at no cost: in self-play, three in four."""
    net = NumpyNet(net) if isinstance(net, torch.nn.Module) else net  # a torch Net (from load): copied for this call
    cache, keys = {} if cache is None else cache, [s.key() for s in states]
    new = {key: s for key, s in zip(keys, states) if key not in cache}  # each position once, even if it comes twice
    moves = {key: s.legal_moves() for key, s in new.items()}
    live = [key for key in new if moves[key]]
    for key in new:
        if not moves[key]:
            cache[key] = ({}, outcome(new[key]))
    if live:
        logits, values = net(type(new[live[0]]).encode_many([new[key] for key in live]))
        rows = [row for row, key in enumerate(live) for _ in moves[key]]
        columns = [m for key in live for m in moves[key]]
        masked = np.full(logits.shape, -np.inf)  # illegal moves: probability 0
        masked[rows, columns] = logits[rows, columns]
        e = np.exp(masked - masked.max(axis=1, keepdims=True))
        priors = (e / e.sum(axis=1, keepdims=True)).tolist()
        for key, p, value in zip(live, priors, values.tolist()):
            cache[key] = ({m: p[m] for m in moves[key]}, value)
    return [cache[key] for key in keys]


def outcome(state):
    """A finished game's value for the player to move: 1 won, -1 lost, 0 drawn."""
    r = 2 * state.result() - 1
    return r if state.first_to_move() else -r


def choose_move(state, net, n_simulations, solver=False):
    """The agent's move in `state` (a legal move index): the most visited after n_simulations of search without noise;
    with 0 simulations, the raw policy's most likely legal move. net: a Net (from load) or a NumpyNet."""
    return best_move(search([state], net, n_simulations, solver=solver)[0])


def self_play(game, net, n_games, n_simulations, temp_moves, rng, c_puct=1.25, alpha=1.0, noise=0.25,
              reuse_tree=False, random_openings=0.0, q_weight=0.0, opening_moves=1, solver=False, full_fraction=1.0,
              fast_simulations=8, random_moves=0.0, on_move=None):
    """Play n_games side by side, both sides searching; return the examples (x, pi, z): each position seen by the
    player to move, its visit distribution, and the game's outcome for that player (with --q-weight w, mixed with
    the search's value q of the position: (1 - w) z + w q, less noisy than a whole game's one result).
    --full-fraction f (KataGo's playout cap randomisation): a move gets the full search with noise and becomes an
    example with probability f; the others get a cheap search of fast_simulations, without noise, and only move.
    --random-moves p: a move is uniformly random with probability p, though its position was searched and is kept
    as an example: the opponent then meets the kind of position a random game reaches (a win left in one, say).
    on_move(games over, positions so far), if given, is told before each move (for a progress line)."""
    states = [GAMES[game]() for _ in range(n_games)]
    for s in states:  # --random-openings: this fraction of the games starts from k uniformly random moves, which are
        if random_openings and rng.random() < random_openings:  # not examples: the positions they lead to are
            for _ in range(rng.integers(1, opening_moves + 1) if opening_moves > 1 else 1):
                move = rng.choice(s.legal_moves())
                after = s.copy()
                after.play(move)
                if after.is_over():  # the opening stops short of the game's end: every game has a position to search
                    break
                s.play(move)
    roots = [None] * n_games
    cache = {}  # this network's outputs by position, for every game and move of this call
    history = [[] for _ in range(n_games)]
    played = [0] * n_games  # the moves each game's searches have chosen
    while True:
        live = [i for i in range(n_games) if not states[i].is_over()]
        if on_move:
            on_move(n_games - len(live), sum(map(len, history)))
        if not live:
            break
        full = {i for i in live if full_fraction >= 1 or rng.random() < full_fraction}
        found = {}
        for group, sims, root_noise in (([i for i in live if i in full], n_simulations, (rng, alpha, noise)),
                                        ([i for i in live if i not in full], fast_simulations, None)):
            if group:
                found.update(zip(group, search([states[i] for i in group], net, sims, c_puct, noise=root_noise,
                                               roots=[roots[i] for i in group], cache=cache, solver=solver)))
        for i in live:
            root = found[i]
            pi = np.zeros(GAMES[game].n_actions, dtype=np.float32)  # the label: each move's share of the visits
            for move, p in visit_policy(root).items():
                pi[move] = p
            if i in full:
                history[i].append((states[i].encode(), pi, states[i].first_to_move(), -root.q()))
            # explore: the first temp_moves moves are drawn in proportion to the visits, then the most visited
            played[i] += 1
            move = rng.choice(len(pi), p=pi / pi.sum()) if played[i] <= temp_moves else best_move(root)
            if random_moves and rng.random() < random_moves:
                move = rng.choice(states[i].legal_moves())
            states[i].play(move)
            roots[i] = None  # the next search grows a new tree...
            if reuse_tree:  # ...or, with --reuse-tree, goes on from the chosen move's subtree and the visits it got
                for child in root.children:
                    if child.move == move and child.children:  # (a child never expanded holds nothing to keep)
                        roots[i], child.parent = child, None  # its parent, the rest of the old tree, can go
    x, pis, zs = [], [], []
    for state, positions in zip(states, history):
        result = 2 * state.result() - 1  # the game's result for the first player: 1 won, -1 lost, 0 drawn
        for encoding, pi, first, q in positions:
            x.append(encoding)
            pis.append(pi)
            z = result if first else -result  # z: that result for the player who was to move there
            zs.append((1 - q_weight) * z + q_weight * q)  # --q-weight: mixed with the search's value there
    return np.array(x), np.array(pis), np.array(zs, dtype=np.float32)


def fit(net, optimizer, data, steps, batch, rng, on_step=None):
    """Adam steps on minibatches of the replay window, minimising (z - v)^2 - pi . log p; on_step(steps done), if
    given, is told after each (for a progress line)."""
    x, pi, z = (torch.from_numpy(np.concatenate(part)) for part in zip(*data))
    losses = []
    for step in range(steps):  # each minibatch drawn uniformly, with replacement, from every position of the window
        idx = torch.from_numpy(rng.integers(0, len(z), size=batch))
        logits, v = net(x[idx])
        value_loss = ((z[idx] - v) ** 2).mean()
        policy_loss = -(pi[idx] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        optimizer.zero_grad()  # the loss's third term, weight decay, is Adam's weight_decay
        (value_loss + policy_loss).backward()
        optimizer.step()
        losses.append((value_loss.item(), policy_loss.item()))
        if on_step:
            on_step(step + 1)
    return np.mean(losses, axis=0)


def step_size(cfg, it):
    """Adam's step size at iteration `it`: lr throughout, or with --lr-final falling geometrically to lr_final at the
    last iteration (big steps while the data changes fast, small ones to settle at the end)."""
    if cfg["lr_final"] is None or cfg["iterations"] == 1:
        return cfg["lr"]
    return cfg["lr"] * (cfg["lr_final"] / cfg["lr"]) ** ((it - 1) / (cfg["iterations"] - 1))


def settings(game, **overrides):
    """The lab's settings for `game`, with any of them overridden (None means keep the default)."""
    cfg = dict(COMMON, **SETTINGS[game])  # a game's own setting first
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return cfg


def train(game, cfg, seed=0, workers=None, out=None, on_iteration=None, log=print, spent=None, resume=False,
          replace=False):
    """The self-play loop: play an iteration's games with the current network, train it on the positions of the last
    `window` iterations, repeat; return the trained Net. resume: go on from the checkpoint at `out` (its network,
    Adam's state and iterations; the replay window starts empty). Run, below the banner, shares the games among
    `workers` processes, saves to `out` (if given) and logs each iteration, and adds up the seconds in `spent`."""
    check_game(game, cfg)
    start_process()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = Net(game, cfg["hidden"], cfg["net"])
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"], fused=True)
    done = resume_from(out, game, cfg, net, optimizer) if resume else 0
    if on_iteration and not done:
        on_iteration(0, net)
    replay = []
    with Run(game, cfg, workers, out, done, log, spent, fresh=not (resume or replace)) as run:
        games = run.start(NumpyNet(net), seed, done + 1)
        for it in range(done + 1, cfg["iterations"] + 1):
            x, pi, z = run.collect(games)
            # --pipeline: the next iteration's games start now, in the workers, with the network not yet trained on
            # these, while the main process trains it: every core is busy, and the games are one step behind
            games = run.start(NumpyNet(net), seed, it + 1) if cfg["pipeline"] and it < cfg["iterations"] else None
            if cfg["mirror"]:  # left-right mirror images: twice the data for free
                x = np.concatenate([x, GAMES[game].mirror_encoding(x)])
                pi = np.concatenate([pi, GAMES[game].mirror_policy(pi)])
                z = np.concatenate([z, z])
            replay = (replay + [(x, pi, z)])[-cfg["window"]:]  # the replay window: the last `window` iterations' games
            for group in optimizer.param_groups:
                group["lr"] = step_size(cfg, it)
            losses = fit(net, optimizer, replay, cfg["steps"], cfg["batch"], rng, run.fitting)
            run.iteration_done(it, net, optimizer, losses, len(z))
            if on_iteration:
                on_iteration(it, net)
            if games is None and it < cfg["iterations"]:
                games = run.start(NumpyNet(net), seed, it + 1)
    return net


# Plumbing: processes, signals, checkpoints, the terminal game, the command line ---------------------------------

PROGRESS_AFTER, PROGRESS_EVERY = 3.0, 0.5  # seconds: a phase running past the first gets a live line, redrawn so often
COUNTS = None  # in a Run's worker: the shared counts (each job's games over and positions), set by start_process
ONE_TASK = False  # in a Run's forked worker: it plays one share of games, then exits (see Run)
ONE_TASK_FROM = 1_000  # ...from this many games x simulations an iteration: a fork costs about as much as collecting
                       # the trees of a share of 500 (two workers), a few hundredths of a second


def start_process(worker=False, counts=None, one_task=False):
    """How every process of a run computes, set first thing in each (the README's Speed section has the numbers)."""
    global COUNTS, ONE_TASK
    COUNTS, ONE_TASK = counts, one_task
    torch.set_num_threads(1)  # a second thread is slower beside any busy program, and its numbers differ from one's
    torch.set_flush_denormal(True)  # Adam's moments reach denormals, which some CPUs handle many times slower
    gc.set_threshold(50_000, 20, 20)  # trees are millions of small objects: the default thresholds doubled self-play
    if worker:  # Ctrl-C and a closing terminal are the main process's to handle: it stops the workers (SIGTERM)
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL if sig == signal.SIGTERM else signal.SIG_IGN)


def check_game(game, cfg):
    """Before any work: the game has what the trainers call (games.NetworkGame), the optional parts its settings use
    (games.Mirrored for --mirror 1, games.Board for --net conv), and every setting the built-in games have."""
    missing = [key for key in (*SETTINGS["tictactoe"], *COMMON) if key not in cfg]
    if missing:
        raise ValueError(f"the settings for {game} lack {', '.join(missing)}: every game needs those of SETTINGS")
    needs = [games.NetworkGame] + [games.Mirrored] * bool(cfg["mirror"]) + [games.Board] * (cfg["net"] == "conv")
    lacking = games.lacks(GAMES[game], *needs)
    if lacking:
        mirror = " (--mirror 1 needs the mirror)" if {"mirror_encoding", "mirror_policy"} & set(lacking) else ""
        raise ValueError(f"the game {game} has no {', '.join(lacking)}: see the contract in games.py{mirror}")


def kill_workers(pool):
    """After a signal: stop the pool from starting new workers (it replaces any that exits), then kill the ones it
    has. Not Pool.terminate, which can wait forever for a worker that the same signal, sent to the whole process
    group, killed mid-task; the pool's own handler is private, hence the underscore."""
    pool._worker_handler._state = multiprocessing.pool.TERMINATE
    pool._change_notifier.put(None)  # wakes the handler, which then sees the state and ends
    pool._worker_handler.join(timeout=10)
    for worker in multiprocessing.active_children():
        worker.kill()


def stop(signum, frame):  # SIGTERM and SIGHUP (`kill`, a closing terminal) stop as Ctrl-C does, status 128 + signal
    raise KeyboardInterrupt(128 + signum)


def play_games(game, net, n_games, cfg, seed, counts=None, show=None):
    """One worker's share of an iteration's games, with its own random stream. It counts its games over and positions
    in its two slots of the Run's shared counts (a worker's COUNTS); in-process, the Run passes them and its show."""
    counts, job = COUNTS if counts is None else counts, seed[-1]

    def on_move(over, positions):
        if counts is not None:
            counts[2 * job], counts[2 * job + 1] = over, positions
        if show:
            show()
    gc.disable()  # the trees' nodes point to their parents: cycles, freed once, when the games are done (below)
    try:
        return self_play(game, net, n_games, cfg["simulations"], cfg["temp_moves"], np.random.default_rng(seed),
                         cfg["c_puct"], cfg["alpha"], cfg["noise"], cfg["reuse_tree"], cfg["random_openings"],
                         cfg["q_weight"], cfg["opening_moves"], cfg["solver"], cfg["full_fraction"],
                         cfg["fast_simulations"], cfg["random_moves"], on_move)
    finally:
        if not ONE_TASK:  # (a worker that exits next leaves the trees to its exit: the system takes them back at once)
            gc.enable()
            gc.collect(0)  # generation 0 holds what the games made; a full collection would go through all of torch


class Run(contextlib.AbstractContextManager):  # `with Run(...) as run` gives the Run itself
    """A training's worker processes, clock, checkpoint (claimed in PATH.lock), progress line and CSV, and its stop."""

    def __init__(self, game, cfg, workers, out, done, log, spent, fresh=True):
        self.game, self.cfg, self.out, self.log, self.done = game, cfg, out, log, done
        self.workers, self.spent = workers or os.cpu_count(), {} if spent is None else spent
        if out is not None:
            claim(out, fresh)
        self.counts = multiprocessing.RawArray("q", 2 * self.workers)  # each job's games over and positions so far
        # a forked worker plays one share of games and exits, and the pool forks a fresh one in milliseconds: collecting
        # the trees' cycles (each node points to its parent) cost a quarter of the games' time. A spawned worker
        # (macOS, Windows) would import torch again each time, and small shares cost less to collect: those stay.
        one_task = multiprocessing.get_start_method() == "fork" and cfg["games"] * cfg["simulations"] >= ONE_TASK_FROM
        self.pool = multiprocessing.Pool(self.workers, start_process, (True, self.counts, one_task),
                                         maxtasksperchild=1 if one_task else None) if self.workers > 1 else None
        self.began = time.time()
        # the live line: on a terminal, from the main process only (not a training run inside a worker)
        self.live = sys.stdout.isatty() and multiprocessing.parent_process() is None
        self.playing = self.training = None  # (iteration, when it began) of the self-play, the training, under way
        self.steps, self.drawn = 0, 0.0

    def start(self, net, seed, it):  # the iteration's games, shared among the workers, begin (with none: wait)
        n, w = self.cfg["games"], self.workers
        jobs = [(self.game, net, n // w + (k < n % w), self.cfg, (seed, it, k)) for k in range(min(n, w))]
        self.counts[:], self.next = [0] * len(self.counts), it
        self.playing = (it, time.time()) if self.pool else None  # in-process, they begin when collected
        # (chunksize given: between two one-task workers the pool can hold none, and the default divides by their count)
        return self.pool.starmap_async(play_games, jobs, chunksize=1) if self.pool else jobs

    def collect(self, games):  # the games begun, once played: the wait counts as self-play
        t0 = time.time()
        if self.pool:
            while not games.ready():  # the workers count into the shared counts; this process draws the line
                games.wait(PROGRESS_EVERY)
                self.show()
            parts = games.get()
        else:
            self.playing = self.next, t0
            parts = [play_games(*job, self.counts, self.show) for job in games]
        self.laps = t0, time.time()
        self.playing, self.training = None, (self.next, self.laps[1])
        return [np.concatenate(p) for p in zip(*parts)]

    def fitting(self, steps):  # Adam's steps done this iteration, told by fit
        self.steps = steps
        self.show()

    def show(self):  # on a terminal, the iteration's work so far, on one line that the next replaces
        now, parts = time.time(), []
        if not self.live or now - self.drawn < PROGRESS_EVERY:
            return
        if self.training and now - self.training[1] >= PROGRESS_AFTER:  # (--pipeline: both, the games one ahead)
            parts.append(f"iteration {self.training[0]}: {self.steps}/{self.cfg['steps']} Adam steps")
        if self.playing and now - self.playing[1] >= PROGRESS_AFTER:
            parts.append(f"iteration {self.playing[0]}: {sum(self.counts[0::2])}/{self.cfg['games']} games over, "
                         f"{sum(self.counts[1::2])} moves")
        if parts:
            line = "; ".join(parts)[:shutil.get_terminal_size().columns - 1]  # one row: \r goes back to its start
            sys.stdout.write(f"\r{line}\033[K")  # \033[K: clears what a longer line left
            sys.stdout.flush()
            self.drawn = now

    def clear(self):  # the live line gives way to a line that stays
        if self.drawn:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()
            self.drawn = 0.0

    def iteration_done(self, it, net, optimizer, losses, positions):  # save, then print the progress line
        (t0, t1), t2, cfg, (value_loss, policy_loss) = self.laps, time.time(), self.cfg, losses
        self.spent.update({k: self.spent.get(k, 0.0) + s for k, s in (("self-play", t1 - t0), ("training", t2 - t1))})
        self.training, self.steps = None, 0
        self.clear()
        if self.out:  # the checkpoint, and beside it the progress as data: connect4.pt, connect4.csv
            save(net, self.out, optimizer, it, cfg)
            with open(os.path.splitext(self.out)[0] + ".csv", "w" if it == 1 else "a") as f:
                f.write("iteration,positions,value_loss,policy_loss,self_play_s,training_s\n" * (it == 1) +
                        f"{it},{positions},{value_loss:.4f},{policy_loss:.4f},{t1 - t0:.2f},{t2 - t1:.2f}\n")
        self.log(f"iteration {it:3d}/{cfg['iterations']}  games {cfg['games']:4d}  positions {positions:6d}  "
                 f"loss {value_loss + policy_loss:.3f} (value {value_loss:.3f}, policy {policy_loss:.3f})  "
                 f"self-play {t1 - t0:4.1f} s  training {t2 - t1:3.1f} s  elapsed {t2 - self.began:5.0f} s, "
                 f"about {(t2 - self.began) / (it - self.done) * (cfg['iterations'] - it):.0f} s left")

    def __exit__(self, kind, error, trace):
        self.clear()
        if self.pool and kind is KeyboardInterrupt:
            kill_workers(self.pool)  # the process then ends with os._exit (see the end)
        elif self.pool:
            self.pool.terminate()
        if self.out:
            os.remove(f"{self.out}.lock")
        if kind is KeyboardInterrupt:  # what the checkpoint holds, and how to go on; the signal's status goes along
            saved = load(self.out, as_net=False)["iterations_done"] if self.out and os.path.exists(self.out) else 0
            held = f"{self.out} holds iteration {saved}: add --resume to go on" if saved else "nothing saved"
            raise KeyboardInterrupt(f"interrupted at iteration {saved + 1}; {held}", *error.args) from None


def claim(path, fresh=True):
    """Refuse a path that cannot be written or that a live training writes (PATH.lock holds its process id), and,
    for a fresh training, one that holds a training already (its checkpoint or its CSV): it is never replaced
    unless asked (replace=True, --replace)."""
    try:
        other = int(open(f"{path}.lock").read())
        os.kill(other, 0)  # no error: that process is alive
    except (OSError, ValueError):
        other = None
    if other or not path or os.path.isdir(path):
        raise ValueError(f"{path} is being written by another training, process {other}: choose another --out" if other
                         else f"cannot write the checkpoint {path!r}: {'a folder' if path else 'an empty path'}")
    held = [p for p in (path, os.path.splitext(path)[0] + ".csv") if fresh and os.path.exists(p)]
    if held:
        raise ValueError(f"{' and '.join(held)} hold a training already: add --resume to go on with it, choose another "
                         f"--out, or add --replace to start afresh over it")
    try:
        with open(f"{path}.lock", "w") as f:
            f.write(str(os.getpid()))
    except OSError as e:
        raise ValueError(f"cannot write the checkpoint {path}: {e.strerror}") from None


def save(net, path, optimizer=None, iterations_done=None, cfg=None):
    """Atomically, a temp file then a rename, with what --resume needs: Adam's state, iterations done, settings.
    Without an optimizer, the weights alone (and the settings, which say how the network searches: --solver)."""
    ckpt = {"game": net.game, "algorithm": ALGORITHM, "hidden": net.hidden, "net": net.kind,
            "state_dict": net.state_dict(), **({"settings": cfg} if cfg else {})}
    if optimizer:
        ckpt.update(optimizer=optimizer.state_dict(), iterations_done=iterations_done)
    torch.save(ckpt, f"{path}.tmp")
    os.replace(f"{path}.tmp", path)


def load(path, game=None, as_net=True):
    """A saved Net (search takes it as it is), or the dict; ValueError in one line, in words, for a file that is
    missing, empty, not a torch file, not a checkpoint of these scripts, or of another game."""
    try:
        ckpt = torch.load(path, weights_only=True)
    except Exception as e:
        raise ValueError(f"no checkpoint at {path!r}" if isinstance(e, FileNotFoundError) else
                         f"{path} is a folder, not a checkpoint" if os.path.isdir(path) else
                         f"{path} is empty, not a checkpoint" if os.path.getsize(path) == 0 else
                         f"{path} is not a checkpoint: torch cannot read it") from None
    if not isinstance(ckpt, dict) or not {"game", "hidden", "state_dict"} <= set(ckpt):
        raise ValueError(f"{path} is a torch file but not a checkpoint of these scripts: no game, size and weights")
    if ckpt["game"] not in GAMES or game and ckpt["game"] != game:
        raise ValueError(f"{path} holds a network for {ckpt['game']!r}: register that game in GAMES and SETTINGS first"
                         if ckpt["game"] not in GAMES else f"{path} holds a {ckpt['game']} network, not {game}")
    if not as_net:
        return ckpt
    net = Net(ckpt["game"], ckpt["hidden"], ckpt.get("net", "mlp"))  # mlp: alphazero.py's
    try:
        net.load_state_dict(ckpt["state_dict"])
    except Exception:
        raise ValueError(f"{path}'s weights do not fit a {ckpt['game']} network of {ckpt['hidden']} units") from None
    return net


def resume_from(path, game, cfg, net, optimizer):
    """Load a training checkpoint into net and optimizer; return its iterations done. Only --iterations may change."""
    ckpt = load(path, game, as_net=False)  # the game, then the algorithm: alone, before any setting
    if ckpt.get("algorithm", ALGORITHM) != ALGORITHM or "optimizer" not in ckpt:
        raise ValueError(f"{path} holds no training state to resume" if "optimizer" not in ckpt else
                         f"{path} was trained by {ckpt['algorithm']}.py, not {ALGORITHM}.py: --resume needs that one")
    then, now = dict(COMMON, **ckpt["settings"], game=game), dict(cfg, game=game)  # settings added since: defaults
    changed = [f"{k} {then.get(k)!r}, not {v!r}" for k, v in now.items() if k != "iterations" and then.get(k) != v]
    if changed:
        raise ValueError(f"{path} was trained with {', '.join(changed)}: --resume needs the same settings")
    if ckpt["iterations_done"] >= cfg["iterations"]:
        raise ValueError(f"{path} has {ckpt['iterations_done']} iterations done already: ask for more iterations")
    net.load_state_dict(ckpt["state_dict"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["iterations_done"]


def play(net, n_simulations, human_first=True, c_puct=1.25, reuse_tree=False, solver=False):
    """A human against the agent in the terminal; with reuse_tree the last search's subtree goes on growing."""
    kept = [None]  # the agent's last move's node

    def agent(state, reply):
        root = next((ch for ch in kept[0].children if ch.move == reply and ch.children), None) if kept[0] else None
        root = search([state], net, n_simulations, c_puct, roots=[root if reuse_tree else None], solver=solver)[0]
        print(f"the agent searched {n_simulations} simulations:" if n_simulations else "the raw policy (no search):")
        print(f"  {'move':>6} {'prior':>6} {'visits':>7} {'value':>7}")  # every legal move, most visited first
        for ch in sorted(root.children, key=lambda ch: (-ch.n, -ch.prior)):
            value = f"{ch.w / ch.n:7.2f}" if ch.n else f"{'-':>7}"  # an unvisited move has no value yet
            share = ch.n / (root.n - 1) if root.n > 1 else ch.prior  # of the visits, or of the policy with no search
            print(f"  {state.move_name(ch.move):>6} {ch.prior:6.2f} {ch.n:7d} {value}  {'#' * round(40 * share)}")
        chosen = kept[0] = next(ch for ch in root.children if ch.move == best_move(root))
        value = chosen.w / chosen.n if chosen.n else -root.w / root.n  # no search: the network's value
        print(f"the agent plays {state.move_name(chosen.move)} (its value for itself: {value:+.2f})")
        chosen.parent = None  # the rest of the old tree can go
        return chosen.move
    games.play_in_terminal(GAMES[net.game](), agent, human_first)


if __name__ == "__main__":
    for sig, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, stop), (signal.SIGHUP, stop)):
        signal.signal(sig, handler)  # from here on each ends in one line (see the end)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("--game", choices=list(GAMES), default="connect4", help="which game (default connect4)")
    for key, (lo, hi, meaning) in FLAGS.items():  # the default from SETTINGS and COMMON: one, or each game's
        shown = {f"{settings(game)[key]}": game for game in SETTINGS}
        shown = ", ".join(f"{g} {v}" for v, g in shown.items()) if len(shown) > 1 else shown.popitem()[0]
        parser.add_argument(f"--{key.replace('_', '-')}", type=type(lo), metavar="X" if type(lo) is float else "N",
                            help=f"{meaning}, {lo:g} to {hi:g} (default {shown})")
    parser.add_argument("--net", choices=["mlp", "conv"], help="mlp: the lab's network (default); conv: two 3x3 "
                        "convolutions with 32 channels before it")
    parser.add_argument("--seed", type=int, help="random seed, 0 to 2^32 - 1 (default 0)")
    parser.add_argument("--workers", type=int, help=f"self-play processes, 1 to 256 (default {os.cpu_count()})")
    parser.add_argument("--out", help="checkpoint path, saved every iteration (default GAME_plus.pt)")
    parser.add_argument("--resume", action="store_true", help="train --out's checkpoint on to --iterations")
    parser.add_argument("--replace", action="store_true", help="start afresh over --out's checkpoint and CSV: without "
                        "it, a training refuses a path that holds one")
    parser.add_argument("--play", action="store_true", help="play against a saved checkpoint instead of training")
    parser.add_argument("--checkpoint", help="the checkpoint --play loads (default GAME_plus.pt)")
    parser.add_argument("--first", choices=["human", "agent"], help="who starts with --play (default human)")
    args = parser.parse_args()
    for key, (lo, hi, _) in dict(FLAGS, workers=(1, 256, ""), seed=(0, 2**32 - 1, "")).items():
        if getattr(args, key) is not None and not lo <= getattr(args, key) <= hi:  # nan and inf too
            parser.error(f"argument --{key.replace('_', '-')}: must be a number from {lo} to {hi}")
    given = {k for k, v in vars(args).items() if v is not None and v is not False} - {"game", "play"}
    for_play = {"simulations", "c_puct", "reuse_tree", "solver", "checkpoint", "first"}
    for key in sorted(given - for_play if args.play else given & for_play - set(FLAGS)):
        parser.error(f"--{key.replace('_', '-')} is for " + ("training; --play plays a checkpoint" if args.play
                                                             else "--play; training writes --out"))
    if args.resume and args.replace:
        parser.error("--resume goes on with --out's training and --replace starts afresh over it: choose one")
    if args.simulations == 0 and not args.play:
        parser.error("--simulations 0 is for --play (the raw policy); self-play needs at least 1")
    if args.play and args.simulations == 0 and args.reuse_tree:
        parser.error("--reuse-tree 1 keeps a search's tree, and --simulations 0 searches nothing: drop one")
    cfg, default = settings(args.game, **{key: getattr(args, key) for key in [*FLAGS, "net"]}), f"{args.game}_plus.pt"
    path = args.checkpoint if args.play else args.out
    path = default if path is None else path  # an empty path is refused, not taken for the default
    try:
        if args.play:
            trained_by = load(path, args.game, as_net=False).get("algorithm", "alphazero")
            if trained_by != ALGORITHM:  # the network plays, but not with the search that trained it
                print(f"{path} was trained by {trained_by}.py; {ALGORITHM}.py's search plays it here")
            play(NumpyNet(load(path, args.game)), cfg["simulations"], args.first != "agent", cfg["c_puct"],
                 cfg["reuse_tree"], cfg["solver"])
        else:
            train(args.game, cfg, args.seed or 0, args.workers, path, resume=args.resume, replace=args.replace)
            print(f"\ncheckpoint: {path}\nplay against it: python alphazero_plus.py --game {args.game} --play"
                  + (f" --checkpoint {path}" if path != default else ""))
    except ValueError as e:
        sys.exit(f"{parser.prog}: error: {e}")
    except KeyboardInterrupt as e:  # one line, and the status: 130 for Ctrl-C, 128 + the signal for the others
        text, status = [a for a in e.args if isinstance(a, str)], [a for a in e.args if isinstance(a, int)]
        print("\n" + (text or ["bye" if args.play else "interrupted"])[0], file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit((status or [130])[0])  # not sys.exit: the pool's exit handler could wait for the killed workers
    except EOFError:
        print("\nbye")

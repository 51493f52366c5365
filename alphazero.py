"""AlphaZero: puct.py grown into the lab's self-play loop. A policy-value network replaces puct.py's stand-in,
and the search's results train the same network that guides the search. Each iteration, self_play plays `games`
games with the current network, and both sides search `simulations` simulations per move. Every position becomes a
training example: the position, how the search shared its visits among the moves, and the game's outcome for the
player to move there. Then fit takes `steps` Adam steps on the examples of the last `window` iterations, and the
next iteration plays with the new network. Read `search` (puct_search on many games at once), `predict`, `self_play`
and `fit`, then `train`, the loop that ties them together; its lines marked `# plumbing` are machinery you can skip.

    python alphazero.py --game connect4                       # train (see the README for how long), saves connect4.pt
    python alphazero.py --game connect4 --play                # then play against it in the terminal
    python alphazero.py --game tictactoe                      # the lab's Part 1
"""
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


ALGORITHM = "alphazero"  # saved in checkpoints, so --resume refuses one that another script trained
GAMES = {"tictactoe": games.TicTacToe, "connect4": games.ConnectFour}  # --game module:Class adds a game of your own
SETTINGS = {  # the defaults are the lab's for tic-tac-toe
    "iterations": Setting(40, 1, 10_000, "self-play iterations"),
    "games": Setting(100, 1, 100_000, "self-play games per iteration"),
    "simulations": Setting(100, 0, 100_000, "simulations per move; 0, allowed only with --play, plays the raw policy"),
    "temp_moves": Setting(4, 0, 1_000, "moves sampled by visit counts at the start of a game, then the most visited"),
    "hidden": Setting(128, 1, 4_096, "units in each of the network's two hidden layers"),
    "steps": Setting(200, 1, 100_000, "Adam steps per iteration"),
    "batch": Setting(256, 1, 65_536, "minibatch size"),
    "window": Setting(20, 1, 10_000, "train on the positions of the last N iterations"),
    "lr": Setting(1e-3, 1e-6, 1.0, "Adam step size"),
    "weight_decay": Setting(1e-4, 0.0, 1.0, "Adam weight decay"),
    "c_puct": Setting(1.25, 0.0, 100.0, "PUCT exploration constant c"),
    "alpha": Setting(1.0, 1e-3, 100.0, "Dirichlet noise concentration"),
    "noise": Setting(0.25, 0.0, 1.0, "weight of the Dirichlet noise in the root's priors in self-play"),
    "mirror": Setting(0, 0, 1, "1: add the left-right mirror image of every position to the training data"),
    "reuse_tree": Setting(0, 0, 1, "1: keep the chosen move's subtree for the next search")}
GAME_SETTINGS = {  # defaults that differ for one game (for Connect Four, the lab's Part 2); others use SETTINGS
    "connect4": dict(hidden=256, iterations=60, simulations=50, temp_moves=8, steps=400, mirror=1)}


class Node:
    """A position in the tree, reached by playing `move`; N and W count for the player who made `move`. There is no
    parent link: the back-up walks the path that selection took, so a tree has no cycles and is freed once dropped."""
    __slots__ = ("move", "children", "prior", "network_prior", "n", "w")  # self-play makes millions of nodes

    def __init__(self, move=None, prior=1.0):
        self.move, self.children = move, []
        self.prior = prior                            # P(s,a): the network's guess that `move` is good
        self.network_prior = prior                    # P(s,a) free of the noise that add_dirichlet mixes into
                                                      # `prior`, for best_move to break ties in the visits
        self.n, self.w = 0, 0.0                       # visits, and the sum of values for whoever made `move`


def search(root_states, net, n_simulations, c_puct=1.25, noise=None, roots=None, cache=None):
    """Run puct_search on many games side by side and return their roots. As in the lab, the network expands each
    root first (see expand_roots) and n_simulations follow; puct.py counts that expansion as its first simulation. Each
    simulation walks every game's tree down to a leaf, and one network call scores all the leaves for the cost of one.
    `roots` holds trees kept from the last move (--reuse-tree) or None; `cache` keeps network outputs (see predict)."""
    roots = expand_roots(root_states, net, roots, noise, cache)
    for t in range(1, n_simulations + 1):
        leaves = []
        for root, root_state in zip(roots, root_states):
            node, state, path = root, root_state.copy(), [root]

            # 1. Select: while a node has children, descend to the child with the best PUCT score
            while node.children:
                sqrt_n = math.sqrt(node.n)
                node = max(node.children, key=lambda ch: puct_score(ch, sqrt_n, c_puct))
                state.play(node.move)
                path.append(node)
            leaves.append((path, state))

        # 2. Expand: one network call gives every legal move a child with its prior
        for (path, state), (priors, value) in zip(leaves, predict(net, [state for _, state in leaves], cache)):
            node = path[-1]
            node.children = [Node(move, p)
                             for move, p in priors.items()]

            # 3. Evaluate: the same call scored the position in [-1, 1] for the player to move there, not in [0, 1]
            #    for the first player, so one network plays both sides and a value just flips sign between them

            # 4. Back up: each node on the path counts a visit and adds the leaf's value to W, summed for
            #    the player who moved into the node. That player is to move at the parent, so the parent picks the
            #    child with the best Q = W / N for itself. `value` starts out for the player to move at the leaf, who
            #    did not move into it, so its sign flips before the first increment and again at each step up.
            #    An unvisited child counts Q = 0, which is a draw on this [-1, 1] scale (on puct.py's [0, 1], a loss).
            for node in reversed(path):  # walk back along the path, as OpenSpiel does, not by parent links
                value = -value  # now for the player who moved into this node
                node.n += 1
                node.w += value
    return roots


def puct_score(child, sqrt_n, c_puct):
    """The PUCT select score, Rosin's (2011) formula as AlphaGo Zero and AlphaZero use it (Silver et al. 2017, 2018):
    Q + c_puct P sqrt(N(parent)) / (1 + N). Here sqrt_n = sqrt(N(parent)), P is the child's prior, and Q = W / N for
    the player who made its move, or 0 (a draw on this [-1, 1] scale) for an unvisited child."""
    return (child.w / child.n if child.n else 0.0) + c_puct * child.prior * sqrt_n / (1 + child.n)


def expand_roots(root_states, net, roots=None, noise=None, cache=None):
    """Return the search's roots, expanded by the network. A None becomes a new root, and a tree kept from the last
    move is used as it is. A new root counts its expansion as its first visit, so that sqrt(N(root)) equals the lab's
    sqrt(sum_b N(b) + 1). In self-play, noise = (rng, alpha, weight) mixes Dirichlet noise into every root's priors."""
    roots = roots or [None] * len(root_states)  # None means no tree was kept from the last move
    roots = [Node() if root is None else root for root in roots]  # a new root where no tree was kept
    new = [(root, s) for root, s in zip(roots, root_states) if not root.children]
    for (root, state), (priors, value) in zip(new, predict(net, [s for _, s in new], cache)):
        root.children = [Node(move, p) for move, p in priors.items()]
        root.n, root.w = 1, -value  # W is for whoever moved into the root, as in the back-up
    if noise is not None:
        for root in roots:
            add_dirichlet(root, *noise)
    return roots


def best_move(root):
    """Return the most visited move, since a high average over few visits may be luck. A tie goes to the higher
    network prior, as in the lab's code: in self-play the root's noise is there to explore, not to pick among equals."""
    return max(root.children, key=lambda ch: (ch.n, ch.network_prior)).move


def visit_policy(root, tau=1.0):
    """The training label pi(a) = N(a)^(1/tau) / sum_b N(b)^(1/tau); tau = 0 puts everything on the most visited."""
    if tau == 0:
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
    two hidden layers of `hidden` units to a logit for each of n_actions moves and a value in [-1, 1]."""

    def __init__(self, n_inputs, n_actions, hidden):
        super().__init__()
        self.hidden = hidden
        self.body = torch.nn.Sequential(torch.nn.Linear(n_inputs, hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(hidden, hidden), torch.nn.ReLU())
        self.policy, self.value = torch.nn.Linear(hidden, n_actions), torch.nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(-1)


class NumpyNet:
    """The same network in numpy, for the search: torch adds tens of microseconds of overhead to every call."""

    def __init__(self, net):
        # transpose each layer's weights once, so that a batch of rows x goes through it as x @ w + b
        w = [(layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy())
             for layer in (net.body[0], net.body[2], net.policy, net.value)]
        (self.w1, self.b1), (self.w2, self.b2), (self.wp, self.bp), (self.wv, self.bv) = w

    def __call__(self, x):
        h = np.maximum(x @ self.w1 + self.b1, 0)
        h = np.maximum(h @ self.w2 + self.b2, 0)
        return h @ self.wp + self.bp, np.tanh(h @ self.wv + self.bv)[:, 0]


def predict(net, states, cache=None):
    """Run the network on a batch of states and return ({legal move: prior}, value for the player to move) for each.
    The priors are a softmax over the legal moves only; a finished game gets no priors and its exact value. `cache`
    maps a position's key to this network's output, so positions seen before cost nothing (in self-play with a
    trained network, about three in four)."""
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


def choose_move(state, net, n_simulations):
    """Return the agent's move in `state`: the most visited after n_simulations of search without noise, or with 0
    simulations the raw policy's most likely legal move. `net` is a Net (from load) or a NumpyNet."""
    return best_move(search([state], net, n_simulations)[0])


def self_play(game, net, n_games, cfg, rng):
    """Play n_games of `game` (a class whose constructor gives the start position) side by side, with both sides
    searching with the settings cfg. Return the examples (x, pi, z): each position seen by the player to move,
    its visit distribution, and the game's outcome for that player."""
    states = [game() for _ in range(n_games)]
    roots = [None] * n_games
    cache = {}  # this network's outputs by position, shared by every game and move in this call
    history = [[] for _ in range(n_games)]
    while live := [i for i in range(n_games) if not states[i].is_over()]:  # the games still going
        found = search([states[i] for i in live], net, cfg["simulations"], cfg["c_puct"],
                       noise=(rng, cfg["alpha"], cfg["noise"]), roots=[roots[i] for i in live], cache=cache)
        for i, root in zip(live, found):
            pi = np.zeros(game.n_actions, dtype=np.float32)  # the label is each move's share of the visits
            for move, p in visit_policy(root).items():
                pi[move] = p
            history[i].append((states[i].encode(), pi, states[i].first_to_move()))
            # to explore, the first temp_moves moves are sampled by visit count; later ones are the most visited
            move = rng.choice(len(pi), p=pi / pi.sum()) if len(history[i]) <= cfg["temp_moves"] else best_move(root)
            states[i].play(move)
            roots[i] = None  # the next search grows a new tree...
            if cfg["reuse_tree"]:  # ...or, with --reuse-tree, goes on from the chosen move's subtree and its visits
                for child in root.children:
                    if child.move == move and child.children:  # a child never expanded has nothing to keep
                        roots[i] = child  # the rest of the old tree is freed
    x, pis, zs = [], [], []
    for state, positions in zip(states, history):
        result = 2 * state.result() - 1  # the first player's result: 1 for a win, -1 for a loss, 0 for a draw
        for encoding, pi, first in positions:
            x.append(encoding)
            pis.append(pi)
            zs.append(result if first else -result)  # z is that result for the player who was to move there
    return (np.array(x, np.float32).reshape(-1, game.encoding_size),  # the right shape even when no position was kept
            np.array(pis, np.float32).reshape(-1, game.n_actions), np.array(zs, np.float32))


def fit(net, optimizer, data, steps, batch, rng):
    """Run Adam steps on minibatches of the replay window, minimising (z - v)^2 - pi . log p; return the mean losses."""
    x, pi, z = (torch.from_numpy(np.concatenate(part)) for part in zip(*data))
    losses = []
    for step in range(steps):  # each minibatch is drawn uniformly, with replacement, from the window
        idx = torch.from_numpy(rng.integers(0, len(z), size=batch))
        logits, v = net(x[idx])
        value_loss = ((z[idx] - v) ** 2).mean()
        policy_loss = -(pi[idx] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        optimizer.zero_grad()  # the loss's third term, an L2 penalty on the weights, comes from Adam's weight_decay
        (value_loss + policy_loss).backward()
        optimizer.step()
        losses.append((value_loss.item(), policy_loss.item()))
    return np.mean(losses, axis=0).tolist()


def settings(game, **overrides):
    """Return the settings for `game`: SETTINGS' defaults, then the game's own GAME_SETTINGS, then any overrides that
    are not None. An unknown name raises ValueError."""
    unknown = [key for key in overrides if key not in SETTINGS]
    if unknown:
        raise ValueError(f"no setting {', '.join(unknown)}: the settings are {', '.join(SETTINGS)}")
    defaults = {key: setting.default for key, setting in SETTINGS.items()}
    return {**defaults, **GAME_SETTINGS.get(game, {}), **{k: v for k, v in overrides.items() if v is not None}}


def train(game, cfg, seed=0, run=None, on_iteration=None):
    """The self-play loop: play an iteration's games with the current network, train it on the positions of the last
    `window` iterations, and repeat; return the trained Net. on_iteration(it, net) is called after each iteration,
    and at 0 before any training. Lines marked `# plumbing` are machinery a reader can skip. check_game, load and
    save are defined at the end of this file, and `run` is a plumbing.Run holding the workers, the checkpoint path
    and the log; by default it is this process alone and saves nothing."""
    check_game(game, cfg)  # plumbing: refuse bad settings or a bad game with a one-line error, before any work
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    Game = GAMES[game]  # the game's class, whose constructor gives the start position
    net = Net(Game.encoding_size, Game.n_actions, cfg["hidden"])
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"], fused=True)
    replay, done = [], 0  # the replay window of recent examples, and the iterations done
    run = run or Run()  # plumbing, to the end of the block: resume from run.out's checkpoint as if never stopped
    if run.resume:
        ckpt = run.resumable(load(run.out, game, as_net=False), ALGORITHM, cfg)
        net.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        rng.bit_generator.state = ckpt["rng"]
        replay = [tuple(part.numpy() for part in example) for example in ckpt["replay"]]
        run.rows, done = ckpt["rows"], ckpt["iterations_done"]
    # `with run` claims run.out, sets this process to one thread and starts the workers. However the loop ends, Run
    # then stops the workers and restores the caller's settings; after an error or a stop, it notes what run.out holds.
    with run:
        if on_iteration and not done:
            on_iteration(0, net)
        for it in range(done + 1, cfg["iterations"] + 1):
            t0 = time.time()
            # play the games in two shares (the lab's two halves), in the Run's workers if it has any. Share k uses its
            # own random stream, seeded (seed, it, k), so that the results do not depend on the number of workers
            shares = [cfg["games"] - cfg["games"] // 2, cfg["games"] // 2][:cfg["games"]]
            rngs = [np.random.default_rng((seed, it, k)) for k in range(len(shares))]
            played = run.map(self_play, [Game] * 2, [NumpyNet(net)] * 2, shares, [cfg] * 2, rngs)
            x, pi, z = (np.concatenate(part) for part in zip(*played))
            if cfg["mirror"]:  # left-right mirror images: twice the data for free
                x = np.concatenate([x, Game.mirror_encoding(x)])
                pi = np.concatenate([pi, Game.mirror_policy(pi)])
                z = np.concatenate([z, z])
            replay = (replay + [(x, pi, z)])[-cfg["window"]:]  # keep only the last `window` iterations
            t1 = time.time()
            value_loss, policy_loss = fit(net, optimizer, replay, cfg["steps"], cfg["batch"], rng)
            if not math.isfinite(value_loss + policy_loss):  # stop before a diverged network of NaNs is saved
                raise ValueError(f"the loss is {value_loss + policy_loss} at iteration {it}: the training diverged")
            run.rows.append(dict(iteration=it, positions=len(z), value_loss=value_loss, policy_loss=policy_loss,
                                 self_play_s=t1 - t0, training_s=time.time() - t1))
            if run.out:  # plumbing: save a checkpoint with all that --resume needs
                save(net, run.out, game, optimizer, cfg, dict(iterations_done=it, rng=rng.bit_generator.state,
                                                            replay=replay, rows=run.rows))
            run.log_iteration(cfg)  # plumbing: print the iteration's line and write the CSV beside the checkpoint
            if on_iteration:
                on_iteration(it, net)
    return net


def play(game, net, n_simulations, human_first=True, c_puct=1.25, reuse_tree=False):
    """Let a human play the agent in the terminal, from the start of `game` (a class). With reuse_tree, the agent
    keeps growing the subtree from its last search."""
    kept = [None]  # with reuse_tree, the node of the agent's last move
    def agent(state, reply):
        root = next((ch for ch in kept[0].children if ch.move == reply and ch.children), None) if kept[0] else None
        before = root.n if root else 0  # the visits the kept subtree already had, before this search adds more
        root = search([state], net, n_simulations, c_puct, roots=[root])[0]
        chosen = next(ch for ch in root.children if ch.move == best_move(root))
        kept[0] = chosen if reuse_tree else None
        value = chosen.w / chosen.n if chosen.n else -root.w / root.n  # with no search, the network's value
        return games.show_search(state, root, n_simulations, chosen.move, value, before)
    games.play_in_terminal(game(), agent, human_first)


# Plumbing: the Run given to train, the checks, saving and loading checkpoints, and the command line (plumbing.py) ----
from plumbing import Run, check_settings, command_line, read_checkpoint, run_main, write_atomic  # noqa: E402


def check_game(game, cfg):  # refuse bad settings, or a game that breaks the contract, with a one-line error
    check_settings(SETTINGS, cfg)
    games.check_network_game(game, GAMES[game], *[games.Mirrored] * bool(cfg["mirror"]))


def save(net, path, game, optimizer=None, cfg=None, kept=None):
    """Save the network atomically. With an optimizer, also save what --resume needs: Adam's state, the settings and
    `kept` (the iterations done, the random stream, the replay window and the CSV's rows)."""
    ckpt = {"game": game, "algorithm": ALGORITHM, "hidden": net.hidden, "state_dict": net.state_dict()}
    if optimizer:
        replay = [[torch.from_numpy(part) for part in example] for example in kept["replay"]]
        ckpt.update(kept, optimizer=optimizer.state_dict(), settings=cfg, replay=replay)
    torch.save(ckpt, buffer := io.BytesIO())  # serialise in memory first, so that disk errors come only from the write
    write_atomic(path, buffer.getvalue())


def load(path, game=None, as_net=True):  # a saved Net or the checkpoint's dict; a bad file gives a readable ValueError
    ckpt = read_checkpoint(path, game, GAMES)
    if not as_net:
        return ckpt
    net = Net(GAMES[ckpt["game"]].encoding_size, GAMES[ckpt["game"]].n_actions, ckpt["hidden"])
    try:
        net.load_state_dict(ckpt["state_dict"])
    except Exception:
        raise ValueError(f"{path} holds a network that {ALGORITHM}.py cannot build") from None
    return net


PLAYS = ("simulations", "c_puct", "reuse_tree")  # the settings --play reads


def main():  # build the flags from SETTINGS, then train or --play
    args = command_line(__doc__, SETTINGS, GAME_SETTINGS, GAMES, "GAME.pt", PLAYS)
    cfg = settings(args.game, **{key: getattr(args, key) for key in SETTINGS})
    path = (args.checkpoint if args.play else args.out) or f"{args.game.split(':')[-1].lower()}.pt"
    if args.play:  # search settings not given as flags come from the checkpoint
        saved = load(path, args.game, as_net=False).get("settings") or {}
        cfg.update({k: saved[k] for k in PLAYS if k in saved and getattr(args, k) is None})
        play(GAMES[args.game], NumpyNet(load(path, args.game)), cfg["simulations"], args.first != "agent",
             cfg["c_puct"], cfg["reuse_tree"])
    else:
        train(args.game, cfg, args.seed, Run(args.workers, path, args.resume, args.replace, flags=True))
        return f"\ncheckpoint: {path}\nplay it: python {sys.argv[0]} --game {args.game} --play --checkpoint {path}"


if __name__ == "__main__":
    run_main(main)

"""Gumbel search: alphazero.py with PUCT replaced by Gumbel search and sequential halving (Danihelka et al. 2022,
"Policy improvement by planning with Gumbel"), as in DeepMind's mctx.
The Gumbel noise at the root does the exploring (no Dirichlet noise, no temperature), and the policy is trained on
softmax(logits + sigma(completed Q)), which improves on the network's policy even with 2 simulations.

    python gumbel.py --game tictactoe --simulations 2        # the lab's Part 3a, one seed: tictactoe_gumbel.pt
    python gumbel.py --game tictactoe --play --simulations 2  # then play against it
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


ALGORITHM = "gumbel"  # saved in checkpoints, so --resume refuses one that another script trained
GAMES = {"tictactoe": games.TicTacToe, "connect4": games.ConnectFour}  # --game module:Class adds a game of your own
SETTINGS = {  # the defaults are the lab's for tic-tac-toe
    "iterations": Setting(40, 1, 10_000, "self-play iterations"),
    "games": Setting(100, 1, 100_000, "self-play games per iteration"),
    "simulations": Setting(100, 0, 100_000, "simulations per move; 0, allowed only with --play, plays the raw policy"),
    "hidden": Setting(128, 1, 4_096, "units in each of the network's two hidden layers"),
    "steps": Setting(200, 1, 100_000, "Adam steps per iteration"),
    "batch": Setting(256, 1, 65_536, "minibatch size"),
    "window": Setting(20, 1, 10_000, "train on the positions of the last N iterations"),
    "lr": Setting(1e-3, 1e-6, 1.0, "Adam step size"),
    "weight_decay": Setting(1e-4, 0.0, 1.0, "Adam weight decay"),
    "considered": Setting(16, 1, 1_000, "moves considered at the root: m = min(N, legal moves)"),
    "mirror": Setting(0, 0, 1, "1: add the left-right mirror image of every position to the training data")}
GAME_SETTINGS = {  # Connect Four uses alphazero.py's defaults, since the lab trained Gumbel only on tic-tac-toe
    "connect4": dict(hidden=256, iterations=60, simulations=50, steps=400, mirror=1)}


class Node:
    """A position in the tree, reached by playing `move`; N and W count for the player who made `move`. There is no
    parent link: the back-up walks the path that selection took, so a tree has no cycles and is freed once dropped."""
    __slots__ = ("move", "children", "prior", "n", "w",  # self-play makes millions of nodes
                 "value", "gumbel", "considered", "schedule")

    def __init__(self, move=None, prior=1.0):
        self.move, self.children = move, []
        self.prior = prior                            # P(s,a): the network's guess that `move` is good
        self.n, self.w = 0, 0.0                       # visits, and the sum of values for whoever made `move`
        self.value = 0.0                              # the network's value for the player to move here


def search(root_states, net, n_simulations, max_considered=16, rng=None, cache=None):
    """Run Gumbel search on many games side by side and return their roots. The network first expands each root, and
    sequential halving plans its simulations (see expand_roots). Each simulation walks every game's tree down to a
    leaf, and one network call scores all the leaves for the cost of one. Without `rng` there is no Gumbel noise, so
    the search is deterministic; `cache` keeps network outputs (see predict)."""
    roots = expand_roots(root_states, net, n_simulations, max_considered, rng, cache)
    for t in range(1, n_simulations + 1):
        leaves = []
        for root, root_state in zip(roots, root_states):
            node, state, path = root, root_state.copy(), [root]

            # 1. Select: at the root, sequential halving picks among the considered moves; below it, a fixed rule
            while node.children:
                node = select_at_root(node, t) if node is root else select_below_root(node)
                state.play(node.move)
                path.append(node)
            leaves.append((path, state))

        # 2. Expand: one network call gives every legal move a child with its prior
        for (path, state), (priors, value) in zip(leaves, predict(net, [state for _, state in leaves], cache)):
            node = path[-1]
            node.children = [Node(move, p)
                             for move, p in priors.items()]
            node.value = value

            # 3. Evaluate: the same call scored the position in [-1, 1] for the player to move there, not in [0, 1]
            #    for the first player, so one network plays both sides and a value just flips sign between them

            # 4. Back up: each node on the path counts a visit and adds the leaf's value to W, summed for
            #    the player who moved into the node. That player is to move at the parent, so the parent picks the
            #    child with the best Q = W / N for itself. `value` starts out for the player to move at the leaf, who
            #    did not move into it, so its sign flips before the first increment and again at each step up.
            #    An unvisited child has no Q of its own, so completed_q gives it the mixed value instead.
            for node in reversed(path):  # walk back along the path, as OpenSpiel does, not by parent links
                value = -value  # now for the player who moved into this node
                node.n += 1
                node.w += value
    return roots


def expand_roots(root_states, net, n_simulations, max_considered=16, rng=None, cache=None):
    """Return the search's roots, expanded by the network, each with its own Gumbel noise and sequential halving plan
    (see start_halving). A root counts its expansion as its first visit, as every node below it does."""
    roots = [Node() for _ in root_states]
    for root, (priors, value) in zip(roots, predict(net, root_states, cache)):
        root.children = [Node(move, p) for move, p in priors.items()]
        root.n, root.w, root.value = 1, -value, value  # W is for whoever moved into the root, as in the back-up
        start_halving(root, n_simulations, max_considered, rng)
    return roots


def best_move(root):
    """Return, among the most visited moves, the one with the best g + logits + sigma(q). After any simulation these
    are considered moves, since no other move is visited; with no simulation, every legal move ties at 0 visits."""
    top = max(ch.n for ch in root.children)
    sigma = dict(zip(root.children, sigma_q(root)))
    return max((ch for ch in root.children if ch.n == top), key=lambda ch: root_score(root, ch, sigma)).move


def improved_policy(root):
    """softmax(logits + sigma(completed Q)) over a node's moves: the training label, and select_below_root's target."""
    z = [log_prior(ch) + s for ch, s in zip(root.children, sigma_q(root))]
    return dict(zip((ch.move for ch in root.children), softmax(z)))


def get_sequence_of_considered_visits(max_num_considered_actions, num_simulations):
    """Sequential halving's schedule, as in mctx: simulation t goes to a considered root move with schedule[t - 1]
    visits so far. Each round gives every considered move the same number of visits, then halves the field, to 2."""
    if max_num_considered_actions <= 1:
        return tuple(range(num_simulations))
    log2max = math.ceil(math.log2(max_num_considered_actions))
    sequence, visits, considered = [], [0] * max_num_considered_actions, max_num_considered_actions
    while len(sequence) < num_simulations:
        for _ in range(max(1, num_simulations // (log2max * considered))):
            sequence.extend(visits[:considered])
            visits[:considered] = [v + 1 for v in visits[:considered]]
        considered = max(2, considered // 2)
    return tuple(sequence[:num_simulations])


def start_halving(root, n_simulations, max_considered, rng):
    """Draw the root's Gumbel noise g (none without rng) and consider the m moves with the largest g + logits."""
    g = rng.gumbel(size=len(root.children)).tolist() if rng is not None else [0.0] * len(root.children)
    root.gumbel = {ch.move: x for ch, x in zip(root.children, g)}
    m = min(max_considered, len(root.children))
    ranked = sorted(root.children, key=lambda ch: root.gumbel[ch.move] + log_prior(ch), reverse=True)
    root.considered = {ch.move for ch in ranked[:m]}
    root.schedule = get_sequence_of_considered_visits(m, n_simulations)


MAXVISIT_INIT, VALUE_SCALE, EPSILON = 50.0, 0.1, 1e-8  # sigma's constants, as named and valued in mctx's qtransforms.py


def completed_q(node):
    """Visited children keep their mean value; unvisited ones get the mixed value (Danihelka et al. 2022, Appendix
    D): the network's value at the node mixed with the prior-weighted mean of the visited children's values."""
    visited = [ch for ch in node.children if ch.n]
    n_visits = sum(ch.n for ch in visited)
    mixed = node.value
    if visited:
        weighted = sum(ch.prior * ch.w / ch.n for ch in visited) / sum(ch.prior for ch in visited)
        mixed = (node.value + n_visits * weighted) / (1 + n_visits)
    return [ch.w / ch.n if ch.n else mixed for ch in node.children]


def sigma_q(node):
    """sigma(completed Q) for each child. Q is rescaled to [0, 1] over the legal moves (a spread below EPSILON counts
    as EPSILON) and multiplied by (MAXVISIT_INIT + max N) * VALUE_SCALE, so values weigh more as visits grow."""
    q = completed_q(node)
    lo, hi = min(q), max(q)
    scale = (MAXVISIT_INIT + max(ch.n for ch in node.children)) * VALUE_SCALE
    return [scale * (x - lo) / max(hi - lo, EPSILON) for x in q]


def log_prior(child):
    """The move's logit, log P, floored at the smallest normal float as mctx does. A prior that underflowed to 0.0
    then gives a logit of about -708 instead of an error, and loses to any move with a real prior."""
    return math.log(max(child.prior, sys.float_info.min))


def softmax(z):
    top = max(z)
    e = [math.exp(x - top) for x in z]
    return [x / sum(e) for x in e]


def root_score(root, child, sigma):
    """Sequential halving's score for a root move, g + logits + sigma(q); `sigma` maps a child to its sigma(q)."""
    return root.gumbel[child.move] + log_prior(child) + sigma[child]


def select_at_root(root, t):
    """Pick the best root_score among the considered moves whose visit count is the schedule's for simulation t."""
    target = root.schedule[t - 1]
    sigma = dict(zip(root.children, sigma_q(root)))
    ready = [ch for ch in root.children if ch.move in root.considered and ch.n == target]
    return max(ready, key=lambda ch: root_score(root, ch, sigma))


def select_below_root(node):
    """Pick the argmax of pi'(a) - N(a) / (1 + sum N), where pi' is the improved policy softmax(logits + sigma(q))."""
    pi, total = improved_policy(node), sum(ch.n for ch in node.children)
    return max(node.children, key=lambda ch: pi[ch.move] - ch.n / (1 + total))


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
    """Return the agent's move in `state`: Gumbel search's choice after n_simulations without noise, or with 0
    simulations the raw policy's most likely legal move. `net` is a Net (from load) or a NumpyNet."""
    return best_move(search([state], net, n_simulations)[0])


def self_play(game, net, n_games, cfg, rng):
    """Play n_games of `game` (a class whose constructor gives the start position) side by side, with both sides
    searching with the settings cfg. Return the examples (x, pi, z): each position seen by the player to move,
    the improved policy, and the game's outcome for that player."""
    states = [game() for _ in range(n_games)]
    cache = {}  # this network's outputs by position, shared by every game and move in this call
    history = [[] for _ in range(n_games)]
    while live := [i for i in range(n_games) if not states[i].is_over()]:  # the games still going
        found = search([states[i] for i in live], net, cfg["simulations"], cfg["considered"], rng, cache)
        for i, root in zip(live, found):
            pi = np.zeros(game.n_actions, dtype=np.float32)  # the label is the improved policy
            for move, p in improved_policy(root).items():
                pi[move] = p
            history[i].append((states[i].encode(), pi, states[i].first_to_move()))
            states[i].play(best_move(root))  # no temperature, since the Gumbel noise explores
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


def play(game, net, n_simulations, human_first=True, max_considered=16):
    """Let a human play the agent in the terminal, from the start of `game` (a class)."""
    def agent(state, reply):
        root = search([state], net, n_simulations, max_considered)[0]
        chosen = next(ch for ch in root.children if ch.move == best_move(root))
        value = chosen.w / chosen.n if chosen.n else -root.w / root.n  # with no search, the network's value
        return games.show_search(state, root, n_simulations, chosen.move, value)
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


PLAYS = ("simulations", "considered")  # the settings --play reads


def main():  # build the flags from SETTINGS, then train or --play
    args = command_line(__doc__, SETTINGS, GAME_SETTINGS, GAMES, "GAME_gumbel.pt", PLAYS)
    cfg = settings(args.game, **{key: getattr(args, key) for key in SETTINGS})
    path = (args.checkpoint if args.play else args.out) or f"{args.game.split(':')[-1].lower()}_gumbel.pt"
    if args.play:  # search settings not given as flags come from the checkpoint
        saved = load(path, args.game, as_net=False).get("settings") or {}
        cfg.update({k: saved[k] for k in PLAYS if k in saved and getattr(args, k) is None})
        play(GAMES[args.game], NumpyNet(load(path, args.game)), cfg["simulations"], args.first != "agent",
             cfg["considered"])
    else:
        train(args.game, cfg, args.seed, Run(args.workers, path, args.resume, args.replace, flags=True))
        return f"\ncheckpoint: {path}\nplay it: python {sys.argv[0]} --game {args.game} --play --checkpoint {path}"


if __name__ == "__main__":
    run_main(main)

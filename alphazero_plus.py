"""AlphaZero, going further: alphazero.py plus four changes, each a flag, that the lab's questions led to.
  --q-weight W        the value target mixes the game's outcome with the search's value of the position
  --random-openings F this fraction of self-play games starts from a uniformly random first move
  --lr-final X        Adam's step size falls geometrically from --lr to X at the last iteration
  --net conv          two 3x3 convolutions (32 channels) on the board before the MLP
Its Connect Four defaults are the strong player's recipe (FURTHER.md says why each); its tic-tac-toe defaults are
the lab's plus a quarter of random openings, which left fewer blind spots at each of 3 seeds at no cost elsewhere.

    python alphazero_plus.py --game connect4                  # the strong player (about 11 minutes on 2 cores)
    python alphazero_plus.py --game connect4 --play           # then play against it in the terminal
"""
import os

if __name__ == "__main__":  # one BLAS thread a process (see start_process): numpy reads these as it loads
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
import argparse
import gc
import math
import multiprocessing
import signal
import sys
import time

import numpy as np
import torch

import games

ALGORITHM = "alphazero_plus"  # recorded in checkpoints: --resume goes on only with the algorithm that trained one
GAMES = {"tictactoe": games.TicTacToe, "connect4": games.ConnectFour}
SETTINGS = {  # the lab's settings and the going-further ones that beat them; every one has a flag
    "tictactoe": dict(hidden=128, iterations=40, games=100, simulations=100, temp_moves=4, steps=200, mirror=False,
                      random_openings=0.25),
    "connect4": dict(hidden=384, iterations=120, games=200, simulations=35, temp_moves=8, steps=800, mirror=True,
                     window=30, lr_final=1e-4, q_weight=1.0, random_openings=0.25, reuse_tree=True)}
COMMON = dict(window=20, batch=256, lr=1e-3, lr_final=None, weight_decay=1e-4, c_puct=1.25, alpha=1.0, noise=0.25,
              net="mlp", reuse_tree=False, random_openings=0.0, q_weight=0.0)


class Node:
    __slots__ = ("move", "parent", "children", "prior", "n", "w")  # self-play makes millions: slots are faster

    def __init__(self, move=None, parent=None, prior=1.0):
        self.move, self.parent, self.children = move, parent, []
        self.prior = prior                            # P(s,a): the network's guess that `move` is good
        self.n, self.w = 0, 0.0                       # visits, and the sum of values for whoever made `move`


def search(root_states, net, n_simulations, c_puct=1.25, noise=None, roots=None, cache=None):
    """PUCT on several games side by side: each simulation walks every game's tree down to a leaf, then one batched
    network call evaluates all the leaves (one matrix product costs about what a single position does).
    noise = (rng, alpha, weight) mixes Dirichlet noise into the roots' priors (self-play); roots are trees kept
    from the last move (--reuse-tree); cache remembers the network's outputs (see evaluate)."""
    roots = roots or [Node() for _ in root_states]
    for t in range(n_simulations + 1):  # simulation 0 expands the roots
        leaves = []
        for root, root_state in zip(roots, root_states):
            if t == 0 and root.children:
                continue  # a reused tree's root is expanded already
            node, state = root, root_state.copy()

            # 1. Select: while a node has children, descend to the child with the best PUCT score
            while node.children:
                sqrt_n = math.sqrt(node.n)  # = sqrt(sum_b N(s,b) + 1): the node's own first visit expanded it
                scores = [(ch.w / ch.n if ch.n else 0.0)  # a list and its index: a fifth faster than max(key=lambda)
                          + c_puct * ch.prior * sqrt_n / (1 + ch.n) for ch in node.children]
                node = node.children[scores.index(max(scores))]
                state.play(node.move)
            leaves.append((node, state))

        # 2. Expand: one network call gives every leaf's legal moves a child with its prior
        for (node, state), (priors, value) in zip(leaves, evaluate(net, [state for _, state in leaves], cache)):
            node.children = [Node(move, node, p)
                             for move, p in priors.items()]

            # 3. Evaluate: the same call scored the position: `value` is for the player to move at the leaf

            # 4. Back up: each node on the path counts the visit and scores the value for the player who moved into it
            value = -value
            while node is not None:
                node.n += 1
                node.w += value
                value = -value
                node = node.parent

        if t == 0 and noise is not None:
            for root in roots:
                add_dirichlet(root, *noise)
    return roots


def best_move(root):
    """The most visited move (a high average over few visits may be luck); a tie goes to the higher prior."""
    return max(root.children, key=lambda ch: (ch.n, ch.prior)).move


def visit_policy(root, tau=1.0):
    """The training label pi(a) = N(a)^(1/tau) / sum_b N(b)^(1/tau); tau = 0 puts everything on the most visited."""
    if tau == 0:
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


def evaluate(net, states, cache=None):
    """The network on a batch of states: for each, ({legal move: prior}, value for the player to move). Illegal
    moves are masked out of the softmax. A finished game gets no priors and its exact value. `cache` ({position's
    key: result}, for this network) answers the positions met before at no cost: in self-play, three in four."""
    net = NumpyNet(net) if isinstance(net, torch.nn.Module) else net  # a torch Net (from load) works: copied per call
    cache, keys = {} if cache is None else cache, [s.key() for s in states]
    new = {key: s for key, s in zip(keys, states) if key not in cache}  # met for the first time (once if twice)
    moves = [s.legal_moves() for s in new.values()]  # none once the game is over
    live = [s for s, legal in zip(new.values(), moves) if legal]
    priors, values = iter(()), iter(())
    if live:  # the masked softmax of the whole batch in a few numpy calls, not a Python loop over each leaf's moves
        logits, v = net(type(live[0]).encode_many(live))
        legal = np.zeros(logits.shape, dtype=bool)
        rows, columns = np.repeat(np.arange(len(live)), [len(m) for m in moves if m]), [m for m in moves if m]
        legal[rows, np.concatenate(columns)] = 1
        masked = np.where(legal, logits.astype(np.float64), -np.inf)
        e = np.exp(masked - masked.max(axis=1, keepdims=True))
        priors, values = iter((e / e.sum(axis=1, keepdims=True)).tolist()), iter(np.asarray(v).tolist())
    for (key, s), legal in zip(new.items(), moves):
        if legal:
            p = next(priors)
            cache[key] = ({m: p[m] for m in legal}, next(values))
        else:
            cache[key] = ({}, outcome(s))
    return [cache[key] for key in keys]


def outcome(state):
    """A finished game's value for the player to move: 1 won, -1 lost, 0 drawn."""
    r = 2 * state.result() - 1
    return r if state.first_to_move() else -r


def choose_move(state, net, n_simulations, rng=None):
    """The agent's move in `state` (a legal move index): with 0 simulations the raw policy's most likely legal move,
    else the most visited after n_simulations of search without noise. net: a Net (from load) or a NumpyNet."""
    if n_simulations == 0:
        priors, _ = evaluate(net, [state])[0]
        return max(priors, key=priors.get)
    return best_move(search([state], net, n_simulations)[0])


def self_play(game, net, n_games, n_simulations, temp_moves, rng, c_puct=1.25, alpha=1.0, noise=0.25,
              reuse_tree=False, random_openings=0.0, q_weight=0.0):
    """Play n_games side by side, both sides searching; return the examples (x, pi, z): each position seen by the
    player to move, its visit distribution, and the game's outcome for that player (with --q-weight w, mixed with
    the search's value q of the position: (1 - w) z + w q, less noisy than a whole game's one result)."""
    states = [GAMES[game]() for _ in range(n_games)]
    for s in states:  # --random-openings: this fraction of the games starts from a uniformly random first move
        if random_openings and rng.random() < random_openings:
            s.play(rng.choice(s.legal_moves()))
    roots = [None] * n_games
    cache = {}  # this network's outputs by position, for every game and move of this call
    history = [[] for _ in range(n_games)]
    while True:
        live = [i for i in range(n_games) if not states[i].is_over()]
        if not live:
            break
        found = search([states[i] for i in live], net, n_simulations, c_puct, noise=(rng, alpha, noise),
                       roots=[roots[i] or Node() for i in live], cache=cache)
        for i, root in zip(live, found):
            pi = np.zeros(GAMES[game].n_actions, dtype=np.float32)
            for move, p in visit_policy(root).items():
                pi[move] = p
            history[i].append((states[i].encode(), pi, states[i].first_to_move(), -root.w / root.n))
            move = rng.choice(len(pi), p=pi / pi.sum()) if len(history[i]) <= temp_moves else best_move(root)
            states[i].play(move)
            roots[i] = next((ch for ch in root.children if ch.move == move and ch.children), None) if reuse_tree else None
            if roots[i]:
                roots[i].parent = None  # the rest of the old tree can go
    x, pis, zs = [], [], []
    for state, h in zip(states, history):
        r = 2 * state.result() - 1  # the first player's outcome, in [-1, 1]
        for enc, pi, first, q in h:
            x.append(enc)
            pis.append(pi)
            zs.append((1 - q_weight) * (r if first else -r) + q_weight * q)
    return np.array(x), np.array(pis), np.array(zs, dtype=np.float32)


def play_games(job):
    """One worker's share of an iteration's games, with its own random stream."""
    game, net, n_games, cfg, seed = job
    rng = np.random.default_rng(seed)
    gc.disable()  # nodes point to their parents: cycles that only the collector frees; collecting the trees once,
    try:          # when the games are done, is much cheaper than collecting them again and again as they pile up
        return self_play(game, net, n_games, cfg["simulations"], cfg["temp_moves"], rng, cfg["c_puct"],
                         cfg["alpha"], cfg["noise"], cfg["reuse_tree"], cfg["random_openings"], cfg["q_weight"])
    finally:
        gc.enable()
        gc.collect(0)  # generation 0: what the games made (a full collection would go through all of torch too)


def fit(net, optimizer, data, steps, batch, rng):
    """Adam steps on minibatches of the replay window, minimising (z - v)^2 - pi . log p."""
    x, pi, z = (torch.from_numpy(np.concatenate(part)) for part in zip(*data))
    losses = []
    for _ in range(steps):
        idx = torch.from_numpy(rng.integers(0, len(z), size=batch))
        logits, v = net(x[idx])
        value_loss = ((z[idx] - v) ** 2).mean()
        policy_loss = -(pi[idx] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        optimizer.zero_grad()
        (value_loss + policy_loss).backward()
        optimizer.step()
        losses.append((value_loss.item(), policy_loss.item()))
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


def start_process(worker=False):
    """How every process of a training run computes, set first thing in each. One thread: with a network this small
    a second thread made Adam's steps at most 1.6x faster on an idle machine, and 2-3x slower than one thread beside
    a single busy program (the threads meet after every matrix product, and the one the OS has paused holds up the
    other); the numbers also differ with the thread count, so choosing it by the load would break --seed.
    Denormals (below 1.2e-38, which Adam's moments reach) are flushed to zero: on some CPUs each operation on one
    is many times slower. A worker leaves Ctrl-C to the main process, which stops it."""
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    gc.set_threshold(50_000, 20, 20)  # trees are millions of small objects: the default doubled self-play's time
    if worker:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def train(game, cfg, seed=0, workers=None, out=None, on_iteration=None, log=print, spent=None, resume=False):
    """The self-play loop: play an iteration's games with the current network, train on the last `window`
    iterations, save, repeat. Games run in `workers` processes, each playing its share side by side.
    `spent`, a dict, receives the seconds spent in self-play and in training. resume: go on from the checkpoint at
    `out` (its network, Adam's state and iteration count; the replay window starts empty). Returns the trained Net;
    it saves a checkpoint each iteration only when given `out`."""
    start_process()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    workers = workers or os.cpu_count()
    net = Net(game, cfg["hidden"], cfg["net"])
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"],
                                 fused=True)  # one kernel updates every parameter, not a loop of small ones
    done = resume_from(out, game, cfg, net, optimizer) if resume else 0
    replay, start = [], time.time()
    spent = {} if spent is None else spent
    spent.update({"self-play": 0.0, "training": 0.0})
    if on_iteration and not done:
        on_iteration(0, net)
    pool = multiprocessing.Pool(workers, start_process, (True,)) if workers > 1 else None
    saved = done
    try:
        for it in range(done + 1, cfg["iterations"] + 1):
            t0 = time.time()
            share = [cfg["games"] // workers + (k < cfg["games"] % workers) for k in range(workers)]
            jobs = [(game, NumpyNet(net), share[k], cfg, (seed, it, k)) for k in range(workers) if share[k]]
            parts = pool.map(play_games, jobs) if pool else list(map(play_games, jobs))
            x, pi, z = (np.concatenate(p) for p in zip(*parts))
            if cfg["mirror"]:  # left-right mirror images: twice the data for free
                x = np.concatenate([x, GAMES[game].mirror_encoding(x)])
                pi = np.concatenate([pi, GAMES[game].mirror_policy(pi)])
                z = np.concatenate([z, z])
            replay = (replay + [(x, pi, z)])[-cfg["window"]:]
            t1 = time.time()
            for group in optimizer.param_groups:
                group["lr"] = step_size(cfg, it)
            value_loss, policy_loss = fit(net, optimizer, replay, cfg["steps"], cfg["batch"], rng)
            t2 = time.time()
            spent["self-play"], spent["training"] = spent["self-play"] + t1 - t0, spent["training"] + t2 - t1
            if out:
                save(net, out, optimizer, it, cfg)
                saved = it
            log(f"iteration {it:3d}/{cfg['iterations']}  games {sum(share):4d}  positions {len(z):6d}  "
                f"loss {value_loss + policy_loss:.3f} (value {value_loss:.3f}, policy {policy_loss:.3f})  "
                f"self-play {t1 - t0:4.1f} s  training {t2 - t1:3.1f} s  elapsed {t2 - start:5.0f} s, "
                f"about {(t2 - start) / (it - done) * (cfg['iterations'] - it):.0f} s left")
            if on_iteration:
                on_iteration(it, net)
    except KeyboardInterrupt:  # Ctrl-C: say what the checkpoint holds (the workers ignore it; terminate stops them)
        held = f"{out} holds iteration {saved}" if out and saved else "nothing saved"
        raise KeyboardInterrupt(f"interrupted at iteration {saved + 1}; {held}") from None
    finally:
        if pool:
            pool.terminate()
    total = max(sum(spent.values()), 1e-9)
    log(f"time: self-play {spent['self-play']:.0f} s ({spent['self-play'] / total:.0%}), "
        f"training {spent['training']:.0f} s ({spent['training'] / total:.0%})")
    return net


def save(net, path, optimizer=None, iterations_done=None, cfg=None):
    """Atomically (a temp file, then a rename), so that an interrupted run never leaves a broken checkpoint.
    Training also saves what --resume needs: Adam's state, the iterations done and the settings."""
    tmp = f"{path}.tmp"
    ckpt = {"game": net.game, "algorithm": ALGORITHM, "hidden": net.hidden, "net": net.kind, "state_dict": net.state_dict()}
    if optimizer:
        ckpt.update(optimizer=optimizer.state_dict(), iterations_done=iterations_done, settings=cfg)
    torch.save(ckpt, tmp)
    os.replace(tmp, path)


def read_checkpoint(path):
    """The saved dict; ValueError with one clear line for a missing or corrupt file. weights_only=True never
    unpickles arbitrary objects."""
    try:
        return torch.load(path, weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"no checkpoint at {path}")
    except Exception as e:
        raise ValueError(f"{path} is not a readable checkpoint ({type(e).__name__})")


def load(path, game=None):
    """A saved Net (search takes it as it is; see evaluate); ValueError with one clear line for a missing, corrupt
    or wrong-game file."""
    ckpt = read_checkpoint(path)
    try:
        net = Net(ckpt["game"], ckpt["hidden"], ckpt.get("net", "mlp"))  # checkpoints before --net were all mlp
        net.load_state_dict(ckpt["state_dict"])
    except Exception as e:
        raise ValueError(f"{path} is not a readable checkpoint ({type(e).__name__})")
    if game and net.game != game:
        raise ValueError(f"{path} holds a {net.game} network, not {game}")
    return net


def resume_from(path, game, cfg, net, optimizer):
    """Load a training checkpoint's network and Adam state into net and optimizer; return its iterations done.
    Every setting but the number of iterations must be the one it was trained with."""
    ckpt = read_checkpoint(path)
    if ckpt["game"] != game:  # the game, then the algorithm: alone, before any setting
        raise ValueError(f"{path} holds a {ckpt['game']} network, not {game}")
    if ckpt.get("algorithm", ALGORITHM) != ALGORITHM:
        raise ValueError(f"{path} was trained by {ckpt['algorithm']}.py, not {ALGORITHM}.py: --resume goes on with "
                         f"the algorithm that trained it (--play takes any)")
    if "optimizer" not in ckpt:
        raise ValueError(f"{path} holds no training state to resume (saved before --resume existed)")
    then = dict(COMMON, **ckpt["settings"], game=ckpt["game"])  # a setting added since had its default then
    now = dict(cfg, game=game)
    changed = [f"{k} {then.get(k)!r}, not {v!r}" for k, v in now.items() if k != "iterations" and then.get(k) != v]
    if changed:
        raise ValueError(f"{path} was trained with {', '.join(changed)}: --resume needs the same settings")
    if ckpt["iterations_done"] >= cfg["iterations"]:
        raise ValueError(f"{path} has {ckpt['iterations_done']} iterations done already: ask for more iterations")
    net.load_state_dict(ckpt["state_dict"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["iterations_done"]


def bar(fraction, width=40):
    return "#" * round(fraction * width)


def print_visits(state, root):
    """Every legal move, most visited first: its visits and its value for the player who would make it."""
    total = sum(ch.n for ch in root.children)
    print(f"  {'move':>6} {'visits':>7} {'value':>9}")
    for ch in sorted(root.children, key=lambda ch: -ch.n):
        value = f"{ch.w / ch.n:9.2f}" if ch.n else f"{'-':>9}"  # an unvisited move has no value yet
        print(f"  {state.move_name(ch.move):>6} {ch.n:7d} {value}  {bar(ch.n / total)}")


def play(net, n_simulations, human_first=True):
    """A human against the agent in the terminal; moves are read from standard input, so a game can be scripted."""
    state = GAMES[net.game]()
    print(f"you are {'X and move first' if human_first else 'O and move second'}; Ctrl-D or Ctrl-C to stop")
    while not state.is_over():
        print(f"\n{state}")
        if state.first_to_move() == human_first:
            legal = {state.move_name(m): m for m in state.legal_moves()}
            text = input(f"your move ({' '.join(legal)}): ").strip().lower()
            if text not in legal:
                print(f"not a legal move: {text!r}")
                continue
            state.play(legal[text])
        elif n_simulations == 0:  # the raw network: its policy, no search
            priors, value = evaluate(net, [state])[0]
            print("the network's policy (no search):")
            for move in sorted(priors, key=priors.get, reverse=True)[:6]:
                print(f"  {state.move_name(move):>6} {priors[move]:7.2f}  {bar(priors[move])}")
            move = max(priors, key=priors.get)
            print(f"the agent plays {state.move_name(move)} (the network's value for itself: {value:+.2f})")
            state.play(move)
        else:
            root = search([state], net, n_simulations)[0]
            move = best_move(root)
            chosen = next(ch for ch in root.children if ch.move == move)
            print(f"the agent searched {n_simulations} simulations:")
            print_visits(state, root)
            print(f"the agent plays {state.move_name(move)} (its value for itself: {chosen.w / chosen.n:+.2f})")
            state.play(move)
    r = state.result()
    human = r if human_first else 1 - r
    print(f"\n{state}\n{'you win' if human == 1 else 'the agent wins' if human == 0 else 'a draw'}")


def positive_int(text):
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


def whole_number(text):
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 0, not {text!r}")
    return int(text)


def number_in(lo, hi=math.inf, lo_open=False):
    """An argparse type: a finite number from lo (excluded when lo_open) to hi."""
    def parse(text):
        try:
            x = float(text)
        except ValueError:
            x = math.nan  # fails the check below
        if not (math.isfinite(x) and (x > lo if lo_open else x >= lo) and x <= hi):
            bounds = f"in [{lo}, {hi}]" if hi < math.inf else f"{'>' if lo_open else '>='} {lo}"
            raise argparse.ArgumentTypeError(f"must be a number {bounds}, not {text!r}")
        return x
    return parse


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("--game", choices=list(GAMES), default="connect4", help="which game (default connect4)")
    parser.add_argument("--iterations", type=positive_int, help="self-play iterations (tictactoe 40, connect4 120)")
    parser.add_argument("--games", type=positive_int, help="self-play games per iteration (100, 200)")
    parser.add_argument("--simulations", type=whole_number,
                        help="simulations per move (tictactoe 100, connect4 35); --play takes 0: the raw policy")
    parser.add_argument("--hidden", type=positive_int, help="units in each of the two hidden layers (128, 384)")
    parser.add_argument("--temp-moves", type=whole_number,
                        help="moves sampled by visit counts at the start of a game (4, 8)")
    parser.add_argument("--steps", type=positive_int, help="Adam steps per iteration (200, 800)")
    parser.add_argument("--window", type=positive_int, help="train on the last WINDOW iterations' positions (20, 30)")
    parser.add_argument("--batch", type=positive_int, help="minibatch size (256)")
    parser.add_argument("--lr", type=number_in(0, lo_open=True), help="Adam step size, > 0 (1e-3)")
    parser.add_argument("--lr-final", type=number_in(0, lo_open=True),
                        help="Adam step size at the last iteration, > 0, reached by a geometric fall from --lr (none, 1e-4)")
    parser.add_argument("--weight-decay", type=number_in(0), help="Adam weight decay, >= 0 (1e-4)")
    parser.add_argument("--c-puct", type=number_in(0), help="PUCT exploration constant, >= 0 (1.25)")
    parser.add_argument("--alpha", type=number_in(0, lo_open=True), help="Dirichlet noise concentration, > 0 (1.0)")
    parser.add_argument("--noise", type=number_in(0, 1),
                        help="weight of the Dirichlet noise at the root in self-play, in [0, 1] (0.25)")
    parser.add_argument("--mirror", type=int, choices=[0, 1], help="add left-right mirrored positions (connect4 1)")
    parser.add_argument("--net", choices=["mlp", "conv"], help="mlp: the lab's network (default); conv: two 3x3 "
                        "convolutions with 32 channels before it")
    parser.add_argument("--reuse-tree", type=int, choices=[0, 1],
                        help="1: keep the chosen move's subtree for the next move (tictactoe 0, connect4 1)")
    parser.add_argument("--random-openings", type=number_in(0, 1), help="fraction of self-play games whose first move "
                        "is uniformly random, not searched (0.25): openings self-play would rarely try")
    parser.add_argument("--q-weight", type=number_in(0, 1), help="weight of the search's value of each position in "
                        "its value target, in [0, 1] (tictactoe 0: the game's outcome alone; connect4 1)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count(),
                        help=f"self-play processes (default all cores: {os.cpu_count()})")
    parser.add_argument("--out", help="checkpoint path, saved every iteration (default GAME.pt)")
    parser.add_argument("--resume", action="store_true", help="go on training the checkpoint at --out up to "
                        "--iterations, with the same settings (the replay window starts empty: not restored)")
    parser.add_argument("--play", action="store_true", help="play against a saved checkpoint instead of training")
    parser.add_argument("--checkpoint", help="the checkpoint --play loads (default GAME.pt)")
    parser.add_argument("--first", choices=["human", "agent"], help="who starts with --play (default human)")
    args = parser.parse_args()
    if args.play and args.resume:
        parser.error("--resume is for training; --play plays a checkpoint")
    if not args.play and (args.first or args.checkpoint):
        parser.error(f"--{'first' if args.first else 'checkpoint'} is for --play; training writes --out")
    if args.simulations == 0 and not args.play:
        parser.error("--simulations 0 is for --play (the raw policy); self-play needs at least 1")
    cfg = settings(args.game, **{k: getattr(args, k) for k in list(SETTINGS["tictactoe"]) + list(COMMON)})
    default = f"{args.game}.pt"
    path = args.out or default
    if not args.play and not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
        parser.error(f"cannot write {path}: its folder does not exist or is not writable")
    try:
        if args.play:
            play(NumpyNet(load(args.checkpoint or default, args.game)), cfg["simulations"],
                 args.first != "agent")
        else:
            train(args.game, cfg, seed=args.seed, workers=args.workers, out=path, resume=args.resume)
            print(f"\ncheckpoint: {path}\nplay against it: python alphazero_plus.py --game {args.game} --play"
                  + (f" --checkpoint {path}" if path != default else ""))
    except ValueError as e:
        sys.exit(f"{parser.prog}: error: {e}")
    except KeyboardInterrupt as e:  # Ctrl-C: one line, and the usual exit status for it
        print(f"\n{e or ('bye' if args.play else 'interrupted')}", file=sys.stderr)
        sys.exit(130)
    except EOFError:
        print("\nbye")

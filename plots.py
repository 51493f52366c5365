"""Draw the tables of evaluate.py and further.py as figures, from the JSON they write, with the documents' numbers
beside ours where they give some. Each part has a function that turns its numbers into {file name: figure}.

    python plots.py evaluate.json further.json --plots figures     # redraw a finished run's figures
"""
import argparse
import io
import json
import math
import os
import statistics
import sys

import numpy as np

import plumbing


def pyplot():  # matplotlib.pyplot on the Agg backend, which draws to files without a window and so works over SSH
    try:
        import matplotlib
    except ImportError:
        raise ValueError("--plots draws with matplotlib, which is not installed: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure(title, rows=1, columns=1, size=(11, 4.2), **options):  # a new figure with a title, and its axes
    fig, axes = pyplot().subplots(rows, columns, figsize=size, **options)
    fig.suptitle(title)
    return fig, axes


def finish(ax, legend=None, small=False, **settings):
    """Set the axes' labels, limits, scales and ticks (give xticks= before xticklabels=), then draw the legend."""
    ax.set(**settings)
    ax.legend(loc=legend, fontsize="small" if small else None)


def beside(ax, xs, ours, theirs, label, color):
    """Plot ours as a dot for each seed at each x (ours holds a list for each x) and a line through their medians, and
    the lab's numbers, where it has them, as hollow squares of the same colour."""
    seeds = len(ours[0])
    ax.plot(xs, [statistics.median(at) for at in ours], "-", color=color,
            label=f"{label}: ours" + f" (the median of {seeds} seeds)" * (seeds > 1))
    ax.plot([x for x, at in zip(xs, ours) for _ in at], [y for at in ours for y in at], "o", color=color,
            markersize=6 if seeds == 1 else 3.5)
    known = [(x, t) for x, t in zip(xs, theirs) if t is not None]
    if known:
        ax.plot(*zip(*known), "s", color=color, markerfacecolor="none", markersize=9, label=f"{label}: the lab's")


def by_number(d):  # JSON keys are strings: turn the number keys (iterations, simulations) back into ints
    return {int(k): v for k, v in d.items()}


def by_seed(ours):  # turn {seed: {x: value}} round into {x (an int): [the value of each seed]}
    runs = [by_number(run) for run in ours.values()]
    return {x: [run[x] for run in runs] for x in runs[0]}


def plot_blog(r):
    run, figures = r["go"]["runs"][0], {}
    fig, (left, right) = figures["article_1_figure_2_go"] = figure(
        f"Article, Part 1, Figure 2: UCT on the 7x7 Go corner (seed {run['seed']}): the visits each move got, and B1's "
        f"share as the search went on", 1, 2)
    top = sorted(run["visits"].items(), key=lambda kv: -kv[1])[:10]
    left.bar([m for m, _ in top], [n for _, n in top], color=["C3" if m == "B1" else "C0" for m, _ in top])
    left.set(xlabel="Black's move (the 10 most visited)", ylabel="visits", yscale="log")
    right.plot(*zip(*by_number(run["b1_share"]).items()), "o-", color="C3", label="ours")
    right.axhline(r["go"]["article"]["b1_visits"] / 5000, ls=":", color="grey", label="the article's after 5,000 "
                  "simulations")
    finish(right, "lower right", xlabel="simulations", ylabel="B1's share of the visits", ylim=(0, 1))

    chess = r["chess"]["figure"]
    moves = sorted(chess["flat"], key=lambda m: -chess["flat"][m])
    colours = ["C3" if m == "Qxd7" else "C1" if m in chess["allowing_mate"] else "C0" for m in moves]
    fig, (top_ax, bottom_ax) = figures["article_1_figure_3_chess"] = figure(
        f"Article, Part 1, Figure 3: the chess trap (seed {next(iter(r['chess']['ours']))}). Flat Monte Carlo ranks "
        "the free knight first; the tree gives it few visits", 2, 1, (11, 6), sharex=True)
    for ax, score in ((top_ax, chess["flat"]), (bottom_ax, chess["uct_visits"])):
        ax.bar(moves, [score[m] for m in moves], color=colours)
    top_ax.set(ylabel="flat Monte Carlo's score", ylim=(0, 1))
    bottom_ax.set(ylabel="UCT's visits", xlabel="White's 26 moves, by flat Monte Carlo's score (red: Qxd7; orange: "
                  "the other moves that allow ...Re1#)")
    bottom_ax.tick_params(axis="x", rotation=90)

    example, c, total = r["worked_example"], 1.5, 40
    bonus = lambda prior, n: c * prior * math.sqrt(total) / (1 + n)
    fig, (left, right) = figures["article_2_figure_2_puct"] = figure(
        f"Article, Part 2, Figure 2: the PUCT bonus shrinks as visits pile up (40 trips, c_puct = 1.5); the crack wins "
        f"by {example['crack_margin']:.3f}", 1, 2)
    for k, (name, (prior, n, q)) in enumerate(example["passages"].items()):
        left.plot(np.arange(31), bonus(prior, np.arange(31)), color=f"C{k}", label=f"{name} (P = {prior})")
        left.plot([n], [bonus(prior, n)], "o", color=f"C{k}")
    finish(left, xlabel="the passage's trips N", ylabel="bonus U = c P sqrt(40) / (1 + N)")
    names, (prior, n, q) = list(example["passages"]), zip(*example["passages"].values())
    right.bar(names, q, label="average Q")
    right.bar(names, bonus(np.array(prior), np.array(n)), bottom=q, label="bonus U")
    finish(right, ylabel="Q + U, the select step's score")
    return {name: fig for name, (fig, _) in figures.items()}


def plot_part_1(r):
    lab = by_number(r["lab"])
    fig, (left, right) = figure(f"Lab, Part 1: AlphaZero on tic-tac-toe, the raw policy and search with "
                                f"{r['simulations']} simulations", 1, 2)
    rows = by_seed(r["ours"])  # {iteration: [a record for each seed]}
    for k, who in enumerate(("policy", "search")):
        for ax, field in ((left, f"{who}_optimal"), (right, f"{who}_losses")):
            beside(ax, list(rows), [[row[field] for row in at] for at in rows.values()],
                   [lab[it][field] if it in lab else None for it in rows], who, f"C{k}")
    finish(left, xlabel="iteration", ylabel=f"fraction of the {r['positions']:,} positions answered optimally")
    finish(right, xlabel="iteration", ylabel="losses in the games against the perfect player")
    return {"lab_part_1": fig}


def by_simulations(title, ours, lab, label, even=False, **settings):  # a log x axis, with 0 simulations drawn at 1
    fig, ax = figure(title, size=(7, 4.2))
    xs = [max(s, 1) for s in ours]  # ours is {simulations: [a score for each seed]}
    beside(ax, xs, list(ours.values()), [lab.get(s) for s in ours], label, "C0")
    if even:
        ax.axhline(0.5, ls=":", color="grey", label="even")
    finish(ax, xscale="log", xticks=xs, xticklabels=[str(s) for s in ours], **settings)
    ax.minorticks_off()
    return fig


def plot_part_2(r):
    lab = by_number(r["lab"])
    fig, ax = figure(f"Lab, Part 2: AlphaZero on Connect Four, against random, tactical and UCT-{r['uct']}",
                     size=(10, 4.8))
    rows = by_seed(r["ours"])  # {iteration: [a record for each seed]}
    for k, field in enumerate(next(iter(rows.values()))[0]):
        beside(ax, list(rows), [[row[field] for row in at] for at in rows.values()],
               [lab[it][field] if it in lab else None for it in rows], field.replace("_", " "), f"C{k}")
    ax.set(xlabel="iteration", ylabel="score (win 1, draw 1/2)", ylim=(-0.02, 1.02))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")  # beside the dots, not over them
    return {"lab_part_2": fig, "lab_part_2_more_search": by_simulations(
        f"Lab, Part 2: the final network with more search, against UCT-{r['uct']}", by_seed(r["more_search"]),
        by_number(r["lab_more_search"]), "the final network", xlabel="simulations (0 drawn at 1: the raw policy)",
        ylabel=f"score against UCT-{r['uct']}", ylim=(0, 1))}


def plot_part_3a(r):
    """The lab's six rows (PUCT and Gumbel, its seeds 0-2), each beside our seeds that stand for it. Counting from the
    run's first seed, the lab's seed i stands beside our seeds i, i + 3, i + 6, and so on."""
    first, labels = min(int(label.split()[-1]) for label in r["ours"]), list(r["lab"])
    group = {name: [row for label, row in r["ours"].items() if label.split()[0] == name.split()[0] and
                    (int(label.split()[-1]) - first) % 3 == int(name[-1])] for name in labels}
    fig, (left, right) = figure("Lab, Part 3a: tic-tac-toe trained with 2 simulations a move, PUCT against Gumbel "
                                "(dots: ours, a seed each; hollow squares: the lab's)", 1, 2, (12, 4.2))
    x = np.arange(len(labels))
    for k, who in enumerate(("policy", "search")):
        for ax, field in ((left, f"{who}_optimal"), (right, f"{who}_losses")):
            at = x + (k - 0.5) * 0.3  # the policy's dots left of each label, the search's right
            ax.plot([a for a, name in zip(at, labels) for _ in group[name]],
                    [row[field] for name in labels for row in group[name]], "o", color=f"C{k}", label=f"{who}: ours")
            ax.plot(at, [r["lab"][name][field] for name in labels], "s", color=f"C{k}", markerfacecolor="none",
                    markersize=9, label=f"{who}: the lab's")
    for ax, what in ((left, f"fraction of the {r['positions']:,} positions answered optimally"),
                     (right, "losses to the perfect player")):
        ax.set_xticks(x, [f"{name} (lab)" for name in labels], rotation=30, ha="right")
        ax.set(ylabel=what)
    left.legend(fontsize="small")
    fig.tight_layout()
    return {"lab_part_3a": fig}


def plot_part_3b(r):
    ours = by_seed(r["ours"])
    scores = [x for at in ours.values() for x in at]  # the y axis spans 0.2 to 0.8, or more if a score lies outside
    return {"lab_part_3b": by_simulations(
        "Lab, Part 3b: Gumbel against PUCT search with the same Connect Four network and budget", ours,
        by_number(r["lab"]), "Gumbel's score", even=True, xlabel="simulations each",
        ylabel="Gumbel's score against PUCT", ylim=(min(0.2, *scores) - 0.02, max(0.8, *scores) + 0.02))}


def plot_questions(r):
    truth, figures = by_number(r["truth"]["ours"]), {}
    fig, ax = figures["further_truth_v_uct"] = figure(
        f"Going further: measuring against the truth, beside the score against UCT-{r['truth']['uct']}", size=(8, 4.5))
    iterations, rows = list(truth), list(truth.values())
    ax.plot(iterations, [t["policy"]["fraction"] for t in rows], "o--", color="C0", label="raw policy: the truth")
    ax.plot(iterations, [t["search"]["fraction"] for t in rows], "o-", color="C0", label="search: the truth")
    ax.plot(iterations, [t["search_v_uct"] for t in rows], "s-", color="C1", label="search: score against UCT")
    finish(ax, xlabel="Part 2's iteration", ylabel="fraction of moves keeping the exact outcome; score", ylim=(0, 1.02))

    fig, (by_games, by_seconds) = figures["further_conv_v_mlp"] = figure(
        "Going further: a convolutional network against the lab's MLP, per game and per second", 1, 2, sharey=True)
    for k, name in enumerate(("mlp", "conv")):
        runs = by_number(r["conv"][name])
        truth = [run["search_truth"] for run in runs.values()]
        by_games.plot(list(runs), truth, "o-", color=f"C{k}", label=name)
        by_seconds.plot([run["seconds"] for run in runs.values()], truth, "o-", color=f"C{k}")
    finish(by_games, xlabel=f"iteration (games played: {r['conv']['games']} each)", ylabel="search: the truth")
    by_seconds.set(xlabel="seconds of training on two cores")

    ours, measures = r["gumbel"]["ours"], ("policy_v_tactical", "policy_truth", "search_v_tactical", "search_truth")
    fig, ax = figures["further_puct_v_gumbel"] = figure(
        "Going further: Connect Four trained with 4 and 8 simulations a move, PUCT (pale) against Gumbel",
        size=(9, 4.2))
    x = np.arange(len(measures))
    for k, label in enumerate(ours):
        ax.bar(x + (k - 1.5) * 0.2, [ours[label][m] for m in measures], 0.2, label=label, color=f"C{k // 2}",
               alpha=0.55 if label.startswith("puct") else 1.0)
    finish(ax, xticks=x, xticklabels=[m.replace("_", " ") for m in measures],
           ylabel="score; fraction keeping the exact outcome", ylim=(0, 1))

    ttt, way = r["tictactoe"], lambda key: key.rsplit(" seed ", 1)[0]  # "no noise seed 1" becomes "no noise"
    ways = list(dict.fromkeys(map(way, ttt["curves"])))  # in the order they ran
    fig, (curves, spots) = figures["further_tictactoe"] = figure(
        "Going further in tic-tac-toe: random openings, and what noise and temperature do", 1, 2, (12, 4.2))
    for k, name in enumerate(ways):
        runs = [by_number(c) for key, c in ttt["curves"].items() if way(key) == name]
        curves.plot(list(runs[0]), [statistics.mean(c[it] for c in runs) for it in runs[0]], "o-", color=f"C{k}",
                    label=name)
        spots.bar(k, statistics.mean(f["blind_spots"] for key, f in ttt["final"].items() if way(key) == name),
                  color=f"C{k}")
    finish(curves, small=True, xlabel="iteration",
           ylabel="raw policy: optimal fraction\nof the 4,520 positions (mean of 3 seeds)")
    spots.set_xticks(range(len(ways)), ways, rotation=25, ha="right")
    spots.set(ylabel="blind spots at the last iteration\n(mean of 3 seeds)")
    fig.tight_layout()
    return {name: fig for name, (fig, _) in figures.items()}


def plot_recipe(r):
    curve, clock = by_number(r["curve"]), by_number(r["clock"])
    first = next(iter(curve.values()))
    versus = next(k for k in first if " v UCT" in k)
    fig, ax = figure("The recipe's learning curve: python alphazero_plus.py --game connect4", size=(8, 4.5))
    for k, key in enumerate(key for key in first if key.endswith("truth")):
        ax.plot(list(curve), [c[key]["fraction"] for c in curve.values()], "o-", color=f"C{k}", label=key)
    ax.plot(list(curve), [c[versus] for c in curve.values()], "s-", color="C2", label=versus)
    for it, c in curve.items():
        ax.annotate(f"{clock[it]:.0f} s", (it, c[versus]), textcoords="offset points", xytext=(0, -14), ha="center",
                    fontsize="small")
    finish(ax, xlabel="iteration (seconds of training beside each point)", ylabel="fraction keeping the outcome; score",
           ylim=(0, 1.02))
    return {"further_recipe": fig}


def plot_benchmark(name, rates, theirs):
    """Each set's error rate: ours ({label: {set: rate}}) as bars, theirs (AlphaZero.jl's, minimax's) as markers."""
    sets = list(next(iter(theirs.values())))
    fig, ax = figure(f"{name} on the benchmark: positions from random games, each move valued by a perfect solver",
                     size=(10, 4.5))
    x = np.arange(len(sets))
    for k, (label, rate) in enumerate(rates.items()):
        ax.bar(x + (k - (len(rates) - 1) / 2) * 0.25, [100 * rate[s] for s in sets], 0.25, label=f"{label}: ours")
    for marker, (label, rate) in zip("Dv", theirs.items()):
        ax.plot(x, [100 * rate[s] for s in sets], marker, color="k", markerfacecolor="none", ls="",
                label=f"{label}: theirs")
    finish(ax, small=True, xticks=x, xticklabels=sets, ylabel="errors (% of the set's positions)")
    return fig


PLOTS = {"blog": plot_blog, "1": plot_part_1, "2": plot_part_2, "3a": plot_part_3a, "3b": plot_part_3b,
         "questions": plot_questions, "recipe": lambda r: dict(plot_recipe(r), further_benchmark_recipe=plot_benchmark(
             "the recipe's network", r["final"]["benchmark"], r["final"]["theirs"])),
         "checkpoint": lambda r: {"further_benchmark_checkpoint": plot_benchmark("the network", r["benchmark"],
                                  r["theirs"])} if "benchmark" in r else {}}  # only further.py's --checkpoint has one


def folder(path):  # called before any work, so that a missing matplotlib or a bad folder stops the run at once
    pyplot()
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot make the folder {path!r}: {e.strerror}") from None


def draw(paths, out):
    """Draw every figure of the parts in the JSON files `paths` into the folder `out`, a PNG each. JSON's null is read
    as nan, a fraction of nothing."""
    folder(out)
    plt, drawn = pyplot(), []
    for path in paths:
        try:
            with open(path) as f:
                results = json.load(f, object_hook=lambda d: {k: math.nan if v is None else v for k, v in d.items()})
            if not isinstance(results, dict):
                raise ValueError("not an object of parts")
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read {path} as evaluate.py's or further.py's JSON: {e}") from None
        try:
            figures = [item for part, r in results.items() if part in PLOTS for item in PLOTS[part](r).items()]
        except (KeyError, TypeError) as e:  # a JSON from an older version of the scripts
            raise ValueError(f"{path} lacks {e}, which the figures need: run its parts again to draw them") from None
        for name, fig in figures:
            fig.savefig(png := io.BytesIO(), dpi=90, bbox_inches="tight")
            plumbing.write_atomic(os.path.join(out, f"{name}.png"), png.getvalue())
            plt.close(fig)
            drawn.append(f"{name}.png")
    print(f"\n{len(drawn)} figure{'s' * (len(drawn) != 1)} in {out}" + ": " * bool(drawn) + ", ".join(drawn))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("json", nargs="+", help="JSON files that evaluate.py or further.py wrote")
    parser.add_argument("--plots", metavar="DIR", required=True, help="the folder of the PNGs")
    args = parser.parse_args()
    plumbing.run_main(lambda: draw(args.json, args.plots))

"""Every expected-results table of the seeds, ours beside theirs.

    python evaluate.py --part blog     # the article's numbers: UCT on Go and chess, PUCT, the worked PUCT example
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import games
import mcts
import puct


def table(title, header, rows):
    """Print one table: a title, a header line, then rows of already formatted cells."""
    print(f"\n=== {title} ===")
    rows = [[f"{x:.3f}" if isinstance(x, float) else x for x in cells] for cells in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for cells in [header] + rows:
        print("  " + "  ".join(f"{str(x):>{w}}" if i else f"{str(x):<{w}}" for i, (x, w) in enumerate(zip(cells, widths))))


# ----------------------------------------------------------------------------------------------------------------
# The article (seeds 000 and 001)

ARTICLE = {"go": {"b1_visits": 4331, "b1_win_rate": 0.90, "runner_up": "F1 51 (0.53)", "b1_leads_from": 100,
                  "seconds": "~6"},
           "chess": {"flat_qxd7": 0.686, "flat_qxd7_rank": 1, "flat_kf1": 0.626, "flat_kf1_rank": 2,
                     "mcts_qxd7_visits": 73, "top6": "f4 f3 Kf1 h3 g4 h4", "top6_allowing_mate": 0,
                     "moves_allowing_mate": "11 of 26"},
           "puct": {"uniform_leads_from": "489 (seed 0); 1-200 (three others)", "leaning_leads_from": 2,
                    "leaning_share": 0.96}}


def blog_go(seeds, n):
    runs = []
    b1 = games.go_point("B1")
    for seed in seeds:
        state = games.go_corner()
        on_step, record = mcts.track_lead(b1)
        start = time.process_time()
        root = mcts.uct_search(state, games.go_rollout, n, c=1.0, seed=seed, on_step=on_step)
        seconds = time.process_time() - start
        node = next(ch for ch in root.children if ch.move == b1)
        second = max((ch for ch in root.children if ch.move != b1), key=lambda ch: ch.n)
        runs.append({"seed": seed, "best": state.move_name(mcts.best_move(root)), "b1_visits": node.n,
                     "b1_win_rate": round(node.w / node.n, 3),
                     "runner_up": f"{state.move_name(second.move)} {second.n} ({second.w / second.n:.2f})",
                     "b1_leads_from": record["lead_from"], "seconds": round(seconds, 2)})
    a = ARTICLE["go"]
    rows = [[label, a[key]] + [r[key] for r in runs]
            for label, key in (("B1 visits", "b1_visits"), ("B1 win rate", "b1_win_rate"), ("runner-up", "runner_up"),
                               ("B1 most visited from simulation", "b1_leads_from"), ("CPU seconds", "seconds"))]
    table(f"Article, Part 1: UCT on the 7x7 Go corner ({n:,} simulations, c = 1.0)",
          ["", "article"] + [f"seed {r['seed']}" for r in runs], rows)
    median = statistics.median(r["seconds"] for r in runs)
    print(f"  median CPU seconds: {median:.2f}")
    return {"runs": runs, "median_seconds": median, "article": a}


def blog_chess(seed, n, n_flat):
    state = games.chess_trap()
    name = state.move_name
    start = time.process_time()
    flat = mcts.flat_monte_carlo(state, games.chess_rollout, n_flat, seed=seed)
    root = mcts.uct_search(state, games.chess_rollout, n, c=0.7, seed=seed)
    seconds = time.process_time() - start
    ranking = [name(m) for m in sorted(flat, key=lambda m: -flat[m])]
    scores = {name(m): s for m, s in flat.items()}
    top6 = sorted(root.children, key=lambda ch: -ch.n)[:6]
    allowing = [m for m in state.legal_moves() if games.allows_mate_in_one(state, m)]
    ours = {"flat_qxd7": round(scores["Qxd7"], 3), "flat_qxd7_rank": ranking.index("Qxd7") + 1,
            "flat_kf1": round(scores["Kf1"], 3), "flat_kf1_rank": ranking.index("Kf1") + 1,
            "mcts_qxd7_visits": next(ch.n for ch in root.children if name(ch.move) == "Qxd7"),
            "top6": " ".join(name(ch.move) for ch in top6),
            "top6_allowing_mate": sum(ch.move in allowing for ch in top6),
            "moves_allowing_mate": f"{len(allowing)} of {len(flat)}", "seconds": round(seconds, 2)}
    labels = [("flat Monte Carlo: Qxd7's score", "flat_qxd7"), ("  its rank", "flat_qxd7_rank"),
              ("flat Monte Carlo: Kf1's score", "flat_kf1"), ("  its rank", "flat_kf1_rank"),
              (f"UCT: Qxd7's visits of {n:,}", "mcts_qxd7_visits"), ("UCT: six most visited", "top6"),
              ("  of them allowing ...Re1#", "top6_allowing_mate"), ("White's moves allowing ...Re1#", "moves_allowing_mate"),
              ("CPU seconds (both searches)", "seconds")]
    a = ARTICLE["chess"]
    table(f"Article, Part 1: the chess trap (flat: {n_flat} rollouts a move; UCT: {n:,} simulations, c = 0.7; seed {seed})",
          ["", "article", "ours"], [[label, a.get(key, ""), ours[key]] for label, key in labels])
    return {"ours": ours, "article": a}


def blog_puct(seeds, n):
    b1 = games.go_point("B1")
    runs = []
    for seed in seeds:
        for weight in (0.0, 0.5):
            network = puct.rollout_network(games.go_rollout, hint=b1, weight=weight, seed=seed)
            on_step, record = puct.track_lead(b1)
            root = puct.puct_search(games.go_corner(), network, n, c_puct=1.5, on_step=on_step)
            runs.append({"seed": seed, "weight": weight, "b1_leads_from": record["lead_from"],
                         "b1_share": round(puct.visit_policy(root)[b1], 3)})
    uniform = [r for r in runs if r["weight"] == 0.0]
    leaning = [r for r in runs if r["weight"] == 0.5]
    a = ARTICLE["puct"]
    rows = [["uniform priors: B1 leads from", a["uniform_leads_from"]] + [r["b1_leads_from"] for r in uniform],
            ["uniform priors: B1's share", ""] + [r["b1_share"] for r in uniform],
            ["leaning 0.5 on B1: B1 leads from", a["leaning_leads_from"]] + [r["b1_leads_from"] for r in leaning],
            ["leaning 0.5 on B1: B1's share", a["leaning_share"]] + [r["b1_share"] for r in leaning]]
    table(f"Article, Part 2: PUCT on the Go corner, stand-in network ({n:,} simulations, c_puct = 1.5)",
          ["", "article"] + [f"seed {s}" for s in seeds], rows)
    return {"runs": runs, "article": a}


def blog_worked_example():
    """The article's junction by hand: 40 trips, c_puct 1.5. The article fixes the crack (prior 0.25, 11 trips, so
    1 + N = 12); the streamway's numbers are ours, chosen so that the text's statements hold."""
    c, total = 1.5, 40
    passages = {"crack": (0.25, 11, 0.64), "streamway": (0.55, 24, 0.58), "squeeze": (0.05, 5, 0.40)}
    rows, score = [], {}
    for name, (prior, n, q) in passages.items():
        bonus = c * prior * math.sqrt(total) / (1 + n)
        score[name] = q + bonus
        rows.append([name, prior, n, q, f"{c} x {prior} x {math.sqrt(total):.2f} / {1 + n} = {bonus:.3f}",
                     f"{score[name]:.3f}"])
    table("Article, Part 2: the worked PUCT example (40 trips, c_puct = 1.5; article: crack's bonus 0.198, wins by 0.049)",
          ["passage", "prior P", "trips N", "average Q", "bonus U = c P sqrt(40) / (1 + N)", "Q + U"], rows)
    margin = score["crack"] - score["streamway"]
    print(f"  the crack wins by {score['crack']:.3f} - {score['streamway']:.3f} = {margin:.3f}")
    return {"passages": passages, "crack_bonus": round(c * 0.25 * math.sqrt(total) / 12, 3), "crack_margin": round(margin, 3),
            "article": {"crack_bonus": 0.198, "crack_margin": 0.049}}


def part_blog(args):
    n_go, n_chess, n_flat, n_puct = (500, 500, 40, 200) if args.quick else (5000, 5000, 400, 1000)
    seeds = [args.seed + i for i in range(4)]
    return {"go": blog_go(seeds, n_go), "chess": blog_chess(args.seed, n_chess, n_flat),
            "puct": blog_puct(seeds, n_puct), "worked_example": blog_worked_example()}


PARTS = {"blog": part_blog}


def write_json(path, results):
    """Atomically: a run interrupted half-way never leaves a broken file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, default=str)
    os.replace(tmp, path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=list(PARTS) + ["all"], default="all", help="which tables (default all)")
    parser.add_argument("--quick", action="store_true", help="every part at a small size, in seconds")
    parser.add_argument("--seed", type=int, default=0, help="base random seed (default 0)")
    parser.add_argument("--json", default="results.json", help="where to write every number (default results.json)")
    args = parser.parse_args()
    results, start = {}, time.time()
    for part in PARTS if args.part == "all" else [args.part]:
        results[part] = PARTS[part](args)
        write_json(args.json, results)
    print(f"\n{time.time() - start:.0f} s in all; every number is in {args.json}")

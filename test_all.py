"""The whole test suite: python -m pytest -q test_all.py

Truth comes from outside the code under test: known counts, hand-checked positions, geometry, and small runs
whose outcome is certain."""
import random
import subprocess
import sys
import time

import pytest

import games
import mcts
import puct
from games import go_point as P


def run(*argv, stdin=None, timeout=120):
    return subprocess.run([sys.executable, *argv], input=stdin, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------------------------------------------------
# Tic-tac-toe and Connect Four rules

def test_tictactoe_has_5478_positions_of_which_4520_have_a_move_to_make():
    seen, stack = set(), [games.TicTacToe()]
    while stack:
        s = stack.pop()
        if (s.x, s.o) in seen:
            continue
        seen.add((s.x, s.o))
        for m in s.legal_moves():
            child = s.copy()
            child.play(m)
            stack.append(child)
    live = [k for k in seen if not _ttt(*k).is_over()]
    assert len(seen) == 5478 and len(live) == 4520


def _ttt(x, o):
    s = games.TicTacToe()
    s.x, s.o = x, o
    return s


def test_tictactoe_wins_and_draws():
    s = games.TicTacToe()
    for m in (0, 3, 1, 4, 2):  # X takes the top row
        s.play(m)
    assert s.is_over() and s.result() == 1.0 and s.legal_moves() == []
    s = games.TicTacToe()
    for m in (0, 1, 2, 4, 3, 5, 7, 6, 8):  # X O X / X O O / O X X: full, no line
        s.play(m)
    assert s.is_over() and s.result() == 0.5


def c4_lines():
    """All lines of four on a 6x7 board, from geometry: (row, col) cells, row 0 at the bottom."""
    lines = []
    for r in range(6):
        for c in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(4)]
                if all(0 <= rr < 6 and 0 <= cc < 7 for rr, cc in cells):
                    lines.append(cells)
    return lines


def c4_bits(cells):
    return sum(1 << (7 * c + r) for r, c in cells)


def test_connect4_finds_fours_in_all_69_lines():
    lines = c4_lines()
    assert len(lines) == 69
    for line in lines:
        assert games.ConnectFour.has_four(c4_bits(line))
        assert not games.ConnectFour.has_four(c4_bits(line[:3]))


def test_connect4_agrees_with_geometry_on_random_boards():
    rng = random.Random(0)
    cells = [(r, c) for r in range(6) for c in range(7)]
    for _ in range(2000):
        mine = [cell for cell in cells if rng.random() < 0.35]
        truth = any(all(cell in mine for cell in line) for line in c4_lines())
        assert games.ConnectFour.has_four(c4_bits(mine)) == truth


def test_connect4_full_column_and_drawn_full_board():
    s = games.ConnectFour()
    for _ in range(6):
        s.play(3)
    assert 3 not in s.legal_moves() and len(s.legal_moves()) == 6
    rng = random.Random(1)
    while True:  # random games until one fills the board with no four for either player
        s = games.ConnectFour()
        while not s.is_over():
            s.play(rng.choice(s.legal_moves()))
        if s.moves == 42 and s.result() == 0.5:
            break
    first = [(r, c) for r in range(6) for c in range(7) if s.bits[0] >> (7 * c + r) & 1]
    second = [(r, c) for r in range(6) for c in range(7) if s.bits[1] >> (7 * c + r) & 1]
    assert len(first) == len(second) == 21
    assert not any(all(x in cells for x in line) for cells in (first, second) for line in c4_lines())
    assert s.legal_moves() == []


def test_encodings_are_from_the_movers_view_and_mirror_twice_is_identity():
    s = games.ConnectFour()
    s.play(0)  # first player in the bottom-left corner; now the second player moves
    x = s.encode()
    assert x.shape == (84,) and x.sum() == 1 and x[42 + 35] == 1  # opponent's plane, bottom row, column 0
    m = games.ConnectFour.mirror_encoding(x)
    assert m[42 + 41] == 1 and (games.ConnectFour.mirror_encoding(m) == x).all()
    p = [0.1, 0.2, 0.3, 0.4, 0.0, 0.0, 0.0]
    assert list(games.ConnectFour.mirror_policy(games.ConnectFour.mirror_policy(p))) == p
    t = games.TicTacToe()
    t.play(4)
    assert t.encode().shape == (18,) and t.encode()[9 + 4] == 1


# ---------------------------------------------------------------------------------------------------------------
# Go rules

def test_go_single_and_group_capture():
    s = games.Go(black=["A2", "C2", "B1"], white=["B2"])
    s.play(P("B3"))
    assert s.board[P("B2")] == games.EMPTY and s.area() == (49, 0)
    s = games.Go(black=["A2", "A3", "D2", "D3", "B1", "C1", "B4"], white=["B2", "C2", "B3", "C3"], black_to_move=True)
    s.play(P("C4"))
    assert all(s.board[P(p)] == games.EMPTY for p in ("B2", "C2", "B3", "C3"))


def test_go_suicide_is_refused_but_a_capture_is_not():
    s = games.Go(black=["A2", "B1"], white=[], black_to_move=False)
    assert not s.is_legal(P("A1"), games.WHITE) and P("A1") not in s.legal_moves()
    s = games.Go(black=["A2", "B1"], white=["A3", "B2", "C1"], black_to_move=False)
    assert s.is_legal(P("A1"), games.WHITE)  # filling the last liberty of both Black stones captures them
    s.play(P("A1"))
    assert s.board[P("A2")] == s.board[P("B1")] == games.EMPTY


def test_go_ko_refused_then_allowed_after_a_move_elsewhere():
    #   4 . X O .      Black D3 takes the White stone on C3; White may not take straight back on C3,
    #   3 X O . O      but may after both sides have played elsewhere.
    #   2 . X O .
    #     B C D E
    s = games.Go(black=["C4", "B3", "C2"], white=["D4", "E3", "D2", "C3"])
    s.play(P("D3"))
    assert s.board[P("C3")] == games.EMPTY
    assert not s.is_legal(P("C3"), games.WHITE) and P("C3") not in s.legal_moves()
    s.play(P("A7"))
    s.play(P("G7"))
    assert s.is_legal(P("C3"), games.WHITE)
    s.play(P("C3"))
    assert s.board[P("D3")] == games.EMPTY and s.board[P("C3")] == games.WHITE


def test_go_two_passes_end_the_game_and_eyes_are_not_filled():
    s = games.go_corner()
    s.play(P("B1"))
    s.play(games.PASS)
    assert P("A1") not in s.legal_moves() and P("C1") not in s.legal_moves()  # Black's own eyes
    s.play(games.PASS)
    assert s.is_over() and s.legal_moves() == []


def test_go_scoring_of_the_article_position_alive_and_dead():
    s = games.go_corner()
    s.play(P("B1"))  # the corner lives: 5 + 1 stones, eyes A1 and C1, row 5, rows 6-7
    assert s.area() == (29, 20) and s.result() == 1.0
    dead = games.Go(black=[f"{c}5" for c in games.COLUMNS],
                    white=["A3", "B3", "C3", "D3", "E3", "E2", "E1", "B1"] + [f"{c}4" for c in games.COLUMNS])
    assert dead.area() == (21, 28) and dead.result() == 0.0


def test_go_rollout_does_not_change_the_state():
    s = games.go_corner()
    before = (s.board[:], s.to_move, s.passes)
    games.go_rollout(s, random.Random(0))
    assert (s.board, s.to_move, s.passes) == before


# ---------------------------------------------------------------------------------------------------------------
# Chess

def test_chess_trap_has_26_moves_and_qxd7_re1_is_mate():
    s = games.chess_trap()
    assert len(s.legal_moves()) == 26
    moves = {s.move_name(m): m for m in s.legal_moves()}
    s.play(moves["Qxd7"])
    re1 = next(m for m in s.legal_moves() if s.move_name(m).startswith("Re1"))
    s.play(re1)
    assert s.is_over() and s.result() == 0.0
    t = games.chess_trap()
    assert sum(games.allows_mate_in_one(t, m) for m in t.legal_moves()) == 11


# ---------------------------------------------------------------------------------------------------------------
# mcts.py and puct.py: invariants and the article's results

def test_uct_visits_sum_to_the_simulations_and_it_takes_a_win_in_one():
    s = games.TicTacToe()
    for m in (0, 3, 1, 4):  # X on cells 0 and 1, O on 3 and 4: cell 2 wins at once
        s.play(m)
    root = mcts.uct_search(s, games.random_rollout, 300, seed=0)
    assert root.n == 300 and sum(ch.n for ch in root.children) == 300
    assert mcts.best_move(root) == 2


def test_uct_on_the_go_corner_finds_b1_quickly():
    start = time.process_time()
    on_step, record = mcts.track_lead(P("B1"))
    root = mcts.uct_search(games.go_corner(), games.go_rollout, 5000, seed=0, on_step=on_step)
    seconds = time.process_time() - start
    b1 = next(ch for ch in root.children if ch.move == P("B1"))
    assert mcts.best_move(root) == P("B1") and b1.n >= 3500 and 0.80 <= b1.w / b1.n <= 0.97
    assert record["lead_from"] <= 500 and seconds <= 6


def test_flat_monte_carlo_falls_for_the_trap_and_uct_does_not():
    s = games.chess_trap()
    flat = mcts.flat_monte_carlo(s, games.chess_rollout, 400, seed=0)
    best = max(flat, key=flat.get)
    assert s.move_name(best) == "Qxd7" and 0.64 <= flat[best] <= 0.78
    root = mcts.uct_search(s, games.chess_rollout, 5000, c=0.7, seed=0)
    qxd7 = next(ch for ch in root.children if s.move_name(ch.move) == "Qxd7")
    assert qxd7.n <= 150
    top6 = sorted(root.children, key=lambda ch: -ch.n)[:6]
    assert not any(games.allows_mate_in_one(s, ch.move) for ch in top6)


def test_stand_in_network_priors_sum_to_one():
    s = games.go_corner()
    for weight in (0.0, 0.5):
        priors, value = puct.rollout_network(games.go_rollout, hint=P("B1"), weight=weight)(s)
        assert abs(sum(priors.values()) - 1) < 1e-12 and set(priors) == set(s.legal_moves()) and 0 <= value <= 1
        assert abs(priors[P("B1")] - (weight + (1 - weight) / len(priors))) < 1e-12


def test_puct_visits_and_labels():
    root = puct.puct_search(games.TicTacToe(), puct.rollout_network(games.random_rollout), 200)
    assert root.n == 200 and sum(ch.n for ch in root.children) == 199  # the first simulation expands the root
    pi = puct.visit_policy(root, tau=1.0)
    assert abs(sum(pi.values()) - 1) < 1e-12
    assert puct.visit_policy(root, tau=0)[puct.best_move(root)] == 1.0 and sum(puct.visit_policy(root, 0).values()) == 1


def test_puct_with_priors_leaning_on_b1():
    on_step, record = puct.track_lead(P("B1"))
    network = puct.rollout_network(games.go_rollout, hint=P("B1"), weight=0.5, seed=0)
    root = puct.puct_search(games.go_corner(), network, 1000, on_step=on_step)
    assert record["lead_from"] in (2, 3) and puct.visit_policy(root)[P("B1")] >= 0.9


# ---------------------------------------------------------------------------------------------------------------
# The scripts, as a user runs them

@pytest.mark.parametrize("argv", [["mcts.py", "--game", "nope"], ["mcts.py", "--simulations", "0"],
                                  ["mcts.py", "--simulations", "-5"], ["mcts.py", "--seed", "x"],
                                  ["puct.py", "--simulations", "0"], ["puct.py", "--seeds", "abc"],
                                  ["evaluate.py", "--part", "nope"]])
def test_bad_input_gets_a_clear_error_and_no_traceback(argv):
    out = run(*argv)
    assert out.returncode != 0 and "Traceback" not in out.stderr and "error:" in out.stderr


def test_scripts_run_and_print_their_figures():
    out = run("mcts.py", "--game", "go", "--simulations", "500")
    assert out.returncode == 0 and "B1 is the most visited move for good from simulation" in out.stdout
    out = run("mcts.py", "--game", "connect4", "--simulations", "200")
    assert out.returncode == 0 and "best move:" in out.stdout
    out = run("puct.py", "--simulations", "100")
    assert out.returncode == 0 and "leaning 0.5 on B1" in out.stdout

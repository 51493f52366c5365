"""What the algorithm files stand on: the games, and at the end the machinery the three trainers share.

The games: the rules of the four behind one small interface, the contract just below, written as code. Go's corner
and the chess trap are the article's (UCT needs only `Game`); tic-tac-toe and Connect Four are the lab's (the network
trainers need `NetworkGame` too). Rollouts take a state and a random.Random, play the game out on a copy and return
the first player's result. Then a human against an agent in the terminal, for any of them.

The machinery: what alphazero.py, gumbel.py and alphazero_plus.py need to run a training: the Run that train() is
handed (worker processes, --resume, the checkpoint and its CSV, the progress line), signals, files written whole,
the settings and the command line's checks; evaluate.py, further.py, mcts.py and puct.py use parts of it too (the
worker pool, signals, files, the flags' number types). None of it is an algorithm.
"""
import argparse
import contextlib
import importlib
import inspect
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import signal
import sys
import threading
import time
import traceback
import warnings
from typing import Hashable, NamedTuple, Protocol, runtime_checkable

import numpy as np


# ----------------------------------------------------------------------------------------------------------------
# The contract. A game is a class of small mutable states; these Protocols list what each part of the code calls.
# Your own game follows them without inheriting from them (the README's Nim does); the trainers check it first.

@runtime_checkable
class Game(Protocol):
    """What UCT (mcts.py) and PUCT (puct.py) need. A move is whatever legal_moves() lists."""

    def copy(self) -> "Game":
        """An independent state: playing on the copy leaves this one as it is."""

    def legal_moves(self) -> list:
        """The moves the player to move may make; empty once the game is over."""

    def play(self, move) -> None:
        """Make `move` (one of legal_moves()) in place; the other player is then to move."""

    def is_over(self) -> bool:
        """Has the game ended?"""

    def first_to_move(self) -> bool:
        """True when the first player (Black, White in chess, X, Connect Four's first) is to move."""

    def result(self) -> float:
        """Once over: 1.0 if the first player won, 0.0 if they lost, 0.5 for a draw."""

    def move_name(self, move) -> str:
        """The move as printed in tables and typed in the terminal game ("B1", "Qxd7", "a3", "4")."""


@runtime_checkable
class NetworkGame(Game, Protocol):
    """What the network trainers (alphazero.py, gumbel.py, alphazero_plus.py) need besides. The class is registered
    in the trainer's GAMES, and its constructor, with no arguments, gives the start position. Moves are the
    integers 0 .. n_actions - 1, so that the policy head has one output a move."""
    n_actions: int       # the policy's length
    encoding_size: int   # the network's input length

    def key(self) -> Hashable:
        """The position, hashable: the cache of network outputs is keyed by it."""

    def encode(self) -> np.ndarray:
        """float32 of length encoding_size, the position seen by the player to move (encode_many's one row)."""

    @staticmethod
    def encode_many(states) -> np.ndarray:
        """float32 of shape (len(states), encoding_size): encode() for a batch, in one operation for speed."""


@runtime_checkable
class Mirrored(Protocol):
    """Optional: a left-right symmetry, for --mirror 1 (twice the training data for free)."""

    @staticmethod
    def mirror_encoding(x) -> np.ndarray:
        """encode()'s output (one row or a batch) for the mirrored position."""

    @staticmethod
    def mirror_policy(p) -> np.ndarray:
        """A policy vector (or a batch) with each move's share moved to its mirror image's move."""


@runtime_checkable
class Board(Protocol):
    """Optional: encode() as 2 planes of board_shape, the mover's stones then the opponent's, for --net conv."""
    board_shape: tuple   # (rows, columns)


# Also optional: __str__, the board as text, for playing in the terminal (--play).


def lacks(game, *protocols):
    """The names of the protocols' methods and attributes, their own and those they take from Game, that `game` (a
    class or a state) does not have."""
    missing = []
    for protocol in protocols:
        for base in reversed(protocol.__mro__):  # Game's names first, then the protocol's own
            if base not in (Game, NetworkGame, Mirrored, Board):
                continue  # (Protocol, Generic, object)
            for name in (*inspect.get_annotations(base), *vars(base)):  # attributes, then methods
                if not name.startswith("_") and not hasattr(game, name) and name not in missing:
                    missing.append(name)
    return missing


def check_network_game(name, game, *optional):
    """Before any training, in one line (ValueError): the game class has every name the trainers call (NetworkGame,
    and the optional protocols its settings use), and its start position keeps the contract where a mistake would
    fail deep inside self-play: legal moves are integers below n_actions, encode() is float32 of encoding_size."""
    missing = lacks(game, NetworkGame, *optional)
    if missing:
        mirror = " (--mirror 1 needs the mirror)" if {"mirror_encoding", "mirror_policy"} & set(missing) else ""
        board = " (--net conv needs the board's shape)" if "board_shape" in missing else ""
        raise ValueError(f"the game {name} has no {', '.join(missing)}: see the contract in games.py{mirror}{board}")
    state = game()
    x, moves = np.asarray(state.encode()), state.legal_moves()
    if x.dtype != np.float32 or x.shape != (game.encoding_size,):
        raise ValueError(f"the game {name}'s encode() gives {x.dtype} of shape {x.shape}, not float32 of shape "
                         f"({game.encoding_size},) as its encoding_size says")
    if not moves or not all(isinstance(m, (int, np.integer)) and 0 <= m < game.n_actions for m in moves):
        raise ValueError(f"the game {name}'s start position has the moves {moves[:10]}: it needs some, each an integer "
                         f"from 0 to n_actions - 1 = {game.n_actions - 1}")
    if Board in optional and 2 * math.prod(game.board_shape) != game.encoding_size:
        raise ValueError(f"the game {name}'s board_shape {game.board_shape} gives 2 planes of "
                         f"{math.prod(game.board_shape)}, not its encoding_size {game.encoding_size}")


# ----------------------------------------------------------------------------------------------------------------
# Go on a 7x7 board: the corner position of the article.
# The board is a padded 1-D list (9 x 9 with an edge ring) so that neighbours are plain index offsets. Each group
# is known by one of its stones (its head); its stones and its liberties are kept up to date move by move, so a
# move's legality and its captures never need a flood fill.

SIZE, WIDTH = 7, 9
EMPTY, BLACK, WHITE, EDGE = 0, 1, 2, 3
PASS = -1
COLUMNS = "ABCDEFG"
POINTS = [(r + 1) * WIDTH + c + 1 for r in range(SIZE) for c in range(SIZE)]  # row 1 first
ON_BOARD = set(POINTS)
NEIGHBOURS = {p: [q for q in (p - WIDTH, p - 1, p + 1, p + WIDTH) if q in ON_BOARD] for p in POINTS}


def go_point(name):
    """'B1' -> padded index; 'pass' -> PASS."""
    if name.lower() == "pass":
        return PASS
    col, row = COLUMNS.index(name[0].upper()), int(name[1:])
    if not 1 <= row <= SIZE:
        raise ValueError(f"no point {name!r} on a {SIZE}x{SIZE} board")
    return row * WIDTH + col + 1


class Go:
    def __init__(self, black=(), white=(), black_to_move=True):
        self.board = [EDGE] * (WIDTH * WIDTH)
        for p in POINTS:
            self.board[p] = EMPTY
        self.head = [0] * (WIDTH * WIDTH)  # head stone of the group at each point
        self.stones, self.libs = {}, {}    # head -> list of stones, head -> set of liberties
        self.to_move, self.ko, self.passes = BLACK, None, 0
        for name in black:
            self._place(go_point(name), BLACK)
        for name in white:
            self._place(go_point(name), WHITE)
        self.to_move = BLACK if black_to_move else WHITE

    def copy(self):
        s = Go.__new__(Go)
        s.board, s.head, s.stones = self.board[:], self.head[:], dict(self.stones)  # stone lists are never mutated
        s.libs = {h: set(l) for h, l in self.libs.items()}
        s.to_move, s.ko, s.passes = self.to_move, self.ko, self.passes
        return s

    def first_to_move(self):
        return self.to_move == BLACK

    def is_over(self):
        return self.passes >= 2

    def is_eye(self, p, color):
        return all(self.board[q] == color for q in NEIGHBOURS[p])

    def is_legal(self, p, color):
        """Not ko, not suicide: legal if a neighbour is empty, a friendly group keeps another liberty, or a capture."""
        if self.board[p] != EMPTY or p == self.ko:
            return False
        for q in NEIGHBOURS[p]:
            c = self.board[q]
            if c == EMPTY:
                return True
            n_libs = len(self.libs[self.head[q]])
            if (c == color and n_libs > 1) or (c != color and n_libs == 1):  # a spare liberty, or a capture
                return True
        return False

    def legal_moves(self):
        """Every legal move that does not fill the mover's own eye; pass only when there is none."""
        if self.is_over():
            return []
        color = self.to_move
        moves = [p for p in POINTS if self.is_legal(p, color) and not self.is_eye(p, color)]
        return moves or [PASS]

    def random_move(self, rng):
        """A uniformly random move among legal_moves(), without building the whole list."""
        color, board = self.to_move, self.board
        candidates = [p for p in POINTS if board[p] == EMPTY]
        while candidates:
            i = int(rng.random() * len(candidates))
            p = candidates[i]
            if self.is_legal(p, color) and not self.is_eye(p, color):
                return p
            candidates[i] = candidates[-1]
            candidates.pop()
        return PASS

    def _place(self, p, color):
        """Put a stone down, merge it with friendly groups, take liberties from enemy groups; return captures."""
        board, head, stones, libs = self.board, self.head, self.stones, self.libs
        board[p], head[p] = color, p
        stones[p], libs[p] = [p], {q for q in NEIGHBOURS[p] if board[q] == EMPTY}
        captured = []
        for q in NEIGHBOURS[p]:
            c = board[q]
            if c == color and head[q] != head[p]:
                big, small = sorted((head[q], head[p]), key=lambda h: -len(stones[h]))
                for s in stones[small]:
                    head[s] = big
                stones[big] = stones[big] + stones.pop(small)
                libs[big] |= libs.pop(small)
            elif c == 3 - color:  # an enemy stone
                enemy = libs[head[q]]
                enemy.discard(p)
                if not enemy:
                    captured += self._remove(head[q])
        libs[head[p]].discard(p)
        return captured

    def _remove(self, h):
        board, head, libs = self.board, self.head, self.libs
        dead = self.stones.pop(h)
        del libs[h]
        for s in dead:
            board[s] = EMPTY
        for s in dead:
            for q in NEIGHBOURS[s]:
                if board[q] != EMPTY:
                    libs[head[q]].add(s)
        return dead

    def play(self, move):
        self.ko = None
        if move == PASS:
            self.passes += 1
        else:
            self.passes = 0
            captured = self._place(move, self.to_move)
            h = self.head[move]
            if len(captured) == 1 and len(self.stones[h]) == 1 and len(self.libs[h]) == 1:
                self.ko = captured[0]  # retaking at once would repeat the position
        self.to_move = 3 - self.to_move

    def area(self):
        """Area score: stones plus empty regions that touch only one colour. Returns (black, white)."""
        score = {BLACK: 0, WHITE: 0, EMPTY: 0}
        seen = set()
        for p in POINTS:
            c = self.board[p]
            if c != EMPTY:
                score[c] += 1
            elif p not in seen:
                region, borders, stack = 0, set(), [p]
                seen.add(p)
                while stack:
                    q = stack.pop()
                    region += 1
                    for r in NEIGHBOURS[q]:
                        if self.board[r] == EMPTY and r not in seen:
                            seen.add(r)
                            stack.append(r)
                        elif self.board[r] != EMPTY:
                            borders.add(self.board[r])
                score[borders.pop() if len(borders) == 1 else EMPTY] += region
        return score[BLACK], score[WHITE]

    def result(self, komi=0.5):
        black, white = self.area()
        return 1.0 if black > white + komi else 0.0

    def move_name(self, move):
        if move == PASS:
            return "pass"
        row, col = divmod(move, WIDTH)
        return f"{COLUMNS[col - 1]}{row}"

    def __str__(self):
        marks = {EMPTY: ".", BLACK: "X", WHITE: "O"}
        rows = [f"{r} " + " ".join(marks[self.board[r * WIDTH + c + 1]] for c in range(SIZE))
                for r in range(SIZE, 0, -1)]
        return "\n".join(rows + ["  " + " ".join(COLUMNS)])


def go_corner():
    """The article's 7x7 position: Black's corner group lives with B1 and dies if White plays there. Black to move."""
    black = ["A2", "B2", "C2", "D2", "D1"] + [f"{c}5" for c in COLUMNS]
    white = ["A3", "B3", "C3", "D3", "E3", "E2", "E1"] + [f"{c}4" for c in COLUMNS]
    return Go(black, white)


def go_rollout(state, rng, max_moves=3 * SIZE * SIZE):
    """Uniformly random moves that never fill the mover's own eye, to two passes or the cap; area score."""
    s = state.copy()
    for _ in range(max_moves):
        if s.passes >= 2:
            break
        s.play(s.random_move(rng))
    return s.result()


# ----------------------------------------------------------------------------------------------------------------
# Chess: the article's trap, on python-chess (we never write chess move generation ourselves).

CHESS_TRAP_FEN = "4r1k1/3n1ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1"
PIECE_VALUES = {1: 1, 2: 3, 3: 3, 4: 5, 5: 9, 6: 0}  # chess.PAWN .. chess.KING


class Chess:
    def __init__(self, fen=CHESS_TRAP_FEN):
        import chess
        self.board = chess.Board(fen)

    def copy(self):
        s = Chess.__new__(Chess)
        s.board = self.board.copy(stack=False)
        return s

    def legal_moves(self):
        return list(self.board.legal_moves)

    def play(self, move):
        self.board.push(move)

    def is_over(self):
        return self.board.is_game_over()

    def first_to_move(self):
        return self.board.turn  # chess.WHITE is True

    def result(self):
        return {"1-0": 1.0, "0-1": 0.0}.get(self.board.result(), 0.5)

    def move_name(self, move):
        return self.board.san(move)

    def __str__(self):  # ranks 8 to 1 down the side, files a to h along the bottom, as a chess player reads it
        rows = [f"{8 - i} {row}" for i, row in enumerate(str(self.board).split("\n"))]
        return "\n".join(rows + ["  a b c d e f g h"])


def chess_trap():
    """White to move: 1.Qxd7?? wins a knight and loses to 1...Re1#."""
    return Chess()


def allows_mate_in_one(state, move):
    """True if the opponent has a mating reply after `move` (python-chess decides what mate is)."""
    board = state.board.copy(stack=False)
    board.push(move)
    for reply in list(board.legal_moves):
        board.push(reply)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False


def material(board):
    """White's material minus Black's (P 1, N 3, B 3, R 5, Q 9)."""
    return sum(PIECE_VALUES[p.piece_type] * (1 if p.color else -1) for p in board.piece_map().values())


def chess_rollout(state, rng, plies=6):
    """`plies` uniformly random moves, then White's score: mate 1 or 0, other game ends 0.5, else by material."""
    board = state.board.copy(stack=False)
    for ply in range(plies + 1):
        moves = list(board.legal_moves)
        if not moves:
            return (0.0 if board.turn else 1.0) if board.is_check() else 0.5
        if board.is_insufficient_material():
            return 0.5
        if ply < plies:
            board.push(moves[int(rng.random() * len(moves))])
    return 0.5 + 0.5 * math.tanh(material(board) / 5)


# ----------------------------------------------------------------------------------------------------------------
# Tic-tac-toe and Connect Four: AlphaZero's games. Moves are action indices 0..n_actions-1; both are bitboards.

TTT_LINES = [0b111 << (3 * r) for r in range(3)] + [0b1001001 << c for c in range(3)] + [0b100010001, 0b001010100]


def mirror_columns(x, shape):
    """The left-right mirror of x (one row or a batch), read as blocks of `shape` whose last axis is the columns."""
    x = np.asarray(x)
    return x.reshape(x.shape[:-1] + shape)[..., ::-1].reshape(x.shape)


class TicTacToe:
    """Cells 0..8, cell = 3*row + col with row 0 at the top. X moves first."""
    n_actions, encoding_size, board_shape = 9, 18, (3, 3)  # encode(): 2 planes of board_shape, flattened
    WINS = [any(b & line == line for line in TTT_LINES) for b in range(512)]  # for each set of stones: a line?

    def __init__(self):
        self.x, self.o = 0, 0

    def copy(self):
        s = TicTacToe.__new__(TicTacToe)
        s.x, s.o = self.x, self.o
        return s

    def first_to_move(self):
        return self.x.bit_count() == self.o.bit_count()

    def key(self):
        return self.x, self.o  # the position, hashable

    def is_over(self):
        return self.x | self.o == 0b111111111 or self.WINS[self.x] or self.WINS[self.o]

    def legal_moves(self):
        if self.is_over():
            return []
        full = self.x | self.o
        return [a for a in range(9) if not full >> a & 1]

    def play(self, move):
        if self.first_to_move():
            self.x |= 1 << move
        else:
            self.o |= 1 << move

    def result(self):
        return 1.0 if self.WINS[self.x] else 0.0 if self.WINS[self.o] else 0.5

    def encode(self):
        """18 floats: the mover's stones, then the opponent's."""
        return self.encode_many([self])[0]

    @staticmethod
    def encode_many(states):
        """encode() for a batch of states in one numpy operation (the search encodes a batch of leaves at a time)."""
        bits = np.array([(s.x, s.o) if s.first_to_move() else (s.o, s.x) for s in states], dtype=np.int64)
        return (bits[:, :, None] >> np.arange(9) & 1).reshape(len(states), 18).astype(np.float32)

    @staticmethod
    def mirror_encoding(x):
        """Left-right mirror of encode()'s output (works on a batch too): column c becomes 2 - c."""
        return mirror_columns(x, (2, 3, 3))

    @staticmethod
    def mirror_policy(p):
        return mirror_columns(p, (3, 3))

    def move_name(self, move):
        return "abc"[move % 3] + str(3 - move // 3)  # a3 b3 c3 on the top row, like a chess board

    def __str__(self):
        cell = lambda i: "X" if self.x >> i & 1 else "O" if self.o >> i & 1 else "."
        rows = [f"{3 - r} " + " ".join(cell(3 * r + c) for c in range(3)) for r in range(3)]
        return "\n".join(rows + ["  a b c"])


class ConnectFour:
    """6 rows x 7 columns; action = column 0..6 from the left. Bit 7*col + row, row 0 at the bottom; bit 6 of each
    column stays empty so that a four is found with shifts of 1 (vertical), 7 (horizontal), 6 and 8 (diagonals)."""
    n_actions, encoding_size, board_shape = 7, 84, (6, 7)  # encode(): 2 planes of board_shape, flattened
    FULL = sum(((1 << 6) - 1) << (7 * c) for c in range(7))

    def __init__(self):
        self.bits = [0, 0]  # first player's stones, second player's
        self.heights = [0] * 7
        self.moves = 0

    def copy(self):
        s = ConnectFour.__new__(ConnectFour)
        s.bits, s.heights, s.moves = self.bits[:], self.heights[:], self.moves
        return s

    def first_to_move(self):
        return self.moves % 2 == 0

    def key(self):
        return self.bits[0], self.bits[1]  # the position, hashable

    @staticmethod
    def has_four(b):
        for shift in (1, 7, 6, 8):
            m = b & (b >> shift)
            if m & (m >> 2 * shift):
                return True
        return False

    def is_over(self):
        return self.moves == 42 or self.has_four(self.bits[(self.moves + 1) % 2])  # only the last mover can have won

    def legal_moves(self):
        if self.is_over():
            return []
        return [c for c in range(7) if self.heights[c] < 6]

    def play(self, move):
        self.bits[self.moves % 2] |= 1 << (7 * move + self.heights[move])
        self.heights[move] += 1
        self.moves += 1

    def result(self):
        if self.has_four(self.bits[0]):
            return 1.0
        return 0.0 if self.has_four(self.bits[1]) else 0.5

    def encode(self):
        """84 floats: the mover's stones, then the opponent's, each as 6x7 cells, top row first."""
        return self.encode_many([self])[0]

    CELLS = np.array([7 * c + r for r in range(5, -1, -1) for c in range(7)], dtype=np.int64)  # bit of each cell

    @classmethod
    def encode_many(cls, states):
        """encode() for a batch of states in one numpy operation (the search encodes a batch of leaves at a time)."""
        bits = np.array([(s.bits[s.moves % 2], s.bits[(s.moves + 1) % 2]) for s in states], dtype=np.int64)
        return (bits[:, :, None] >> cls.CELLS & 1).reshape(len(states), 84).astype(np.float32)

    @staticmethod
    def mirror_encoding(x):
        """Left-right mirror of encode()'s output (works on a batch too): column c becomes 6 - c."""
        return mirror_columns(x, (2, 6, 7))

    @staticmethod
    def mirror_policy(p):
        return mirror_columns(p, (7,))

    def move_name(self, move):
        return str(move + 1)  # columns 1..7 as printed under the board

    def __str__(self):
        def cell(r, c):
            bit = 1 << (7 * c + r)
            return "X" if self.bits[0] & bit else "O" if self.bits[1] & bit else "."
        rows = [" ".join(cell(r, c) for c in range(7)) for r in range(5, -1, -1)]
        return "\n".join(rows + ["1 2 3 4 5 6 7"])


def random_rollout(state, rng):
    """Uniformly random legal moves to the end of the game."""
    s = state.copy()
    while not s.is_over():
        moves = s.legal_moves()
        s.play(moves[int(rng.random() * len(moves))])
    return s.result()


def connect4_rollout(state, rng):
    """random_rollout for Connect Four, written out on the bare bitboards: the same random numbers play the same
    game, about 2x as fast (UCT's rollouts are most of the time of evaluate.py's matches against UCT-400)."""
    if state.is_over():
        return state.result()
    bits, heights, moves = state.bits[:], state.heights[:], state.moves
    columns = [c for c in range(7) if heights[c] < 6]  # kept up to date: a column leaves when it fills
    while True:
        c = columns[int(rng.random() * len(columns))]
        mover = moves % 2
        b = bits[mover] = bits[mover] | 1 << (7 * c + heights[c])
        heights[c] += 1
        if heights[c] == 6:
            columns.remove(c)
        moves += 1
        for shift in (1, 7, 6, 8):  # ConnectFour.has_four, written in: the call cost a fifth of the time
            m = b & (b >> shift)
            if m & (m >> 2 * shift):
                return 1.0 - mover  # the first player (mover 0) won: 1.0
        if moves == 42:
            return 0.5


GAMES = {"go": go_corner, "chess": chess_trap, "tictactoe": TicTacToe, "connect4": ConnectFour}
ROLLOUTS = {"go": go_rollout, "chess": chess_rollout, "tictactoe": random_rollout, "connect4": connect4_rollout}


# ----------------------------------------------------------------------------------------------------------------
# A human against an agent in the terminal, for any of these games or one of your own (its __str__ draws the board)

def play_in_terminal(state, agent, human_first=True):
    """Play from `state`, reading the human's moves from standard input (so a game can be scripted). A typed move is
    the game's name for it, or the same whatever the case where that is unambiguous. agent(state, reply) prints what
    it wants to show and returns its move; reply is the human's last move (None before the first)."""
    reply = None
    print(f"you move {'first' if human_first else 'second'}; Ctrl-D or Ctrl-C to stop")
    while not state.is_over():
        print(f"\n{state}")
        if state.first_to_move() != human_first:
            state.play(agent(state, reply))
            continue
        legal = {state.move_name(m): m for m in state.legal_moves()}
        folded = {name.lower(): m for name, m in legal.items()}
        text = input(f"your move ({' '.join(legal)}): ").strip()
        reply = legal.get(text, folded.get(text.lower()) if len(folded) == len(legal) else None)  # "B1", or "b1"
        state.play(reply) if reply is not None else print(f"not a legal move: {text!r}")
    human = state.result() if human_first else 1 - state.result()
    print(f"\n{state}\n{'you win' if human == 1 else 'the agent wins' if human == 0 else 'a draw'}")


WORDS = {1: "win", 0: "draw", -1: "loss"}  # a proven value, in words


def show_search(state, root, n_simulations, move, value, kept=0, proven=lambda child: None):
    """Print what the agent's search saw (the prior, visits and value of every legal move, with a bar: the move
    played first, then the most visited; the played and the proven ones marked) and return its move. kept: the
    visits a subtree kept from the last search brought; proven(child): the exact value of a child proven by
    MCTS-solver (1, 0 or -1 for whoever moves into it), else None."""
    print((f"the agent searched {n_simulations} simulations" + (f" on the {kept} visit{'s' * (kept > 1)} it kept"
                                                                if kept else "") +
           ":") if n_simulations else "the raw policy (no search):")
    if proven(root) is not None:  # (the root's value is for the player who moved into it: the human)
        print(f"the position is a proven {WORDS[-proven(root)]} for the agent: the search stopped when it knew")
    print(f"  {'move':>6} {'prior':>6} {'visits':>7} {'value':>7}")
    total = sum(ch.n for ch in root.children)
    for ch in sorted(root.children, key=lambda ch: (ch.move != move, -ch.n, -ch.prior)):  # the move played first
        value_here = f"{ch.w / ch.n:7.2f}" if ch.n else f"{'-':>7}"  # an unvisited move has no value yet
        share = ch.n / total if total else ch.prior  # of the visits, or of the policy with no search
        marks = (["proven " + WORDS[proven(ch)]] if proven(ch) is not None else []) + ["played"] * (ch.move == move)
        print(f"  {state.move_name(ch.move):>6} {ch.prior:6.2f} {ch.n:7d} {value_here}  {'#' * round(40 * share)}"
              + "".join(f"  {mark}" for mark in marks))
    print(f"the agent plays {state.move_name(move)} (its value for itself: {value:+.2f}" +
          (", proven)" if proven(next(ch for ch in root.children if ch.move == move)) is not None else ")"))
    return move


# ----------------------------------------------------------------------------------------------------------------
# The machinery the trainers share (and evaluate.py, further.py, mcts.py and puct.py use in part). What is here: the
# Run a train() is handed, which plays each iteration's games in worker processes, resumes, saves the checkpoint and
# its CSV and draws the progress line; stopping on a signal in one line, with nothing left running; files written
# whole or not at all; each setting as a Setting, and the flags made from them. Why here: an algorithm file may
# import games.py and nothing else of the project, so that each stays self-contained; what the three would otherwise
# repeat lives once, below the games. None of it is algorithm.

STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # Ctrl-C, `kill`, a closing terminal: each ends in one line
WAIT = 0.5  # seconds: no wait on the workers is longer, so a signal's handler runs at once


class Stopped(KeyboardInterrupt):
    """What a signal raises (see stop): status is the exit status, 128 + the signal; note, what was saved."""
    def __init__(self, signum=signal.SIGINT):
        super().__init__()
        self.status, self.note = 128 + signum, None


STOPPING = []  # the signal of the stop begun, if one has


def stop(signum, frame):
    """The scripts' handler of STOPS: the first raises Stopped; the rest do nothing, so that the clean-up it begins
    (workers killed, lock removed, the note of what was saved) runs to its end, with the first one's status."""
    if not STOPPING:
        STOPPING.append(signum)
        raise Stopped(signum)


@contextlib.contextmanager
def shielded():
    """A block that no stop signal interrupts: one that comes meanwhile is handled at its end."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


class Fault(ValueError):
    """What the system did to a run, in words: a worker that died, a file it could not write (see write_atomic)."""


class WorkerDied(Fault):
    """A worker process ended during the run: killed (the out-of-memory killer sends SIGKILL) or crashed."""


class RemoteTraceback(Exception):
    """The cause attached to an exception a worker sent back: its traceback there (the game's file and line)."""
    def __str__(self):
        return self.args[0]


def orphaned(parent):  # a worker's watch: once its main process is gone (even killed outright), it ends too
    while os.getppid() == parent:
        time.sleep(WAIT)
    os._exit(1)


def serve(pipe, start, parent):
    """A worker process: start(), then fn(**job) for each job that comes through the pipe, its result sent back;
    parent: its main process's id (once it has another parent, that one is gone)."""
    for sig in STOPS:  # the main process handles signals (it kills the workers); SIGTERM to all kills them at once
        signal.signal(sig, signal.SIG_DFL if sig == signal.SIGTERM else signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
    threading.Thread(target=orphaned, args=(parent,), daemon=True).start()
    start()
    with contextlib.suppress(EOFError, BrokenPipeError):  # the main process is done with it
        while True:
            fn, job = pipe.recv()
            if "on_move" in job:  # self_play's progress goes back the same way
                job["on_move"] = lambda *now: pipe.send(("progress", now))
            try:
                pipe.send(("done", fn(**job)))
            except Exception as e:  # sent back with its traceback here; one that cannot travel, in words
                trace = "".join(traceback.format_exception(e))
                try:
                    pipe.send(("error", (e, trace)))
                except Exception:
                    pipe.send(("error", (RuntimeError(repr(e)), trace)))


POOLS = []  # the Workers of this process: each one's waits watch the others' processes too
START = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)  # on Linux a worker starts
# as a copy of its main process, with what it registered (a game in GAMES): the default before Python 3.14


class Workers:
    """n processes that run start() and then the jobs map hands them, a pipe each (none for n = 1: this process does
    the work). Public APIs only; every wait has a timeout and watches each worker's process (those of the other
    POOLS too) as well as its pipe, so that a worker that died, even by SIGKILL, is a WorkerDied at once, never a
    hang."""

    def __init__(self, n, start):
        self.n, self.pipes, self.processes = n, [], []
        POOLS.extend([self] * (n > 1))
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # a signal waits until the workers ignore it
        try:
            for _ in range(n if n > 1 else 0):
                here, there = START.Pipe()
                process = START.Process(target=serve, args=(there, start, os.getpid()), daemon=True)
                process.start()
                there.close()  # the worker's end is the worker's alone: its death reads here as the end of its pipe
                self.processes.append(process)
                self.pipes.append(here)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a signal that came meanwhile is handled now
        except BaseException:
            self.close()
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            raise

    def shares(self, n):  # n games shared among the workers
        return [n // self.n + (k < n % self.n) for k in range(min(n, self.n))]

    def start(self, fn, jobs, report=None, done=None):
        """Hand out fn(**job) for each job (collect() gives the results in order); report(k, *now) hears how
        self_play's job k goes, done(jobs done) each end of a job. With no workers, the jobs wait for collect()."""
        self.fn, self.todo, self.busy, self.report, self.done = fn, list(enumerate(jobs)), {}, report, done
        self.results = [None] * len(jobs)
        self.pump(0)

    def pump(self, timeout):  # an idle worker gets the next job; then what the busy ones sent, waiting up to timeout
        for k, pipe in [(k, p) for k, p in enumerate(self.pipes) if p not in self.busy][:len(self.todo)]:
            self.busy[pipe], job = self.todo.pop(0)
            try:
                pipe.send((self.fn, dict(job, on_move=True) if self.report else job))
            except OSError:  # its end is closed: the worker is gone
                raise self.died(k) from None
        ends = {process.sentinel: (workers, k) for workers in POOLS for k, process in
                enumerate(workers.processes)}  # each ready once its process has ended; another pool's too (an idle
        for ready in multiprocessing.connection.wait(list(self.busy) + list(ends), timeout) if ends else ():  # one)
            if ready in ends:
                workers, k = ends[ready]
                raise workers.died(k)
            try:
                kind, what = ready.recv()
            except (EOFError, ConnectionResetError):  # its end closed, or reset with a job it had not read: gone
                raise self.died(self.pipes.index(ready)) from None
            if kind == "error":  # the worker's exception, raised here with its traceback there as the cause
                error, trace = what
                raise error from RemoteTraceback(trace)
            if kind == "progress":
                self.report(self.busy[ready], *what)
            else:
                self.results[self.busy.pop(ready)] = what
                self.ended()

    def died(self, k):
        """WorkerDied in words: which worker, and how it ended."""
        process = self.processes[k]
        process.join(WAIT)  # its exit status, now that it has ended
        code = process.exitcode
        if code is not None and -code in STOPS:  # a stop signal: most likely the whole group's (kill -- -PGID),
            time.sleep(WAIT)                     # whose signal here, a moment later, makes this a stop (Stopped)
        how = f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0 else \
            f"ended with status {code}"
        return WorkerDied(f"worker {k + 1} of {len(self.processes)} (process {process.pid}) {how}" +
                          (": out of memory?" if code == -signal.SIGKILL else ""))

    def collect(self):
        while self.todo and not self.pipes:  # no workers: this process does the jobs now
            k, job = self.todo.pop(0)
            on_move = {"on_move": lambda *now: self.report(k, *now)} if self.report else {}
            self.results[k] = self.fn(**job, **on_move)
            self.ended()
        while self.todo or self.busy:
            self.pump(WAIT)
        return self.results

    def ended(self):
        if self.done:
            self.done(len(self.results) - len(self.todo) - len(self.busy))

    def map(self, fn, jobs, report=None, done=None):
        """[fn(**job) for job in jobs], shared among the workers."""
        self.start(fn, jobs, report, done)
        return self.collect()

    def close(self):  # the workers this run started, and no other process; no signal interrupts it
        with shielded():
            for process in self.processes:
                process.kill()
            for process in self.processes:
                process.join(timeout=10)
            for pipe in self.pipes:
                pipe.close()
            if self in POOLS:
                POOLS.remove(self)


PROGRESS_AFTER, PROGRESS_EVERY = 3.0, 0.5  # seconds: a phase running past the first gets a live line, redrawn so often


class Run:
    """What a trainer's train() is handed: worker processes, --resume, the checkpoint and its CSV, the clock, the log,
    the live line, a clean end. Each trainer's Run is this with its own start_process, save and load, its name
    (`algorithm`) and its plain settings (`plain`: its SETTINGS' defaults, no game's own)."""

    def __init__(self, workers=1, out=None, resume=False, replace=False, log=print, spent=None):
        self.n, self.out, self.resume, self.fresh = workers or os.cpu_count(), out, resume, not (resume or replace)
        self.log, self.spent, self.phases, self.counts, self.steps = log, {} if spent is None else spent, {}, {}, 0
        self.saved = 0  # the iteration that --out holds from this run (or the one it resumed), none before

    def __enter__(self):
        if self.out is not None:
            claim(self.out, self.fresh, lambda path: self.load(path, as_net=False))
        self.restore = self.start_process()  # (at the end, its threads and gc thresholds as they were)
        self.began, self.workers, self.line = time.time(), Workers(1, None), LiveLine()
        return self

    def begin(self, game, cfg, seed, net, optimizer):  # iterations done: 0, or with --resume the checkpoint's
        self.game, self.cfg, self.seed, self.next = game, cfg, seed, None
        self.done = self.saved = self.resume_from(game, cfg, net, optimizer) if self.resume else 0
        self.workers = Workers(self.n, self.start_process)  # in the `with` block: a signal as they start ends cleanly
        return self.done

    def resume_from(self, game, cfg, net, optimizer):
        """--resume: load --out's training checkpoint into net and optimizer; return its iterations done. Only
        --iterations may change; a setting added since the checkpoint was saved takes its plain default (what the
        training did before it existed), not a game's own."""
        path, ckpt = self.out, self.load(self.out, game, as_net=False)  # the game first, alone
        if "optimizer" not in ckpt:
            raise ValueError(f"{path} holds no training state to resume")
        trained_by = ckpt.get("algorithm", "alphazero")  # (the first checkpoints did not say)
        if trained_by != self.algorithm:
            raise ValueError(f"{path} was trained by {trained_by}.py, not {self.algorithm}.py: --resume needs that one")
        then = dict(self.plain, **ckpt.get("settings") or {})
        changed = [f"{k} {then.get(k)!r}, not {v!r}" for k, v in cfg.items() if k != "iterations" and then.get(k) != v]
        if changed:
            raise ValueError(f"{path} was trained with {', '.join(changed)}: --resume needs the same settings")
        if ckpt["iterations_done"] >= cfg["iterations"]:
            raise ValueError(f"{path} has {ckpt['iterations_done']} iterations done, all that --iterations asks: ask "
                             f"for more to go on")
        net.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        return ckpt["iterations_done"]

    def play(self, fn, it, **job):
        """Iteration it's games, joined: fn(**job, n_games=share, rng=stream) in each worker k, with its share of the
        games and a random stream of its own, seeded (seed, it, k). With cfg's pipeline (alphazero_plus's --pipeline
        1), the next iteration's games start once these are in, with this job's network (not yet trained on them),
        and are played while this process trains: every core busy, the games one step behind."""
        if self.next != it:  # (with the pipeline, begun already)
            self.start(fn, it, job)
        results = self.collect()
        if self.cfg.get("pipeline") and it < self.cfg["iterations"]:
            self.start(fn, it + 1, job)
        return tuple(np.concatenate(part) for part in zip(*results))

    def start(self, fn, it, job):  # iteration it's games begin, in the workers (with none: when collected)
        jobs = [dict(job, n_games=share, rng=np.random.default_rng((self.seed, it, k)))
                for k, share in enumerate(self.workers.shares(self.cfg["games"]))]
        self.counts, self.next, self.phases["playing"] = {k: (0, 0) for k in range(len(jobs))}, it, (it, time.time())
        self.workers.start(fn, jobs, lambda k, *now: self.show(counts={k: now}))

    def collect(self):  # the games begun, once played: the wait counts as self-play (in-process, the games too)
        t0 = time.time()
        self.phases["playing"] = self.phases["playing"] if self.workers.pipes else (self.next, t0)
        results = self.workers.collect()
        self.laps, self.phases = (t0, time.time()), {"training": (self.next, time.time())}
        return results

    def step_done(self):  # fit's on_step: the line counts Adam's steps, and hears how the games played meanwhile go
        self.workers.pump(0)
        self.show(steps=self.steps + 1)

    def show(self, steps=None, counts=()):  # on a terminal: the work so far, on one line, redrawn
        self.steps, now = self.steps if steps is None else steps, time.time()
        self.counts.update(counts)
        done = [sum(c[i] for c in self.counts.values()) for i in (0, 1)]
        parts = [f"iteration {it}: " + (f"{self.steps}/{self.cfg['steps']} Adam steps" if phase == "training" else
                                        f"{done[0]}/{self.cfg['games']} games over, {done[1]} moves")
                 for phase, (it, since) in self.phases.items() if now - since >= PROGRESS_AFTER]
        self.line.draw("; ".join(parts), PROGRESS_EVERY)

    def iteration_done(self, it, net, optimizer, losses, positions):  # save, then log the iteration's line
        (t0, t1), t2, cfg, (value_loss, policy_loss) = self.laps, time.time(), self.cfg, losses
        self.spent.update({k: self.spent.get(k, 0.0) + s for k, s in (("self-play", t1 - t0), ("training", t2 - t1))})
        self.phases, self.steps = {k: v for k, v in self.phases.items() if k == "playing"}, 0
        self.line.clear()
        if self.out:  # the checkpoint, and beside it the progress as data (connect4.pt, connect4.csv), each atomic
            self.save(net, self.out, self.game, optimizer, it, cfg)
            self.saved = it
            add_row(os.path.splitext(self.out)[0] + ".csv", RUN_CSV,
                    f"{it},{positions},{value_loss:.4f},{policy_loss:.4f},{t1 - t0:.2f},{t2 - t1:.2f}\n", it == 1)
        self.log(f"iteration {it:3d}/{cfg['iterations']}  games {cfg['games']:4d}  positions {positions:6d}  "
                 f"loss {value_loss + policy_loss:.3f} (value {value_loss:.3f}, policy {policy_loss:.3f})  "
                 f"self-play {t1 - t0:4.1f} s  training {t2 - t1:3.1f} s  elapsed {t2 - self.began:5.0f} s, "
                 f"about {(t2 - self.began) / (it - self.done) * (cfg['iterations'] - it):.0f} s left")

    def __exit__(self, kind, error, trace):  # no process and no lock left, whatever ended the run
        with shielded():
            self.line.clear()
            self.workers.close()
            release(self.out)
            self.restore()
        if not self.out or not isinstance(error, (Stopped, BrokenPipeError, Fault)):
            return
        # what the checkpoint holds of this run, and how to go on: the end of the line that ends it
        held = f"{self.out} holds iteration {self.saved}: add --resume to go on" if self.saved else "nothing saved"
        if isinstance(error, Fault):  # a worker that died, the system's refusal to save (say, a full disk)
            raise type(error)(f"{error}; {held}") from None
        error.note = f"interrupted at iteration {self.saved + 1}; {held}"


def claim(path, fresh, read):
    """Before a training writes `path` and its CSV beside it, refuse in one line: a path that cannot be written, that
    a live training writes (PATH.lock holds its process id), that holds anything but this project's own kind (a
    checkpoint read accepts, a CSV with a training's header) or, for a fresh training, a training at all: a finished
    run is never replaced unless asked (--replace). Then PATH.lock is this process's."""
    try:
        other = int(open(f"{path}.lock").read())
        os.kill(other, 0)  # no error: that process is alive
    except (OSError, ValueError):
        other = None
    if other:
        raise ValueError(f"{path} is being written by another training, process {other}: choose another --out")
    csv = os.path.splitext(path)[0] + ".csv"
    if csv == path:
        raise ValueError(f"cannot write the checkpoint {path!r}: its CSV, written beside it, would be the same file: "
                         f"choose a name that does not end in .csv")
    if not path or os.path.isdir(path):
        raise ValueError(f"cannot write the checkpoint {path!r}: {'a folder' if path else 'an empty path'}")
    if holds(path, read) not in ("nothing", "a checkpoint of these scripts"):
        raise ValueError(f"{path} holds {holds(path, read)}, not a checkpoint of these scripts: choose another --out")
    if holds(csv) not in ("nothing", "a training's CSV"):
        raise ValueError(f"{csv}, where a training writes its progress beside {path}, holds {holds(csv)}: choose "
                         f"another --out")
    if fresh and holds(path, read) != "nothing":
        raise ValueError(f"{path} holds a training already: add --resume to go on with it, choose another --out, "
                         f"or add --replace to start afresh over it")
    if fresh and holds(csv) != "nothing":
        raise ValueError(f"{csv} holds the progress of a training whose checkpoint {path} is gone: choose another "
                         f"--out, or add --replace to start afresh over it")
    try:
        with open(f"{path}.lock", "w") as f:
            f.write(str(os.getpid()))
    except OSError as e:
        raise ValueError(f"cannot write the checkpoint {path}: {e.strerror}") from None


RUN_CSV = "iteration,positions,value_loss,policy_loss,self_play_s,training_s\n"  # a training's CSV, its header


def holds(path, read=None):
    """What the file at path holds, in a few words (for a refusal to write over it): nothing (no file, or an empty
    one), a checkpoint of these scripts (read, a trainer's load, finds its game, size and weights), a training's
    CSV, JSON these scripts wrote (with WRITTEN_BY), or other JSON, text or data."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except FileNotFoundError:
        return "nothing"
    except OSError as e:
        return f"a file that cannot be read ({e.strerror})"
    if not head:
        return "nothing"
    if read and head[:2] == b"PK":  # torch saves a zip file
        try:
            read(path)
        except NotACheckpoint:
            return "a torch or zip file"
        except ValueError:
            pass  # a network of a game this process does not know: a checkpoint of these scripts all the same
        return "a checkpoint of these scripts"
    if head.startswith(RUN_CSV.encode()):
        return "a training's CSV"
    if head.lstrip()[:1] == b"{" and f'"{WRITTEN_BY}": '.encode() in head[:200]:
        return "JSON these scripts wrote"
    try:
        head.decode()
        return "JSON" if head.lstrip()[:1] in (b"{", b"[") else "text"
    except UnicodeDecodeError:
        return "data"


WRITTEN_BY = "written by"  # the first key of the JSON evaluate.py and further.py write: whose file it is


def release(path):  # the end of claim(path): its lock removed (None: no path was claimed), if it can be
    if path is not None:
        with contextlib.suppress(OSError):  # gone already, or its folder made read-only: a dead process's lock is
            os.remove(f"{path}.lock")       # no lock (see claim)


def write_atomic(path, data):
    """Write data (bytes or text) to path whole or not at all: a temporary file of this process's beside it, then a
    rename; no stop signal interrupts it. An error of the system's (no space, no permission, a read-only file
    system, a folder gone) is a Fault in words, the temporary file removed and what path held intact."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with shielded():
        try:
            with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise Fault(f"cannot write {path}: {e.strerror or e}") from None


def add_row(path, header, row, anew=False):
    """Add a line to a CSV atomically (see write_atomic); a missing file, or anew (a training's first iteration,
    --replace's too), starts with the header."""
    old = open(path).read() if os.path.exists(path) and not anew else header
    write_atomic(path, old + row)


class Setting(NamedTuple):
    """One of a trainer's settings, and its flag: the default (the lab's for tic-tac-toe); for a number, the lowest
    and highest values it takes; what it means, the flag's help; for a word, the words it takes (choices)."""
    default: object
    low: object = None
    high: object = None
    meaning: str = ""
    choices: tuple = ()


def check_settings(game, settings, cfg):
    """Before a training, in one line (ValueError): cfg holds every setting of `settings` ({name: Setting}), each a
    number in its range (or None where that is its default) or one of its words."""
    missing = [key for key in settings if key not in cfg]
    if missing:
        raise ValueError(f"the settings for {game} lack {', '.join(missing)}: settings() gives every one")
    for key, s in settings.items():
        value = cfg[key]
        if s.choices and value not in s.choices:
            raise ValueError(f"the setting {key} is {value!r}, not one of {', '.join(map(str, s.choices))}")
        number = isinstance(value, (int, float, np.number)) and s.low <= value <= s.high  # (nan is not)
        if not s.choices and not number and not (value is None and s.default is None):
            raise ValueError(f"the setting {key} is {value!r}, not a number from {s.low} to {s.high}")


def command_line(doc, settings, game_settings, games, default, for_play, idle=None):
    """A trainer's flags: one for each setting ({name: Setting}), with each game's own default named, then the rest,
    the same in each; checked, each refusal one line: ranges, flags for training given to --play and the other way,
    --resume with --replace, 0 simulations outside --play, a flag that does nothing (idle: {name: (other, value)},
    name does nothing while the setting other is value). --game module:Class imports a game of your own into
    `games`. default: the default checkpoint's name ("GAME.pt")."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")  # bad input: one line, exit status 1
    parser.add_argument("--game", default="connect4", help="tictactoe, connect4, or your own as module:Class (a "
                        "class in an importable module, with the settings' first defaults; default connect4)")
    for key, setting in settings.items():
        value = setting.default
        own = "".join(f"; {game} {s[key]}" for game, s in game_settings.items() if key in s)
        kind = dict(choices=setting.choices) if setting.choices else \
            dict(type=type(setting.low), metavar="X" if type(setting.low) is float else "N")
        span = "" if setting.choices else f", {setting.low:g} to {setting.high:g}"
        parser.add_argument(f"--{key.replace('_', '-')}", **kind,
                            help=f"{setting.meaning}{span} (default {'none' if value is None else value}{own})")
    parser.add_argument("--seed", type=int, help="random seed, 0 to 2^32 - 1 (default 0)")
    parser.add_argument("--workers", type=int, help=f"self-play processes, 1 to 256 (default {os.cpu_count()})")
    parser.add_argument("--out", help=f"checkpoint path, saved every iteration, its CSV beside it (default {default})")
    parser.add_argument("--resume", action="store_true", help="train --out's checkpoint on to --iterations")
    parser.add_argument("--replace", action="store_true", help="start afresh over --out's checkpoint and CSV: without "
                        "it, a training refuses a path that holds one")
    parser.add_argument("--play", action="store_true", help="play against a saved checkpoint instead of training")
    parser.add_argument("--checkpoint", help=f"the checkpoint --play loads (default {default})")
    parser.add_argument("--first", choices=["human", "agent"], help="who starts with --play (default human)")
    args = parser.parse_args()
    ranges = dict({k: (s.low, s.high) for k, s in settings.items() if not s.choices}, workers=(1, 256),
                  seed=(0, 2**32 - 1))
    for key, (lo, hi) in ranges.items():
        if getattr(args, key) is not None and not lo <= getattr(args, key) <= hi:  # nan and inf too
            parser.error(f"argument --{key.replace('_', '-')}: must be a number from {lo} to {hi}")
    given = {k for k, v in vars(args).items() if v not in (None, False)} - {"game", "play"}
    for key in sorted(given - for_play if args.play else given & for_play - set(settings)):
        parser.error(f"--{key.replace('_', '-')} is for " + ("training; --play plays a checkpoint" if args.play
                                                             else "--play; training writes --out"))
    if args.resume and args.replace:
        parser.error("--resume goes on with --out's training and --replace starts afresh over it: choose one")
    if args.simulations == 0 and not args.play:
        parser.error("--simulations 0 is for --play (the raw policy); self-play needs at least 1")
    if args.play and args.simulations == 0 and getattr(args, "reuse_tree", None):
        parser.error("--reuse-tree 1 keeps a search's tree, and --simulations 0 searches nothing: drop one")
    for key, (other, value) in (idle or {}).items():
        now = next(v for v in (getattr(args, other), game_settings.get(args.game, {}).get(other),
                               settings[other].default) if v is not None)
        if getattr(args, key) is not None and now == value and not args.play:
            parser.error(f"--{key.replace('_', '-')} does nothing with --{other.replace('_', '-')} {value}" +
                         ("" if getattr(args, other) is not None else " (the default)") + ": drop one")
    if args.game not in games:  # module:Class, a game of your own
        try:
            games[args.game] = import_game(args.game, games)
        except ValueError as e:
            parser.error(f"argument --game: {e}")
    return args


def import_game(text, games):
    """--game module:Class, a game of your own: the class, its module found in the current folder or on Python's
    path. A module that fails to import is one line with its own error: the file and line of a syntax error, the
    missing package's name, or the exception and where it was raised."""
    module, _, name = text.partition(":")
    if not module or not name.isidentifier():
        raise ValueError(f"no game {text!r}: {', '.join(games)}, or your own as module:Class")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # (the script's own folder is on it already; the folder it is run from is not)
    try:
        found = importlib.import_module(module)
    except SyntaxError as e:
        raise ValueError(f"{module}: {e.msg} ({e.filename}, line {e.lineno})") from None
    except ModuleNotFoundError as e:
        if e.name and (module + ".").startswith(e.name + "."):
            raise ValueError(f"no module {module!r} in this folder ({os.getcwd()}) or on Python's path") from None
        raise ValueError(f"{module} imports {e.name}, which is not installed") from None
    except Exception as e:
        where = traceback.extract_tb(e.__traceback__)[-1]
        raise ValueError(f"{module} failed to import: {type(e).__name__}: {e} ({where.filename}, line "
                         f"{where.lineno})") from None
    if not hasattr(found, name):
        raise ValueError(f"{module} ({found.__file__}) has no {name}")
    return getattr(found, name)


class LiveLine:
    """Long work's progress on a terminal: one line that the next replaces, redrawn at most every `every` seconds;
    nothing on a log file or a pipe, nor from a worker process (evaluate.py's small trainings)."""
    def __init__(self):
        self.on, self.drawn = sys.stdout.isatty() and multiprocessing.parent_process() is None, 0.0

    def draw(self, text, every):
        if self.on and text and time.time() - self.drawn >= every:
            sys.stdout.write(f"\r{text[:shutil.get_terminal_size().columns - 1]}\033[K")  # \r: back to its start;
            sys.stdout.flush()                                                          # \033[K: clears the rest
            self.drawn = time.time()

    def clear(self):  # it gives way to a line that stays
        if self.drawn:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()
            self.drawn = 0.0


class NotACheckpoint(ValueError):
    """A path that holds no checkpoint of these scripts (see read_checkpoint)."""


def read_checkpoint(path, read, game=None, known=()):
    """read(path), a checkpoint of these scripts (a dict with the game, the size and the weights), or NotACheckpoint
    in words for a file that is missing, a folder, empty, that read cannot read, or that holds something else; then
    a ValueError for a checkpoint of a game other than `game` (if given), or of one not in `known` (a trainer's
    GAMES)."""
    try:
        with warnings.catch_warnings():  # (torch warns of a file before it refuses it: the refusal is the one line)
            warnings.simplefilter("ignore")
            ckpt = read(path)
    except Exception as e:
        raise NotACheckpoint(f"no checkpoint at {path!r}" if isinstance(e, FileNotFoundError) else f"{path} is " + (
            "a folder, not a checkpoint" if os.path.isdir(path) else "empty, not a checkpoint" if
            os.path.getsize(path) == 0 else "not a checkpoint: torch cannot read it")) from None
    if not isinstance(ckpt, dict) or not {"game", "hidden", "state_dict"} <= set(ckpt):
        raise NotACheckpoint(f"{path} is a torch file but not a checkpoint of these scripts: no game, size and weights")
    if game and ckpt["game"] != game:
        raise ValueError(f"{path} holds a {ckpt['game']} network, not {game}")
    if ckpt["game"] not in known:
        raise ValueError(f"{path} holds a {ckpt['game']} network, a game that only a trainer's --game {ckpt['game']} "
                         f"knows")
    return ckpt


def whole(lo, hi):
    """An argparse type: a whole number from lo to hi."""
    def parse(text):
        if not text.strip().lstrip("-").isdigit() or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"must be a whole number from {lo} to {hi}, not {text!r}")
        return int(text)
    return parse


def number_in(lo, hi):
    """An argparse type: a finite number from lo to hi."""
    def parse(text):
        try:
            x = float(text)
        except ValueError:
            x = math.nan  # fails the check below
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"must be a number from {lo} to {hi}, not {text!r}")
        return x
    return parse


class Unbroken:
    """sys.stdout for a run whose product is a file (evaluate.py, further.py): once the reader of its pipe is gone
    (`| head`), what it prints goes nowhere and the run goes on."""
    def __init__(self, out):
        self.out = out

    def __getattr__(self, name):
        return getattr(self.out, name)

    def write(self, text):
        try:
            self.out.write(text)
            self.out.flush()  # now, so that a reader gone shows here
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())  # what it holds then empties there
        return len(text)

    def flush(self):
        self.write("")


def run_main(work):
    """Run a script's work; what ends it is one line and the status: an error in words (1), a signal (128 + it: the
    note of what was saved), the reader of a pipe gone (141), end of input in the terminal game. A ValueError that
    a game of one's own raised (its innermost frame in another folder) keeps its traceback, as any exception does.
    What work returns, if anything, is its last words, printed once the work is over and stop signals ignored."""
    last = None
    try:
        last = work()
    except ValueError as e:
        if not raised_here(e):
            raise
        sys.exit(f"{os.path.basename(sys.argv[0])}: error: {e}")
    except (Stopped, BrokenPipeError) as e:  # (a pipe's reader gone: quiet, but for what a training saved)
        note = getattr(e, "note", None) or ("" if isinstance(e, BrokenPipeError) else "bye" if "--play" in sys.argv
                                            else "interrupted")
        os.write(2, f"{chr(10) * sys.stderr.isatty()}{note}\n".encode() if note else b"")  # (a new line after ^C)
        os._exit(getattr(e, "status", 128 + signal.SIGPIPE))  # at once: no exit handler waits for anything
    except EOFError:
        print("\nbye")
    finally:
        ignore_stops()
    if last:
        print(last)


def ignore_stops():
    """The work is over: a stop signal while Python exits (a second or so) changes nothing, neither the status nor
    the output (Python would put back the default handlers as it exits)."""
    STOPPING.append(0)  # (one already come is handled by stop, which now does nothing)
    for sig in STOPS:
        signal.signal(sig, signal.SIG_IGN)


def raised_here(error):
    """Was the error raised in this project's files (in words, for the user), not in a game of one's own? In a
    worker, its traceback there says (RemoteTraceback)."""
    cause = error.__cause__
    files = re.findall(r'File "([^"]+)"', str(cause)) if isinstance(cause, RemoteTraceback) else \
        [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
    return not files or os.path.dirname(os.path.abspath(files[-1])) == os.path.dirname(os.path.abspath(__file__))

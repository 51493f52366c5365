"""The rules of four games behind one small interface, which the contract just below writes out as code. The article's
Go corner and chess trap need only `Game`, which is all that UCT calls; the lab's tic-tac-toe and Connect Four are
also `NetworkGame`s, as the network trainers need. A rollout plays a copy of a state out with a random.Random and
returns the first player's result. Last come a terminal game against an agent and a printout of what its search saw.
Above its `# Plumbing` banner, every algorithm file imports only this file of the project, for the rules.
"""
import inspect
import math
from typing import Hashable, Protocol, runtime_checkable

import numpy as np


# ----------------------------------------------------------------------------------------------------------------
# The contract. A game is a class of small mutable states, and these Protocols list what each part of the code calls.
# Your own game only has to match them, not inherit from them, as the README's Nim does. The trainers check this first.

@runtime_checkable
class Game(Protocol):
    """What UCT (mcts.py) and PUCT (puct.py) call on a game. A move can be any object that legal_moves() lists."""
    def copy(self) -> "Game": ...  # a separate state, so that playing on the copy leaves this one unchanged
    def legal_moves(self) -> list: ...  # the moves the player to move may make; empty once the game is over
    def play(self, move) -> None: ...  # makes `move`, one of legal_moves(), in place; then the other player is to move
    def is_over(self) -> bool: ...
    def first_to_move(self) -> bool: ...  # True if the first player moves next: Black in Go, White in chess, else X
    def result(self) -> float: ...  # after the game ends: 1.0 if the first player won, 0.0 if they lost, 0.5 for a draw
    def move_name(self, move) -> str: ...  # the name shown in tables and typed in the terminal: "B1", "Qxd7", "a3", "4"


@runtime_checkable
class NetworkGame(Game, Protocol):
    """What the network trainers (alphazero.py, gumbel.py, alphazero_plus.py) need on top of `Game`. The class goes in
    the trainer's GAMES, and calling it with no arguments gives the start position. Moves are the integers
    0 .. n_actions - 1, so that the policy head has one output per move. Every game must end, because self-play plays
    on until it does."""
    n_actions: int       # the length of the policy
    encoding_size: int   # the length of the network's input
    def key(self) -> Hashable: ...  # the position in hashable form, the key of the cache of network outputs
    def encode(self) -> np.ndarray: ...  # the position as the player to move sees it: float32 of length encoding_size
    @staticmethod
    def encode_many(states) -> np.ndarray: ...  # encode() for a batch at once, shaped (len(states), encoding_size)


@runtime_checkable
class Mirrored(Protocol):
    """Optional: a left-right symmetry, which --mirror 1 uses to double the training data for free."""
    @staticmethod
    def mirror_encoding(x) -> np.ndarray: ...  # encode()'s output, one row or a batch, for the mirrored position
    @staticmethod
    def mirror_policy(p) -> np.ndarray: ...  # a policy or a batch, with each move's share moved to its mirror image


@runtime_checkable
class Board(Protocol):
    """Optional, for --net conv: encode() gives 2 planes of board_shape, the mover's stones then the opponent's."""
    board_shape: tuple   # (rows, columns)


# Also optional: __str__, which draws the board as text for playing in the terminal (--play).


def lacks(game, *protocols):
    """The names listed by the protocols that `game` (a class or a state) lacks, with Game's names first."""
    names = [name for protocol in protocols for base in reversed(protocol.__mro__)  # attributes, then methods
             for name in (*inspect.get_annotations(base), *vars(base)) if not name.startswith("_")]
    return [name for name in dict.fromkeys(names) if not hasattr(game, name)]


def check_network_game(name, game, *optional):
    """Check a game class before any training, and raise a one-line ValueError at the first problem. The class must
    have every name the trainers call, and the optional ones asked for. game() must give a start position whose key is
    hashable and whose encodings fit the network's input, with encode_many called on the class as the search calls
    it. The start position must have moves, each an integer index into the policy."""
    missing = lacks(game, NetworkGame, *optional)
    if missing:
        raise ValueError(f"the game {name} has no {', '.join(missing)}: see the contract in games.py"
                         + " (--mirror 1 needs the mirror)" * ("mirror_policy" in missing))
    try:
        state = game()
        hash(state.key())
        encodings = (("encode()", state.encode(), (game.encoding_size,)),
                     ("encode_many([state])", game.encode_many([state]), (1, game.encoding_size)))
    except TypeError as e:
        raise ValueError(f"the game {name} fails as the trainers call it ({e}): {name}() takes no arguments, its key() "
                         f"is hashable, its encode_many a @staticmethod") from None
    for what, x, shape in encodings:
        x = np.asarray(x)
        if x.dtype != np.float32 or x.shape != shape:
            raise ValueError(f"the game {name}'s {what} gives {x.dtype} of shape {x.shape}, "
                             f"not float32 of shape {shape}")
    moves = state.legal_moves()
    if not moves or not all(isinstance(m, (int, np.integer)) and 0 <= m < game.n_actions for m in moves):
        raise ValueError(f"the game {name}'s start position has the moves {moves[:10]}: it needs some, each an integer "
                         f"from 0 to n_actions - 1 = {game.n_actions - 1}")


# ----------------------------------------------------------------------------------------------------------------
# Go on a 7x7 board, for the article's corner position.
# The board is a padded 1-D list (9 x 9 with a ring of edge points) so that neighbours are plain index offsets. Each
# group is known by one of its stones, its head. The group's stones and liberties are kept up to date move by move,
# so finding a move's legality and its captures never needs a flood fill.

SIZE, WIDTH = 7, 9
EMPTY, BLACK, WHITE, EDGE = 0, 1, 2, 3
PASS = -1
COLUMNS = "ABCDEFG"
POINTS = [(r + 1) * WIDTH + c + 1 for r in range(SIZE) for c in range(SIZE)]  # row 1 first
ON_BOARD = set(POINTS)
NEIGHBOURS = {p: [q for q in (p - WIDTH, p - 1, p + 1, p + WIDTH) if q in ON_BOARD] for p in POINTS}


def go_point(name):
    """Turn a point's name, such as 'B1', into its index on the padded board, and 'pass' into PASS."""
    if name.lower() == "pass":
        return PASS
    col, row = COLUMNS.index(name[0].upper()), int(name[1:])
    if not 1 <= row <= SIZE:
        raise ValueError(f"no point {name!r} on a {SIZE}x{SIZE} board")
    return row * WIDTH + col + 1


class Go:

    def __init__(self, black=(), white=(), black_to_move=True):
        self.board = [EMPTY if p in ON_BOARD else EDGE for p in range(WIDTH * WIDTH)]
        self.head = [0] * (WIDTH * WIDTH)  # the head stone of the group at each point
        self.stones, self.libs = {}, {}    # head -> list of stones, head -> set of liberties
        self.to_move, self.ko, self.passes = BLACK if black_to_move else WHITE, None, 0
        for names, color in ((black, BLACK), (white, WHITE)):
            for name in names:
                self._place(go_point(name), color)

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
        """Not ko and not suicide: it needs an empty neighbour, a capture, or a friendly group with another liberty."""
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
        """Put a stone down, merge it with friendly groups and take liberties from enemy groups. Return the captures."""
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
        """Area score: each side's stones plus the empty regions that touch only its colour. Returns (black, white)."""
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
        return "pass" if move == PASS else f"{COLUMNS[move % WIDTH - 1]}{move // WIDTH}"

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
    """Play uniformly random moves that never fill the mover's own eye, to two passes or max_moves; score by area."""
    s = state.copy()
    for _ in range(max_moves):
        if s.passes >= 2:
            break
        s.play(s.random_move(rng))
    return s.result()


# ----------------------------------------------------------------------------------------------------------------
# Chess, for the article's trap. python-chess gives the rules, so we never write chess move generation ourselves.

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
        if board.is_checkmate():
            return True
        board.pop()
    return False


def material(board):
    """White's material minus Black's (P 1, N 3, B 3, R 5, Q 9)."""
    return sum(PIECE_VALUES[p.piece_type] * (1 if p.color else -1) for p in board.piece_map().values())


def chess_rollout(state, rng, plies=6):
    """Play `plies` random moves, then score for White: 1 or 0 for mate, 0.5 for any other end, else by material."""
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
# Tic-tac-toe and Connect Four, the lab's AlphaZero games. Both are bitboards, and moves are 0..n_actions-1.

TTT_LINES = [0b111 << (3 * r) for r in range(3)] + [0b1001001 << c for c in range(3)] + [0b100010001, 0b001010100]


def mirror_columns(x, shape):
    """Mirror x left to right, one row or a batch, read as blocks of `shape` whose last axis is the columns."""
    x = np.asarray(x)
    return x.reshape(x.shape[:-1] + shape)[..., ::-1].reshape(x.shape)


class TicTacToe:
    """Cells 0..8, cell = 3*row + col with row 0 at the top. X moves first."""
    n_actions, encoding_size, board_shape = 9, 18, (3, 3)  # encode() gives 2 planes of board_shape, flattened

    WINS = [any(b & line == line for line in TTT_LINES) for b in range(512)]  # True where the stones make a line

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
        full = self.x | self.o
        return [] if self.is_over() else [a for a in range(9) if not full >> a & 1]

    def play(self, move):
        if self.first_to_move():
            self.x |= 1 << move
        else:
            self.o |= 1 << move

    def result(self):
        return 1.0 if self.WINS[self.x] else 0.0 if self.WINS[self.o] else 0.5
    def encode(self):  # 18 floats: the mover's stones, then the opponent's
        return self.encode_many([self])[0]
    @staticmethod
    def encode_many(states):  # one numpy operation, because the search encodes a batch of leaves at a time
        bits = np.array([(s.x, s.o) if s.first_to_move() else (s.o, s.x) for s in states], dtype=np.int64)
        return (bits[:, :, None] >> np.arange(9) & 1).reshape(len(states), 18).astype(np.float32)
    @staticmethod
    def mirror_encoding(x):  # column c becomes 2 - c, in one row or a batch
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
    """6 rows by 7 columns; a move is a column, 0..6 from the left. Cell (col, row) is bit 7*col + row, row 0 at the
    bottom. Bit 6 of a column stays empty, so shifts of 1 (vertical), 7 (horizontal), 6 and 8 (diagonal) find a four."""
    n_actions, encoding_size, board_shape = 7, 84, (6, 7)  # encode() gives 2 planes of board_shape, flattened

    def __init__(self):
        self.bits, self.heights, self.moves = [0, 0], [0] * 7, 0  # each side's stones, and the height of each column
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
        return [] if self.is_over() else [c for c in range(7) if self.heights[c] < 6]
    def play(self, move):
        self.bits[self.moves % 2] |= 1 << (7 * move + self.heights[move])
        self.heights[move] += 1
        self.moves += 1
    def result(self):
        return 1.0 if self.has_four(self.bits[0]) else 0.0 if self.has_four(self.bits[1]) else 0.5
    def encode(self):  # 84 floats: the mover's stones, then the opponent's, each as 6x7 cells, top row first
        return self.encode_many([self])[0]

    CELLS = np.array([7 * c + r for r in range(5, -1, -1) for c in range(7)], dtype=np.int64)  # the bit of each cell

    @classmethod
    def encode_many(cls, states):  # one numpy operation, as in tic-tac-toe
        bits = np.array([(s.bits[s.moves % 2], s.bits[(s.moves + 1) % 2]) for s in states], dtype=np.int64)
        return (bits[:, :, None] >> cls.CELLS & 1).reshape(len(states), 84).astype(np.float32)
    @staticmethod
    def mirror_encoding(x):  # column c becomes 6 - c, in one row or a batch
        return mirror_columns(x, (2, 6, 7))
    @staticmethod
    def mirror_policy(p):
        return mirror_columns(p, (7,))
    def move_name(self, move):
        return str(move + 1)  # columns 1..7 as printed under the board
    def __str__(self):
        cell = lambda bit: "X" if self.bits[0] >> bit & 1 else "O" if self.bits[1] >> bit & 1 else "."
        rows = [" ".join(cell(7 * c + r) for c in range(7)) for r in range(5, -1, -1)]
        return "\n".join(rows + ["1 2 3 4 5 6 7"])


def random_rollout(state, rng):
    """Play uniformly random legal moves to the end of the game."""
    s = state.copy()
    while not s.is_over():
        moves = s.legal_moves()
        s.play(moves[int(rng.random() * len(moves))])
    return s.result()


def connect4_rollout(state, rng):
    """random_rollout for Connect Four, written out on the bare bitboards. The same random numbers play the same game
    about twice as fast, which matters because UCT's rollouts take most of evaluate.py's time against UCT-400."""
    if state.is_over():
        return state.result()
    bits, heights, moves = state.bits[:], state.heights[:], state.moves
    columns = [c for c in range(7) if heights[c] < 6]  # the open columns; a column is removed when it fills
    while True:
        c = columns[int(rng.random() * len(columns))]
        mover = moves % 2
        b = bits[mover] = bits[mover] | 1 << (7 * c + heights[c])
        heights[c] += 1
        if heights[c] == 6:
            columns.remove(c)
        moves += 1
        for shift in (1, 7, 6, 8):  # ConnectFour.has_four inlined, because the call cost a fifth of the time
            m = b & (b >> shift)
            if m & (m >> 2 * shift):
                return 1.0 - mover  # 1.0 if the first player (mover 0) won
        if moves == 42:
            return 0.5


GAMES = {"go": go_corner, "chess": chess_trap, "tictactoe": TicTacToe, "connect4": ConnectFour}
ROLLOUTS = {"go": go_rollout, "chess": chess_rollout, "tictactoe": random_rollout, "connect4": connect4_rollout}


# ----------------------------------------------------------------------------------------------------------------
# A human against an agent in the terminal, for any of these games or one of your own whose __str__ draws the board

def play_in_terminal(state, agent, human_first=True):
    """Play from `state`. The human types moves by name on standard input (a script may too), in either letter case
    where that is unambiguous. agent(state, reply) gets the human's last move, and prints and returns its own."""
    reply = None
    print(f"you move {'first' if human_first else 'second'}; Ctrl-D or Ctrl-C to stop")
    while not state.is_over():
        print(f"\n{state}")
        if state.first_to_move() != human_first:
            state.play(agent(state, reply))
            continue
        legal = {state.move_name(m): m for m in state.legal_moves()}
        folded = {name.lower(): m for name, m in legal.items()}
        try:
            text = input(f"your move ({' '.join(legal)}): ").strip()
        except EOFError:  # Ctrl-D, or the end of a script's moves
            return print("\nbye")
        reply = legal.get(text, folded.get(text.lower()) if len(folded) == len(legal) else None)  # "B1", or "b1"
        state.play(reply) if reply is not None else print(f"not a legal move: {text!r}")
    human = state.result() if human_first else 1 - state.result()
    print(f"\n{state}\n{'you win' if human == 1 else 'the agent wins' if human == 0 else 'a draw'}")


def show_search(state, root, n_simulations, move, value, kept=0, proven=lambda child: None):
    """Print what the agent's search saw and return its move. Each legal move gets a row with its prior, visits and
    value; the move played comes first, then the rest by visits. kept is how many visits the root kept from the last
    search. proven(child) is None, or the child's exact value for the agent (1, 0 or -1) if MCTS-solver proved it."""
    made = root.n - max(kept, 1)  # not the kept visits, nor a new root's expansion; a proof can stop the search early
    print(f"the agent searched {made}{f' of {n_simulations}' * (made < n_simulations)} simulations"
          + f" on the {kept} visit{'s' * (kept > 1)} it kept" * bool(kept) + ":" if n_simulations else
          "the raw policy (no search):")
    print(f"  {'move':>6} {'prior':>6} {'visits':>7} {'value':>7}")
    for ch in sorted(root.children, key=lambda ch: (ch.move != move, -ch.n, -ch.prior)):
        mean = f"{ch.w / ch.n:7.2f}" if ch.n else f"{'-':>7}"  # an unvisited move has no value yet
        exact = {1: "win", 0: "draw", -1: "loss"}.get(proven(ch))  # for the agent, who moves into it
        marks = f"  proven {exact}" * bool(exact) + "  played" * (ch.move == move)
        print(f"  {state.move_name(ch.move):>6} {ch.prior:6.2f} {ch.n:7d} {mean}{marks}")
    print(f"the agent plays {state.move_name(move)} (its value for itself: {value:+.2f})")
    return move

"""The database's schema as the code uses it now (its tables, SQLAlchemy Core), the error every
storage module raises, and how a typed database URL is read.

Below both the store (:mod:`koikoi.web.store`, which reads and writes these tables) and the migrations
(:mod:`koikoi.web.migrate`, which compare a database with them and bring it up to date), so that
neither imports the other to learn the schema.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
)

__all__ = [
    "metadata",
    "StoreError",
    "normalise_url",
    "games",
    "seats",
    "invitations",
    "problems",
    "ai_turns",
    "reviews",
    "clocks",
    "server_beats",
    "actions",
    "accounts",
    "sessions",
    "rated_games",
    "ratings",
    "rating_history",
    "seeks",
    "bot_tokens",
    "challenges",
    "server_keys",
    "adopted_browser_ids",
    "private_games",
    "watchers",
    "chat_messages",
    "chat_mutes",
    "chat_reports",
    "device_failures",
    "tournaments",
    "tournament_players",
    "tournament_games",
    "puzzles",
    "puzzle_ratings",
    "puzzle_attempts",
    "learn_progress",
]


class StoreError(Exception):
    """A database that cannot be used, a write that lost a race (``conflict``), or stored data that
    cannot be read (``game_id``: the game it belongs to, which the caller marks broken)."""

    def __init__(self, message: str, *, conflict: bool = False, game_id: str | None = None) -> None:
        super().__init__(message)
        self.conflict = conflict
        self.game_id = game_id


def normalise_url(url: str) -> str:
    """A SQLAlchemy URL from what a user types: ``postgresql://`` uses psycopg 3, a bare path is SQLite."""
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


class _Moment(TypeDecorator[datetime]):
    """A date and time, read without trusting the database: SQLite keeps any text (or number) written
    into a DATETIME column, and SQLAlchemy's reader raises on it, which would fail a whole query for
    one row. A stored value that is not a date and time comes back as it is, for :func:`_moment`."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        read = self.impl_instance.result_processor(dialect, coltype)
        if read is None:  # PostgreSQL: the driver hands back datetimes
            return None

        def process(value: Any) -> Any:
            try:
                return read(value)
            except (ValueError, TypeError, OverflowError):
                return value  # not a date: the reader calls it damage

        return process


# The schema as the code uses it now: every table of the database, koikoi.web.browsers' too. The database
# is brought to it by the migrations (koikoi.web.migrate, koikoi/web/migrations/versions), never by
# metadata.create_all: a change here goes with a new revision there, and tests/test_migrations.py fails
# while the two disagree (docs/web.md, "Schema migrations").
metadata = MetaData()

games = Table(
    "games",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("created", _Moment(), nullable=False),
    Column("updated", _Moment(), nullable=False),
    Column("rules", Text, nullable=False),  # the RuleSet as JSON
    Column("seed", BigInteger, nullable=False),  # secret: never sent to a client before the game ends
    Column("opponent", String(16), nullable=False),  # "friend" or an AI level
    Column("ai_seed", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # waiting (for the friend), playing, finished, broken
    Column("moves", Integer, nullable=False),  # actions stored so far
    Column("scores", String(64), nullable=False),  # "s0,s1", for listing without replaying
    Column("birth_months", String(8), nullable=True),  # "m0,m1" when the rules choose the dealer by them
    # How a game ended that did not end with its last hand (ENDINGS), and the seat that won it, if any.
    Column("ending", String(16), nullable=True),
    Column("winner", Integer, nullable=True),
    # After the match: the seat that offered a rematch, and the rematch's id once the other accepted.
    Column("rematch_offer", Integer, nullable=True),
    Column("rematch", String(32), nullable=True),
    # The seat that aborted it (an abort, a resignation before both moved, a first move never made):
    # a player who aborts often waits before seeking again (koikoi.web.LobbyStore._abort_wait).
    Column("aborted_by", Integer, nullable=True),
)

seats = Table(
    "seats",
    metadata,
    Column("token", String(64), primary_key=True),  # the secret that gives access to one seat
    Column("game_id", String(32), ForeignKey("games.id"), nullable=False, index=True),
    Column("seat", Integer, nullable=False),
    Column("kind", String(16), nullable=False),  # human or ai
    Column("name", String(64), nullable=False),
    Column("owner", String(64), nullable=True, index=True),  # the browser that holds this seat
    # Whether the seat's player is at the table (koikoi.web.tablestore): the process holding their
    # socket, or since when (Unix seconds) they are away and whether they closed the tab.
    Column("away_since", Float, nullable=True),
    Column("away_closed", Boolean, nullable=True),
    Column("present_on", String(32), nullable=True),
)

invitations = Table(
    "invitations",
    metadata,
    # The secret in a friend's invitation link. It is not a seat token: it lets one person take the
    # seat once (``spent``), and the seat's own token is made at that moment and given only to them.
    Column("token", String(64), primary_key=True),
    Column("game_id", String(32), ForeignKey("games.id"), nullable=False, index=True),
    Column("seat", Integer, nullable=False),
    Column("created", _Moment(), nullable=False),
    Column("spent", _Moment(), nullable=True),
)

problems = Table(
    "problems",
    metadata,
    # A game whose stored data the engine cannot rebuild: marked broken with the reason, never fatal.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("at", _Moment(), nullable=False),
)

ai_turns = Table(
    "ai_turns",
    metadata,
    # A computer move waiting to be made: a row while a game's computer is to move. The process that
    # thinks claims it (owner, until); a claim whose lease ran out (its process died) is taken over.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seq", Integer, nullable=False),  # the move number the computer is to make
    Column("owner", String(32), nullable=True),  # the process thinking, if any
    Column("until", _Moment(), nullable=False),  # when its claim runs out
)

reviews = Table(
    "reviews",
    metadata,
    # A game review (koikoi.review) of one seat of a finished game: worked out once, then kept. While it
    # is worked out the row holds the progress and the claim of the process doing it (owner, until), so
    # that a second request, here or in another process, waits for the same review instead of starting
    # one; a claim whose lease ran out (its process died) is taken over.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("status", String(16), nullable=False),  # running, done, failed
    Column("done", Integer, nullable=False),  # decisions judged so far
    Column("total", Integer, nullable=True),  # decisions to judge, once known
    Column("owner", String(32), nullable=True),
    Column("until", _Moment(), nullable=False),
    Column("body", Text, nullable=True),  # the review as JSON when done; what went wrong when failed
)

clocks = Table(
    "clocks",
    metadata,
    # The clock of a game played with one (koikoi.clocks): its time control, what happens when time
    # runs out ("lose", or "computer": the computer moves for the player), each player's bank, when the
    # decision being made started using its time and when it runs out (Unix seconds; NULL while the clock
    # is not running), and the deadline that ran out, once one did.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("control", String(16), nullable=False),
    Column("on_time", String(16), nullable=False),
    Column("bank0", Float, nullable=False),
    Column("bank1", Float, nullable=False),
    Column("turn_started", Float, nullable=True),
    Column("deadline", Float, nullable=True, index=True),
    Column("flagged", Float, nullable=True),
)

server_beats = Table(
    "server_beats",
    metadata,
    # Each server process's last sign of life (Unix seconds): a gap in all of them is an outage, for
    # which no player loses on time; a seat held by a process that stopped beating is away.
    Column("process", String(32), primary_key=True),
    Column("seen", Float, nullable=False),
)

actions = Table(
    "actions",
    metadata,
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("seat", Integer, nullable=False),
    Column("action", Integer, nullable=False),
    Column("at", _Moment(), nullable=False),
)

accounts = Table(
    "accounts",
    metadata,
    # A player's account (koikoi.web.accounts): optional; a guest plays by a browser id.
    Column("id", String(32), primary_key=True),
    Column("name", String(20), nullable=False),  # as the player wrote it
    Column("name_key", String(20), nullable=False, unique=True),  # the name ignoring case: unique
    Column("password_hash", String(255), nullable=False),  # Argon2id; never leaves the database
    Column("created", _Moment(), nullable=False),
    Column("disabled", _Moment(), nullable=True),  # set by `koikoi admin disable`: no sign-in
    # Wrong passwords since failed_since from browsers the account does not know (no device cookie): the
    # limit on guessing one account's password, across processes; past a few, such browsers wait until
    # failed_until, longer with each more (koikoi.web.accountstore).
    Column("failed_logins", Integer, nullable=False),
    Column("failed_since", _Moment(), nullable=True),
    # A bot's account (koikoi.web.bots): when it was made one (None: a person's), and the account of the
    # person who runs it (None: made by the server's operator). A bot has no password: it signs in never,
    # and plays through tokens of its own (bot_tokens). No foreign key on bot_owner: adding one to an
    # existing table would rebuild it on SQLite; the code checks the owner.
    Column("bot_since", _Moment(), nullable=True),
    Column("bot_owner", String(32), nullable=True),
    Column("failed_until", _Moment(), nullable=True),  # see failed_logins above (migration 0010)
)

sessions = Table(
    "sessions",
    metadata,
    # A signed-in browser: the SHA-256 of the random token in its cookie (a copy of this table opens
    # no session), the account, and when it was last used (idle ones end).
    Column("key", String(64), primary_key=True),
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=False, index=True),
    Column("created", _Moment(), nullable=False),
    Column("seen", _Moment(), nullable=False),
)

rated_games = Table(
    "rated_games",
    metadata,
    # A game between two accounts that counts for their ratings (koikoi.glicko2): the accounts at its two
    # seats and its category. ``rated`` is set, in the transaction that stores the game's last move,
    # when the two ratings are updated: once, whichever process stores that move.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("category", String(16), nullable=False),
    Column("account0", String(32), ForeignKey("accounts.id"), nullable=False),
    Column("account1", String(32), ForeignKey("accounts.id"), nullable=False),
    Column("rated", _Moment(), nullable=True),
)

ratings = Table(
    "ratings",
    metadata,
    # An account's Glicko-2 rating in one category (docs/ratings.md), with its results there.
    Column("account_id", String(32), ForeignKey("accounts.id"), primary_key=True),
    Column("category", String(16), primary_key=True),
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    Column("games", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("draws", Integer, nullable=False),
    Column("losses", Integer, nullable=False),
    Column("updated", _Moment(), nullable=False),
)

rating_history = Table(
    "rating_history",
    metadata,
    # Each rated game's new rating of each player: the player page's chart.
    Column("account_id", String(32), ForeignKey("accounts.id"), primary_key=True),
    Column("category", String(16), primary_key=True),
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("at", _Moment(), nullable=False),
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
)

seeks = Table(
    "seeks",
    metadata,
    # The public lobby (koikoi.web.lobby): an open seek waits for anyone to accept it; a quick-pairing
    # entry (``pool`` set) waits to be paired by rating. Once paired, ``game_id`` is set and ``token`` is
    # the seeker's seat token, told to them alone; the row stays while the game is played (the lobby's
    # list of games). An unpaired row ends when its owner has been gone a while (``seen``) or is old.
    Column("id", String(32), primary_key=True),
    Column("owner", String(64), nullable=False, index=True),  # an account ("a:<id>") or a guest's browser
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=True),
    Column("name", String(64), nullable=False),
    Column("pool", String(16), nullable=True, index=True),  # None: an open seek, listed in the lobby
    Column("rules", Text, nullable=False),  # the RuleSet as JSON, the match length included
    Column("rated", Boolean, nullable=False),
    Column("rating", Float, nullable=False),  # the seeker's rating in the category, as of ``created``
    Column("rd", Float, nullable=False),
    Column("provisional", Boolean, nullable=False),
    Column("created", _Moment(), nullable=False),
    Column("seen", _Moment(), nullable=False),  # when its owner was last known to be here
    Column("game_id", String(32), ForeignKey("games.id"), nullable=True, index=True),
    Column("token", String(64), nullable=True),
    Column("clock", String(16), nullable=True),  # the time control (koikoi.clocks); None: no clock
    Column("private", Boolean, nullable=True),  # a casual seek whose game nobody may watch (None: public)
)

bot_tokens = Table(
    "bot_tokens",
    metadata,
    # A bot's API token (koikoi.web.bots): the SHA-256 of the random token its owner was shown once (a copy
    # of this table opens nothing), its first characters so that the owner can tell tokens apart, when it
    # was last used (a stream open renews it: the bot is "connected"), and when it was revoked.
    Column("key", String(64), primary_key=True),
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=False, index=True),
    Column("hint", String(16), nullable=False),
    Column("created", _Moment(), nullable=False),
    Column("seen", _Moment(), nullable=True),
    Column("revoked", _Moment(), nullable=True),
)

challenges = Table(
    "challenges",
    metadata,
    # A person's challenge to a bot (koikoi.web.bots): open until the bot accepts or declines it, its
    # challenger cancels it or stops waiting (``seen``), or it is old. Accepted, ``game_id`` is the game
    # and ``token`` the challenger's seat token, told to them alone (by their owner key or browser id).
    Column("id", String(32), primary_key=True),
    Column("bot_id", String(32), ForeignKey("accounts.id"), nullable=False, index=True),
    Column("owner", String(64), nullable=False, index=True),  # the challenger: an account's owner key or a browser
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=True),
    Column("name", String(64), nullable=False),
    Column("rules", Text, nullable=False),  # the RuleSet as JSON, the match length included
    Column("rated", Boolean, nullable=False),
    Column("rating", Float, nullable=False),  # the challenger's rating in the category, as of ``created``
    Column("provisional", Boolean, nullable=False),
    Column("status", String(16), nullable=False),  # open, accepted, declined, cancelled, expired
    Column("reason", String(16), nullable=True),  # why the bot declined
    Column("created", _Moment(), nullable=False),
    Column("seen", _Moment(), nullable=False),  # when the challenger last asked after it
    Column("game_id", String(32), ForeignKey("games.id"), nullable=True),
    Column("token", String(64), nullable=True),
    Column("clock", String(16), nullable=True),  # the time control (koikoi.clocks); None: no clock
)

server_keys = Table(
    "server_keys",
    metadata,
    # Secrets the server processes share through the database, made once by the first to start
    # (koikoi.web.browsers: the key that signs browser ids).
    Column("name", String(32), primary_key=True),
    Column("value", String(128), nullable=False),
)

adopted_browser_ids = Table(
    "adopted_browser_ids",
    metadata,
    # Bare browser ids from before ids were signed, each adopted by the one browser that showed it first.
    Column("id", String(64), primary_key=True),
    Column("at", DateTime(timezone=True), nullable=False),
)

# -- spectators and chat (koikoi.web.spectators, koikoi.web.chat; docs/web.md, "Spectators", "Chat") --------

private_games = Table(
    "private_games",
    metadata,
    # A casual game made private when it was created: nobody watches it, and its replay is its players'.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("since", _Moment(), nullable=False),
)

watchers = Table(
    "watchers",
    metadata,
    # How many spectators each server process holds on a game, so that the players on any process are
    # told how many watch in all. A process writes its row when its count changes and every few seconds;
    # a row not written for a while is a dead process's, and not counted.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("process", String(32), primary_key=True),
    Column("spectators", Integer, nullable=False),
    Column("seen", _Moment(), nullable=False),
)

chat_messages = Table(
    "chat_messages",
    metadata,
    # A game's chat, kept with the game: the players' room (between the two seats) or the spectators';
    # or a tournament's (room "tournament", ``tournament_id`` set and no game: migration 0011).
    # Plain text of at most 200 characters, or a phrase's id that each reader sees in their language.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(32), ForeignKey("games.id"), nullable=True, index=True),
    Column("room", String(16), nullable=False),  # "players" or "spectators"
    Column("seat", Integer, nullable=True),  # the author's seat, in the players' room
    Column("author", String(64), nullable=False),  # the author's owner key: an account's, or a guest's browser
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=True),
    Column("name", String(64), nullable=False),  # the author's name as shown
    Column("text", Text, nullable=True),
    Column("phrase", String(32), nullable=True),
    Column("at", _Moment(), nullable=False),
    Column("tournament_id", String(32), ForeignKey("tournaments.id"), nullable=True, index=True),
)

chat_mutes = Table(
    "chat_mutes",
    metadata,
    # A player who muted the other player of their game: the other's messages are not delivered to them.
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),  # the seat that muted the other
    Column("at", _Moment(), nullable=False),
)

chat_reports = Table(
    "chat_reports",
    metadata,
    # A message reported to the moderators (`koikoi admin reports`): once per message per person.
    Column("message_id", Integer, ForeignKey("chat_messages.id"), primary_key=True),
    Column("reporter", String(64), primary_key=True),  # the reporter's owner key
    Column("reporter_name", String(64), nullable=False),
    Column("at", _Moment(), nullable=False),
)

device_failures = Table(
    "device_failures",
    metadata,
    # Wrong passwords from a browser that signed in to the account before (its device cookie, koikoi.web.
    # devices): counted for that browser alone, so that no one else's guessing keeps it out.
    Column("device", String(32), primary_key=True),
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=False),
    Column("failures", Integer, nullable=False),
    Column("since", _Moment(), nullable=False),
)

# -- tournaments (koikoi.web.tournaments; docs/web.md, "Tournaments") -------------------------------------------

tournaments = Table(
    "tournaments",
    metadata,
    # An arena (a fixed time, players paired again as soon as their match ends) or a Swiss event (a fixed
    # number of rounds). Made by a signed-in player (``created_by``) or by the server's schedule
    # (``schedule``: the configured event's key and its start, unique, so that two processes never make
    # the same one). One process directs it at a time: ``director`` holds a lease until ``lease_until``
    # (Unix seconds), renewed while it lives; another takes over once it runs out.
    Column("id", String(32), primary_key=True),
    Column("kind", String(8), nullable=False),  # arena or swiss
    Column("name", String(64), nullable=False),
    Column("created_by", String(32), ForeignKey("accounts.id"), nullable=True),
    Column("schedule", String(96), nullable=True, unique=True),
    Column("rules", Text, nullable=False),  # the RuleSet as JSON, the match length included
    Column("clock", String(16), nullable=False),  # the time control of every match (koikoi.clocks)
    Column("rated", Boolean, nullable=False),
    Column("bots", Boolean, nullable=False),  # bots' accounts may join
    Column("berserk", Boolean, nullable=False),  # arena: a player may halve their bank for a point more
    Column("min_moves", Integer, nullable=False),  # ... which counts after this many of their decisions
    Column("access", String(8), nullable=False),  # open (listed), password (listed, joined with it), link
    Column("password_hash", String(255), nullable=True),  # Argon2id, for access "password"
    Column("starts", _Moment(), nullable=False),
    Column("minutes", Integer, nullable=True),  # arena: how long it lasts
    Column("grace", Integer, nullable=False),  # arena: seconds after the end in which a match still counts
    Column("rounds", Integer, nullable=True),  # swiss: how many rounds
    Column("round_every", Integer, nullable=True),  # swiss: seconds between rounds' starts (None: at once)
    Column("late", String(8), nullable=False),  # swiss: a late joiner starts with zero, or half a point a round
    Column("status", String(16), nullable=False, index=True),  # upcoming, running, finished, cancelled
    Column("round", Integer, nullable=False),  # swiss: the round being played (0 before the first)
    Column("round_started", _Moment(), nullable=True),
    Column("ended", _Moment(), nullable=True),
    Column("players", Integer, nullable=False),  # how many joined, for the list
    Column("director", String(32), nullable=True),
    Column("lease_until", Float, nullable=True),
    Column("created", _Moment(), nullable=False),
)

tournament_players = Table(
    "tournament_players",
    metadata,
    # A player of a tournament and their standing, kept up to date as each of their matches is counted.
    # ``score`` is arena points, or twice the Swiss points (whole numbers: a draw is 1). ``game_id`` is the
    # match they are playing now; ``waiting_since`` (Unix seconds) when they became free to be paired.
    Column("tournament_id", String(32), ForeignKey("tournaments.id"), primary_key=True),
    Column("account_id", String(32), ForeignKey("accounts.id"), primary_key=True),
    Column("name", String(20), nullable=False),
    Column("rating", Float, nullable=False),  # their rating in the category when they joined
    Column("bot", Boolean, nullable=False),
    Column("joined", _Moment(), nullable=False),
    Column("joined_round", Integer, nullable=False),  # swiss: the first round they could be paired in
    Column("score", Integer, nullable=False),
    Column("games", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("draws", Integer, nullable=False),
    Column("losses", Integer, nullable=False),
    Column("streak", Integer, nullable=False),  # arena: wins in a row (two or more: on fire)
    Column("opponent_ratings", Float, nullable=False),  # the sum of their opponents' ratings (performance)
    Column("berserks", Integer, nullable=False),
    Column("aborts", Integer, nullable=False),  # matches in a row they aborted or never came to
    Column("paused", Boolean, nullable=False),  # arena: paused; swiss: withdrawn (both may come back)
    Column("seen", _Moment(), nullable=False),  # when they were last known to be here
    Column("waiting_since", Float, nullable=True),
    Column("game_id", String(32), nullable=True),
    Column("last_opponent", String(32), nullable=True),
)

tournament_games = Table(
    "tournament_games",
    metadata,
    # A match of a tournament (``game_id``), or a Swiss bye (no game, ``account1`` NULL). ``result0`` is
    # seat 0's result once counted (1, 0.5, 0; NULL: none, an abort or too late), ``points0/1`` what each
    # scored, ``counted`` when its result went into the standings: once, by the director.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", String(32), ForeignKey("tournaments.id"), nullable=False, index=True),
    Column("game_id", String(32), ForeignKey("games.id"), nullable=True, unique=True),
    Column("round", Integer, nullable=False),
    Column("account0", String(32), ForeignKey("accounts.id"), nullable=False),
    Column("account1", String(32), ForeignKey("accounts.id"), nullable=True),
    Column("berserk0", Boolean, nullable=False),
    Column("berserk1", Boolean, nullable=False),
    Column("result0", Float, nullable=True),
    Column("points0", Integer, nullable=True),
    Column("points1", Integer, nullable=True),
    Column("started", _Moment(), nullable=False),
    Column("counted", _Moment(), nullable=True, index=True),
)

puzzles = Table(
    "puzzles",
    metadata,
    # A puzzle (koikoi.puzzles): ``data`` is its JSON, the record of the game up to its position included,
    # which the server keeps and never sends (the stock's order is in it). Rated by its solvers' first tries
    # with Glicko-2, as a player is; ``plays`` and ``solved`` count those tries.
    Column("id", String(16), primary_key=True),
    Column("rules", String(40), nullable=False),
    Column("themes", String(80), nullable=False),  # space-separated, koikoi.puzzles.THEMES
    Column("moves", Integer, nullable=False),  # the line's length
    Column("rating", Float, nullable=False, index=True),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    Column("plays", Integer, nullable=False),
    Column("solved", Integer, nullable=False),
    Column("data", Text, nullable=False),
    Column("added", _Moment(), nullable=False),
)

puzzle_ratings = Table(
    "puzzle_ratings",
    metadata,
    # An account's puzzle rating (Glicko-2, apart from its game ratings) and its puzzle tallies.
    Column("account_id", String(32), ForeignKey("accounts.id"), primary_key=True),
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    Column("plays", Integer, nullable=False),
    Column("solved", Integer, nullable=False),
    Column("best_streak", Integer, nullable=False),
    Column("updated", _Moment(), nullable=False),
)

puzzle_attempts = Table(
    "puzzle_attempts",
    metadata,
    # One try at a puzzle, from the moment it is served: ``key`` is the hash of the try's token (the page
    # holds the token), ``account_id`` or ``guest`` (the hash of a guest's device cookie) whose it is,
    # ``done`` the line's moves answered right, ``result`` "solved" or "failed" once over. A try is rated
    # (``rated``) when it is the account's first at that puzzle in a rated mode. ``rating_before`` is the
    # solver's rating as the try began (a guest's as their browser keeps it), ``rating_after`` once over.
    Column("key", String(64), primary_key=True),
    Column("puzzle_id", String(16), ForeignKey("puzzles.id"), nullable=False, index=True),
    Column("account_id", String(32), ForeignKey("accounts.id"), nullable=True, index=True),
    Column("guest", String(64), nullable=True),
    Column("mode", String(8), nullable=False),  # "rated", "daily" or "streak"
    Column("streak", Integer, nullable=False),  # streak: the puzzles solved in a row before this one
    Column("rated", Boolean, nullable=False),
    Column("done", Integer, nullable=False),
    Column("result", String(8), nullable=True),
    Column("rating_before", Float, nullable=True),
    Column("rating_after", Float, nullable=True),
    Column("started", _Moment(), nullable=False),
    Column("ended", _Moment(), nullable=True),
)

learn_progress = Table(
    "learn_progress",
    metadata,
    # The most stars an account has earned in each lesson of /learn (1 to 3; koikoi.web.learnstore).
    Column("account_id", String(32), ForeignKey("accounts.id"), primary_key=True),
    Column("lesson", String(24), primary_key=True),
    Column("stars", Integer, nullable=False),
    Column("updated", _Moment(), nullable=False),
)

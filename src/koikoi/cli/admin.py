"""``koikoi admin``: the web app's accounts, bots and chat reports, for whoever runs it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import CliError, Commands, data_dir


def cmd_admin(args: argparse.Namespace) -> int:
    """The accounts of the web app's database, for whoever runs it: no mail server resets a password."""
    try:
        from ..web.accounts import Passwords, check_password, name_key
        from ..web.accountstore import AccountStore
        from ..web.errors import GameError
        from ..web.store import Store, StoreError
    except ImportError as e:
        raise CliError(f"the web app needs its libraries ({e.name} is missing): pip install koikoi") from None
    url = args.database_url or str(data_dir() / "koikoi.db")
    if "://" not in url and not Path(url).expanduser().exists():
        raise CliError(f"no database at {url}")
    try:
        store = Store(url)
    except StoreError as e:
        raise CliError(str(e)) from None
    try:
        accounts = AccountStore(store)
        if args.admin_command in _ADMIN_BOTS:
            return _admin_bots(args, store, accounts)
        if args.admin_command == "list":
            rows = accounts.listing(limit=args.limit)
            for r in rows:
                state = "disabled" if r["disabled"] else f"{r['sessions']} session(s)"
                bot = "  bot" if r.get("bot") else ""
                print(f"{r['name']:<20}  since {r['created']:%Y-%m-%d}  {state}{bot}")
            print(f"{len(rows)} account(s)")
            return 0
        if args.admin_command == "reports":
            _print_reports(store, args.limit)
            return 0
        found = accounts.login_of(name_key(args.name))
        if found is None:
            raise CliError(f"no account named {args.name!r}")
        account = found.account
        if args.admin_command == "reset-password":
            typed = sys.stdin.readline().rstrip("\n") if not sys.stdin.isatty() else _ask_password()
            try:
                password = check_password(typed, account.name)
            except GameError as e:
                raise CliError(e.message) from None
            passwords = Passwords(threads=1)
            try:
                accounts.set_password(account.id, passwords.hasher.hash(password))
            finally:
                passwords.close()
            print(f"{account.name}: new password set; every session ended")
        elif args.admin_command == "disable":
            accounts.set_disabled(account.id, True)
            print(f"{account.name}: disabled; every session ended")
        else:
            accounts.set_disabled(account.id, False)
            print(f"{account.name}: enabled")
    finally:
        store.close()
    return 0


_ADMIN_BOTS = ("make-bot", "bot-token", "revoke-bot-tokens")


def _admin_bots(args: argparse.Namespace, store: Any, accounts: Any) -> int:
    """``koikoi admin make-bot NAME [--owner OWNER]``, ``bot-token NAME``, ``revoke-bot-tokens NAME``."""
    from ..web.accounts import check_name, name_key
    from ..web.bots import new_bot_token
    from ..web.botstore import BotStore
    from ..web.errors import GameError
    from ..web.store import StoreError

    bots = BotStore(store)
    if args.admin_command == "make-bot":
        try:
            name = check_name(args.name)
        except GameError as e:
            raise CliError(e.message) from None
        owner_id = None
        if args.owner:
            found = accounts.login_of(name_key(args.owner))
            if found is None or bots.bot(found.account.id) is not None:
                raise CliError(f"no person's account named {args.owner!r} to run the bot")
            owner_id = found.account.id
        try:
            bots.make_bot(name, name_key(name), owner_id)
        except StoreError as e:
            raise CliError(f"{e}: a bot is an account of its own, with a name of its own") from None
        print(f"{name}: a bot account; give it a token with 'koikoi admin bot-token {name}'")
        return 0
    bot = bots.bot_named(name_key(args.name))
    if bot is None:
        raise CliError(f"no bot named {args.name!r} (make one with 'koikoi admin make-bot NAME')")
    if args.admin_command == "bot-token":
        token, key, hint = new_bot_token()
        bots.add_token(bot.id, key, hint, max_tokens=1_000)
        print(token)  # shown this once: only its hash is kept
        print(
            f"{bot.name}: a new token ({hint}...), shown above this once; keep it in a file of yours", file=sys.stderr
        )
    else:
        print(f"{bot.name}: {bots.revoke(bot.id)} token(s) revoked")
    return 0


def _print_reports(store: Any, limit: int) -> None:
    """The chat messages players reported, newest first: when, the game, the room, the author (their
    account, or a guest), the words as written (quoted, escaped) and who reported them."""
    from ..web.chatstore import ChatStore

    rows = ChatStore(store).reports(limit=limit)
    for r in rows:
        if r["account"] is None:
            author = f"{r['name']} (guest)"
        else:
            author = f"{r['name']} (account {r['account']}{', disabled' if r['disabled'] else ''})"
        words = f"[phrase: {r['phrase']}]" if r["phrase"] else json.dumps(r["text"] or "", ensure_ascii=False)
        reporter = str(r["reporter_name"]) + (" (account)" if str(r["reporter"]).startswith("a:") else " (guest)")
        at = r["at"]
        place = f"tournament {r['tournament_id']}" if r.get("tournament_id") else f"game {r['game_id']}"
        when = at.strftime("%Y-%m-%d %H:%M") if hasattr(at, "strftime") else str(at)  # SQLite keeps any text
        print(f"{when}  {place}  {r['room']}  message {r['message_id']}  {author}: {words}  reported by {reporter}")
    print(f"{len(rows)} report(s)")


def _ask_password() -> str:
    import getpass

    first = getpass.getpass("new password: ")
    if getpass.getpass("again: ") != first:
        raise CliError("the two passwords differ")
    return first


def add_parser(sub: Commands) -> None:
    p = sub.add_parser(
        "admin",
        help="the web app's accounts and chat reports: list them, reset a password, disable or enable one",
        description='The accounts of the web app\'s database (docs/web.md, "Accounts", "Moderation"). A new '
        "password is read from standard input (or asked twice on a terminal); resetting it or disabling the "
        "account ends every session of it. A disabled account cannot chat any more, and what it wrote is "
        "no longer shown.",
    )
    admin = p.add_subparsers(dest="admin_command", metavar="COMMAND", title="commands", required=True)
    for name, help_text in [
        ("list", "list the accounts: name, since when, sessions open or disabled"),
        ("reset-password", "set a new password for an account"),
        ("disable", "disable an account: it cannot sign in, and its sessions end"),
        ("enable", "enable a disabled account again"),
        ("make-bot", 'make a bot\'s account, which plays people through a program (docs/web.md, "Bots online")'),
        ("bot-token", "make a new API token for a bot, printed once on standard output"),
        ("revoke-bot-tokens", "revoke every token of a bot: its connections end"),
        ("reports", "list the chat messages players reported, newest first: message, author, game, reporter, time"),
    ]:
        q = admin.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if name == "list":
            q.add_argument("--limit", type=int, default=1000, help="list at most this many (default: 1000)")
        elif name == "reports":
            q.add_argument("--limit", type=int, default=100, help="list at most this many (default: 100)")
        else:
            q.add_argument("name", help="the account's name (case does not matter)")
        if name == "make-bot":
            q.add_argument("--owner", metavar="NAME", help="the person's account that runs it (default: none)")
        q.add_argument(
            "--database-url",
            metavar="URL",
            help="the database: a file path or SQLAlchemy URL (default: the SQLite file koikoi serve uses)",
        )
        q.set_defaults(func=cmd_admin)

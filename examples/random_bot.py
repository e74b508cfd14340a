#!/usr/bin/env python3
"""A complete Koi-Koi bot: it plays a random legal action. Standard library only.

Run it in the arena:
    koikoi arena --rules nintendo --games 100 --seed 1 --players "cmd:python3 examples/random_bot.py,easy"
The protocol: docs/bot-protocol.md.
"""

import json
import random
import sys

rng = random.Random()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        rng.seed(message.get("bot_seed"))
        reply = {"name": "random_bot", "author": "the koikoi developers"}
    elif message["type"] == "choose":
        reply = {"action": rng.choice(message["observation"]["legal_actions"])["id"]}
    elif message["type"] == "quit":
        break
    else:
        continue  # hand_end, match_end and any newer notice need no answer
    print(json.dumps(reply), flush=True)

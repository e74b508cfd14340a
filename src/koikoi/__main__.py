"""``python -m koikoi``: the ``koikoi`` command without its console script."""

import sys

from .cli import main

sys.exit(main())

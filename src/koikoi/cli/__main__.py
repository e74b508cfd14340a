"""``python -m koikoi.cli``: the ``koikoi`` command without its console script."""

import sys

from . import main

sys.exit(main())

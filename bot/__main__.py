"""``python -m bot``: the same as ``flower-bot``."""

import sys

from bot.main import main

sys.exit(main())

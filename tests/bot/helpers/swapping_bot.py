"""``python -m tests.bot.helpers.swapping_bot``: the bot (``python -m bot``) with a folder of one
run's workbench swapped for FIFOs as the host lists it (``tests.helpers.hostile_trees.FifoSwap``:
the deterministic stand-in for a run racing the host with inotify), for the tests that signal
the bot's process. ``TEST_FIFO_SWAP`` names the folder, ``TEST_FIFO_SWAP_LIMIT`` how many swaps."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bot.main import main
from tests.helpers.hostile_trees import FifoSwap

FifoSwap(Path(os.environ["TEST_FIFO_SWAP"]), limit=int(os.environ["TEST_FIFO_SWAP_LIMIT"])).install()
sys.exit(main())

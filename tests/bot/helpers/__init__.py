"""What the bot's test files share, outside any test module (a test module imports no other;
tests/test_import_contract.py checks). Fixtures are in tests/bot/conftest.py (and
tests/bot/repos/conftest.py), except ``git.checkout``, imported into the modules that take it.

- ``app``: the in-process bot end to end: the starter flow scripted on the offline model, the
  options bots start with, waits on what the fake Slack was sent (``posted``, ``question``...).
- ``faults``: the fault tests' flow (its own ``BRIEF``, ``GOAL`` and ``script``) and fast retries.
- ``process``: the bot as a real process (``BotProcess``, ``bot_env``) and checks of what it left.
- ``git``: real git for the repository tests, and a checkout with a bare origin.
- ``store``: the bot store's two backends, a lock held from another connection, a hand-moved clock.
- ``store_race``: a second process answering questions (run as a script by tests/bot/store/test_store.py).
- ``render``: what Slack would refuse in a payload.
"""

"""What tests in several folders share, outside any test module (a test module imports no other).

``flower_cli``: the ``flower`` command on a pseudo-terminal. The bot's tests have their own, in
tests/bot/helpers/.
"""

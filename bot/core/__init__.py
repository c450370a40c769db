"""The small core every layer stands on: a thread's identity and folders (``thread``), and
Slack-safe text (``split_text``: escaping, splitting, clipping; ``outside_text``: masking what
came from outside). The bot's errors are ``bot.errors``."""

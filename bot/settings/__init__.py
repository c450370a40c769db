"""The bot's settings: the environment read once at start (``config``, its value parsers), the
per-channel policy file, spend limits, what a run's CLI may see (``agent_env``) and the sandbox."""

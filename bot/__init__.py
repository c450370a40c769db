"""The Slack bot: one thread, one run of the engine (``engine``), said back in the thread.

Every error the bot raises on purpose is an ``engine.FlowerError`` whose message names what was
wrong and the fix (``tests/test_import_contract.py`` holds it):

    FlowerError (engine)
    ├── ConfigError (config.py): a setting at start
    │   └── SlackAuthError (slack/errors.py): Slack refused a token
    ├── AgentEnvError (agent_env.py, also a ValueError): FLOWER_AGENT_ENV
    ├── SandboxUnavailable (sandbox.py): bubblewrap or socat missing or unusable
    ├── ThreadError (folders.py, also a ValueError): an id that cannot name a folder
    ├── SplitError (text/split.py, also a ValueError): text that cannot be split for Slack
    ├── RepoError (repos/git.py): git, a binding, a worktree
    │   └── WorktreeChangedError (repos/linked.py): a worktree's .git no longer leads home
    ├── ForgeError (forge/api.py): GitHub or GitLab refused, or is unreachable
    ├── Refusal (slack/files_in.py): a shared file not taken, or an outbox file not posted
    ├── RunFilesRefused (runs/refused.py): a command stopped by a link or FIFO a run made
    └── StoreError (engine)
        └── StoreVanished (store/sqlite_base.py): bot.db was removed under the bot
"""

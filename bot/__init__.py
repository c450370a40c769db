"""The Slack bot: one thread, one run of the engine (``engine``), said back in the thread.

The bot's layers, highest first. A module imports its own layer and the layers below it, never
one above, and no two packages import each other (``tests/test_import_contract.py`` reads this
map and holds it); its errors are one tree in ``bot/errors.py``.

    layer     packages                   what it holds
    wiring    bot.main bot.__main__      the command: settings read, everything started and stopped
    inbound   bot.inbound                what comes in from Slack: socket, gate, intake, commands, clicks, Home, catch-up
    runs      bot.runs                   a thread's run: jobs, the run, its pull request, its ending
    outbound  bot.outbound               what goes out to Slack: outbox, quick calls, agent sessions, files in and out
    render    bot.render                 Block Kit and the texts catalogues (en, zh)
    ops       bot.ops                    the operator's view: health, metrics, usage and audit reports
    store     bot.store                  bot.db or PostgreSQL: threads, questions, outbox, ledger, leases
    settings  bot.settings               configuration, the channel policy, limits, the agent environment, the sandbox
    clients   bot.forge bot.repos        GitHub and GitLab, git and the channel's repositories
    core      bot.core bot.errors        a thread's identity and folders, Slack-safe text, the error tree
"""

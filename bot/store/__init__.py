"""The bot's state, in bot.db (SQLite) or PostgreSQL: threads, questions, the outbox and inbox,
the ledger, pull requests, leases between replicas, and housekeeping. It calls no layer above it:
its background loops take plain callables."""

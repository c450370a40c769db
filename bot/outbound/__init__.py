"""What goes out to Slack: the outbox (every post once, across restarts and replicas), quick
calls that need no outbox, Slack's agent sessions and assistant status, user groups, files
taken from a thread and files posted back, and how Slack's errors are sorted."""

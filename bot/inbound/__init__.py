"""What comes in from Slack: the Socket Mode link and its watchdog, the gate (who may speak,
duplicates, what could not be recorded), the bolt app and its listeners, the intake that turns a
message into a start, a reply or a command, the ``/limit`` and ``/repo`` commands, clicks, Home,
and catch-up after a restart."""

"""Plain text helpers every layer may use: Slack-safe escaping, splitting and clipping, masking outside text."""

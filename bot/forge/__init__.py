"""GitHub and GitLab: the REST clients, pushes, review and check reads, markers, webhooks."""

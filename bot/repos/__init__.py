"""Git and the channel's repositories: bindings, a thread's worktree and branch, their removal."""

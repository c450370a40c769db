"""A thread's run: jobs (one run per thread, queued, resumed), the run itself, its questions,
status and plan, its spend, its pull request and the loop that reads the reviews back, its ending."""
